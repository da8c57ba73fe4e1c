"""Fixes to torch.export's bookkeeping of dynamic dimensions (not to shape reasoning).

- ``_get_range_constraints``: with kwargs given in another order than ``forward``'s
  signature and ``dynamic_shapes`` given as a tuple or list (signature order), torch
  pairs each input with another input's ranges, so the program rejects valid sizes.
  With inputs that ``forward`` takes through ``**kwargs``, torch lists them twice (in
  the ``kwargs`` dict and flat) and fails with "Must provide a tree_name when there might
  be a mismatch", whatever the ``dynamic_shapes``: they are paired as keyword-only
  parameters instead.
- ``DynamicDimConstraintPrinter._print_Symbol``: printing a suggested fix for a
  constraint violation crashes with an AssertionError when the solver introduced a
  symbol that has no input source, hiding the real error from the user.
"""

from __future__ import annotations

import inspect
from typing import Any

import torch
import torch.export._trace

from ...patching import original_of


def get_range_constraints_by_name(
    mod: torch.nn.Module, export_artifact: Any, args: Any, kwargs: Any, dynamic_shapes: Any
) -> Any:
    """Name positional ``dynamic_shapes`` after ``forward``'s parameters before torch pairs
    them with the inputs, so each input keeps its own ranges whatever the kwargs order."""
    forward = mod.forward if isinstance(mod, torch.nn.Module) else mod
    if isinstance(dynamic_shapes, (tuple, list)) and kwargs:
        bound = inspect.signature(forward).bind(*(args or ()), **kwargs).arguments
        if len(bound) == len(dynamic_shapes):
            dynamic_shapes = dict(zip(bound, dynamic_shapes))
    mod, dynamic_shapes = _var_keyword_as_named(mod, forward, kwargs, dynamic_shapes)
    original = original_of(torch.export._trace, "_get_range_constraints")
    return original(mod, export_artifact, args, kwargs, dynamic_shapes)


def _var_keyword_as_named(
    mod: Any, forward: Any, kwargs: Any, dynamic_shapes: Any
) -> tuple[Any, Any]:
    """``(mod, dynamic_shapes)`` for torch's pairing when ``forward`` takes some of
    ``kwargs`` through ``**name``: a stand-in whose signature names them keyword-only (torch
    reads only the signature of ``mod`` here), and their shapes out of ``name``'s dict."""
    if not isinstance(dynamic_shapes, dict) or not kwargs:
        return mod, dynamic_shapes
    signature = inspect.signature(forward)
    var_keyword = next((p for p in signature.parameters.values() if p.kind is p.VAR_KEYWORD), None)
    extra = [key for key in kwargs if key not in signature.parameters]
    inner = dynamic_shapes.get(var_keyword.name) if var_keyword is not None else None
    if not extra or not isinstance(inner, dict) or set(inner) != set(extra):
        return mod, dynamic_shapes
    parameters = [p for p in signature.parameters.values() if p is not var_keyword]
    parameters += [inspect.Parameter(key, inspect.Parameter.KEYWORD_ONLY) for key in extra]

    def stand_in(*args: Any, **kwargs: Any) -> None:
        """Never called: torch reads its signature."""

    stand_in.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    flat = {key: value for key, value in dynamic_shapes.items() if key != var_keyword.name}
    return stand_in, {**flat, **inner}


def print_symbol_or_name(self: Any, expr: Any) -> str:
    """Print a symbol by its input source when it has one, else by its own name."""
    sources = self.symbol_to_source.get(expr)
    if sources:
        return sources[0].name
    return str(expr)
