"""Fixes to torch.export's bookkeeping of dynamic dimensions (not to shape reasoning).

- ``_get_range_constraints``: with kwargs given in another order than ``forward``'s
  signature and ``dynamic_shapes`` given as a tuple or list (signature order), torch
  pairs each input with another input's ranges, so the program rejects valid sizes.
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
    if isinstance(dynamic_shapes, (tuple, list)) and kwargs:
        forward = mod.forward if isinstance(mod, torch.nn.Module) else mod
        bound = inspect.signature(forward).bind(*(args or ()), **kwargs).arguments
        if len(bound) == len(dynamic_shapes):
            dynamic_shapes = dict(zip(bound, dynamic_shapes))
    original = original_of(torch.export._trace, "_get_range_constraints")
    return original(mod, export_artifact, args, kwargs, dynamic_shapes)


def print_symbol_or_name(self: Any, expr: Any) -> str:
    """Print a symbol by its input source when it has one, else by its own name."""
    sources = self.symbol_to_source.get(expr)
    if sources:
        return sources[0].name
    return str(expr)
