"""Torch ops that torch.onnx cannot convert, rewritten in ops it can, for ONNX export only.

``torch.linalg.inv`` / ``det`` / ``solve`` / ``cholesky`` / ``pinv`` / ``svdvals`` /
``eigvalsh`` and ``torch.cumprod`` have no ONNX translation, and torch.onnx's ``atan2`` and
``signbit`` misread signed zeros; ONNX Runtime runs ``Atan`` in float32 only. Before an fx
graph goes to ``torch.onnx.export``, calls to them are pointed at the decompositions below
(Gauss-Jordan elimination with partial pivoting, Cholesky by columns, Jacobi rotations in
:mod:`.jacobi`, a log-depth prefix product, Cephes' float64 atan), which export to plain
ONNX operators; the direct translator gets the linear algebra and angles decomposed too.
Shifts by a tensor (no decomposition for ``aten.__lshift__.Tensor``; uint8 shifted wrong),
clamps with an int and a float bound, and numbers before a tensor (``2.5 - u``,
``7 // j``) are rewritten too. Float32 bilinear and bicubic ``F.interpolate`` (antialiased
or not) whose result is rounded or cast to integers, and uint8 antialiased resizes, are
written in torch's own arithmetic (ONNX Resize rounds differently: see
:mod:`.exact_resize`). Other backends keep the originals.
"""

from __future__ import annotations

import copy
import math
import operator
from typing import Any

import torch
from torch import fx

from ...tracing.indexing import cast_complex
from . import jacobi
from .exact_resize import exact_where_discrete


def _eliminate(a: torch.Tensor, rhs: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
    """Gauss-Jordan with partial pivoting on ``[a | rhs]``: (a^-1 rhs, det a).

    Unrolled over the static matrix size; batch dims broadcast. Like LAPACK's getrf it
    picks the largest pivot in each column, so its accuracy is that of LU solving.
    """
    n = a.shape[-1]
    m = a if rhs is None else torch.cat([a, rhs.to(a.dtype)], dim=-1)
    rows = torch.arange(n)
    det = torch.ones(a.shape[:-2], dtype=a.dtype)
    for k in range(n):
        pivot_row = torch.argmax(torch.abs(m[..., k:, k]), dim=-1) + k  # (...,)
        p = pivot_row.unsqueeze(-1)
        order = torch.where(rows == k, p, torch.where(rows == p, k, rows))  # swap rows k, p
        m = torch.gather(m, -2, order.unsqueeze(-1).expand(m.shape))
        det = det * torch.where(pivot_row != k, -1.0, 1.0).to(a.dtype)
        pivot = m[..., k, k]
        det = det * pivot
        row = m[..., k : k + 1, :] / pivot.unsqueeze(-1).unsqueeze(-1)
        m = m - m[..., :, k : k + 1] * row
        m = torch.where((rows == k).unsqueeze(-1), row, m)
    return m[..., n:], det


def onnx_inv(a: torch.Tensor, *, out: Any = None) -> torch.Tensor:
    """``torch.linalg.inv`` by Gauss-Jordan elimination (exports to ONNX)."""
    eye = torch.eye(a.shape[-1], dtype=a.dtype).expand(a.shape)
    return _eliminate(a, eye)[0]


def onnx_det(a: torch.Tensor, *, out: Any = None) -> torch.Tensor:
    """``torch.linalg.det`` as the signed product of Gauss-Jordan pivots."""
    return _eliminate(a, None)[1]


def onnx_solve(a: torch.Tensor, b: torch.Tensor, *, left: bool = True, out: Any = None) -> Any:
    """``torch.linalg.solve`` (left=True) by Gauss-Jordan elimination."""
    if not left:
        return torch.linalg.solve(a, b, left=left)
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])
    rhs = b.unsqueeze(-1) if vector else b
    rhs = torch.broadcast_to(rhs, (*a.shape[:-2], *rhs.shape[-2:])) if a.ndim > 2 else rhs
    x = _eliminate(a, rhs)[0]
    return x.squeeze(-1) if vector else x


def onnx_cholesky(a: torch.Tensor, *, upper: bool = False, out: Any = None) -> torch.Tensor:
    """``torch.linalg.cholesky`` column by column (Cholesky-Banachiewicz), unrolled over the
    static size: the same sums in the same order as LAPACK's unblocked potrf. A matrix that
    is not positive definite gives NaN (NumPy raises)."""
    n = a.shape[-1]
    columns: list[torch.Tensor] = []  # column j of L, rows j..n-1, as (..., n - j)
    for j in range(n):
        below = a[..., j:, j]
        if j:
            done = torch.stack([col[..., j - k :] for k, col in enumerate(columns)], -1)
            row = torch.stack([col[..., j - k] for k, col in enumerate(columns)], -1)
            below = below - (done * row.unsqueeze(-2)).sum(-1)
        pivot = torch.sqrt(below[..., :1])
        columns.append(torch.cat([pivot, below[..., 1:] / pivot], -1))
    zeros = torch.zeros_like(a[..., :, 0])  # (..., n)
    lower = torch.stack(
        [torch.cat([zeros[..., :j], c], -1) if j else c for j, c in enumerate(columns)], -1
    )
    return lower.transpose(-1, -2) if upper else lower


def onnx_pinverse(a: torch.Tensor, rcond: float = 1e-15) -> torch.Tensor:
    """``torch.pinverse``: ``torch.linalg.pinv`` with ``rcond`` as its relative cutoff."""
    return jacobi.onnx_pinv(a, rtol=rcond)


_SPECTRAL = (2, -2, "nuc")


def _singular_norm(x: torch.Tensor, ord: Any, dims: tuple[int, int], keepdim: bool) -> Any:
    """A matrix norm from singular values: largest (2), smallest (-2) or their sum (nuc)."""
    first, second = (d % x.ndim for d in dims)
    rest = [d for d in range(x.ndim) if d not in (first, second)]
    values = jacobi.onnx_svdvals(x.permute(*rest, first, second))
    norm = {2: values[..., 0], -2: values[..., -1]}.get(ord) if ord != "nuc" else values.sum(-1)
    if keepdim:
        for d in sorted((first, second)):
            norm = norm.unsqueeze(d)
    return norm


def _vector_norm(x: torch.Tensor, ord: Any, dims: Any, keepdim: bool) -> torch.Tensor:
    """``torch.linalg.vector_norm`` in elementwise ops and reductions."""
    a = x.abs()
    if ord is None or ord == 2:
        return torch.sqrt((a * a).sum(dims, keepdim=keepdim))
    if ord == float("inf"):
        return a.amax(dims, keepdim=keepdim)
    if ord == float("-inf"):
        return a.amin(dims, keepdim=keepdim)
    if ord == 0:
        return (a != 0).to(x.dtype).sum(dims, keepdim=keepdim)
    if ord == 1:
        return a.sum(dims, keepdim=keepdim)
    return torch.pow(torch.pow(a, ord).sum(dims, keepdim=keepdim), 1.0 / ord)


def _matrix_norm(x: torch.Tensor, ord: Any, dims: tuple[int, int], keepdim: bool) -> Any:
    """``torch.linalg.matrix_norm``: Frobenius, induced 1 / inf norms (largest or smallest
    absolute column / row sum), and from singular values the 2 and nuclear norms."""
    if ord in _SPECTRAL:
        return _singular_norm(x, ord, dims, keepdim)
    first, second = (d % x.ndim for d in dims)
    if ord == "fro":
        return _vector_norm(x, 2, (first, second), keepdim)
    along = {1: first, -1: first, float("inf"): second, float("-inf"): second}[ord]
    sums = x.abs().sum(along, keepdim=True)
    other = second if along == first else first
    pick = (
        sums.amax(other, keepdim=True)
        if ord in (1, float("inf"))
        else sums.amin(other, keepdim=True)
    )
    return pick if keepdim else pick.squeeze(max(first, second)).squeeze(min(first, second))


def onnx_norm(
    x: torch.Tensor,
    ord: Any = None,
    dim: Any = None,
    keepdim: bool = False,
    *,
    out: Any = None,
    dtype: Any = None,
) -> torch.Tensor:
    """``torch.linalg.norm`` in ops every ONNX writer translates; the spectral and nuclear
    matrix norms from Jacobi singular values."""
    if dtype is not None:
        x = x.to(dtype)
    if isinstance(dim, int):
        dim = (dim,)
    if dim is None and (ord is None or x.ndim == 1):
        return _vector_norm(
            x.reshape(-1) if not keepdim else x,
            ord,
            None if not keepdim else tuple(range(x.ndim)),
            keepdim,
        )
    if dim is None:
        dim = (-2, -1)
    if len(dim) == 1:
        return _vector_norm(x, ord, dim, keepdim)
    return _matrix_norm(x, "fro" if ord is None else ord, tuple(dim), keepdim)


def onnx_matrix_norm(
    x: torch.Tensor,
    ord: Any = "fro",
    dim: Any = (-2, -1),
    keepdim: bool = False,
    *,
    out: Any = None,
    dtype: Any = None,
) -> torch.Tensor:
    """``torch.linalg.matrix_norm`` in ops every ONNX writer translates."""
    return _matrix_norm(x if dtype is None else x.to(dtype), ord, tuple(dim), keepdim)


def onnx_cumprod(x: torch.Tensor, dim: int, *, dtype: Any = None, out: Any = None) -> Any:
    """``torch.cumprod`` as a log-depth prefix product (torch's integer promotion kept)."""
    if dtype is not None:
        x = x.to(dtype)
    elif not (x.dtype.is_floating_point or x.dtype.is_complex):
        x = x.to(torch.int64)
    if x.ndim == 0:
        return x.clone()
    dim = dim % x.ndim
    n = x.shape[dim]
    shift = 1
    while shift < n:
        ones = torch.ones_like(x.narrow(dim, 0, shift))
        x = x * torch.cat([ones, x.narrow(dim, 0, n - shift)], dim=dim)
        shift *= 2
    return x


def _whole(reduce: Any) -> Any:
    """``reduce`` (torch.amax / torch.amin) with a missing or empty ``dim`` spelled as every
    axis: torch.onnx's translation requires a dim (``x.amax()`` fails inside it)."""

    def whole(x: torch.Tensor, dim: Any = (), keepdim: bool = False, *, out: Any = None) -> Any:
        if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
            if not keepdim:
                return reduce(x.reshape(-1), 0)
            dim = tuple(range(x.dim()))
        return reduce(x, dim, keepdim)

    whole.__name__ = f"onnx_{reduce.__name__}"
    return whole


onnx_amax = _whole(torch.amax)
onnx_amin = _whole(torch.amin)


def onnx_argsort(x: torch.Tensor, dim: int | None, stable: bool = False) -> torch.Tensor:
    """NumPy's stable argsort as ONNX TopK, which ONNX Runtime breaks ties by index in."""
    from ...tracing.numpy_table import np_argsort

    return np_argsort(x, dim, False)


def _has_tensor(x: Any, y: Any) -> bool:
    return isinstance(x, torch.Tensor) or isinstance(y, torch.Tensor)


def _float_operands(x: Any, y: Any) -> tuple[torch.Tensor, torch.Tensor] | None:
    """``x`` and ``y`` as tensors of their floating result dtype, or None for integers."""
    if not isinstance(x, torch.Tensor) and not isinstance(y, torch.Tensor):
        return None
    dtype = torch.result_type(x, y)
    if not dtype.is_floating_point:
        return None
    return torch.as_tensor(x, dtype=dtype), torch.as_tensor(y, dtype=dtype)


def _fmod_adjust(a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``fmod(a, b)`` and where it is nonzero with a sign other than ``b``'s."""
    mod = torch.fmod(a, b)
    return mod, (mod != 0) & ((b < 0) != (mod < 0))


def onnx_floor_divide(x: Any, y: Any) -> Any:
    """Float ``x // y`` by NumPy's and ATen's fmod-based rule; torch.onnx writes Floor(Div),
    one off near a cell border (``3.25 // 0.05`` is 64, ``floor(3.25 / 0.05)`` is 65)."""
    operands = _float_operands(x, y)
    if operands is None:  # integers, or sizes (SymInt // int) torch.floor_divide refuses
        return torch.floor_divide(x, y) if _has_tensor(x, y) else x // y
    a, b = operands
    mod, adjust = _fmod_adjust(a, b)
    div = (a - mod) / b - adjust.to(a.dtype)
    floor = torch.floor(div)
    floor = torch.where(div - floor > 0.5, floor + 1, floor)
    return torch.where(b == 0, a / b, floor)


def onnx_remainder(x: Any, y: Any) -> Any:
    """Float ``x % y`` by Python's rule (fmod, plus ``y`` where the signs differ)."""
    operands = _float_operands(x, y)
    if operands is None:  # integers, or sizes (SymInt % int) torch.remainder refuses
        return torch.remainder(x, y) if _has_tensor(x, y) else x % y
    a, b = operands
    mod, adjust = _fmod_adjust(a, b)
    return torch.where(adjust, mod + b, mod)


def _shift_operands(x: Any, count: Any) -> tuple[torch.Tensor, torch.Tensor, torch.dtype]:
    """``x`` and ``count`` as int64 tensors, and the dtype of the shift's result."""
    dtype = torch.result_type(x, count)
    x = torch.as_tensor(x).to(dtype) if not isinstance(x, torch.Tensor) else x
    return x.to(torch.int64), torch.as_tensor(count).to(torch.int64), dtype


def onnx_lshift(x: Any, count: Any) -> Any:
    """``x << count`` as ATen gives it (0 for a count < 0 or >= the width), computed in
    int64, whose shifts torch.onnx writes exactly (it has none for ``__lshift__.Tensor``
    and shifts uint8 wrong)."""
    if not _has_tensor(x, count):
        return x << count
    x64, count64, dtype = _shift_operands(x, count)
    if dtype.is_floating_point or dtype == torch.bool:
        return x << count  # torch refuses these itself
    bits = torch.iinfo(dtype).bits
    invalid = (count64 < 0) | (count64 >= bits)
    moved = torch.bitwise_left_shift(x64, count64.clamp(0, 63))
    return torch.where(invalid, torch.zeros_like(moved), moved).to(dtype)


def onnx_rshift(x: Any, count: Any) -> Any:
    """``x >> count`` as ATen gives it (a signed shift by a count < 0 or >= the width keeps
    the sign, an unsigned one gives 0), computed in int64 (see :func:`onnx_lshift`)."""
    if not _has_tensor(x, count):
        return x >> count
    x64, count64, dtype = _shift_operands(x, count)
    if dtype.is_floating_point or dtype == torch.bool:
        return x >> count
    info = torch.iinfo(dtype)
    if info.min < 0:
        top = info.bits - 1
        safe = torch.where((count64 < 0) | (count64 > top), torch.full_like(count64, top), count64)
        return torch.bitwise_right_shift(x64, safe).to(dtype)
    invalid = (count64 < 0) | (count64 >= info.bits)
    moved = torch.bitwise_right_shift(x64, count64.clamp(0, 63))
    return torch.where(invalid, torch.zeros_like(moved), moved).to(dtype)


def onnx_clamp(x: torch.Tensor, min: Any = None, max: Any = None) -> torch.Tensor:  # noqa: A002
    """``clamp`` with an int and a float bound made both floats (same result): torch.onnx
    turns the int into a tensor the float-bound overload then refuses."""
    numbers = [v for v in (min, max) if v is not None]
    if any(type(v) is float for v in numbers) and any(type(v) is int for v in numbers):
        min = float(min) if type(min) is int else min  # noqa: A001
        max = float(max) if type(max) is int else max  # noqa: A001
    return torch.clamp(x, min, max)


def onnx_np_floor_divide(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """The table's np.floor_divide with its float rule kept in ONNX."""
    from ...tracing.numpy_table.targets import np_floor_divide

    if _float_operands(x, y) is not None:
        return onnx_floor_divide(x, y)
    return np_floor_divide(x, y)


def onnx_np_remainder(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """The table's np.remainder with its float rule kept in ONNX."""
    from ...tracing.numpy_table.targets import np_remainder

    if _float_operands(x, y) is not None:
        return onnx_remainder(x, y)
    return np_remainder(x, y)


def onnx_np_divmod(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The table's np.divmod with the float rules kept in ONNX."""
    return onnx_np_floor_divide(x, y), onnx_np_remainder(x, y)


def onnx_signbit(x: torch.Tensor, *, out: Any = None) -> torch.Tensor:
    """``torch.signbit`` that sees -0.0 (torch.onnx's is ``x < 0``): a zero's sign is that of
    its reciprocal, an infinity."""
    if not x.is_floating_point():
        return x < 0
    return torch.where(x == 0, torch.reciprocal(x) < 0, x < 0)


# Cephes' atan (double): rational approximation after reduction to |x| <= 0.66
_ATAN_P = (
    -8.750608600031904122785e-1,
    -1.615753718733365076637e1,
    -7.500855792314704667340e1,
    -1.228866684490136173410e2,
    -6.485021904942025371773e1,
)
_ATAN_Q = (
    2.485846490142306297962e1,
    1.650270098316988542046e2,
    4.328810604912902668951e2,
    4.853903996359136964868e2,
    1.945506571482613964425e2,
)
_MOREBITS = 6.123233995736765886130e-17
_TAN_3PI_8 = 2.41421356237309504880


def onnx_atan(x: torch.Tensor, *, out: Any = None) -> torch.Tensor:
    """``torch.atan``; in float64 from float64 arithmetic (Cephes' reduction and rational
    approximation, within 2 ulp), since ONNX Runtime runs Atan in float32 only. Constants
    are float64 tensors: torch.onnx would write Python floats as float32."""
    if x.dtype != torch.float64:
        return torch.atan(x)

    def const(value: float) -> torch.Tensor:
        return torch.tensor(value, dtype=x.dtype)

    magnitude = torch.abs(x)
    big = magnitude > const(_TAN_3PI_8)
    middle = ~big & (magnitude > const(0.66))
    one, zero = const(1.0), const(0.0)
    reduced = torch.where(
        big, -one / magnitude, torch.where(middle, (magnitude - one) / (magnitude + one), magnitude)
    )
    base = torch.where(big, const(math.pi / 2), torch.where(middle, const(math.pi / 4), zero))
    extra = torch.where(big, const(_MOREBITS), torch.where(middle, const(_MOREBITS / 2), zero))
    z = reduced * reduced
    p = const(_ATAN_P[0]) * z + const(_ATAN_P[1])
    for c in _ATAN_P[2:]:
        p = p * z + const(c)
    q = z + const(_ATAN_Q[0])
    for c in _ATAN_Q[1:]:
        q = q * z + const(c)
    result = base + (reduced * (z * p / q) + reduced + extra)
    return torch.where(x < zero, -result, torch.where(x > zero, result, x))  # -0.0, NaN kept


def onnx_atan2(y: torch.Tensor, x: torch.Tensor, *, out: Any = None) -> torch.Tensor:
    """``torch.atan2`` with C's quadrant rules (torch.onnx's puts atan2(+0, -1) at -pi and
    atan2(0, -0) at 0): the sign bits of ``y`` and ``x`` pick the half-turn, zeros and
    infinities take their limits."""
    dtype = torch.promote_types(y.dtype, x.dtype)
    dtype = dtype if dtype.is_floating_point else torch.get_default_dtype()
    y, x = y.to(dtype), x.to(dtype)  # as torch.atan2 promotes: a float64 y keeps float64
    shape = torch.broadcast_shapes(y.shape, x.shape)
    y, x = torch.broadcast_to(y, shape), torch.broadcast_to(x, shape)
    turn = torch.tensor(math.pi, dtype=y.dtype)  # a float64 pi stays float64
    half_turn = torch.where(onnx_signbit(y), -turn, turn)
    left = onnx_signbit(x)
    out = onnx_atan(y / x)
    out = torch.where(left, out + half_turn, out)
    zeros = (y == 0) & (x == 0)
    out = torch.where(zeros, torch.where(left, half_turn, y), out)
    infinity = torch.tensor(math.inf, dtype=y.dtype)
    corners = (torch.abs(y) == infinity) & (torch.abs(x) == infinity)
    quarter = torch.tensor(math.pi / 4, dtype=y.dtype)
    corner = torch.where(left, quarter * 3, quarter)
    return torch.where(corners, torch.where(onnx_signbit(y), -corner, corner), out)


def _table_decompositions() -> dict[Any, Any]:
    """Swaps for the NumPy table's own graph helpers (imported on first use)."""
    from ...tracing.numpy_table import np_argsort
    from ...tracing.numpy_table.targets import np_divmod, np_floor_divide, np_remainder

    return {
        np_argsort: onnx_argsort,
        np_floor_divide: onnx_np_floor_divide,
        np_remainder: onnx_np_remainder,
        np_divmod: onnx_np_divmod,
    }


DECOMPOSITIONS: dict[Any, Any] = {
    torch.linalg.inv: onnx_inv,
    torch.inverse: onnx_inv,
    torch.linalg.cholesky: onnx_cholesky,
    torch.cholesky: onnx_cholesky,
    torch.linalg.pinv: jacobi.onnx_pinv,
    torch.pinverse: onnx_pinverse,
    torch.linalg.svdvals: jacobi.onnx_svdvals,
    torch.linalg.eigvalsh: jacobi.onnx_eigvalsh,
    torch.linalg.norm: onnx_norm,
    torch.linalg.matrix_norm: onnx_matrix_norm,
    torch.linalg.det: onnx_det,
    torch.det: onnx_det,
    torch.linalg.solve: onnx_solve,
    torch.cumprod: onnx_cumprod,
    torch.floor_divide: onnx_floor_divide,
    torch.remainder: onnx_remainder,
    torch.atan2: onnx_atan2,
    torch.atan: onnx_atan,
    torch.amax: onnx_amax,
    torch.amin: onnx_amin,
    torch.arctan: onnx_atan,
    torch.signbit: onnx_signbit,
    torch.arctan2: onnx_atan2,
    operator.floordiv: onnx_floor_divide,
    operator.mod: onnx_remainder,
    operator.lshift: onnx_lshift,
    operator.rshift: onnx_rshift,
    torch.bitwise_left_shift: onnx_lshift,
    torch.bitwise_right_shift: onnx_rshift,
    torch.clamp: onnx_clamp,
    torch.clip: onnx_clamp,
}
_METHODS = {
    "cumprod": onnx_cumprod,
    "det": onnx_det,
    "inverse": onnx_inv,
    "pinverse": onnx_pinverse,
    "cholesky": onnx_cholesky,
    "floor_divide": onnx_floor_divide,
    "__floordiv__": onnx_floor_divide,
    "remainder": onnx_remainder,
    "__mod__": onnx_remainder,
    "__lshift__": onnx_lshift,
    "__rshift__": onnx_rshift,
    "bitwise_left_shift": onnx_lshift,
    "bitwise_right_shift": onnx_rshift,
    "clamp": onnx_clamp,
    "clip": onnx_clamp,
    "atan2": onnx_atan2,
    "arctan2": onnx_atan2,
    "atan": onnx_atan,
    "arctan": onnx_atan,
    "signbit": onnx_signbit,
    "amax": onnx_amax,
    "amin": onnx_amin,
}


def full_exact(size: Any, fill: torch.Tensor, **kwargs: Any) -> torch.Tensor:
    """``torch.full`` with a tensor fill (ones times the fill: exact in any dtype)."""
    return torch.ones(size, **kwargs) * fill


def full_like_exact(x: torch.Tensor, fill: torch.Tensor, **kwargs: Any) -> torch.Tensor:
    """``torch.full_like`` with a tensor fill."""
    return torch.ones_like(x, **kwargs) * fill


_FULLS = {torch.full: full_exact, torch.full_like: full_like_exact}


_LINALG = {
    torch.linalg.inv,
    torch.inverse,
    torch.linalg.det,
    torch.det,
    torch.linalg.solve,
    torch.linalg.cholesky,
    torch.cholesky,
    torch.linalg.pinv,
    torch.pinverse,
    torch.linalg.svdvals,
    torch.linalg.eigvalsh,
    torch.linalg.norm,
    torch.linalg.matrix_norm,
}
_LINALG_METHODS = {"det", "inverse", "pinverse", "cholesky"}
# angles: ONNX's Atan runs in float32 only in ONNX Runtime, and it has no Atan2
_ANGLES = {torch.atan2, torch.arctan2, torch.atan, torch.arctan}
_ANGLE_METHODS = {"atan2", "arctan2", "atan", "arctan"}

# what the direct translator receives decomposed: calls it has no ONNX operator for, or
# whose operator would lose float64 precision (it writes the decompositions' ops itself)
_TRANSLATOR_DECOMPOSES = _LINALG | _ANGLES
_TRANSLATOR_DECOMPOSES_METHODS = _LINALG_METHODS | _ANGLE_METHODS


def _decomposed_for_translator(node: fx.Node) -> bool:
    return (node.op == "call_function" and node.target in _TRANSLATOR_DECOMPOSES) or (
        node.op == "call_method" and node.target in _TRANSLATOR_DECOMPOSES_METHODS
    )


def decompose_for_translator(module: Any, args: tuple) -> Any:
    """A copy of an fx GraphModule with its linear algebra and angles decomposed, for the
    direct translator (which writes the decompositions' elementwise ops itself); the
    module itself where there is none. Oversized Jacobi decompositions are refused."""
    if not isinstance(module, fx.GraphModule) or not any(
        _decomposed_for_translator(n) for n in module.graph.nodes
    ):
        return module
    graph = copy.deepcopy(module.graph)
    out = fx.GraphModule(module, graph, class_name=type(module).__name__)
    _refuse_oversized_jacobi(out, args)
    for node in graph.nodes:
        if node.op == "call_function" and node.target in _TRANSLATOR_DECOMPOSES:
            node.target = DECOMPOSITIONS[node.target]
        elif node.op == "call_method" and node.target in _TRANSLATOR_DECOMPOSES_METHODS:
            node.op, node.target = "call_function", _METHODS[node.target]
    out.recompile()
    return out


def _complex_cast(node: fx.Node) -> bool:
    """``x.to(complex dtype)``: torch.onnx has no complex-to-complex cast (a complex64
    spectrum widened for ``np.abs``); :func:`cast_complex` casts its real view instead."""
    return (
        node.op == "call_method"
        and node.target == "to"
        and len(node.args) == 2
        and not node.kwargs
        and isinstance(node.args[1], torch.dtype)
        and node.args[1].is_complex
    )


def decompose_for_onnx(module: Any, args: tuple = ()) -> Any:
    """A copy of an fx GraphModule ready for torch.onnx (the original is left unchanged).

    Unconvertible calls are decomposed; float64 Python literals that float32 cannot hold
    become float64 constants, since torch.onnx builds Python floats as float32 constants
    (``x * 0.1`` would multiply by 0.10000000149 and ``1e300`` would become inf).
    """
    if not isinstance(module, fx.GraphModule):
        return module
    from ..number_operands import numbers_as_tensors

    if args:
        module = numbers_as_tensors(module, args, bool_literals=False)
    module = exact_where_discrete(module, args)
    swaps = {**DECOMPOSITIONS, **_table_decompositions()}
    refuse_without_operator(module)
    graph = copy.deepcopy(module.graph)
    out = fx.GraphModule(module, graph, class_name=type(module).__name__)
    if args:
        _refuse_oversized_jacobi(out, args)
    for node in graph.nodes:
        if node.op == "call_function" and node.target in swaps:
            node.target = swaps[node.target]
        elif node.op == "call_method" and node.target in _METHODS:
            node.op, node.target = "call_function", _METHODS[node.target]
        elif _complex_cast(node):
            node.op, node.target = "call_function", cast_complex
    if args:
        _exact_float64_literals(out, args)
    out.recompile()
    return out


def _call_name(node: fx.Node) -> str:
    """The user's spelling of a call: ``torch.linalg.svd``, ``torch.svd``, ``Tensor.svd``."""
    if node.op == "call_method":
        return f"Tensor.{node.target}"
    module = getattr(node.target, "__module__", None) or "torch"
    name = getattr(node.target, "__name__", str(node.target))
    if module == "torch._C._linalg":
        return f"torch.linalg.{name.removeprefix('linalg_')}"
    return f"{module}.{name}"


def refuse_without_operator(module: fx.GraphModule) -> None:
    """Refuse, before torch.onnx runs, a factorisation ONNX has no operator for and patchport
    no decomposition of (a full SVD, QR, eigenvectors, ...), naming the call, the user's
    line and the backends that write it."""
    from ...errors import ExportBackendError
    from ...tracing.located_calls import LOCATED_CALLS

    for node in module.graph.nodes:
        if node.op not in ("call_function", "call_method") or node.target in DECOMPOSITIONS:
            continue
        try:
            located = node.target in LOCATED_CALLS
        except TypeError:  # an unhashable target
            continue
        if located:
            where = node.meta.get("pp_location", "<unknown>")
            raise ExportBackendError(
                f"ONNX export: {_call_name(node)} (recorded at {where}) has no ONNX operator "
                "and patchport has no decomposition of it (ONNX has no SVD, QR, eigenvector, "
                "LU, log-determinant or matrix-exponential operator). Export this node with "
                "'pt2' or 'jit'."
            )


_JACOBI_NAMES = {
    torch.linalg.norm: "np.linalg.norm / torch.linalg.norm (spectral or nuclear)",
    torch.linalg.matrix_norm: "torch.linalg.matrix_norm (spectral or nuclear)",
    torch.linalg.pinv: "np.linalg.pinv / torch.linalg.pinv",
    torch.pinverse: "torch.pinverse",
    torch.linalg.svdvals: "np.linalg.svd(compute_uv=False) / torch.linalg.svdvals",
    torch.linalg.eigvalsh: "np.linalg.eigvalsh / torch.linalg.eigvalsh",
}


def _argument(node: fx.Node, index: int, name: str, default: Any = None) -> Any:
    return node.args[index] if len(node.args) > index else node.kwargs.get(name, default)


def _uses_jacobi(node: fx.Node) -> bool:
    """Whether ``node`` may decompose into Jacobi rotations (spectral or nuclear norms too)."""
    if node.target in (torch.linalg.norm, torch.linalg.matrix_norm):
        return _argument(node, 1, "ord") in _SPECTRAL
    return node.target in _JACOBI_NAMES


def _matrix_shape(node: fx.Node, shape: tuple[int, ...]) -> tuple[int, int] | None:
    """The (rows, columns) a Jacobi decomposition of ``node`` would work on, if any."""
    if node.target in (torch.linalg.norm, torch.linalg.matrix_norm):
        default = None if node.target is torch.linalg.norm else (-2, -1)
        dim = _argument(node, 2, "dim", default)
        if dim is None:
            dim = (-2, -1) if len(shape) == 2 else None
        if not isinstance(dim, (tuple, list)) or len(dim) != 2:
            return None
        return shape[dim[0]], shape[dim[1]]
    return (shape[-2], shape[-1]) if len(shape) >= 2 else None


def _refuse_oversized_jacobi(module: fx.GraphModule, args: tuple) -> None:
    """Refuse, before torch.onnx runs, a Jacobi decomposition of more than
    ``jacobi.MAX_SIZE`` columns, naming the call, its size, its line and the fix."""
    from torch.fx.passes.shape_prop import ShapeProp

    from ...errors import ExportBackendError

    nodes = [n for n in module.graph.nodes if n.op == "call_function" and _uses_jacobi(n)]
    if not nodes:
        return
    ShapeProp(module).propagate(*args)
    for node in nodes:
        meta = getattr(node.args[0], "meta", {}).get("tensor_meta")
        matrix = _matrix_shape(node, tuple(getattr(meta, "shape", ())))
        if matrix is not None and min(matrix) > jacobi.MAX_SIZE:
            where = node.meta.get("pp_location", "<unknown>")
            raise ExportBackendError(
                f"ONNX export: {_JACOBI_NAMES[node.target]} of a {matrix[0]}x{matrix[1]} matrix "
                f"(recorded at {where}): ONNX has no SVD or eigen-solver, and patchport's "
                f"unrolled Jacobi decomposition stops at {jacobi.MAX_SIZE} columns (its graph "
                f"grows as n^2 log n). Export this node with 'pt2' or 'jit'."
            )


def _inexact_in_float32(value: Any) -> bool:
    return type(value) is float and float(torch.tensor(value, dtype=torch.float32)) != value


def _exact_float64_literals(module: fx.GraphModule, args: tuple) -> None:
    """Replace float64 nodes' literals float32 cannot hold by float64 constant tensors."""
    from torch.fx.passes.shape_prop import ShapeProp

    if not any(
        _inexact_in_float32(a)
        for node in module.graph.nodes
        for a in (*node.args, *node.kwargs.values())
    ):
        return
    try:
        ShapeProp(module).propagate(*args)
    except Exception:  # noqa: BLE001 - without dtypes the literals are left as they are
        return
    count = 0
    for node in list(module.graph.nodes):
        meta = node.meta.get("tensor_meta")
        if node.op not in ("call_function", "call_method") or (
            getattr(meta, "dtype", None) != torch.float64
        ):
            continue
        if not any(_inexact_in_float32(a) for a in (*node.args, *node.kwargs.values())):
            continue

        def constant(value: Any, before: fx.Node) -> Any:
            nonlocal count
            if not _inexact_in_float32(value):
                return value
            name = f"_onnx_float64_literal_{count}"
            count += 1
            module.register_buffer(name, torch.tensor(value, dtype=torch.float64))
            with module.graph.inserting_before(before):
                return module.graph.get_attr(name)

        node.args = tuple(constant(a, node) for a in node.args)
        node.kwargs = {k: constant(v, node) for k, v in node.kwargs.items()}
        if node.op == "call_function" and node.target in _FULLS:
            node.target = _FULLS[node.target]
