"""The shape check of a pipeline input: static sizes must match, dynamic axes may change.

One small function so a general input checker (keys, dtype, shape) can call it. A port
description is the YAML's: ``shape`` (the traced sizes) and, where some axes may change,
``dynamic_axes`` (``{axis: name}``; one name on several ports of a node: equal sizes).
"""

from __future__ import annotations

from typing import Any

from ..errors import InputShapeError


def expected_shape(description: dict[str, Any]) -> list[Any]:
    """The port's shape with each dynamic axis shown by its name: ``['batch', 3, 'width']``."""
    dynamic = {int(axis): name for axis, name in (description.get("dynamic_axes") or {}).items()}
    return [dynamic.get(axis, size) for axis, size in enumerate(description["shape"])]


def check_input_shape(
    key: str,
    description: dict[str, Any],
    shape: tuple[int, ...],
    named: dict[str, tuple[int, str]] | None = None,
) -> None:
    """Refuse ``shape`` for input ``key`` unless it fits ``description``.

    ``named`` collects ``{dimension name: (size, key)}`` over the inputs of one node, so a
    name shared by ports must have one size; pass the same dict for each of them.
    """
    expected = expected_shape(description)
    fits = len(shape) == len(expected) and all(
        isinstance(want, str) or want == got for want, got in zip(expected, shape)
    )
    if not fits:
        raise InputShapeError(
            f"run_policy: input {key!r} has shape {list(shape)} but its port expects "
            f"{expected} (names are dynamic axes); give a tensor of that shape."
        )
    ranges = description.get("dynamic_ranges") or {}
    node = key.partition("/")[0]
    for want, got in zip(expected, shape):
        if isinstance(want, str) and want in ranges:
            low, high = ranges[want]
            if got < (low or 1) or (high is not None and got > high):
                raise InputShapeError(
                    f"run_policy: input {key!r} has {want}={got} but the exported model "
                    f"accepts {want} in [{low}, {high if high is not None else 'inf'}]; "
                    f"give a size in that range."
                )
        if isinstance(want, str) and named is not None:
            first = named.setdefault(f"{node}/{want}", (got, key))
            if first[0] != got:
                raise InputShapeError(
                    f"run_policy: input {key!r} has {want}={got} but {first[1]!r} has "
                    f"{want}={first[0]}; ports sharing the dimension {want!r} need equal sizes."
                )
