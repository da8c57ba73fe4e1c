"""Signal processing: convolution, polynomials, unwrapping, gradients, integrals, FFTs,
histograms and sliding windows, as real sensor and audio code calls them.

Each handler reproduces NumPy's own arithmetic (same formulas, same dtypes) so that the
graph matches NumPy on fresh inputs; arguments outside what it reproduces (a non-uniform
``np.gradient`` spacing, ``bins="auto"``...) return None, which the dispatch reports.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from ..dtypes import compute_dtype, dtype_of, torch_dtype, wrap_unsigned
from ..values import is_traced
from .calls import Call, as_python, handler_table, is_array, normalize_axes
from .targets import (
    np_convolve,
    np_gradient,
    np_histogram_edges,
    np_histogram_uniform,
    np_histogramdd,
    np_linspace,
    np_polyval,
    np_sliding_window,
    np_trapezoid,
    np_unwrap,
)

HANDLERS: dict[Callable, Callable] = {}
implements = handler_table(HANDLERS)


def _adjacent(call: Call, y: Any, dim: int, combine: Callable) -> Any:
    """``combine(y[1:], y[:-1])`` along ``dim`` in y's own dtype (NumPy's wrap-around for
    integers, held uint16/uint32 masked back into range)."""
    rec = call.rec
    have = dtype_of(y)
    node = call.t(y, compute_dtype(have))
    n = np.shape(y)[dim]
    later = rec.call(torch.narrow, (node, dim, 1, n - 1))
    earlier = rec.call(torch.narrow, (node, dim, 0, n - 1))
    return wrap_unsigned(rec, rec.call(combine, (later, earlier)), have)


# ---------------------------------------------------------------------- convolution
@implements(np.convolve)
def _convolve(call: Call, a: Any, v: Any, mode: str = "full") -> Any:
    return _conv(call, a, v, mode, correlate=False)


@implements(np.correlate)
def _correlate(call: Call, a: Any, v: Any, mode: str = "valid") -> Any:
    return _conv(call, a, v, mode, correlate=True)


def _conv(call: Call, a: Any, v: Any, mode: str, correlate: bool) -> Any:
    res = call.result.dtype
    if res.kind not in "biuf" or np.ndim(a) != 1 or np.ndim(v) != 1:
        return None
    if mode not in ("full", "same", "valid"):
        return None
    # floats convolve in their dtype (float16 in float32); integers exactly in int64
    work = np.dtype(np.float32) if res == np.float16 else res
    if res.kind in "biu":
        work = np.dtype(np.int64)
    x, k = call.t(a, work), call.t(v, work)
    rec = call.rec
    reverse = False
    if correlate:  # correlate(a, v) = convolve(a, v[::-1]); NumPy swaps a shorter a
        if np.size(v) > np.size(a):
            x, k, reverse = k, x, True
        k = rec.call(torch.flip, (k, [0]))
    elif np.size(v) > np.size(a):  # convolution commutes; the longer goes first
        x, k = k, x
    node = rec.call(np_convolve, (x, k, mode))
    if reverse:
        node = rec.call(torch.flip, (node, [0]))
    if res.kind == "b":
        return rec.call(torch.ne, (node, 0))
    return wrap_unsigned(rec, call.cast(node, work, compute_dtype(res)), res)


# ---------------------------------------------------------------------- polynomials
@implements(np.polyval)
def _polyval(call: Call, p: Any, x: Any) -> Any:
    res = call.result.dtype
    if np.ndim(p) != 1 or res.kind not in "biuf":
        return None
    work = compute_dtype(res)
    coefficients = call.t(p if is_array(p) else np.asarray(p), work)
    node = call.rec.call(np_polyval, (coefficients, call.t(x, work)))
    return wrap_unsigned(call.rec, node, res)


@implements(np.polyfit)
def _polyfit(
    call: Call,
    x: Any,
    y: Any,
    deg: Any,
    rcond: Any = None,
    full: bool = False,
    w: Any = None,
    cov: Any = False,
) -> Any:
    """A fit at sample positions and weights that are not traced (a detrend, a calibration
    curve): NumPy's column-scaled Vandermonde least squares is then one constant matrix
    times ``y``. Traced positions or weights, ``full`` and ``cov`` are not mapped."""
    if is_traced(x) or is_traced(w) or is_traced(deg) or is_traced(rcond) or full or cov:
        return None
    positions = np.asarray(x) + 0.0
    if rcond is None:
        rcond = len(positions) * float(np.finfo(positions.dtype).eps)
    lhs = np.vander(positions, int(deg) + 1)
    weights = None if w is None else np.asarray(w) + 0.0
    if weights is not None:
        lhs = lhs * weights[:, np.newaxis]
    scale = np.sqrt((lhs * lhs).sum(axis=0))
    solve = np.linalg.pinv(lhs / scale, rcond=float(rcond)) / scale[:, np.newaxis]
    res, rec = call.result.dtype, call.rec
    rhs = call.t(y, res)
    if weights is not None:  # NumPy weighs y in place: rounded to y's own float dtype
        column = weights[:, np.newaxis] if np.ndim(y) == 2 else weights
        rhs = rec.call(torch.mul, (call.t(y, np.float64), call.t(column, np.float64)))
        own = np.result_type(dtype_of(y), 0.0)
        rhs = call.cast(call.cast(rhs, np.float64, own), own)  # then to the result dtype
    return rec.call(torch.matmul, (call.t(solve, res), rhs))


# ----------------------------------------------------------------- unwrap, gradient
@implements(np.unwrap)
def _unwrap(
    call: Call, p: Any, discont: Any = None, axis: int = -1, *, period: Any = 2 * math.pi
) -> Any:
    res = call.result.dtype
    if res.kind != "f" or is_array(period) or is_array(discont):
        return None
    period = float(as_python(period))
    discont = period / 2 if discont is None else float(as_python(discont))
    dim = int(axis) % max(np.ndim(p), 1)
    rec = call.rec
    have = dtype_of(p)
    dd = _adjacent(call, p, dim, torch.ne if have.kind == "b" else torch.sub)
    dd_float = rec.cast(dd, torch_dtype(res))
    if have == np.uint64:  # a wrapped difference holds bits at or above 2**63
        negative = rec.call(torch.lt, (dd, 0))
        lifted = rec.call(torch.add, (dd_float, float(2**64)))
        dd_float = rec.call(torch.where, (negative, lifted, dd_float))
    dd = dd_float
    return rec.call(np_unwrap, (call.t(p, res), dd, discont, period, dim))


@implements(np.gradient)
def _gradient(call: Call, f: Any, *varargs: Any, axis: Any = None, edge_order: int = 1) -> Any:
    ndim = np.ndim(f)
    dims = normalize_axes(axis, ndim) or tuple(range(ndim))
    if len(varargs) == 0:
        spacing = [1.0] * len(dims)
    elif len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        spacing = list(varargs) * len(dims)
    elif len(varargs) == len(dims) and all(np.ndim(s) == 0 for s in varargs):
        spacing = list(varargs)
    else:
        return None  # coordinate arrays (non-uniform spacing)
    results = call.result if isinstance(call.result, (tuple, list)) else (call.result,)
    nodes = []
    for dim, dx, res in zip(dims, spacing, results):
        if is_array(dx) or res.dtype.kind != "f":
            return None
        # NumPy divides by the spacing as given: a NumPy float64 promotes float32 data
        work = np.result_type(res.dtype, dx) if isinstance(dx, np.generic) else res.dtype
        node = call.rec.call(
            np_gradient, (call.t(f, work), float(as_python(dx)), dim, int(edge_order))
        )
        nodes.append(call.cast(node, work, res.dtype))
    return nodes[0] if not isinstance(call.result, (tuple, list)) else tuple(nodes)


@implements(np.trapezoid)
def _trapezoid(call: Call, y: Any, x: Any = None, dx: float = 1.0, axis: int = -1) -> Any:
    res = np.dtype(call.result.dtype)
    if res.kind != "f" or (x is None and is_array(dx)):
        return None
    ndim = np.ndim(y)
    dim = int(axis) % max(ndim, 1)
    rec = call.rec
    if x is None:
        d = rec.call(torch.full, ((), float(as_python(dx))), {"dtype": torch_dtype(res)})
    elif np.ndim(x) == 1:
        d = rec.call(torch.diff, (call.t(x, res),))
        shape = [1] * ndim
        shape[dim] = -1
        d = rec.call(torch.reshape, (d, tuple(shape)))
    else:
        d = rec.call(torch.diff, (call.t(x, res),), {"dim": dim})
    pairs = _adjacent(call, y, dim, torch.logical_or if dtype_of(y).kind == "b" else torch.add)
    pairs = rec.cast(pairs, torch_dtype(res))
    return rec.call(np_trapezoid, (pairs, d, dim))


# ------------------------------------------------------------------------- histogram
@implements(np.histogram)
def _histogram(
    call: Call,
    a: Any,
    bins: Any = 10,
    range: Any = None,  # noqa: A002 - NumPy's name
    density: Any = None,
    weights: Any = None,
) -> Any:
    counts, edges = call.result
    if isinstance(bins, str) or dtype_of(a).kind not in "biuf":
        return None
    if weights is not None and dtype_of(weights).kind not in "iuf":
        return None
    rec = call.rec
    work = edges.dtype
    data = call.t(a, work)
    w = None if weights is None else call.t(weights, np.float64)
    if is_array(bins):
        if np.ndim(bins) != 1:
            return None
        edge_node = call.t(bins, work)
        count = rec.call(np_histogram_edges, (data, edge_node, w))
    else:
        if range is not None:  # NumPy subtracts and divides by Python floats here
            lo, hi = (float(as_python(v)) for v in range)
            first = rec.call(torch.full, ((), lo), {"dtype": torch.float64})
            last = rec.call(torch.full, ((), hi), {"dtype": torch.float64})
            denom = rec.call(torch.full, ((), hi - lo), {"dtype": torch.float64})
        else:  # the data's own range, widened by 0.5 on each side when it is one value
            flat = rec.call(torch.reshape, (data, (-1,)))
            first = rec.call(torch.amin, (flat,))
            last = rec.call(torch.amax, (flat,))
            same = rec.call(torch.eq, (first, last))
            first = rec.call(torch.where, (same, rec.call(torch.sub, (first, 0.5)), first))
            last = rec.call(torch.where, (same, rec.call(torch.add, (last, 0.5)), last))
            denom = rec.call(torch.sub, (last, first))
        edge_node = rec.call(np_linspace, (first, last, int(bins) + 1, True, torch_dtype(work)))
        count = rec.call(np_histogram_uniform, (data, edge_node, first, denom, w))
    if density:
        width = rec.call(torch.diff, (edge_node,))
        total = rec.call(torch.sum, (count,))
        count = rec.call(torch.div, (rec.call(torch.div, (count, width)), total))
    return rec.cast(count, torch_dtype(counts.dtype)), edge_node


def _outer_edges(call: Call, column: Any, span: Any) -> tuple[Any, Any]:
    """Nodes of NumPy's outer edges of one axis: ``span`` (constants) or the column's own
    min and max, widened by 0.5 on each side when they are one value."""
    rec = call.rec
    if span is not None:
        lo, hi = (float(as_python(v)) for v in span)
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        first = rec.call(torch.full, ((), lo), {"dtype": torch.float64})
        return first, rec.call(torch.full, ((), hi), {"dtype": torch.float64})
    first = rec.call(torch.amin, (column,))
    last = rec.call(torch.amax, (column,))
    same = rec.call(torch.eq, (first, last))
    first = rec.call(torch.where, (same, rec.call(torch.sub, (first, 0.5)), first))
    last = rec.call(torch.where, (same, rec.call(torch.add, (last, 0.5)), last))
    return first, last


@implements(np.histogramdd)
def _histogramdd(
    call: Call,
    sample: Any,
    bins: Any = 10,
    range: Any = None,  # noqa: A002 - NumPy's name
    density: Any = None,
    weights: Any = None,
) -> Any:
    """A colour-histogram descriptor's np.histogramdd of an (N, D) array: equal bins over a
    range or the data's own, or given edges per axis; weights and density as NumPy."""
    hist, edges = call.result
    if not is_array(sample) or np.ndim(sample) not in (1, 2):
        return None
    if dtype_of(sample).kind not in "biuf":
        return None
    if weights is not None and (np.ndim(weights) != 1 or dtype_of(weights).kind not in "biuf"):
        return None
    rec = call.rec
    data = call.t(sample, np.float64)
    if np.ndim(sample) == 1:
        data = rec.call(torch.reshape, (data, (-1, 1)))
    dims = len(edges)
    try:
        per_axis = list(bins)
    except TypeError:
        per_axis = [bins] * dims
    spans = [None] * dims if range is None else list(range)
    edge_nodes = []
    for i, (count, span) in enumerate(zip(per_axis, spans)):
        if np.ndim(count) == 1:
            edge_nodes.append(call.t(count, np.float64))
            continue
        column = rec.call(torch.select, (data, 1, i))
        first, last = _outer_edges(call, column, span)
        edge_nodes.append(rec.call(np_linspace, (first, last, int(count) + 1, True, torch.float64)))
    w = None if weights is None else call.t(weights, np.float64)
    out = rec.call(np_histogramdd, (data, edge_nodes, w))
    if density:
        total = rec.call(torch.sum, (out,))
        for i, edge in enumerate(edge_nodes):
            shape = [1] * dims
            shape[i] = -1
            width = rec.call(torch.reshape, (rec.call(torch.diff, (edge,)), tuple(shape)))
            out = rec.call(torch.div, (out, width))
        out = rec.call(torch.div, (out, total))
    edge_out = tuple(
        node if np.dtype(result.dtype) == np.float64 else rec.cast(node, torch_dtype(result.dtype))
        for node, result in zip(edge_nodes, edges)
    )
    return out, edge_out


# ----------------------------------------------------------------------------- FFTs
def _fft_handler(fn: Callable) -> Callable:
    """An FFT along one axis, in the precision NumPy used (complex64 / float32 stay)."""

    def handler(
        call: Call, a: Any, n: Any = None, axis: int = -1, norm: Any = None, out: Any = None
    ) -> Any:
        res = call.result
        if out is not None or norm not in (None, "backward", "ortho", "forward"):
            return None
        single = res.dtype in (np.complex64, np.float32)
        if fn is torch.fft.irfft or np.iscomplexobj(a):
            work = np.dtype(np.complex64 if single else np.complex128)
        else:
            work = np.dtype(np.float32 if single else np.float64)
        size = None if n is None else int(n)
        return call.rec.call(fn, (call.t(a, work),), {"n": size, "dim": int(axis), "norm": norm})

    return handler


for _numpy_fft, _torch_fft in (
    (np.fft.fft, torch.fft.fft),
    (np.fft.ifft, torch.fft.ifft),
    (np.fft.rfft, torch.fft.rfft),
    (np.fft.irfft, torch.fft.irfft),
):
    HANDLERS[_numpy_fft] = _fft_handler(_torch_fft)


@implements(np.fft.fftshift)
def _fftshift(call: Call, x: Any, axes: Any = None) -> Any:
    return _roll_half(call, x, axes, 1)


@implements(np.fft.ifftshift)
def _ifftshift(call: Call, x: Any, axes: Any = None) -> Any:
    return _roll_half(call, x, axes, -1)


def _roll_half(call: Call, x: Any, axes: Any, sign: int) -> Any:
    shape = np.shape(x)
    dims = list(range(len(shape))) if axes is None else [int(d) for d in np.atleast_1d(axes)]
    shifts = [sign * (shape[d] // 2) for d in dims]
    return call.rec.call(torch.roll, (call.n(x), shifts, dims))


# ------------------------------------------------------------------- sliding windows
@implements(np.lib.stride_tricks.sliding_window_view)
def _sliding_window_view(
    call: Call,
    x: Any,
    window_shape: Any,
    axis: Any = None,
    *,
    subok: bool = False,
    writeable: bool = False,
) -> Any:
    if writeable:
        return None  # writes through overlapping windows: not a functional op
    ndim = np.ndim(x)
    window = [int(w) for w in np.atleast_1d(window_shape)]
    dims = list(range(ndim)) if axis is None else [int(d) % ndim for d in np.atleast_1d(axis)]
    if len(dims) != len(window):
        return None
    return call.rec.call(np_sliding_window, (call.n(x), window, dims))
