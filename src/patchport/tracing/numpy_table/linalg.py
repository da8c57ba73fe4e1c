"""Linear algebra: products, ``np.linalg``, diagonals and traces."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from ..dtypes import torch_dtype
from ..location import user_location
from ..values import is_traced
from .calls import Call, handler_table
from .targets import np_diag, np_dot, np_sum, np_triangle

HANDLERS: dict[Callable, Callable] = {}
implements = handler_table(HANDLERS)


@implements(np.dot)
def _dot(call: Call, a: Any, b: Any, out: Any = None) -> Any:
    return call.rec.call(np_dot, (call.t(a), call.t(b)))


def _pt(call: Call, a: Any) -> Any:
    """Operand of a product: booleans go through int64 (torch has no bool products)."""
    return call.t(a, np.int64 if call.result.dtype == np.bool_ else None)


def _pdone(call: Call, node: Any) -> Any:
    """A product's result: nonzero for a boolean product (NumPy's or of ands)."""
    return call.rec.call(torch.ne, (node, 0)) if call.result.dtype == np.bool_ else node


@implements(np.vdot)
def _vdot(call: Call, a: Any, b: Any) -> Any:
    fa = call.rec.call(torch.reshape, (_pt(call, a), (-1,)))
    fb = call.rec.call(torch.reshape, (_pt(call, b), (-1,)))
    return _pdone(call, call.rec.call(torch.vdot, (fa, fb)))


@implements(np.einsum)
def _einsum(call: Call, subscripts: Any, *operands: Any, **kw: Any) -> Any:
    if not isinstance(subscripts, str) or kw.get("out") is not None:
        return None
    return _pdone(
        call, call.rec.call(torch.einsum, (subscripts, *[_pt(call, o) for o in operands]))
    )


@implements(np.tensordot)
def _tensordot(call: Call, a: Any, b: Any, axes: Any = 2) -> Any:
    if isinstance(axes, (tuple, list)):
        first, second = axes
        first = [int(i) for i in np.atleast_1d(first)]
        second = [int(i) for i in np.atleast_1d(second)]
        axes = [first, second]
    else:
        axes = int(axes)
    return _pdone(
        call, call.rec.call(torch.tensordot, (_pt(call, a), _pt(call, b)), {"dims": axes})
    )


@implements(np.outer)
def _outer(call: Call, a: Any, b: Any, out: Any = None) -> Any:
    fa = call.rec.call(torch.reshape, (_pt(call, a), (-1,)))
    fb = call.rec.call(torch.reshape, (_pt(call, b), (-1,)))
    return _pdone(call, call.rec.call(torch.outer, (fa, fb)))


@implements(np.inner)
def _inner(call: Call, a: Any, b: Any) -> Any:
    return _pdone(call, call.rec.call(torch.inner, (_pt(call, a), _pt(call, b))))


@implements(np.cross)
def _cross(
    call: Call, a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: Any = None
) -> Any:
    if axis is None and (axisa, axisb, axisc) != (-1, -1, -1):
        return None
    if (
        np.shape(a)[-1 if axis is None else axis] != 3
        or np.shape(b)[-1 if axis is None else axis] != 3
    ):
        return None
    dim = -1 if axis is None else int(axis)
    return call.rec.call(torch.linalg.cross, (call.t(a), call.t(b)), {"dim": dim})


@implements(np.linalg.norm)
def _norm(call: Call, x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
    dims = None if axis is None else tuple(int(a) for a in np.atleast_1d(axis))
    if dims is not None and len(dims) == 1:
        dims = dims[0]
    node = call.rec.call(torch.linalg.norm, (call.t(x), ord, dims, bool(keepdims)))
    return _located(node) if ord in (2, -2, "nuc") else node


@implements(np.linalg.inv)
def _inv(call: Call, a: Any) -> Any:
    return call.rec.call(torch.linalg.inv, (call.t(a),))


@implements(np.linalg.det)
def _det(call: Call, a: Any) -> Any:
    return call.rec.call(torch.linalg.det, (call.t(a),))


@implements(np.linalg.solve)
def _solve(call: Call, a: Any, b: Any) -> Any:
    if np.ndim(b) != 1 and np.ndim(b) != np.ndim(a):
        return None
    return call.rec.call(torch.linalg.solve, (call.t(a), call.t(b)))


@implements(np.linalg.lstsq)
def _lstsq(call: Call, a: Any, b: Any, rcond: Any = None) -> Any:
    """Least squares over a design matrix that is not traced (a fit at fixed sample
    positions): the solution is then the constant pseudo-inverse (NumPy's cutoff) times
    ``b``, the residuals follow from it; rank and singular values are the design's own."""
    if is_traced(a) or is_traced(rcond) or np.ndim(b) not in (1, 2):
        return None
    x, residuals, _, _ = call.result
    design = np.asarray(a)
    if rcond is None:
        rcond = float(np.finfo(x.dtype).eps) * max(design.shape)
    if float(rcond) < 0:  # NumPy's old "machine precision" flag: not mapped
        return None
    rec = call.rec
    solve = np.linalg.pinv(design.astype(x.dtype), rcond=float(rcond))
    rhs = call.t(b, x.dtype)
    node = rec.call(torch.matmul, (call.t(solve, x.dtype), rhs))
    if not residuals.size:
        return node, None, None, None
    fitted = rec.call(torch.matmul, (call.t(design, x.dtype), node))
    error = rec.call(torch.sub, (fitted, rhs))
    sums = rec.call(torch.sum, (rec.call(torch.square, (error,)), (0,)))
    return node, rec.call(torch.reshape, (sums, tuple(residuals.shape))), None, None


def _located(node: Any) -> Any:
    """``node`` with the user's line kept, for a backend's refusal to name (ONNX's size
    limit on Jacobi decompositions)."""
    node.meta["pp_location"] = user_location()
    return node


@implements(np.linalg.cholesky)
def _cholesky(call: Call, a: Any, *, upper: bool = False) -> Any:
    return call.rec.call(torch.linalg.cholesky, (call.t(a),), {"upper": bool(upper)})


_NO_VALUE = inspect.signature(np.linalg.pinv).parameters["rtol"].default


@implements(np.linalg.pinv)
def _pinv(
    call: Call, a: Any, rcond: Any = None, hermitian: bool = False, *, rtol: Any = _NO_VALUE
) -> Any:
    """NumPy's cutoff: singular values <= rcond * the largest are dropped (rcond 1e-15,
    or max(m, n) * eps for ``rtol=None``); a per-matrix array of cutoffs is not mapped."""
    if rcond is None:
        if rtol is _NO_VALUE:
            rcond = 1e-15
        elif rtol is None:
            rcond = max(np.shape(a)[-2:]) * float(np.finfo(call.result.dtype).eps)
        else:
            rcond = rtol
    if is_traced(rcond) or np.ndim(rcond) != 0:
        return None
    kwargs = {"rtol": float(rcond), "hermitian": bool(hermitian)}
    return _located(call.rec.call(torch.linalg.pinv, (call.t(a),), kwargs))


@implements(np.linalg.eigvalsh)
def _eigvalsh(call: Call, a: Any, UPLO: str = "L") -> Any:  # noqa: N803 - NumPy's name
    return _located(call.rec.call(torch.linalg.eigvalsh, (call.t(a),), {"UPLO": str(UPLO)}))


@implements(np.linalg.svd)
def _svd(
    call: Call, a: Any, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False
) -> Any:
    """Singular values only: the vectors' signs are LAPACK's choice (see LOSS_REASONS)."""
    if compute_uv:
        return None
    return _located(call.rec.call(torch.linalg.svdvals, (call.t(a),)))


@implements(np.linalg.matrix_power)
def _matrix_power(call: Call, a: Any, n: Any) -> Any:
    if not isinstance(n, (int, np.integer)):
        return None
    base = call.t(a)
    if n < 0:
        base = call.rec.call(torch.linalg.inv, (base,))
    return call.rec.call(torch.linalg.matrix_power, (base, abs(int(n))))


@implements(np.linalg.multi_dot)
def _multi_dot(call: Call, arrays: Any, *, out: Any = None) -> Any:
    if out is not None:
        return None
    return call.rec.call(torch.linalg.multi_dot, ([_pt(call, x) for x in arrays],))


# NumPy linalg functions never mapped, and why (the trace-loss warning says it)
LOSS_REASONS: dict[Callable, str] = {
    np.linalg.eigh: "its eigenvectors' signs are chosen by the LAPACK build (NumPy's and "
    "torch's differ for about half of all matrices), so no exported graph reproduces them; "
    "eigenvalues alone are traced by np.linalg.eigvalsh",
    np.linalg.eig: "eigenvectors' signs and scaling are chosen by the LAPACK build, and the "
    "result may be complex; symmetric eigenvalues are traced by np.linalg.eigvalsh",
    np.linalg.svd: "the singular vectors' signs are chosen by the LAPACK build, so no exported "
    "graph reproduces NumPy's; singular values alone are traced "
    "(np.linalg.svd(a, compute_uv=False)), and so is np.linalg.pinv",
}


@implements(np.trace)
def _trace(
    call: Call,
    a: Any,
    offset: int = 0,
    axis1: int = 0,
    axis2: int = 1,
    dtype: Any = None,
    out: Any = None,
) -> Any:
    diag = call.rec.call(torch.diagonal, (call.n(a), int(offset), int(axis1), int(axis2)))
    return call.rec.call(np_sum, (diag, (-1,), False, torch_dtype(call.result.dtype)))


@implements(np.diagonal)
def _diagonal(call: Call, a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    return call.op(torch.diagonal, a, int(offset), int(axis1), int(axis2))


@implements(np.diag)
def _diag(call: Call, v: Any, k: int = 0) -> Any:
    return call.op(np_diag, v, int(k))


@implements(np.triu)
def _triu(call: Call, m: Any, k: int = 0) -> Any:
    return call.op(np_triangle, m, int(k), True)


@implements(np.tril)
def _tril(call: Call, m: Any, k: int = 0) -> Any:
    return call.op(np_triangle, m, int(k), False)
