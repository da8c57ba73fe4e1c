"""Small, dependency-free version parsing and range checks for patch declarations."""

from __future__ import annotations

import re
from functools import cache
from importlib import metadata

_NUMBERS = re.compile(r"^(\d+(?:\.\d+)*)")
_CLAUSE = re.compile(r"^\s*(>=|<=|==|!=|>|<)\s*([\d.]+)\s*$")


def parse_version(text: str) -> tuple[int, ...]:
    """``"2.13.0+cpu"`` -> ``(2, 13, 0)``; local and pre-release tags are ignored."""
    match = _NUMBERS.match(text.strip())
    if match is None:
        raise ValueError(f"parse_version: cannot read a version number from {text!r}.")
    return tuple(int(part) for part in match.group(1).split("."))


def _compare(left: tuple[int, ...], right: tuple[int, ...]) -> int:
    width = max(len(left), len(right))
    a = left + (0,) * (width - len(left))
    b = right + (0,) * (width - len(right))
    return (a > b) - (a < b)


def version_matches(version: str, spec: str) -> bool:
    """True if ``version`` satisfies every comma-separated clause of ``spec`` (e.g.
    ``">=2.13,<2.15"``); an empty spec matches everything."""
    current = parse_version(version)
    for clause in filter(None, (part.strip() for part in spec.split(","))):
        match = _CLAUSE.match(clause)
        if match is None:
            raise ValueError(f"version_matches: unsupported clause {clause!r} in {spec!r}.")
        op, bound = match.group(1), parse_version(match.group(2))
        cmp = _compare(current, bound)
        ok = {
            ">=": cmp >= 0,
            "<=": cmp <= 0,
            ">": cmp > 0,
            "<": cmp < 0,
            "==": cmp == 0,
            "!=": cmp != 0,
        }[op]
        if not ok:
            return False
    return True


@cache
def installed_version(distribution: str) -> str | None:
    """The installed version of a distribution, or None when it is not installed.

    Cached: reading package metadata costs about 0.5 ms, and patches are resolved on
    every ``apply_patches_for_model`` entry."""
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None
