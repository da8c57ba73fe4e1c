"""NumPy functions and ndarray methods of the table, replayed on fresh inputs."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

from .helpers import conform, make

F32, F64, I64, U8, B = np.float32, np.float64, np.int64, np.uint8, np.bool_


def a(shape=(3, 4), dtype=F64, seed=1, low=-3.0, high=3.0):  # noqa: ANN001, ANN201
    return make(shape, dtype, seed, low=low, high=high)


# (id, function, inputs)
CASES = [
    # reductions
    ("sum", lambda x: np.sum(x), [a()]),
    ("sum-axis", lambda x: np.sum(x, axis=1), [a(dtype=I64)]),
    ("sum-uint8-upcasts", lambda x: x.sum(axis=0), [a(dtype=U8, low=0, high=255)]),
    ("sum-bool", lambda x: x.sum(), [a(dtype=B)]),
    ("sum-keepdims-tuple", lambda x: np.sum(x, axis=(0, 2), keepdims=True), [a((2, 3, 4))]),
    ("sum-dtype", lambda x: np.sum(x, dtype=np.float32), [a(dtype=I64)]),
    ("mean", lambda x: np.mean(x, axis=0), [a(dtype=F32)]),
    ("mean-int", lambda x: x.mean(), [a(dtype=I64)]),
    ("std-ddof", lambda x: np.std(x, axis=1, ddof=1), [a()]),
    ("var", lambda x: x.var(axis=0, keepdims=True), [a(dtype=F32)]),
    ("var-int", lambda x: np.var(x), [a(dtype=I64)]),
    ("min-max", lambda x: (np.min(x, axis=0), np.max(x), x.min(1), x.max(axis=1)), [a()]),
    ("amin-amax-int", lambda x: (np.amin(x, axis=1), np.amax(x, keepdims=True)), [a(dtype=I64)]),
    ("max-bool", lambda x: (x.max(axis=0), x.min()), [a(dtype=B)]),
    ("argmin-argmax", lambda x: (np.argmin(x), np.argmax(x, axis=1), x.argmax(0)), [a()]),
    ("prod", lambda x: (np.prod(x, axis=1), x.prod()), [a(dtype=I64, low=1, high=3)]),
    ("cumsum", lambda x: (np.cumsum(x), np.cumsum(x, axis=1), x.cumsum(0)), [a(dtype=F32)]),
    ("cumsum-uint8", lambda x: np.cumsum(x, axis=1), [a(dtype=U8, low=0, high=255)]),
    ("cumprod", lambda x: (np.cumprod(x, axis=0), x.cumprod()), [a((2, 3), I64, low=1, high=3)]),
    ("all-any", lambda x: (np.all(x > 0, axis=0), np.any(x > 2), x.all(), x.any(1)), [a()]),
    (
        "count_nonzero",
        lambda x: (np.count_nonzero(x > 0), np.count_nonzero(x, axis=0)),
        [a(dtype=I64)],
    ),
    ("average", lambda x: np.average(x, axis=0), [a()]),
    (
        "average-weights",
        lambda x, w: np.average(x, axis=1, weights=w),
        [a(), a((4,), seed=2, low=0.5)],
    ),
    ("median", lambda x: (np.median(x), np.median(x, axis=1)), [a((3, 5))]),
    ("median-int", lambda x: np.median(x, axis=0), [a((4, 3), I64)]),
    ("percentile", lambda x: np.percentile(x, 30, axis=0), [a()]),
    ("percentile-list", lambda x: np.percentile(x, [10, 90]), [a(dtype=F32)]),
    ("quantile", lambda x: np.quantile(x, 0.25, axis=1, keepdims=True), [a()]),
    # NaN-aware quantiles (nodata pixels marked NaN): the NaNs are left out of each slice
    (
        "nanquantile",
        lambda x: (
            np.nanquantile(np.where(x > 1.5, np.nan, x), [0.02, 0.98]),
            np.nanpercentile(np.where(x > 1.5, np.nan, x), 30, axis=0),
            np.nanmedian(np.where(x > 1.5, np.nan, x), axis=1, keepdims=True),
        ),
        [a((5, 6))],
    ),
    (
        "nanquantile-all-nan-column",
        lambda x: np.nanpercentile(np.where(x > 2.0, np.nan, x), [5, 95], axis=0),
        [np.concatenate([a((4, 3), F32), np.full((4, 1), 9.0, F32)], axis=1)],
    ),
    ("ptp", lambda x: (np.ptp(x), np.ptp(x, axis=1)), [a(dtype=I64)]),
    # shapes
    ("reshape", lambda x: (np.reshape(x, (4, 3)), x.reshape(2, 6), x.reshape((-1,))), [a()]),
    (
        "transpose",
        lambda x: (np.transpose(x), x.transpose(1, 0, 2), x.T, x.transpose((2, 0, 1))),
        [a((2, 3, 4))],
    ),
    (
        "swapaxes-moveaxis",
        lambda x: (np.swapaxes(x, 0, 2), np.moveaxis(x, 0, -1), x.swapaxes(1, 2)),
        [a((2, 3, 4))],
    ),
    (
        "squeeze-expand",
        lambda x: (np.squeeze(x), np.expand_dims(x, 0), x.squeeze(1)),
        [a((3, 1, 4))],
    ),
    ("ravel-flatten", lambda x: (np.ravel(x), x.ravel(), x.flatten()), [a()]),
    (
        "concatenate",
        lambda x, y: (np.concatenate([x, y]), np.concatenate((x, y), axis=1)),
        [a(), a(seed=2)],
    ),
    (
        "concatenate-mixed",
        lambda x, y: np.concatenate([x, y], axis=None),
        [a(dtype=F32), a(dtype=I64, seed=2)],
    ),
    ("stack", lambda x, y: (np.stack([x, y]), np.stack([x, y], axis=-1)), [a(), a(seed=2)]),
    (
        "vstack-hstack",
        lambda x, y: (np.vstack([x, y]), np.hstack([x, y])),
        [a((4,)), a((4,), seed=2)],
    ),
    (
        "vstack-2d",
        lambda x, y: (np.vstack([x, y]), np.hstack([x, y]), np.dstack([x, y])),
        [a(), a(seed=2)],
    ),
    ("column_stack", lambda x, y: np.column_stack([x, y]), [a((4,)), a((4,), seed=2)]),
    # np.block: an SE(3) matrix from R and p, nested lists with plain pieces and numbers
    (
        "block",
        lambda r, p: (
            np.block([[r, p[:, None]], [np.zeros((1, 3)), 1.0]]),
            np.block([p, 1.0]),
            np.block([[r], [p[None]]]),
            np.block([[[r]], [[r * 2]]]),
            np.block(p),
        ),
        [a((3, 3)), a((3,), seed=2)],
    ),
    ("dstack-1d", lambda x, y: np.dstack([x, y]), [a((4,)), a((4,), seed=2)]),
    ("split", lambda x: (*np.split(x, 2, axis=1), *np.split(x, [1, 2])), [a((3, 4))]),
    ("array_split", lambda x: np.array_split(x, 3, axis=1), [a((2, 5))]),
    (
        "flip",
        lambda x: (np.flip(x), np.flip(x, 0), np.flip(x, axis=(0, 1)), np.fliplr(x), np.flipud(x)),
        [a()],
    ),
    (
        "roll",
        lambda x: (np.roll(x, 2), np.roll(x, -1, axis=1), np.roll(x, (1, 2), axis=(0, 1))),
        [a()],
    ),
    ("rot90", lambda x: (np.rot90(x), np.rot90(x, 2), np.rot90(x, -1, axes=(1, 0))), [a()]),
    ("broadcast_to", lambda x: np.broadcast_to(x, (2, 3, 4)), [a((3, 1))]),
    ("atleast", lambda x: (np.atleast_1d(x), np.atleast_2d(x), np.atleast_3d(x)), [a((4,))]),
    ("atleast-0d", lambda x: (np.atleast_1d(x), np.atleast_2d(x), np.atleast_3d(x)), [a(())]),
    ("tile", lambda x: (np.tile(x, 2), np.tile(x, (2, 1, 2))), [a((2, 3))]),
    (
        "repeat",
        lambda x: (np.repeat(x, 2), np.repeat(x, 3, axis=1), x.repeat([1, 2, 0], axis=0)),
        [a()],
    ),
    (
        "pad-constant",
        lambda x: (np.pad(x, 1), np.pad(x, ((1, 2), (0, 3)), constant_values=7)),
        [a(dtype=U8, low=0, high=255)],
    ),
    ("pad-edge", lambda x: np.pad(x, ((2, 1), (1, 2)), mode="edge"), [a()]),
    ("pad-reflect", lambda x: np.pad(x, ((2, 1), (3, 2)), mode="reflect"), [a()]),
    (
        "pad-symmetric-wrap",
        lambda x: (np.pad(x, 2, mode="symmetric"), np.pad(x, 1, mode="wrap")),
        [a(dtype=I64)],
    ),
    # indexing functions
    (
        "take",
        lambda x: (np.take(x, [0, -1, 2]), np.take(x, [[1, 0]], axis=1), x.take([3, 1], axis=1)),
        [a()],
    ),
    (
        "take-traced-idx",
        lambda x, i: np.take(x, i, axis=0),
        [a(), a((5,), I64, seed=3, low=-3, high=2)],
    ),
    (
        "take-clip-wrap",
        lambda x, i: (np.take(x, i, mode="clip"), np.take(x, i * 3, axis=1, mode="wrap")),
        [a(), a((5,), I64, seed=3, low=-20, high=20)],
    ),
    ("take_along_axis", lambda x: np.take_along_axis(x, np.argsort(x, axis=1), axis=1), [a()]),
    (
        "where",
        lambda x, y: (np.where(x > 0, x, y), np.where(x > 0, x, 0.0), np.where(x < y, 1, 2)),
        [a(), a(seed=2)],
    ),
    (
        "where-1arg-nonzero",
        lambda x: (*np.where(x > 0.5), *np.nonzero(x > 0), *(x > 1).nonzero()),
        [a()],
    ),
    ("argwhere", lambda x: np.argwhere(x > 0.5), [a()]),
    (
        "argsort-sort",
        lambda x: (np.argsort(x), np.sort(x, axis=0), np.sort(x, axis=None), x.argsort(axis=0)),
        [a()],
    ),
    (
        "searchsorted",
        lambda s, v: (np.searchsorted(np.sort(s), v), np.searchsorted(np.sort(s), v, side="right")),
        [np.sort(a((6,))), a((5,), seed=3)],
    ),
    (
        "digitize",
        lambda x, b: (np.digitize(x, np.sort(b)), np.digitize(x, np.sort(b), right=True)),
        [a((2, 5)), a((3,), seed=7)],
    ),
    ("digitize-decreasing", lambda x: np.digitize(x, np.array([2.0, 0.5, -1.0])), [a((7,))]),
    ("interp", lambda x: np.interp(x, [-2.0, 0.0, 1.0, 2.5], [0.0, 5.0, 3.0, 1.0]), [a((3, 5))]),
    (
        "interp-traced-table",
        lambda x, xp, fp: np.interp(x, np.sort(xp), fp, left=-1.0, right=9.0),
        [a((6,)), a((3,), seed=8), a((3,), seed=4)],
    ),
    ("bincount", lambda x: np.bincount(x, minlength=8), [a((10,), I64, low=0, high=7)]),
    (
        "bincount-weights",
        lambda x, w: np.bincount(x, weights=w, minlength=5),
        [a((10,), I64, low=0, high=4), a((10,), seed=2)],
    ),
    # linear algebra
    (
        "dot",
        lambda x, y: (np.dot(x, y), x.dot(y), np.dot(x[0], y[:, 0]), np.dot(x, 2.0)),
        [a((3, 4)), a((4, 2), seed=2)],
    ),
    ("dot-nd", lambda x, y: np.dot(x, y), [a((2, 3, 4)), a((5, 4, 2), seed=2)]),
    ("dot-int", lambda x, y: np.dot(x, y), [a((3, 4), I64), a((4,), I64, seed=2)]),
    ("matmul", lambda x, y: (np.matmul(x, y), x @ y), [a((2, 3, 4), F32), a((4, 5), F32, seed=2)]),
    (
        "einsum",
        lambda x, y: (np.einsum("ij,jk->ik", x, y), np.einsum("ij->j", x)),
        [a((3, 4)), a((4, 2), seed=2)],
    ),
    (
        "tensordot",
        lambda x, y: (np.tensordot(x, y, axes=1), np.tensordot(x, y, axes=([1], [0]))),
        [a((3, 4)), a((4, 2), seed=2)],
    ),
    ("outer-inner", lambda x, y: (np.outer(x, y), np.inner(x, y)), [a((4,)), a((4,), seed=2)]),
    ("cross", lambda x, y: np.cross(x, y), [a((5, 3)), a((5, 3), seed=2)]),
    (
        "norm",
        lambda x: (
            np.linalg.norm(x),
            np.linalg.norm(x, axis=1),
            np.linalg.norm(x, ord=1, axis=0, keepdims=True),
        ),
        [a()],
    ),
    ("norm-int", lambda x: np.linalg.norm(x, axis=-1), [a((3, 4), I64)]),
    (
        "inv-det-solve",
        lambda m, b: (np.linalg.inv(m), np.linalg.det(m), np.linalg.solve(m, b)),
        [a((3, 3)) + 6 * np.eye(3), a((3,), seed=2)],
    ),
    (
        "cholesky",
        lambda x: (
            np.linalg.cholesky(x @ np.swapaxes(x, -1, -2) + 3 * np.eye(3)),
            np.linalg.cholesky(x @ np.swapaxes(x, -1, -2) + 3 * np.eye(3), upper=True),
        ),
        [a((2, 3, 3))],
    ),
    (
        "cholesky-float32",
        lambda x: np.linalg.cholesky(x @ x.T + 3 * np.eye(3, dtype=F32)),
        [a((3, 3), F32)],
    ),
    (
        "pinv",
        lambda x: (
            np.linalg.pinv(x),
            np.linalg.pinv(x.T),
            np.linalg.pinv(x[:, :2] @ x[:, :2].T, rcond=1e-10),  # rank 2 of 3
            np.linalg.pinv(x[:, :2] @ x[:, :2].T, rtol=1e-10, hermitian=True),
        ),
        [a((3, 4))],
    ),
    ("pinv-float32-batch", lambda x: np.linalg.pinv(x), [a((2, 4, 3), F32)]),
    (
        "eigvalsh-svdvals",
        lambda x: (
            np.linalg.eigvalsh(x + x.T),
            np.linalg.eigvalsh(x, UPLO="U"),
            np.linalg.svd(x, compute_uv=False),
            np.linalg.svd(x[:, :3].T, False, False),
        ),
        [a((4, 4))],
    ),
    (
        "matrix_power-multi_dot",
        lambda x, y: (
            np.linalg.matrix_power(x, 3),
            np.linalg.matrix_power(x + 6 * np.eye(3), -2),
            np.linalg.matrix_power(x, 0),
            np.linalg.multi_dot([x, y, y.T, x[0]]),
        ),
        [a((3, 3)), a((3, 4), seed=2)],
    ),
    (
        "trace-diagonal-diff",
        lambda x: (np.trace(x), np.diagonal(x), x.diagonal(1), np.diff(x), np.diff(x, n=2, axis=0)),
        [a((4, 4))],
    ),
    # element-wise helpers
    ("clip", lambda x: (np.clip(x, -1, 1), x.clip(0.0, None), np.clip(x, None, 2)), [a()]),
    ("clip-uint8", lambda x: np.clip(x, 10, 200), [a(dtype=U8, low=0, high=255)]),
    ("clip-int-floatbounds", lambda x: np.clip(x, -1.5, 1.5), [a(dtype=I64)]),
    (
        "round",
        lambda x: (
            np.round(x),
            np.around(x, 2),
            x.round(1),
            np.round(x, -1),
        ),
        [a(low=-300, high=300)],
    ),
    ("round-int", lambda x: (np.round(x), np.round(x, -1)), [a(dtype=I64, low=-300, high=300)]),
    ("nan_to_num", lambda x: np.nan_to_num(np.log(x)), [a(low=-1, high=2)]),
    (
        "isnan-isinf-isfinite",
        lambda x: (np.isnan(np.sqrt(x)), np.isinf(1 / x), np.isfinite(np.log(x))),
        [a(low=-1, high=1)],
    ),
    ("isclose", lambda x, y: np.isclose(x, y, atol=0.5), [a(), a(seed=2)]),
    (
        "copysign-cbrt-reciprocal",
        lambda x, y: (np.copysign(x, y), np.cbrt(x), np.reciprocal(x)),
        [a(), a(seed=2)],
    ),
    (
        "deg2rad-hypot",
        lambda x, y: (np.deg2rad(x), np.rad2deg(x), np.hypot(x, y)),
        [a(), a(seed=2)],
    ),
    (
        "nan-reductions",
        lambda x: (
            np.nansum(np.sqrt(x)),
            np.nanmean(np.sqrt(x), axis=0),
            np.nanmax(np.sqrt(x), axis=1),
            np.nanmin(np.sqrt(x)),
            np.nanprod(np.sqrt(x), axis=1),
        ),
        [a(low=-1, high=4)],
    ),
    (
        "nan-spread-and-positions",  # series with dropouts: NaN-aware spread, peaks, sums
        lambda x: (
            np.nanstd(np.sqrt(x)),
            np.nanvar(np.sqrt(x), axis=0),
            np.nanstd(np.sqrt(x), axis=1, ddof=1, keepdims=True),
            np.nanvar(np.sqrt(x[:, :1]), axis=1, ddof=1),  # one value a row: NaN
            np.nanargmax(np.sqrt(x[:, 1:]) + 0.0 * x[:, :1], axis=1),
            np.nanargmin(np.where(x > 3.5, np.nan, x)),
            np.nancumsum(np.sqrt(x), axis=0),
            np.nancumprod(np.sqrt(x)),
        ),
        [np.abs(a(low=-1, high=4)) * np.sign(a(low=-1, high=4, seed=5)) + 0.01],
    ),
    (
        "nan-reductions-int",
        lambda x: (np.nansum(x), np.nanmax(x, axis=0), np.nanmean(x)),
        [a(dtype=I64)],
    ),
    ("diag", lambda x: (np.diag(x), np.diag(x, 1), np.diag(x[0]), np.diag(x[1], -1)), [a((4, 4))]),
    ("append", lambda x, y: (np.append(x, y), np.append(x, y, axis=0)), [a(), a(seed=2)]),
    ("select", lambda x: np.select([x < -1, x > 1], [x * 0, x * 2], default=-5.0), [a()]),
    ("fix-real-imag", lambda x: (np.fix(x), np.real(x), np.imag(x), x.real, x.imag), [a()]),
    (
        "ldexp-frexp",
        lambda x, e: (np.ldexp(x, e), *np.frexp(x), *np.modf(x), *np.divmod(x, 0.7)),
        [a(), a(dtype=np.int32, seed=3, low=-3, high=3)],
    ),
    # creation from traced arrays
    (
        "like",
        lambda x: (
            np.zeros_like(x),
            np.ones_like(x, dtype=np.uint8),
            np.full_like(x, 3.5),
            x + np.zeros_like(x),
        ),
        [a(dtype=F32)],
    ),
    ("full_like-int", lambda x: np.full_like(x, 7.9), [a(dtype=I64)]),
    (
        "linspace",
        lambda s, e: (np.linspace(s, e, 5), np.linspace(s, e, 4, endpoint=False, axis=1)),
        [a((2,)), a((2,), seed=2) + 5],
    ),
    (
        "meshgrid",
        lambda x, y: (*np.meshgrid(x, y), *np.meshgrid(x, y, indexing="ij")),
        [a((3,)), a((4,), seed=2)],
    ),
    ("meshgrid-sparse", lambda x, y: np.meshgrid(x, y, sparse=True), [a((3,)), a((4,), seed=2)]),
    ("triu-tril", lambda x: (np.triu(x), np.tril(x, -1), np.triu(x[0], 1)), [a((4, 4))]),
    # methods and conversions
    (
        "astype",
        lambda x: (
            x.astype(np.float32),
            x.astype(np.uint8),
            x.astype(bool),
            (x > 0).astype(np.int64),
        ),
        [a(low=0, high=200)],
    ),
    ("astype-int-to-float", lambda x: x.astype(np.float64) / 7, [a(dtype=I64)]),
    (
        "copy-view",
        lambda x: (x.copy(), np.copy(x), x.view(), x.view(np.int32)),
        [a(dtype=np.uint32, low=0, high=1000)],
    ),
    ("view-float-bits", lambda x: x.view(np.uint32) & 0xFF, [a(dtype=F32)]),
    (
        "partition-order-free-uses",
        lambda x: (
            np.sort(np.partition(x, -3)[-3:]),
            np.partition(x, 2)[2],
            np.partition(x, 1, axis=0)[:2].sum(0),
            x[np.argpartition(x, 4)[:5]].sum(),
            x.argpartition(2)[2],
        ),
        [a((12,))],
    ),
    ("place", lambda x, v: _placed(x, v), [a((3, 4)), a((5,), seed=2)]),
    (
        "put_along_axis",  # a repetition penalty's scatter back, and a top-p mask's
        lambda x, v: (
            _put_along(x, np.argsort(v, axis=1)[:, :2], v[:, :2] * 10, 1),
            _put_along(x, np.argmax(v, axis=0)[None], 0.5, 0),
            _put_along(x > 0, np.argsort(-x, axis=1), v > 0, -1),
            _put_along(x.astype(np.int64), np.array([[0], [3], [-1]]), v[:, :1], 1),
        ),
        [a((3, 4)), a((3, 4), seed=2)],
    ),
    ("place-cycles-masked-values", lambda x: _placed(x * 0 + x, x[x > 1]), [a((4, 4), I64)]),
    # signal processing
    (
        "convolve-modes",
        lambda x, k: (
            tuple(np.convolve(x, k, m) for m in ("full", "same", "valid"))
            + tuple(np.convolve(k, x, m) for m in ("full", "same", "valid"))
        ),
        [a((9,)), a((4,), seed=2)],
    ),
    (
        "convolve-int-wraps",
        lambda x, k: (np.convolve(x, k), np.convolve(x, k, "same")),
        [a((7,), U8, low=0, high=255), a((3,), U8, seed=2, low=0, high=255)],
    ),
    (
        "convolve-f32-plain-kernel",
        lambda x: np.convolve(x, np.ones(5) / 5, "same"),
        [a((12,), F32)],
    ),
    (
        "correlate-modes",
        lambda x, k: (
            tuple(np.correlate(x, k, m) for m in ("full", "same", "valid"))
            + tuple(np.correlate(k, x, m) for m in ("full", "same", "valid"))
        ),
        [a((8,)), a((4,), seed=2)],
    ),
    (
        "polyval",
        lambda x, p: (np.polyval([1.2e-5, -3e-4, 1.001, 0.002], x), np.polyval(p, x)),
        [a((3, 4), F32), a((3,), seed=2)],
    ),
    ("polyval-int", lambda x: np.polyval(np.array([3, 5, 7]), x), [a((5,), U8, low=0, high=255)]),
    (
        "unwrap",
        lambda p, q: (np.unwrap(p), np.unwrap(q, axis=0), np.unwrap(p, discont=4.0)),
        [np.cumsum(a((12,), low=0.5, high=3.0)), np.cumsum(a((5, 3), F32, seed=3), axis=0)],
    ),
    ("unwrap-uint8", lambda p: np.unwrap(p), [a((6,), U8, low=0, high=255)]),
    (
        "gradient",
        lambda f, g: (
            np.gradient(f),
            np.gradient(f, 0.02),
            np.gradient(f, edge_order=2),
            *np.gradient(g, 0.5, 2.0),
            np.gradient(g, axis=1),
        ),
        [a((9,)), a((4, 5), seed=2)],
    ),
    ("gradient-f32-np-spacing", lambda f: np.gradient(f, np.float64(0.1)), [a((6,), F32)]),
    ("gradient-int", lambda f: np.gradient(f), [a((6,), I64)]),
    (
        "trapezoid",
        lambda y, x: (
            np.trapezoid(y),
            np.trapezoid(y, dx=0.02),
            np.trapezoid(y, axis=0),
            np.trapezoid(y[0], np.sort(x)),
        ),
        [a((3, 5)), a((5,), seed=2)],
    ),
    ("trapezoid-uint8", lambda y: np.trapezoid(y), [a((5,), U8, low=0, high=255)]),
    (
        "histogram",
        lambda x, w: (
            *np.histogram(x, bins=6, range=(-2.0, 2.0)),
            *np.histogram(x, bins=5),
            *np.histogram(x, bins=np.array([-3.0, -1.0, 0.0, 0.5, 3.0])),
            np.histogram(x, bins=4, weights=w)[0],
            np.histogram(x, bins=4, range=(-3, 3), density=True)[0],
        ),
        [a((20,)), a((20,), seed=2, low=0.0, high=1.0)],
    ),
    (
        "histogram-f32-int",
        lambda x, y: (np.histogram(x, 7), np.histogram(y, 3)),
        [a((4, 5), F32), a((9,), I64)],
    ),
    (
        "histogramdd",
        lambda s, w, f: (
            np.histogramdd(s, bins=(4, 3, 2), range=((0, 256),) * 3)[0],
            np.histogramdd(s, bins=4, range=[(0, 255), (0, 255), (10, 200)])[0],
            *np.histogramdd(s, bins=3),
            np.histogramdd(s[:, :2], bins=[np.array([0.0, 50, 120, 255]), 3], weights=w)[0],
            np.histogramdd(s[:, 0], bins=5, range=[(0, 255)], density=True)[0],
            *np.histogramdd(f, bins=(2, 5)),
        ),
        [a((30, 3), U8, low=0, high=255), a((30,), seed=2, low=0.0, high=1.0), a((20, 2), F32)],
    ),
    (
        "fft",
        lambda x: (
            np.abs(np.fft.rfft(x)) ** 2,
            np.abs(np.fft.rfft(x, 16, axis=0)),
            np.fft.irfft(np.fft.rfft(x)),
            np.square(np.absolute(np.fft.fft(x[0]))),
        ),
        [a((8, 6))],
    ),
    ("fft-float32", lambda x: np.abs(np.fft.rfft(x * np.hanning(8))), [a((3, 8), F32)]),
    (
        "complex-parts",
        lambda x: (
            np.real(np.fft.rfft(x)),
            np.fft.rfft(x).imag,
            np.fft.fft(x).real,
            np.angle(np.fft.rfft(x)),
            np.angle(np.fft.rfft(x), deg=True),
            np.angle(x),
        ),
        [a((2, 8), F32)],
    ),
    ("fftshift", lambda x: (np.fft.fftshift(x), np.fft.ifftshift(x, axes=1)), [a((5, 6))]),
    (
        "sliding_window_view",
        lambda x, y: (
            sliding_window_view(x, 4)[::2],
            sliding_window_view(y, 3, axis=0),
            sliding_window_view(y, (2, 2)).sum(axis=(-1, -2)),
        ),
        [a((10,)), a((6, 4), I64, seed=2)],
    ),
    (
        "insert",
        lambda x, v: (
            np.insert(x, 0, 0.0),  # the cumulative-sum rolling mean's leading zero
            np.insert(x, -2, v[0, :2]),
            np.insert(x, 1, v[0], axis=0),
            np.insert(x, 3, 7, axis=1),
            np.insert(x, 2, v[:, :1], axis=1),
            np.insert(x.astype(np.int64), 1, v[0, 0]),  # cast to the array's dtype
        ),
        [a((3, 4)), a((3, 4), seed=2)],
    ),
    (
        "polyfit-of-traced-samples",  # a detrend: the sample positions are constants
        lambda y, y2: (
            np.polyfit(np.arange(12.0), y, 1),
            np.polyfit(np.linspace(0, 1, 12), y, 3),
            np.polyfit(np.arange(12), np.stack([y, y2], axis=1), 2),
            np.polyfit(np.arange(12.0), y, 2, w=np.linspace(1.0, 2.0, 12)),
            np.polyval(np.polyfit(np.arange(12.0), y2, 1), np.arange(12.0)),
        ),
        [a((12,)), a((12,), seed=2)],
    ),
    (
        "lstsq-with-a-constant-design",
        lambda b, b2: (
            *np.linalg.lstsq(np.vander(np.arange(6.0), 3), b, rcond=None)[:2],
            np.linalg.lstsq(np.eye(6)[:, :4], np.stack([b, b2], axis=1))[0],
            np.linalg.lstsq(np.vander(np.arange(6.0), 2), b, rcond=1e-10)[0],
        ),
        [a((6,)), a((6,), seed=2)],
    ),
]


def _put_along(x, indices, values, axis):  # noqa: ANN001, ANN202
    out = x.copy()
    np.put_along_axis(out, indices, values, axis)
    return out


def _placed(x, values):  # noqa: ANN001, ANN202
    out = x.copy()
    np.place(out, x > 0.5, values)  # in place: the cells of the mask, in order, cycling
    return out


@pytest.mark.parametrize(("fn", "inputs"), [pytest.param(f, i, id=n) for n, f, i in CASES])
def test_function_conforms(fn, inputs) -> None:  # noqa: ANN001
    with np.errstate(all="ignore"):
        conform(fn, *inputs)


@pytest.mark.parametrize("dtype", [np.uint8, np.int64, np.float32, np.bool_])
def test_indexing_reads(dtype: type) -> None:
    def fn(x):
        return (
            x[1],
            x[-1, 2],
            x[:, 1:3],
            x[::-1],
            x[:, ::-2],
            x[..., 0],
            x[None, 1],
            x[x[:, 0] > x[:, 1]] if dtype != np.bool_ else x[x[:, 0]],
            x[[0, 2]],
            x[np.array([2, 0]), 1:],
            x[1:, [0, -1]],
            x[::-1, [1, 2]],
            x[2:0:-1, ::-1],
            x[np.array([1, 0], dtype=np.uint8)],
        )

    conform(fn, make((3, 4), dtype, 1, low=0, high=9))


@pytest.mark.parametrize("dtype", [np.uint8, np.int64, np.float32, np.bool_])
def test_indexing_writes_recorded_functionally(dtype: type) -> None:
    def fn(x, v):
        x = x.copy()
        x[0] = v[0]
        x[1, 2] = 1
        x[:, ::-1][0] = 0  # write through a negative-step view
        x[2:0:-1, 1] = v[1, :2]
        x[..., 3] = v[2, 0]
        x[x[:, 1] == x[:, 1]] = v  # boolean mask, every row
        x[np.array([2, 0]), 0] = 1
        x[[1], [1]] = v[0, 1]
        return x

    conform(fn, make((3, 4), dtype, 1, low=0, high=9), make((3, 4), dtype, 2, low=0, high=9))


def test_masked_write_of_scalar() -> None:
    def fn(x):
        y = x.copy()
        y[y > 0.5] = 0.0
        y[y < -1] *= -2
        return y

    conform(fn, make((4, 5), np.float32, 1))


def test_inplace_through_basic_views() -> None:
    def fn(x):
        row = x[1]
        row += 10
        x[0, :2] -= 1
        x[:, ::-1][:, 0] = 5
        col = x[:, 2]
        col.fill(3)
        return x

    conform(fn, make((3, 4), np.int64, 1))


def test_sort_and_fill_methods_in_place() -> None:
    def fn(x):
        y = x.copy()
        y.sort(axis=1)
        z = x.copy()
        z.fill(2)
        return y, z

    conform(fn, make((3, 4), np.float64, 1))


def test_out_argument_into_traced_array() -> None:
    def fn(x, y):
        np.add(x, y, out=x)
        np.multiply(x, 2, out=x)
        np.sum(y, axis=0, out=y[0])
        return x, y

    conform(fn, make((3, 4), np.float64, 1), make((3, 4), np.float64, 2))


def test_zero_d_results_stay_traced() -> None:
    def fn(x):
        m = x.mean()
        s = x.std()
        return (x - m) / s, x[0, 0] * 2, np.max(x) - np.min(x)

    conform(fn, make((3, 4), np.float32, 1))


def test_views_see_later_writes_to_their_base() -> None:
    def fn(x):
        y = x.copy()
        row = y[0]
        block = y[1:, ::-1]
        inner = block[0]
        y[0, 1] = 100
        y[1:] *= 2
        y[:, 0] += row[:3]  # row already reflects the write above
        return row * 1, block + 0, inner - 0, y

    conform(fn, make((3, 4), np.int64, 1))


@pytest.mark.parametrize("dtype", [np.uint16, np.uint32])
def test_wide_unsigned_data_is_held_exactly(dtype: type) -> None:
    """torch lacks most uint16/32/64 kernels: the graph holds them as int64, masked on wrap."""

    def fn(x):
        y = np.flip(x, 0)[:, ::-1]
        z = np.where(y > 3, y, np.roll(y, 1, axis=1)).max(axis=0)
        wrapped = x + np.iinfo(dtype).max  # wraps around like NumPy
        back = (x.astype(np.int64) - 5).astype(dtype)  # negative values wrap too
        total = np.cumsum(x, axis=1)[::-1]  # uint64 in NumPy
        bits = np.float32(1.5) * x.astype(np.float32)
        return y, z, wrapped, back, total, bits.view(np.uint32) >> 3

    conform(fn, make((3, 4), dtype, 1, low=0, high=9))


def test_layout_views_write_through_and_see_writes() -> None:
    def fn(x):
        y = x.copy()
        flat = y.ravel()  # a view of y
        flat[[0, 5]] = -1
        t = y.T
        t[0] += 100  # column 0 of y
        mirrored = np.flip(y, 1)
        mirrored[1, 0] = 42  # y[1, -1]
        square = y.reshape(4, 3)
        y[2] = 7  # seen by flat, t, mirrored and square
        return y, flat * 1, t + 0, mirrored - 0, square + 0, y.view()[0] * 1

    conform(fn, make((3, 4), np.int64, 1))


def test_reshape_like_functions_keep_data_dependent_sizes() -> None:
    """expand_dims / squeeze / atleast_2d of a boolean selection: the count of rows differs
    on the fresh input, so the graph must not freeze the sample's size (SORT's iou_batch
    expands detections kept by a score mask)."""

    def fn(x):
        kept = x[x[:, 0] > 0]
        return (
            np.expand_dims(kept, 0),
            np.expand_dims(kept, axis=(0, -1)),
            np.squeeze(kept[None, :, None, 1:2]),
            np.squeeze(kept[:, :1], axis=1),
            np.atleast_2d(kept[:, 0]),
            np.atleast_1d(kept[:, 1]),
        )

    x = a((6, 3), seed=1)
    fresh = a((6, 3), seed=2)
    assert (x[:, 0] > 0).sum() != (fresh[:, 0] > 0).sum()  # the test means a new count
    conform(fn, x, fresh=[fresh])


def test_unravel_index_is_traced() -> None:
    """Heatmap peaks: flat argmax indices back to (row, col), scalar and array forms."""

    def fn(x):
        rows, cols = np.unravel_index(np.argmax(x.reshape(2, -1), axis=1), (3, 4))
        r, c = np.unravel_index(np.argmax(x[1]), x.shape[1:])
        table = np.unravel_index(np.argsort(x.reshape(-1))[:4], (2, 3, 4), order="F")
        return rows, cols, r, c, *table

    conform(fn, a((2, 3, 4), seed=3))
