"""A bundle's YAML checked when it is loaded, not when a policy first runs.

A binary or non-UTF-8 file, a misspelled ``data_flow`` (silently no edges: inputs go
missing at run time) or ports written as one string (iterated character by character)
are reported with the file name and the fix.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import BundleFormatError

PIPELINE_KEYS = (
    "configs",
    "data_flow",
    "feedback_flow",
    "initial_values",
    "inputs",
    "outputs",
)


def read_checked_spec(path: Path, read: Callable[[Path], dict[str, Any]]) -> dict[str, Any]:
    """``read(path)`` with a clear error naming the file, then :func:`check_spec`."""
    try:
        spec = read(path)
    except UnicodeDecodeError as exc:
        raise BundleFormatError(
            f"{path}: not a UTF-8 text file (undecodable byte at offset {exc.start}); "
            f"pass the bundle's .yaml written by compile_graph()."
        ) from exc
    except (OSError, BundleFormatError):
        raise
    except Exception as exc:  # yaml's scanner and reader errors
        if type(exc).__module__.startswith("yaml"):
            raise BundleFormatError(
                f"{path}: not valid YAML ({type(exc).__name__}: {exc}); pass the bundle's "
                f".yaml written by compile_graph()."
            ) from exc
        raise
    check_spec(path, spec)
    return spec


def _ports(path: Path, where: str, ports: Any) -> None:
    if isinstance(ports, str):
        raise BundleFormatError(
            f"{path}: {where} is the string {ports!r}; write a list of ports, e.g. [{ports}]."
        )


def check_spec(path: Path, spec: dict[str, Any]) -> None:
    """Refuse unknown pipeline keys (with the likely spelling) and ports given as a string."""
    pipeline = spec.get("pipeline")
    if isinstance(pipeline, dict):
        for key in pipeline:
            if key not in PIPELINE_KEYS:
                close = difflib.get_close_matches(str(key), PIPELINE_KEYS, n=1)
                hint = f"did you mean {close[0]!r}? " if close else ""
                raise BundleFormatError(
                    f"{path}: unknown key pipeline.{key}; {hint}known keys: "
                    f"{', '.join(PIPELINE_KEYS)}."
                )
        for side in ("inputs", "outputs"):
            for node, ports in (pipeline.get(side) or {}).items():
                _ports(path, f"pipeline.{side}.{node}", ports)
    for node, model in (spec.get("models") or {}).items():
        if isinstance(model, dict):
            for side in ("inputs", "outputs"):
                _ports(path, f"models.{node}.{side}", model.get(side))
