"""What each value of a translated ONNX graph provably holds: bounds and a binary grid.

:mod:`.optimize` removes a cast or narrows float64 arithmetic to float32 only where the
result is the same bit for bit. That needs a proof, made here by interval arithmetic: a
value has a :class:`Range` when every element is finite, lies in ``[lo, hi]`` and (when
``grid`` is not None) is a multiple of ``2**grid``. A float operation whose exact result
fits the format's mantissa on that grid is exact in it, so it gives the same bits in
float32 as in float64. Bounds are rounded outwards; any op outside the table has no range.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

MANTISSA = {np.dtype(np.float32): 24, np.dtype(np.float64): 53, np.dtype(np.float16): 11}
SMALLEST = {np.dtype(np.float32): -149, np.dtype(np.float64): -1074, np.dtype(np.float16): -24}
MOVEMENT = {"Identity", "Reshape", "Transpose", "Slice", "Squeeze", "Unsqueeze", "Flatten"}
MOVEMENT |= {"Expand", "Gather", "GatherElements", "Tile", "Split"}  # data input 0, others indices


@dataclass(frozen=True)
class Range:
    """Every element finite, in ``[lo, hi]``, a multiple of ``2**grid`` (None: unknown),
    and, where ``no_minus_zero``, none is -0.0 (a float -> int -> float round trip would
    turn it into +0.0)."""

    lo: float
    hi: float
    grid: int | None
    no_minus_zero: bool = False

    @property
    def signed_zero_safe(self) -> bool:
        return self.no_minus_zero or self.lo > 0 or self.hi < 0

    @property
    def magnitude(self) -> float:
        return max(abs(self.lo), abs(self.hi))


def _down(x: float) -> float:
    """A bound just below ``x``; 0 stays 0 (a sum of doubles rounds to 0 only when it is
    0, and products of non-negative bounds are clamped by :func:`_products`)."""
    return 0.0 if x == 0 else math.nextafter(x, -math.inf)


def _up(x: float) -> float:
    return math.nextafter(x, math.inf)


def exact_in(r: Range | None, dtype: np.dtype) -> bool:
    """True when every value of ``r`` is exactly representable in ``dtype``."""
    if r is None or r.grid is None:
        return False
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return r.grid >= 0 and info.min <= r.lo and r.hi <= info.max
    if dtype in MANTISSA:  # the sign of a zero is kept by every float type
        return r.grid >= SMALLEST[dtype] and r.magnitude <= 2.0 ** (r.grid + MANTISSA[dtype])
    return False


def lossless(have: np.dtype, want: np.dtype) -> bool:
    """Every value of ``have`` is exact in ``want`` (uint8 -> int32 or float32, not
    int32 -> float32, nor a float to an integer)."""
    have, want = np.dtype(have), np.dtype(want)
    if have == want:
        return True
    if have.kind == "f":
        return want.kind == "f" and want.itemsize >= have.itemsize
    if have.kind not in "iu" or want.kind not in "iuf":
        return False
    info = np.iinfo(have)
    if want.kind == "f":
        return max(-info.min, info.max) <= 2 ** MANTISSA.get(want, 0)
    return np.iinfo(want).min <= info.min and info.max <= np.iinfo(want).max


def fit(r: Range | None, dtype: np.dtype | None) -> Range | None:
    """The range of the exact result ``r`` once stored in ``dtype`` (rounded or refused)."""
    if r is None or dtype is None or not (math.isfinite(r.lo) and math.isfinite(r.hi)):
        return None
    dtype = np.dtype(dtype)
    if exact_in(r, dtype):
        return replace(r, no_minus_zero=True) if dtype.kind in "iu" else r
    if dtype in MANTISSA:  # rounded to nearest: at most half an ulp outwards
        slack = 2.0 ** (1 - MANTISSA[dtype])
        lo, hi = _down(r.lo - abs(r.lo) * slack), _up(r.hi + abs(r.hi) * slack)
        limit = float(np.finfo(dtype).max)
        safe = r.no_minus_zero and r.lo >= 0  # a tiny negative value may round to -0.0
        lo = max(lo, 0.0) if r.lo >= 0 else lo  # rounding keeps the sign
        return Range(lo, hi, None, safe) if -limit <= lo and hi <= limit else None
    return None  # an integer result that wraps or truncates


def of_array(array: np.ndarray) -> Range | None:
    """The range of a constant (None for non-finite or non-numeric data)."""
    if array.dtype.kind == "b":
        return Range(0.0, 1.0, 0, True)
    if array.dtype.kind not in "iuf" or array.size == 0:
        return None
    if array.dtype.kind in "iu":
        return Range(float(array.min()), float(array.max()), 0, True)
    values = array.astype(np.float64)
    if not np.isfinite(values).all():
        return None
    plus = not bool(np.signbit(values[values == 0]).any())
    nonzero = values[values != 0]
    if nonzero.size == 0:
        return Range(0.0, 0.0, 0, plus)
    mantissa, exponent = np.frexp(nonzero)
    whole = np.abs(mantissa * 2.0**53).astype(np.int64)  # |mantissa| < 1: exact
    low_bit = np.log2((whole & -whole).astype(np.float64)).astype(np.int64)
    grid = int((exponent.astype(np.int64) - 53 + low_bit).min())
    return Range(float(values.min()), float(values.max()), grid, plus)


def of_dtype(dtype: np.dtype) -> Range | None:
    """The range of an input of ``dtype`` (integers only: a float input may be NaN)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return Range(0.0, 1.0, 0, True)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return Range(float(info.min), float(info.max), 0, True)
    return None


def _grid(*grids: int | None) -> int | None:
    return None if any(g is None for g in grids) else min(grids)  # type: ignore[type-var]


def _sum_grid(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a + b


def _hull(*ranges: Range) -> Range:
    safe = all(r.signed_zero_safe for r in ranges)
    return Range(
        min(r.lo for r in ranges), max(r.hi for r in ranges), _grid(*(r.grid for r in ranges)), safe
    )


def _products(a: Range, b: Range) -> Range:
    ends = [a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi]
    safe = a.lo >= 0 and b.lo >= 0 and a.signed_zero_safe and b.signed_zero_safe
    low = max(_down(min(ends)), 0.0) if a.lo >= 0 and b.lo >= 0 else _down(min(ends))
    return Range(low, _up(max(ends)), _sum_grid(a.grid, b.grid), safe)


def _weighted(x: Range, weights: np.ndarray, bias: np.ndarray | None, axis: int) -> Range | None:
    """Sums of ``weights`` (reduced over every axis but ``axis``) times values in ``x``,
    each sum starting from 0 (zero padding) and every partial sum inside the bounds."""
    w = np.moveaxis(weights.astype(np.float64), axis, 0).reshape(weights.shape[axis], -1)
    low = np.minimum(np.minimum(w * x.lo, w * x.hi), 0).sum(axis=1)
    high = np.maximum(np.maximum(w * x.lo, w * x.hi), 0).sum(axis=1)
    total = np.abs(w).sum(axis=1) * x.magnitude
    grid = _sum_grid(x.grid, of_array(weights).grid if of_array(weights) else None)
    if bias is not None:
        b = bias.astype(np.float64).reshape(-1)
        low, high, total = low + np.minimum(b, 0), high + np.maximum(b, 0), total + np.abs(b)
        grid = _grid(grid, of_array(bias).grid if of_array(bias) else None)
    bound = float(total.max())
    if grid is not None and bound > 2.0 ** (grid + 53):
        grid = None  # a partial sum may round even in float64
    # sums of products of values >= 0 with weights >= 0, none -0.0: no -0.0
    safe = (
        x.lo >= 0
        and x.signed_zero_safe
        and all(
            r is not None and r.lo >= 0 and r.signed_zero_safe
            for r in (of_array(weights), None if bias is None else of_array(bias))
            if r is not None or bias is None
        )
    )
    result = Range(_down(float(low.min())), _up(float(high.max())), grid, safe)
    return result if grid is not None and bound <= 2.0 ** (grid + 24) else _rounded_sum(result)


def _rounded_sum(r: Range) -> Range:
    """Bounds of a float32 sum computed with rounding: generous slack, no grid."""
    slack = max(r.magnitude, 1.0) * 2.0**-10
    low = 0.0 if r.lo >= 0 else r.lo - slack  # sums of values >= 0 stay >= 0
    return Range(low, r.hi + slack, None, r.no_minus_zero)


def _rounded(r: Range, op: str) -> Range:
    """Floor, Ceil or Round (half to even): monotonic, so the ends' images bound it."""
    if r.grid is not None and r.grid >= 0:
        return r
    to_int = {"Floor": math.floor, "Ceil": math.ceil, "Round": round}[op]
    # Floor keeps the sign of a zero; Ceil/Round give -0.0 for small negatives
    safe = r.no_minus_zero and (op == "Floor" or r.lo >= 0)
    return Range(float(to_int(r.lo)), float(to_int(r.hi)), 0, safe)


def _clip(node: Any, ins: list[Range | None], consts: Mapping[str, np.ndarray]) -> Range | None:
    x = ins[0]
    if x is None:
        return None
    lo, hi, grid, safe = x.lo, x.hi, x.grid, x.signed_zero_safe
    for index, pick in ((1, max), (2, min)):
        if len(node.inputs) > index and node.inputs[index]:
            bound = consts.get(node.inputs[index])
            if bound is None or bound.size != 1 or of_array(bound) is None:
                return None
            value = float(bound.reshape(-1)[0])
            lo, hi = (pick(lo, value), hi) if index == 1 else (lo, pick(hi, value))
            grid = _grid(grid, of_array(bound).grid)
            safe = safe and of_array(bound).no_minus_zero  # type: ignore[union-attr]
    return Range(lo, hi, grid, safe) if lo <= hi else None


def _conv(node: Any, ins: list[Range | None], consts: Mapping[str, np.ndarray]) -> Range | None:
    weights = consts.get(node.inputs[1])
    bias = consts.get(node.inputs[2]) if len(node.inputs) > 2 and node.inputs[2] else None
    if (
        ins[0] is None
        or weights is None
        or (len(node.inputs) > 2 and node.inputs[2] and bias is None)
    ):
        return None
    return _weighted(ins[0], weights, bias, axis=0)


def _matmul(node: Any, ins: list[Range | None], consts: Mapping[str, np.ndarray]) -> Range | None:
    right = consts.get(node.inputs[1])
    if ins[0] is None or right is None or right.ndim != 2:
        return None
    return _weighted(ins[0], right, None, axis=1)


def _dequantized(node: Any, x: Range | None, consts: Mapping[str, np.ndarray]) -> Range | None:
    """DequantizeLinear with a constant one-element scale and a zero zero point (or
    none): the input times the scale."""
    scale = consts.get(node.inputs[1]) if len(node.inputs) > 1 else None
    zero = consts.get(node.inputs[2]) if len(node.inputs) > 2 and node.inputs[2] else None
    if x is None or scale is None or scale.size != 1 or (zero is not None and zero.any()):
        return None
    factor = of_array(scale)
    return None if factor is None else _products(x, factor)


def _reduce_sum(
    node: Any,
    ins: list[Range | None],
    consts: Mapping[str, np.ndarray],
    shape: Sequence[int] | None,
) -> Range | None:
    x = ins[0]
    if x is None or shape is None:
        return None
    axes = consts.get(node.inputs[1]) if len(node.inputs) > 1 and node.inputs[1] else None
    if axes is None and len(node.inputs) > 1 and node.inputs[1]:
        return None
    count = math.prod(shape) if axes is None else math.prod(shape[int(a)] for a in axes.reshape(-1))
    safe = x.lo >= 0 and x.signed_zero_safe
    result = Range(_down(count * min(x.lo, 0.0)), _up(count * max(x.hi, 0.0)), x.grid, safe)
    exact = x.grid is not None and count * x.magnitude <= 2.0 ** (x.grid + 24)
    return result if exact else _rounded_sum(Range(result.lo, result.hi, None, safe))


def transfer(
    node: Any,
    ins: list[Range | None],
    consts: Mapping[str, np.ndarray],
    out_dtype: np.dtype | None,
    in_shape: Sequence[int] | None = None,
    refine: Callable[[Range | None], Range | None] | None = None,
) -> Range | None:
    """The range of ``node``'s first output given its inputs' ranges (None: unknown);
    ``refine`` may narrow the exact result's bounds before it is rounded to the dtype."""
    op = node.op_type
    x = ins[0] if ins else None
    exact: Range | None
    if op in MOVEMENT:
        exact = x
    elif op == "Concat":
        exact = None if any(r is None for r in ins) else _hull(*ins)  # type: ignore[arg-type]
    elif op == "Cast":
        exact = x
        if x is not None and out_dtype is not None and np.dtype(out_dtype).kind in "iu":
            exact = _rounded(x, "Floor") if x.lo >= 0 else None  # truncation toward zero
            if x.grid is not None and x.grid >= 0:
                exact = x
        elif out_dtype is not None and np.dtype(out_dtype).kind == "b":
            return Range(0.0, 1.0, 0, True)
    elif op in ("Add", "Sub", "Mul") and len(ins) == 2 and None not in ins:
        a, b = ins[0], ins[1]
        assert a is not None and b is not None
        if op == "Mul":
            exact = _products(a, b)
        elif op == "Add":
            safe = a.signed_zero_safe or b.signed_zero_safe  # -0 + -0 only
            exact = Range(_down(a.lo + b.lo), _up(a.hi + b.hi), _grid(a.grid, b.grid), safe)
        else:
            safe = a.signed_zero_safe  # -0 - +0 only
            exact = Range(_down(a.lo - b.hi), _up(a.hi - b.lo), _grid(a.grid, b.grid), safe)
    elif op in ("Max", "Min") and ins and None not in ins:
        pick = max if op == "Max" else min
        safe = all(r.signed_zero_safe for r in ins)  # type: ignore[union-attr]
        lo, hi = pick(r.lo for r in ins), pick(r.hi for r in ins)  # type: ignore[union-attr]
        exact = Range(lo, hi, _grid(*(r.grid for r in ins)), safe)  # type: ignore[union-attr]
    elif op == "Neg" and x is not None:
        exact = Range(-x.hi, -x.lo, x.grid)
    elif op == "Abs" and x is not None:
        low = 0.0 if x.lo <= 0 <= x.hi else min(abs(x.lo), abs(x.hi))
        exact = Range(low, x.magnitude, x.grid, True)
    elif op == "Relu" and x is not None:
        exact = Range(max(x.lo, 0.0), max(x.hi, 0.0), x.grid, x.signed_zero_safe)
    elif op in ("Floor", "Ceil", "Round") and x is not None:
        exact = _rounded(x, op)
    elif op == "Clip":
        exact = _clip(node, ins, consts)
    elif op == "Conv":
        exact = _conv(node, ins, consts)
    elif op == "MatMul":
        exact = _matmul(node, ins, consts)
    elif op == "ReduceSum":
        exact = _reduce_sum(node, ins, consts, in_shape)
    elif op == "DequantizeLinear":
        exact = _dequantized(node, x, consts)
    else:
        exact = None
    result = fit(refine(exact) if refine is not None else exact, out_dtype)
    if result is None and out_dtype is not None and np.dtype(out_dtype).kind in "iub":
        return of_dtype(out_dtype)  # whatever it computed, an integer tensor holds integers
    return result
