"""How a replacement's result is compared with the original's, for objects that are not
arrays: a class registers a view of what it holds (a traced scipy ``Rotation`` and SciPy's
own compare by their quaternions). Read by the session's trace-time check
(:mod:`patchport.sessions.verify`); written by the replacement sets that return such
objects, which is why it lives below both."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

# class -> function returning the values its objects are compared by
_COMPARED_AS: dict[type, Callable[[Any], Any]] = {}


def register_comparison(cls: type, view: Callable[[Any], Any]) -> None:
    """Compare results that are ``cls`` objects (or of its subclasses) by ``view(obj)``: a
    tuple of arrays and plain values, read without recording anything."""
    _COMPARED_AS[cls] = view


def compared_view(obj: Any) -> Any:
    """``obj`` as the values it is compared by (itself unless its class registered a view)."""
    if _COMPARED_AS and not isinstance(obj, (np.ndarray, torch.Tensor, tuple, list, dict)):
        for cls in type(obj).__mro__:
            view = _COMPARED_AS.get(cls)
            if view is not None:
                return ("compared", view(obj))
    return obj
