"""Argument checks of :func:`patchport.torch.export` and :func:`check_program`: a clear
error naming the argument, raised before anything is exported."""

from __future__ import annotations

from typing import Any

import torch

from ..errors import ExportArgumentError


def check_arguments(
    model: Any, args: Any, kwargs: Any, dynamic_shapes: Any, check_shapes: Any
) -> None:
    """Refuse arguments that cannot be exported or checked, naming the argument and the fix."""
    where = "patchport.torch.export"
    if not isinstance(model, torch.nn.Module):
        raise ExportArgumentError(
            f"{where}(model=...): expected a torch.nn.Module, got {type(model).__name__}."
        )
    if not isinstance(args, tuple):
        raise ExportArgumentError(
            f"{where}(args=...): expected a tuple of positional inputs, got "
            f"{type(args).__name__}; wrap a single input as (x,)."
        )
    if kwargs is not None and not isinstance(kwargs, dict):
        raise ExportArgumentError(
            f"{where}(kwargs=...): expected a dict of keyword inputs, got {type(kwargs).__name__}."
        )
    if dynamic_shapes is not None and not isinstance(dynamic_shapes, (dict, tuple, list)):
        raise ExportArgumentError(
            f"{where}(dynamic_shapes=...): expected a dict keyed by input name (or a tuple in "
            f"signature order), got {type(dynamic_shapes).__name__}."
        )
    if check_shapes is not None:
        if not isinstance(check_shapes, (list, tuple)):
            raise ExportArgumentError(
                f"{where}(check_shapes=...): expected a list of inputs (each a dict of keyword "
                f"inputs or a tuple of positional ones), got {type(check_shapes).__name__}."
            )
        for index, item in enumerate(check_shapes):
            if not isinstance(item, (dict, tuple)):
                raise ExportArgumentError(
                    f"{where}(check_shapes=...): item {index} is a {type(item).__name__}; give "
                    f"a dict of keyword inputs or a tuple of positional inputs."
                )
