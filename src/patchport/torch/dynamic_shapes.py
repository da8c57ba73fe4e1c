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


def nest_var_keyword(model: Any, args: tuple, kwargs: dict, dynamic_shapes: Any) -> Any:
    """``dynamic_shapes`` keyed as torch.export wants when ``model.forward`` takes some of
    ``kwargs`` through ``**name`` (GraniteMoE's ``use_cache``): their top-level entries move
    under ``name``, where torch.export looks for them (it refuses them flat, though the
    caller gave those inputs flat). Anything else is returned unchanged."""
    import inspect

    if not isinstance(dynamic_shapes, dict) or not kwargs:
        return dynamic_shapes
    forward = getattr(model, "forward", model)
    try:
        parameters = inspect.signature(forward).parameters
    except (TypeError, ValueError):
        return dynamic_shapes
    var_keyword = next(
        (p.name for p in parameters.values() if p.kind is inspect.Parameter.VAR_KEYWORD), None
    )
    if var_keyword is None or var_keyword in dynamic_shapes:
        return dynamic_shapes
    named = {
        p.name
        for p in parameters.values()
        if p.kind not in (inspect.Parameter.VAR_KEYWORD, inspect.Parameter.VAR_POSITIONAL)
    }
    extra = [key for key in dynamic_shapes if key not in named and key in kwargs]
    if not extra:
        return dynamic_shapes
    nested = {key: value for key, value in dynamic_shapes.items() if key not in extra}
    nested[var_keyword] = {key: dynamic_shapes[key] for key in extra}
    return nested
