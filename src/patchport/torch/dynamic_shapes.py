"""Helpers for ``dynamic_shapes`` specifications."""

from __future__ import annotations

from typing import Any


def use_dyn_not_str(dynamic_shapes: Any) -> Any:
    """Replace every dimension name (a string) by ``torch.export.Dim.DYNAMIC``.

    Names document intent but make torch.export create named dims that must agree with
    each other; ``DYNAMIC`` lets export infer each dimension. Nested dicts, lists and
    tuples keep their structure; anything else is returned unchanged.
    """
    import torch

    dynamic = torch.export.Dim.DYNAMIC

    def convert(value: Any) -> Any:
        if isinstance(value, str):
            return dynamic
        if isinstance(value, dict):
            return {key: convert(item) for key, item in value.items()}
        if isinstance(value, tuple) and hasattr(value, "_fields"):  # namedtuple
            return type(value)(*(convert(item) for item in value))
        if isinstance(value, (list, tuple)):
            return type(value)(convert(item) for item in value)
        return value

    return convert(dynamic_shapes)
