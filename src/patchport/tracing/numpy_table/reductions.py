"""Reductions and scans: ``np.sum``-like functions and ``ufunc.reduce``/``accumulate``."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from ..dtypes import dtype_of, torch_dtype
from ..loss import report_loss
from ..recorder import Recorder
from ..values import TracedArray, TracedTensor, active_recorder
from .calls import Call, Node, handler_table, is_array, normalize_axes
from .targets import (
    np_all,
    np_amax,
    np_amin,
    np_any,
    np_argmax,
    np_argmin,
    np_bincount,
    np_count_nonzero,
    np_cum_and,
    np_cum_or,
    np_cummax,
    np_cummin,
    np_mean,
    np_nan_fill,
    np_nanmean,
    np_nanquantile,
    np_nanvar,
    np_prod,
    np_quantile,
    np_std,
    np_sum,
    np_var,
    np_weighted_average,
)

HANDLERS: dict[Callable, Callable] = {}
implements = handler_table(HANDLERS)


REDUCERS: dict[np.ufunc, Callable] = {
    np.add: np_sum,
    np.multiply: np_prod,
    np.maximum: np_amax,
    np.minimum: np_amin,
    np.logical_and: np_all,
    np.logical_or: np_any,
}


ACCUMULATORS: dict[np.ufunc, Callable] = {
    np.add: torch.cumsum,
    np.multiply: torch.cumprod,
    np.maximum: np_cummax,
    np.minimum: np_cummin,
    np.logical_and: np_cum_and,
    np.logical_or: np_cum_or,
}


def _everywhere(where: Any) -> bool:
    """True for a ``where=`` that selects every element (a plain True)."""
    return type(where) in (bool, np.bool_) and bool(where)


def record_ufunc_method(
    rec: Recorder, ufunc: np.ufunc, method: str, inputs: tuple, kwargs: dict, result: Any
) -> Any:
    """Record ``ufunc.reduce`` / ``ufunc.accumulate``; None when not mapped (``where=True``,
    NumPy's own default that its ``mean`` passes on, changes nothing)."""
    if _everywhere(kwargs.get("where", True)):
        kwargs = {k: v for k, v in kwargs.items() if k != "where"}
    if any(k not in ("axis", "dtype", "keepdims") for k in kwargs) or len(inputs) != 1:
        return None
    call = Call(rec, result)
    x = inputs[0]
    if not is_array(x):
        return None
    axis = kwargs.get("axis", 0)
    have = dtype_of(x)
    if method == "reduce":
        fn = REDUCERS.get(ufunc)
        if fn is None:
            return None
        dims = normalize_axes(axis, x.ndim)
        keep = bool(kwargs.get("keepdims", False))
        if fn in (np_sum, np_prod):
            return call.op(fn, x, dims, keep, torch_dtype(result.dtype))
        node = call.op(fn, x, dims, keep)
        out_have = np.dtype(bool) if fn in (np_all, np_any) else have
        return call.done(node, out_have)
    if method == "accumulate":
        fn = ACCUMULATORS.get(ufunc)
        if fn is None:
            return None
        dim = int(axis if axis is not None else 0) % max(x.ndim, 1)
        if fn in (torch.cumsum, torch.cumprod):
            return record_cumulative(call, "sum" if fn is torch.cumsum else "prod", x, dim)
        node = call.op(fn, call.cast(call.n(x), have, result.dtype), dim)
        return call.done(node, bool if fn in (np_cum_and, np_cum_or) else result.dtype)
    return None


@implements(np.sum)
def _sum(
    call: Call,
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    keepdims: bool = False,
    **kw: Any,
) -> Any:
    if kw.get("where", True) is not True or "initial" in kw:
        return None
    return call.op(
        np_sum, a, normalize_axes(axis, a.ndim), bool(keepdims), torch_dtype(call.result.dtype)
    )


@implements(np.prod)
def _prod(
    call: Call,
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    keepdims: bool = False,
    **kw: Any,
) -> Any:
    if kw.get("where", True) is not True or "initial" in kw:
        return None
    return call.op(
        np_prod, a, normalize_axes(axis, a.ndim), bool(keepdims), torch_dtype(call.result.dtype)
    )


@implements(np.mean)
def _mean(
    call: Call,
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    keepdims: bool = False,
    **kw: Any,
) -> Any:
    if kw.get("where", True) is not True:
        return None
    return call.op(
        np_mean, a, normalize_axes(axis, a.ndim), bool(keepdims), torch_dtype(call.result.dtype)
    )


def _var_like(fn: Callable) -> Callable:
    def handler(
        call: Call,
        a: Any,
        axis: Any = None,
        dtype: Any = None,
        out: Any = None,
        ddof: float = 0,
        keepdims: bool = False,
        **kw: Any,
    ) -> Any:
        if kw.get("where", True) is not True or kw.get("mean") is not None:
            return None
        if kw.get("correction") is not None:
            ddof = kw["correction"]
        return call.op(
            fn,
            a,
            normalize_axes(axis, a.ndim),
            float(ddof),
            bool(keepdims),
            torch_dtype(call.result.dtype),
        )

    return handler


HANDLERS[np.var] = _var_like(np_var)


HANDLERS[np.std] = _var_like(np_std)


@implements(np.max, np.amax)
def _max(
    call: Call, a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, **kw: Any
) -> Any:
    if kw:
        return None
    return call.op(np_amax, a, normalize_axes(axis, a.ndim), bool(keepdims))


@implements(np.min, np.amin)
def _min(
    call: Call, a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, **kw: Any
) -> Any:
    if kw:
        return None
    return call.op(np_amin, a, normalize_axes(axis, a.ndim), bool(keepdims))


@implements(np.ptp)
def _ptp(call: Call, a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
    dims = normalize_axes(axis, a.ndim)
    hi = call.op(np_amax, a, dims, bool(keepdims))
    lo = call.op(np_amin, a, dims, bool(keepdims))
    return call.rec.call(torch.sub, (hi, lo))


@implements(np.argmax)
def _argmax(
    call: Call, a: Any, axis: Any = None, out: Any = None, *, keepdims: bool = False
) -> Any:
    dim = None if axis is None else int(axis) % a.ndim
    return call.op(np_argmax, a, dim, bool(keepdims))


@implements(np.argmin)
def _argmin(
    call: Call, a: Any, axis: Any = None, out: Any = None, *, keepdims: bool = False
) -> Any:
    dim = None if axis is None else int(axis) % a.ndim
    return call.op(np_argmin, a, dim, bool(keepdims))


def record_cumulative(call: Call, kind: str, a: Any, dim: int | None) -> Node:
    """cumsum/cumprod (``kind``) along dim (None: flattened) in the result dtype.

    The torch op is a node of its own, so exporters can swap it (ONNX has no cumprod).
    """
    node = call.n(a)
    if dim is None:
        node, dim = call.rec.call(torch.reshape, (node, (-1,))), 0
    fn = torch.cumsum if kind == "sum" else torch.cumprod
    return call.rec.call(fn, (node, dim), {"dtype": torch_dtype(call.result.dtype)})


@(
    implements(np.cumsum, np.cumulative_sum)
    if hasattr(np, "cumulative_sum")
    else implements(np.cumsum)
)
def _cumsum(
    call: Call, a: Any, axis: Any = None, dtype: Any = None, out: Any = None, **kw: Any
) -> Any:
    if kw.get("include_initial"):
        return None
    return record_cumulative(call, "sum", a, None if axis is None else int(axis) % a.ndim)


@implements(np.cumprod)
def _cumprod(call: Call, a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    return record_cumulative(call, "prod", a, None if axis is None else int(axis) % a.ndim)


@implements(np.all)
def _all(
    call: Call, a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, **kw: Any
) -> Any:
    if kw:
        return None
    return call.op(np_all, a, normalize_axes(axis, a.ndim), bool(keepdims))


@implements(np.any)
def _any(
    call: Call, a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, **kw: Any
) -> Any:
    if kw:
        return None
    return call.op(np_any, a, normalize_axes(axis, a.ndim), bool(keepdims))


@implements(np.count_nonzero)
def _count_nonzero(call: Call, a: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    return call.op(np_count_nonzero, a, normalize_axes(axis, a.ndim), bool(keepdims))


@implements(np.average)
def _average(
    call: Call,
    a: Any,
    axis: Any = None,
    weights: Any = None,
    returned: bool = False,
    *,
    keepdims: bool = False,
) -> Any:
    dtype = torch_dtype(call.result.dtype if not returned else call.result[0].dtype)
    dims = normalize_axes(axis, a.ndim)
    if returned:
        return None
    if weights is None:
        return call.op(np_mean, a, dims, bool(keepdims), dtype)
    w = call.t(weights, call.result.dtype)
    return call.op(np_weighted_average, a, w, dims, bool(keepdims), dtype)


def _quantile_like(scale: float, target: Callable = np_quantile) -> Callable:
    def handler(
        call: Call,
        a: Any,
        q: Any = 0.5,
        axis: Any = None,
        out: Any = None,
        overwrite_input: bool = False,
        method: str = "linear",
        keepdims: bool = False,
        **kw: Any,
    ) -> Any:
        if method != "linear" or kw.get("weights") is not None:
            return None
        if is_array(q) and isinstance(q, (TracedArray, TracedTensor)):
            return None
        qv = np.asarray(q, dtype=np.float64) / scale
        dtype = torch_dtype(call.result.dtype)
        return call.op(
            target,
            a,
            qv.ravel().tolist(),
            list(qv.shape),
            normalize_axes(axis, a.ndim),
            bool(keepdims),
            dtype,
        )

    return handler


HANDLERS[np.quantile] = _quantile_like(1.0)


HANDLERS[np.percentile] = _quantile_like(100.0)


HANDLERS[np.nanquantile] = _quantile_like(1.0, np_nanquantile)


HANDLERS[np.nanpercentile] = _quantile_like(100.0, np_nanquantile)


@implements(np.median)
def _median(
    call: Call,
    a: Any,
    axis: Any = None,
    out: Any = None,
    overwrite_input: bool = False,
    keepdims: bool = False,
) -> Any:
    dtype = torch_dtype(call.result.dtype)
    return call.op(np_quantile, a, [0.5], [], normalize_axes(axis, a.ndim), bool(keepdims), dtype)


@implements(np.nanmedian)
def _nanmedian(
    call: Call,
    a: Any,
    axis: Any = None,
    out: Any = None,
    overwrite_input: bool = False,
    keepdims: bool = False,
) -> Any:
    if out is not None:
        return None
    dtype = torch_dtype(call.result.dtype)
    dims = normalize_axes(axis, a.ndim)
    return call.op(np_nanquantile, a, [0.5], [], dims, bool(keepdims), dtype)


def _nan_reduction(fill: float, fn: Callable) -> Callable:
    def handler(
        call: Call, a: Any, axis: Any = None, *args: Any, keepdims: bool = False, **kw: Any
    ) -> Any:
        if args or set(kw) - {"out", "dtype"} or kw.get("out") is not None:
            return None
        filled = call.op(np_nan_fill, a, fill)
        dims = normalize_axes(axis, a.ndim)
        if fn in (np_sum, np_prod):
            return call.rec.call(fn, (filled, dims, bool(keepdims), torch_dtype(call.result.dtype)))
        return call.done(call.rec.call(fn, (filled, dims, bool(keepdims))), dtype_of(a))

    return handler


HANDLERS[np.nansum] = _nan_reduction(0.0, np_sum)


HANDLERS[np.nanprod] = _nan_reduction(1.0, np_prod)


HANDLERS[np.nanmax] = _nan_reduction(-math.inf, np_amax)


HANDLERS[np.nanmin] = _nan_reduction(math.inf, np_amin)


@implements(np.nanmean)
def _nanmean(
    call: Call,
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    keepdims: bool = False,
    **kw: Any,
) -> Any:
    if kw or out is not None:
        return None
    dims = normalize_axes(axis, a.ndim)
    return call.op(np_nanmean, a, dims, bool(keepdims), torch_dtype(call.result.dtype))


def _nanvar_like(take_root: bool) -> Callable:
    """np.nanvar / np.nanstd (``take_root``) with NumPy's ddof; ``where=`` and ``mean=``
    and complex data are not mapped."""

    def handler(
        call: Call,
        a: Any,
        axis: Any = None,
        dtype: Any = None,
        out: Any = None,
        ddof: float = 0,
        keepdims: bool = False,
        **kw: Any,
    ) -> Any:
        if kw.get("where", True) is not True or kw.get("mean") is not None or out is not None:
            return None
        if dtype_of(a).kind == "c":
            return None
        if kw.get("correction") is not None:
            ddof = kw["correction"]
        dims = normalize_axes(axis, a.ndim)
        res = torch_dtype(call.result.dtype)
        node = call.op(np_nanvar, a, dims, float(ddof), bool(keepdims), res)
        return call.rec.call(torch.sqrt, (node,)) if take_root else node

    return handler


HANDLERS[np.nanvar] = _nanvar_like(False)


HANDLERS[np.nanstd] = _nanvar_like(True)


def _nan_position(fill: float, fn: Callable) -> Callable:
    """np.nanargmax / np.nanargmin: the position among the values that are not NaN (NumPy
    refuses an all-NaN slice before anything is recorded)."""

    def handler(
        call: Call, a: Any, axis: Any = None, out: Any = None, *, keepdims: bool = False
    ) -> Any:
        if out is not None:
            return None
        dim = None if axis is None else int(axis) % a.ndim
        return call.rec.call(fn, (call.op(np_nan_fill, a, fill), dim, bool(keepdims)))

    return handler


HANDLERS[np.nanargmax] = _nan_position(-math.inf, np_argmax)


HANDLERS[np.nanargmin] = _nan_position(math.inf, np_argmin)


def _nan_cumulative(kind: str) -> Callable:
    """np.nancumsum / np.nancumprod: NaNs count as 0 (sum) or 1 (product)."""

    def handler(call: Call, a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
        if out is not None:
            return None
        filled = call.op(np_nan_fill, a, 0.0 if kind == "sum" else 1.0)
        return record_cumulative(call, kind, filled, None if axis is None else int(axis) % a.ndim)

    return handler


HANDLERS[np.nancumsum] = _nan_cumulative("sum")


HANDLERS[np.nancumprod] = _nan_cumulative("prod")


@implements(np.bincount)
def _bincount(call: Call, x: Any, weights: Any = None, minlength: int = 0) -> Any:
    length = len(call.result)
    if length > int(minlength) and active_recorder(x) is call.rec:
        report_loss(
            call.rec,
            f"np.bincount without a minlength covering the bins: its length max(x) + 1 = "
            f"{length} is read from the traced data",
            f"the exported model always returns {length} bins and drops larger values; "
            f"pass minlength=<the number of bins>",
        )
    w = None if weights is None else call.t(weights, np.float64)
    node = call.rec.call(np_bincount, (call.n(x), w, len(call.result)))
    return call.done(node, np.float64 if weights is not None else np.int64)
