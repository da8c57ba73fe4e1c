"""A call of every NumPy -> torch table entry, usable on arrays of any dtype.

Each :class:`Op` takes two arrays ``x`` and ``y`` (same shape and dtype) and calls one
family of table entries; ``covers`` names the entries it exercises so tests can check
that the catalog reaches the whole table. Whether NumPy accepts an op for a dtype is
decided by NumPy itself (a ``TypeError`` on the plain call), never by a list here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from patchport.tracing.numpy_table import ACCUMULATORS, FUNCTIONS, REDUCERS, UFUNCS


@dataclass(frozen=True)
class Op:
    """One catalog entry: a name, a call on ``(x, y)``, the table entries it covers."""

    name: str
    fn: Callable[[Any, Any], Any]
    covers: tuple = ()
    full_range: bool = False  # also run on full-range integers (wrap-around, sign bits)


# ufuncs whose operands need another shape or dtype than (x, y)
_SPECIAL_UFUNCS: dict[Any, Callable[[Any, Any], Any]] = {
    np.matmul: lambda x, y: np.matmul(x, y.T),
    np.vecdot: lambda x, y: np.vecdot(x, y),
    np.ldexp: lambda x, y: np.ldexp(x, (y % 4).astype(np.int32)),
    np.arccosh: lambda x, y: np.arccosh(np.abs(x) + 1),
    np.left_shift: lambda x, y: np.left_shift(x, (y % 3).astype(x.dtype)),
    np.right_shift: lambda x, y: np.right_shift(x, (y % 3).astype(x.dtype)),
    np.power: lambda x, y: np.power(x, np.abs(y) % 4),
}
for _name in ("matvec", "vecmat"):
    if hasattr(np, _name):
        _SPECIAL_UFUNCS[getattr(np, _name)] = (
            (lambda x, y: np.matvec(x.T @ y, y[0]))
            if _name == "matvec"
            else (lambda x, y: np.vecmat(y[0], x.T @ y))
        )

# ufuncs whose wrap-around or sign handling full-range integers exercise
_FULL_RANGE_UFUNCS = {
    np.add, np.subtract, np.multiply, np.negative, np.absolute, np.invert, np.greater,
    np.less_equal, np.equal, np.maximum, np.minimum, np.floor_divide, np.remainder, np.fmod,
    np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.right_shift, np.sign, np.square,
    np.divide, np.bitwise_count,
}  # fmt: skip


def _ufunc_op(ufunc: np.ufunc) -> Op:
    fn = _SPECIAL_UFUNCS.get(ufunc)
    if fn is None:
        fn = ufunc if ufunc.nin == 2 else (lambda x, y, u=ufunc: u(x))
    return Op(ufunc.__name__, fn, (ufunc,), full_range=ufunc in _FULL_RANGE_UFUNCS)


def _square(x: Any) -> Any:
    """A well-conditioned 3x3 matrix from x (integers go to float64 first, as linalg does)."""
    m = x if x.dtype.kind == "f" else x.astype(np.float64)
    return m[:3, :3] * 1 + np.eye(3, dtype=m.dtype) * 8


_SQUARE = _square

FUNCTION_OPS = [
    # reductions
    Op("sum", lambda x, y: (np.sum(x), np.sum(x, axis=0), x.sum(axis=1, keepdims=True)),
       (np.sum,), full_range=True),
    Op("prod", lambda x, y: (np.prod(x, axis=0), x.prod()), (np.prod,), full_range=True),
    Op("mean", lambda x, y: (np.mean(x), np.mean(x, axis=1)), (np.mean,)),
    Op("var-std", lambda x, y: (np.var(x, axis=0), np.std(x, ddof=1)), (np.var, np.std)),
    Op("max-min", lambda x, y: (np.max(x, axis=0), np.amax(x), np.min(x, axis=1), np.amin(x)),
       (np.max, np.amax, np.min, np.amin), full_range=True),
    Op("ptp", lambda x, y: np.ptp(x, axis=1), (np.ptp,)),
    Op("argmax-argmin", lambda x, y: (np.argmax(x), np.argmin(x, axis=1)),
       (np.argmax, np.argmin), full_range=True),
    Op("cumsum", lambda x, y: (np.cumsum(x), np.cumsum(x, axis=1)),
       (np.cumsum, getattr(np, "cumulative_sum", np.cumsum)), full_range=True),
    Op("cumprod", lambda x, y: (np.cumprod(x, axis=0), np.cumprod(x)), (np.cumprod,),
       full_range=True),
    Op("all-any", lambda x, y: (np.all(x, axis=0), np.any(x)), (np.all, np.any)),
    Op("count_nonzero", lambda x, y: np.count_nonzero(x, axis=0), (np.count_nonzero,)),
    Op("average", lambda x, y: (np.average(x, axis=0), np.average(x, axis=1, weights=x[0])),
       (np.average,)),
    Op("median-quantile", lambda x, y: (np.median(x, axis=0), np.quantile(x, 0.25),
                                        np.percentile(x, 90, axis=1)),
       (np.median, np.quantile, np.percentile)),
    Op("nan-reductions", lambda x, y: (np.nansum(x, axis=0), np.nanprod(x, axis=1),
                                       np.nanmax(x), np.nanmin(x, axis=0), np.nanmean(x)),
       (np.nansum, np.nanprod, np.nanmax, np.nanmin, np.nanmean)),
    Op("nan-spread", lambda x, y: (np.nanstd(x, axis=0), np.nanvar(x, ddof=1), np.nanargmax(x),
                                   np.nanargmin(x, axis=1), np.nancumsum(x, axis=1),
                                   np.nancumprod(x)),
       (np.nanstd, np.nanvar, np.nanargmax, np.nanargmin, np.nancumsum, np.nancumprod)),
    Op("nan-quantiles", lambda x, y: (np.nanquantile(np.where(x > y, np.nan, x), [0.1, 0.9]),
                                      np.nanpercentile(np.where(x > y, np.nan, x), 40, axis=0),
                                      np.nanmedian(np.where(x > y, np.nan, x), axis=1)),
       (np.nanquantile, np.nanpercentile, np.nanmedian)),
    Op("ufunc-reduce", lambda x, y: tuple(u.reduce(x, axis=1) for u in REDUCERS), ()),
    Op("ufunc-accumulate", lambda x, y: tuple(u.accumulate(x, axis=0) for u in ACCUMULATORS),
       ()),
    # shapes
    Op("reshape", lambda x, y: (np.reshape(x, (4, 3)), np.ravel(x), np.squeeze(x[None]),
                                np.expand_dims(x, 1)),
       (np.reshape, np.ravel, np.squeeze, np.expand_dims)),
    Op("atleast", lambda x, y: (np.atleast_1d(x[0, 0]), np.atleast_2d(x[0]), np.atleast_3d(x)),
       (np.atleast_1d, np.atleast_2d, np.atleast_3d)),
    Op("transpose", lambda x, y: (np.transpose(x), np.swapaxes(x, 0, 1),
                                  np.moveaxis(x[None], 0, -1)),
       (np.transpose, np.swapaxes, np.moveaxis, getattr(np, "permute_dims", np.transpose))),
    Op("concatenate", lambda x, y: (np.concatenate([x, y]), np.concatenate((x, y), axis=None),
                                    np.append(x, y), np.append(x, y, axis=1)),
       (np.concatenate, getattr(np, "concat", np.concatenate), np.append)),
    Op("stack", lambda x, y: (np.stack([x, y], axis=1), np.vstack([x, y]), np.hstack([x, y]),
                              np.dstack([x, y]), np.column_stack([x[0], y[0]])),
       (np.stack, np.vstack, np.hstack, np.dstack, np.column_stack,
        getattr(np, "row_stack", np.vstack))),
    Op("block", lambda x, y: (np.block([[x, y], [y, x]]), np.block([x[0], y[0]])), (np.block,)),
    Op("split", lambda x, y: (*np.split(x, 2, axis=1), *np.array_split(x, 2)),
       (np.split, np.array_split)),
    Op("flip-roll", lambda x, y: (np.flip(x), np.fliplr(x), np.flipud(x), np.roll(x, 1, axis=1),
                                  np.rot90(x)),
       (np.flip, np.fliplr, np.flipud, np.roll, np.rot90)),
    Op("broadcast", lambda x, y: (np.broadcast_to(x[:1], (3, 4)),
                                  *np.broadcast_arrays(x[:, :1], y[:1])),
       (np.broadcast_to, np.broadcast_arrays)),
    Op("tile-repeat", lambda x, y: (np.tile(x, (1, 2)), np.repeat(x, 2, axis=0)),
       (np.tile, np.repeat)),
    Op("pad", lambda x, y: (np.pad(x, 1, constant_values=1), np.pad(x, (1, 2), mode="edge"),
                            np.pad(x, 1, mode="reflect"), np.pad(x, 1, mode="wrap")),
       (np.pad,)),
    # indexing functions
    Op("take", lambda x, y: (np.take(x, [0, -1, 2]), np.take_along_axis(x, np.argsort(y), 1)),
       (np.take, np.take_along_axis)),
    Op("where-select", lambda x, y: (np.where(x > y, x, y), np.where(x > y, x, 1),
                                     np.select([x > y, x < y], [x, y], default=1)),
       (np.where, np.select), full_range=True),
    Op("nonzero", lambda x, y: (*np.nonzero(x > y), np.argwhere(x > y), np.flatnonzero(x > y)),
       (np.nonzero, np.argwhere, np.flatnonzero)),
    Op("unravel_index",  # a stable argsort: integer data has ties, which NumPy's sort orders
       lambda x, y: (*np.unravel_index(np.argmax(x, axis=1), (2, 2)),
                     *np.unravel_index(np.argsort(y, axis=None, kind="stable"), (3, 4), "F")),
       (np.unravel_index,)),
    Op("sort", lambda x, y: (np.sort(x), np.sort(x, axis=0), np.argsort(x, kind="stable")),
       (np.sort, np.argsort), full_range=True),
    Op("partition", lambda x, y: (np.partition(x, 1, axis=1)[:, 1],
                                  np.take_along_axis(x, np.argpartition(x, 0), 1)[:, 0]),
       (np.partition, np.argpartition)),
    Op("searchsorted", lambda x, y: (np.searchsorted(np.sort(x[0]), y),
                                     np.digitize(y, np.sort(x[0]))),
       (np.searchsorted, np.digitize)),
    Op("interp", lambda x, y: np.interp(y, np.sort(x[0]), x[1]), (np.interp,)),
    Op("bincount", lambda x, y: np.bincount(x.ravel() % 10, minlength=10), (np.bincount,)),
    # signal processing
    Op("convolve", lambda x, y: (np.convolve(x[0], y[1, :3]), np.convolve(x[1], y[0], "same"),
                                 np.correlate(x[2], y[2, 1:], "valid")),
       (np.convolve, np.correlate)),
    Op("polyval-unwrap", lambda x, y: (np.polyval(y[0, :3], x), np.unwrap(x[0]),
                                       np.trapezoid(x, axis=0), np.gradient(x[0], 0.5)),
       (np.polyval, np.unwrap, np.trapezoid, np.gradient)),
    Op("polyfit-lstsq", lambda x, y: (np.polyfit(np.arange(3.0), x, 1),
                                      np.polyfit(np.arange(4), y[0], 2, w=np.arange(1, 5)),
                                      np.linalg.lstsq(np.vander(np.arange(3.0), 2), y)[0]),
       (np.polyfit, np.linalg.lstsq)),
    Op("insert", lambda x, y: (np.insert(x, 1, y[0], axis=0), np.insert(x, -1, y[1, 2]),
                               np.insert(x, 0, 1, axis=1)),
       (np.insert,)),
    Op("histogram", lambda x, y: (*np.histogram(x, bins=4, range=(-2, 3)),
                                  np.histogram(x, bins=np.array([-1.0, 0.5, 2.0]))[0]),
       (np.histogram,)),
    Op("histogramdd", lambda x, y: np.histogramdd(np.stack([x.ravel(), y.ravel()], 1),
                                                  bins=(3, 2), range=((-2, 3), (-1, 2)))[0],
       (np.histogramdd,)),
    Op("fft", lambda x, y: (np.abs(np.fft.rfft(x)), np.abs(np.fft.fft(x[0])),
                            np.fft.irfft(np.fft.rfft(x[0])), np.abs(np.fft.ifft(x[1])),
                            np.fft.fftshift(x),
                            np.fft.ifftshift(x, axes=0)),
       (np.fft.rfft, np.fft.fft, np.fft.irfft, np.fft.ifft, np.fft.fftshift, np.fft.ifftshift)),
    Op("sliding_window", lambda x, y: sliding_window_view(x, (2, 3)),
       (sliding_window_view,)),
    # linear algebra
    Op("dot", lambda x, y: (np.dot(x, y.T), np.vdot(x, y), np.inner(x, y), np.outer(x[0], y[0]),
                            np.tensordot(x, y, axes=([1], [1])), np.einsum("ij,kj->ik", x, y)),
       (np.dot, np.vdot, np.inner, np.outer, np.tensordot, np.einsum)),
    Op("cross", lambda x, y: np.cross(x[:, :3], y[:, :3]), (np.cross,)),
    Op("norm", lambda x, y: (np.linalg.norm(x), np.linalg.norm(x, axis=1)), (np.linalg.norm,)),
    Op("inv-det-solve", lambda x, y: (np.linalg.inv(_SQUARE(x)), np.linalg.det(_SQUARE(x)),
                                      np.linalg.solve(_SQUARE(x), _SQUARE(y)[0])),
       (np.linalg.inv, np.linalg.det, np.linalg.solve)),
    Op("cholesky-pinv-eigvalsh",
       lambda x, y: (np.linalg.cholesky(_SQUARE(x) @ _SQUARE(x).T),
                     np.linalg.pinv(_SQUARE(x)[:2], rcond=1e-8),
                     np.linalg.eigvalsh(_SQUARE(x) + _SQUARE(y).T),
                     np.linalg.svd(_SQUARE(x)[:, :2], compute_uv=False)),
       (np.linalg.cholesky, np.linalg.pinv, np.linalg.eigvalsh, np.linalg.svd)),
    Op("matrix_power-multi_dot",
       lambda x, y: (np.linalg.matrix_power(_SQUARE(x), 2), np.linalg.matrix_power(_SQUARE(y), -1),
                     np.linalg.multi_dot([_SQUARE(x), _SQUARE(y), _SQUARE(x)[0]])),
       (np.linalg.matrix_power, np.linalg.multi_dot)),
    Op("trace-diag", lambda x, y: (np.trace(x), np.diagonal(x, 1), np.diag(x), np.diag(x[0]),
                                   np.diff(x), np.triu(x), np.tril(x, -1)),
       (np.trace, np.diagonal, np.diag, np.diff, np.triu, np.tril)),
    # element-wise helpers
    Op("clip", lambda x, y: (np.clip(x, 1, 4), np.clip(x, y, None)), (np.clip,),
       full_range=True),
    Op("round", lambda x, y: (np.round(x, 1), np.around(x), np.fix(x)),
       (np.round, np.around, np.fix)),
    Op("nan_to_num", lambda x, y: np.nan_to_num(x / y), (np.nan_to_num,)),
    Op("isclose", lambda x, y: np.isclose(x, y, atol=0.5), (np.isclose,)),
    Op("copy-real-imag", lambda x, y: (np.copy(x), np.real(x), np.imag(x), np.angle(x)),
       (np.copy, np.real, np.imag, np.angle)),
    # creation from traced arrays
    Op("like", lambda x, y: (np.zeros_like(x), _empty_filled(x), np.ones_like(x),
                             np.full_like(x, 2), np.full_like(x, y[0])),
       (np.zeros_like, np.empty_like, np.ones_like, np.full_like)),
    Op("linspace-meshgrid", lambda x, y: (np.linspace(x[0], y[0], 3),
                                          *np.meshgrid(x[0], y[:, 0])),
       (np.linspace, np.meshgrid)),
    # conversions, indexing and in-place writes (dispatch, not the table, but dtype-bound)
    Op("astype", lambda x, y: tuple(x.astype(t) for t in (np.uint8, np.int16, np.uint16,
                                                          np.int64, np.float32, bool)),
       (), full_range=True),
    Op("indexing", lambda x, y: (x[1], x[::-1, 1:3], x[x > y], x[[2, 0]]), (), full_range=True),
    Op("setitem", lambda x, y: _setitem(x, y), (), full_range=True),
]  # fmt: skip


def _empty_filled(x: Any) -> Any:
    out = np.empty_like(x)
    out[...] = x[0]
    return out


def _setitem(x: Any, y: Any) -> Any:
    z = x.copy()
    z[0] = y[1]
    z[z > y] = y[z > y]
    z += y
    return z


UFUNC_OPS = [_ufunc_op(u) for u in UFUNCS]
OPS: list[Op] = UFUNC_OPS + FUNCTION_OPS


def covered_entries() -> set:
    """Table entries (ufuncs and functions) that some catalog op calls."""
    out: set = set()
    for op in OPS:
        out.update(op.covers)
    return out


def table_entries() -> set:
    """Every entry of the NumPy -> torch table."""
    return set(UFUNCS) | set(FUNCTIONS)
