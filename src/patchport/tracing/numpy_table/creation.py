"""Creation functions: ``*_like``, ``linspace`` and ``meshgrid``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from ..dtypes import torch_dtype
from .calls import Call, handler_table, is_array
from .targets import np_linspace

HANDLERS: dict[Callable, Callable] = {}
implements = handler_table(HANDLERS)


@implements(np.zeros_like, np.empty_like)
def _zeros_like(call: Call, a: Any, dtype: Any = None, *args: Any, **kw: Any) -> Any:
    res = call.result
    return call.rec.call(torch.zeros, (tuple(res.shape),), {"dtype": torch_dtype(res.dtype)})


@implements(np.ones_like)
def _ones_like(call: Call, a: Any, dtype: Any = None, *args: Any, **kw: Any) -> Any:
    res = call.result
    return call.rec.call(torch.ones, (tuple(res.shape),), {"dtype": torch_dtype(res.dtype)})


@implements(np.full_like)
def _full_like(
    call: Call, a: Any, fill_value: Any, dtype: Any = None, *args: Any, **kw: Any
) -> Any:
    res = call.result
    if is_array(fill_value):
        fill = call.t(fill_value)
        return call.rec.call(torch.broadcast_to, (fill, tuple(res.shape)))
    value = np.asarray(fill_value).astype(res.dtype).item()
    return call.rec.call(torch.full, (tuple(res.shape), value), {"dtype": torch_dtype(res.dtype)})


@implements(np.linspace)
def _linspace(
    call: Call,
    start: Any,
    stop: Any,
    num: int = 50,
    endpoint: bool = True,
    retstep: bool = False,
    dtype: Any = None,
    axis: int = 0,
    **kw: Any,
) -> Any:
    if retstep:
        return None
    node = call.op(
        np_linspace,
        call.t(start, np.float64),
        call.t(stop, np.float64),
        int(num),
        bool(endpoint),
        torch_dtype(call.result.dtype),
    )
    if axis != 0:
        node = call.rec.call(torch.movedim, (node, 0, int(axis)))
    return node


@implements(np.meshgrid)
def _meshgrid(
    call: Call, *xi: Any, copy: bool = True, sparse: bool = False, indexing: str = "xy"
) -> Any:
    nodes = []
    for x, res in zip(xi, call.result):
        flat = call.op(torch.reshape, x, tuple(res.shape) if sparse else (-1,))
        if not sparse:
            full = [1] * res.ndim
            where = res.shape.index(int(np.size(x))) if np.size(x) in res.shape else 0
            full[where] = int(np.size(x))
            flat = call.rec.call(torch.reshape, (flat, tuple(full)))
            flat = call.rec.call(torch.broadcast_to, (flat, tuple(res.shape)))
        nodes.append(flat)
    return tuple(nodes)
