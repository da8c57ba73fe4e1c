"""``np.arange`` / ``torch.arange`` of sizes read from traced data, kept in the graph.

Both are C functions: a size read from a node's dynamic axis (a :class:`ShapeInt`) would
enter them as a plain number and the range would be fixed at the traced size. These
replacements record ``torch.arange`` with the size computed from the input's, when every
bound is an integer; any other arange of such a size notes the use, so compile_graph
reports the fixed dimension in words (file and line) before writing anything.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from ..patching.source_diff import wraps_original
from .dtypes import to_numpy_side, torch_dtype
from .fresh import made_by_user
from .shape_reads import ShapeInt
from .values import make_traced

_ORIGINALS: dict[str, Callable] = {"np.arange": np.arange, "torch.arange": torch.arange}
_BOUNDS = ("start", "stop", "end", "step")


def _integer_dtype(dtype: Any, numpy_side: bool) -> torch.dtype | None:
    """The torch dtype of an integer arange (None for a float one)."""
    if dtype is None:
        return torch.int64
    kind = torch_dtype(np.dtype(dtype)) if numpy_side else dtype
    return kind if isinstance(kind, torch.dtype) and not kind.is_floating_point else None


def _arange(name: str, numpy_side: bool) -> Callable:
    original = _ORIGINALS[name]

    def replacement(*args: Any, **kwargs: Any) -> Any:
        sizes = [a for a in (*args, *kwargs.values()) if type(a) is ShapeInt]
        if not sizes or not sizes[0]._pp_rec.active:
            result = original(*args, **kwargs)
            return made_by_user(result) if numpy_side else result  # a table, maybe
        rec = sizes[0]._pp_rec
        plain = tuple(int.__int__(a) if type(a) is ShapeInt else a for a in args)
        plain_kw = {k: int.__int__(v) if type(v) is ShapeInt else v for k, v in kwargs.items()}
        result = original(*plain, **plain_kw)
        bounds = [*args, *(v for k, v in kwargs.items() if k in _BOUNDS)]
        extra = set(kwargs) - set(_BOUNDS) - {"dtype", "device", "like"}
        dtype = _integer_dtype(kwargs.get("dtype"), numpy_side)
        if dtype is None or extra or not all(isinstance(b, int) for b in bounds):
            for size in sizes:
                size._use(name)
            return result
        positional = list(args)
        for key in ("start", "stop", "end", "step"):
            if key in kwargs:
                positional.append(kwargs[key])
        node = rec.call(torch.arange, tuple(positional), {"dtype": dtype})
        if numpy_side:
            node = to_numpy_side(rec, node, result.dtype)
        return make_traced(rec, result, node)

    return wraps_original(original)(replacement)  # the original's name, doc, signature


np_arange = _arange("np.arange", numpy_side=True)
torch_arange = _arange("torch.arange", numpy_side=False)

REPLACEMENTS: dict[tuple[Any, str], Callable] = {
    (np, "arange"): np_arange,
    (torch, "arange"): torch_arange,
}
