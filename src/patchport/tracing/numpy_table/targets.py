"""The one NumPy -> torch table: how each NumPy ufunc, function and method is recorded.

Every entry appends torch operations whose result has exactly the dtype and shape of the
eager NumPy result (``call.result``), so that the graph reproduces NumPy on fresh inputs.
Helpers named ``np_*`` are graph targets implementing a NumPy semantic in torch.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import fx

from ..dtypes import HELD_AS_INT64, compute_dtype, dtype_of, torch_dtype, wrap_unsigned
from ..recorder import Recorder
from ..values import TracedArray, TracedTensor, arg_of

Node = fx.Node


class Call:
    """One NumPy call being recorded: the recorder and the eager result."""

    __slots__ = ("rec", "result")

    def __init__(self, rec: Recorder, result: Any) -> None:
        self.rec = rec
        self.result = result

    def n(self, value: Any) -> Any:
        """Graph argument for ``value`` (node for arrays, literal for Python values)."""
        return arg_of(self.rec, value)

    def op(self, target: Any, *args: Any, **kwargs: Any) -> Node:
        """Record ``target(*args, **kwargs)``; arrays inside args become nodes."""
        rec = self.rec
        return rec.call(target, arg_of(rec, args), arg_of(rec, kwargs) if kwargs else None)

    def meth(self, name: str, *args: Any, **kwargs: Any) -> Node:
        """Record the tensor method ``args[0].name(*args[1:], **kwargs)``."""
        rec = self.rec
        return rec.call(
            name, arg_of(rec, args), arg_of(rec, kwargs) if kwargs else None, "call_method"
        )

    def cast(self, node: Any, have: Any, want: Any = None) -> Any:
        """Cast ``node`` (of NumPy dtype ``have``) to ``want`` (default: the result dtype)."""
        want = np.dtype(self.result.dtype if want is None else want)
        if np.dtype(have) == want:
            return node
        return self.rec.cast(node, torch_dtype(want))

    def t(self, value: Any, dtype: Any = None) -> Any:
        """Node of ``value`` as a tensor of ``dtype`` (default: the result dtype)."""
        if dtype is None:
            dtype = compute_dtype(self.result.dtype)
        dtype = np.dtype(dtype)
        if isinstance(value, (list, tuple)):
            value = np.asarray(value)
        if isinstance(value, (np.ndarray, torch.Tensor)):
            return self.cast(self.n(value), dtype_of(value), dtype)
        return self.rec.call(torch.full, ((), _py(value)), {"dtype": torch_dtype(dtype)})

    def done(self, node: Any, have: Any) -> Any:
        """Finish a handler: cast ``node`` of dtype ``have`` to the result dtype."""
        return self.cast(node, have)


def _py(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def is_array(value: Any) -> bool:
    """True for arrays and tensors (traced or not)."""
    return isinstance(value, (np.ndarray, torch.Tensor))


def _ndim(value: Any) -> int:
    return value.ndim if is_array(value) else np.ndim(value)


def _axes(axis: Any, ndim: int) -> tuple[int, ...] | None:
    """Normalize a NumPy ``axis`` argument to a tuple of non-negative dims (None: all)."""
    if axis is None:
        return None
    if isinstance(axis, (tuple, list)):
        return tuple(int(a) % max(ndim, 1) for a in axis)
    return (int(axis) % max(ndim, 1),)


def _all_dims(axis: Any, ndim: int) -> tuple[int, ...]:
    dims = _axes(axis, ndim)
    return tuple(range(ndim)) if dims is None else dims


# ---------------------------------------------------------------------------- ufuncs
@dataclass(frozen=True)
class UfuncSpec:
    """How to record a ufunc: torch callable, whether it returns bool, scalar handling."""

    fn: Callable
    predicate: bool = False  # output is bool whatever the inputs (comparisons, isnan, ...)
    tensors_only: bool = False  # torch needs tensors for every argument
    cast_inputs: bool = True  # cast array inputs to NumPy's loop dtype first
    nout: int = 1


def np_cbrt(x: torch.Tensor) -> torch.Tensor:
    """Real cube root (torch has none): sign(x) * |x| ** (1/3)."""
    return torch.sign(x) * torch.abs(x).pow(1.0 / 3.0)


def np_reciprocal(x: torch.Tensor) -> torch.Tensor:
    """NumPy reciprocal: integer inputs use integer (truncating) division."""
    if x.dtype.is_floating_point or x.dtype.is_complex:
        return torch.reciprocal(x)
    zero, y = _int_guard(x, x)
    out = torch.div(torch.ones_like(x), y, rounding_mode="trunc")
    return torch.where(zero, torch.zeros_like(out), out)


def np_true_divide(x: Any, y: Any) -> torch.Tensor:
    """Division in the loop dtype (inputs already cast to float by the table)."""
    return torch.true_divide(x, y)


def _exact(x: torch.Tensor, value: float) -> torch.Tensor:
    """``value`` as a 0-d tensor of x's dtype: exporters keep it exactly (not as float32)."""
    return torch.tensor(value, dtype=x.dtype)


def _binary_exponent(a: torch.Tensor) -> torch.Tensor:
    """e with a = m * 2**e, m in [0.5, 1), for finite a > 0 (float32 math for halves)."""
    e = torch.floor(torch.log2(a)) + 1
    m = _times_pow2(a, -e)
    e = torch.where(m >= 1, e + 1, e)
    return torch.where(m < 0.5, e - 1, e)


def _times_pow2(a: torch.Tensor, e: torch.Tensor) -> torch.Tensor:
    """a * 2**e exactly, in two steps so that neither power over- or underflows."""
    half = torch.trunc(e / 2)
    two = torch.full_like(a, 2.0)
    return a * torch.pow(two, half) * torch.pow(two, e - half)


def _work(x: torch.Tensor) -> torch.Tensor:
    """x in a dtype wide enough for exponent arithmetic (float16 values fit float32)."""
    return x.to(torch.float32) if x.dtype in (torch.float16, torch.bfloat16) else x


def _ulp(a: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Distance from finite a >= 0 to the next larger float of ``dtype`` (in a's dtype)."""
    info = torch.finfo(dtype)
    digits = round(-math.log2(info.eps)) + 1
    tiny = info.smallest_normal * info.eps  # the smallest subnormal
    positive = torch.where(a > 0, a, torch.ones_like(a))
    step = _times_pow2(torch.ones_like(a), _binary_exponent(positive) - digits)
    return torch.maximum(step, _exact(a, tiny))


def np_nextafter(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """The float after x towards y, by exponent arithmetic (exporters lack nextafter)."""
    x, y = torch.broadcast_tensors(x, torch.as_tensor(y, dtype=x.dtype))
    info = torch.finfo(x.dtype)
    w = _work(x)
    a = torch.abs(w)
    finite = torch.where(torch.isfinite(a), a, torch.ones_like(a))
    ulp = _ulp(finite, x.dtype)
    power_of_two = _times_pow2(finite, -_binary_exponent(finite)) == 0.5
    toward_zero = (y > x) != (x > 0)
    halve = toward_zero & power_of_two & (finite > info.smallest_normal)
    step = torch.where(halve, ulp / 2, ulp)
    up = y > x
    out = w + torch.where(up, step, -step)
    out = torch.where(torch.isinf(w), torch.sign(w) * _exact(w, info.max), out)
    out = out.to(x.dtype)
    out = torch.where(x == y, y, out)
    return torch.where(torch.isnan(x) | torch.isnan(y), x + y, out)


def np_spacing(x: torch.Tensor) -> torch.Tensor:
    """ulp of x: away from zero and signed like x; NumPy's float16 loop steps up instead."""
    if x.dtype == torch.float16:
        target = torch.full_like(x, math.inf)
    else:
        target = torch.where(x < 0, torch.full_like(x, -math.inf), torch.full_like(x, math.inf))
    return np_nextafter(x, target) - x


def _euclid_steps(dtype: torch.dtype) -> int:
    """Euclid's algorithm needs fewer steps than the Fibonacci index above the dtype's max."""
    limit, a, b, steps = torch.iinfo(dtype).max, 1, 1, 0
    while b <= limit:
        a, b, steps = b, a + b, steps + 1
    return steps + 1


def np_gcd(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Greatest common divisor by a fixed number of Euclid steps (exporters lack gcd)."""
    x, y = torch.broadcast_tensors(torch.abs(x), torch.abs(y))
    zero = torch.zeros_like(x)
    for _ in range(_euclid_steps(x.dtype)):
        done = y == 0
        rest = torch.remainder(x, torch.where(done, torch.ones_like(y), y))
        x, y = torch.where(done, x, y), torch.where(done, zero, rest)
    return x


def np_lcm(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Least common multiple: |x / gcd * y|, 0 when either is 0."""
    g = np_gcd(x, y)
    safe = torch.where(g == 0, torch.ones_like(g), g)
    return torch.abs(torch.div(x, safe, rounding_mode="trunc") * y)


def _float_test(test: Callable, integers: bool) -> Callable:
    """A float predicate whose answer on integers and booleans is the constant ``integers``."""

    def predicate(x: torch.Tensor) -> torch.Tensor:
        if x.dtype.is_floating_point or x.dtype.is_complex:
            return test(x)
        return torch.full_like(x, integers, dtype=torch.bool)

    predicate.__name__ = predicate.__qualname__ = f"np_{test.__name__}"
    predicate.__doc__ = f"{test.__name__}, constant {integers} on integers (no ONNX int kernel)."
    return predicate


np_isfinite = _float_test(torch.isfinite, True)
np_isinf = _float_test(torch.isinf, False)
np_isnan = _float_test(torch.isnan, False)


def np_fmax(x: Any, y: Any) -> torch.Tensor:
    """Maximum ignoring NaN (exporters lack fmax)."""
    if not x.dtype.is_floating_point:
        return torch.maximum(x, y)
    return torch.where(torch.isnan(x), y, torch.where(torch.isnan(y), x, torch.maximum(x, y)))


def np_fmin(x: Any, y: Any) -> torch.Tensor:
    """Minimum ignoring NaN (exporters lack fmin)."""
    if not x.dtype.is_floating_point:
        return torch.minimum(x, y)
    return torch.where(torch.isnan(x), y, torch.where(torch.isnan(y), x, torch.minimum(x, y)))


def _int_guard(x: Any, y: Any) -> tuple[Any, Any]:
    """For integer division by a tensor, NumPy yields 0 where y == 0; torch would raise."""
    if isinstance(y, torch.Tensor) and not (y.dtype.is_floating_point or y.dtype.is_complex):
        zero = y == 0
        return zero, torch.where(zero, torch.ones_like(y), y)
    return None, y


def np_floor_divide(x: Any, y: Any) -> torch.Tensor:
    """Floor division; integer division by zero gives 0 as in NumPy."""
    zero, y = _int_guard(x, y)
    out = torch.floor_divide(x, y)
    return out if zero is None else torch.where(zero, torch.zeros_like(out), out)


def np_remainder(x: Any, y: Any) -> torch.Tensor:
    """Python-style remainder; integer remainder by zero gives 0 as in NumPy."""
    zero, y = _int_guard(x, y)
    out = torch.remainder(x, y)
    return out if zero is None else torch.where(zero, torch.zeros_like(out), out)


def np_fmod(x: Any, y: Any) -> torch.Tensor:
    """C-style remainder; integer fmod by zero gives 0 as in NumPy."""
    zero, y = _int_guard(x, y)
    out = torch.fmod(x, y)
    return out if zero is None else torch.where(zero, torch.zeros_like(out), out)


def np_copysign(x: torch.Tensor, y: Any) -> torch.Tensor:
    """|x| with the sign of y (-0.0 counts as negative), without a signbit kernel."""
    y = torch.as_tensor(y, dtype=x.dtype)
    negative = (y < 0) | ((y == 0) & (torch.reciprocal(y) < 0))
    magnitude = torch.abs(x)
    return torch.where(negative, -magnitude, magnitude)


def np_hypot(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """sqrt(x**2 + y**2) from basic ops (exporters lack hypot)."""
    return torch.sqrt(x * x + y * y)


def np_modf(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Fractional and integral parts, both signed like x."""
    whole = torch.trunc(x)
    return x - whole, whole


def np_divmod(x: Any, y: Any) -> tuple[torch.Tensor, torch.Tensor]:
    """Floor quotient and remainder, like Python's divmod."""
    return np_floor_divide(x, y), np_remainder(x, y)


def np_frexp(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Mantissa in [0.5, 1) and int32 exponent; (x, 0) for 0, inf and NaN."""
    w = _work(x)
    a = torch.abs(w)
    regular = torch.isfinite(a) & (a > 0)
    e = _binary_exponent(torch.where(regular, a, torch.ones_like(a)))
    e = torch.where(regular, e, torch.zeros_like(e))
    mantissa = torch.where(regular, _times_pow2(w, -e), w)
    return mantissa.to(x.dtype), e.to(torch.int32)


def np_ldexp(x: torch.Tensor, e: Any) -> torch.Tensor:
    """x * 2**e in x's dtype."""
    if not isinstance(e, torch.Tensor):
        e = torch.tensor(e)
    return x * torch.pow(torch.tensor(2.0, dtype=x.dtype), e.to(x.dtype))


def np_bitwise_count(x: torch.Tensor) -> torch.Tensor:
    """Number of 1 bits in |x|, as uint8 (SWAR popcount: a dozen ops whatever the width)."""
    v = torch.abs(x.to(torch.int64)) if x.dtype.is_signed else x.to(torch.int64)
    m1, m2, m4 = 0x5555555555555555, 0x3333333333333333, 0x0F0F0F0F0F0F0F0F
    v = v - torch.bitwise_and(torch.bitwise_right_shift(v, 1), m1)
    v = torch.bitwise_and(v, m2) + torch.bitwise_and(torch.bitwise_right_shift(v, 2), m2)
    v = torch.bitwise_and(v + torch.bitwise_right_shift(v, 4), m4)
    v = torch.bitwise_and(torch.bitwise_right_shift(v * 0x0101010101010101, 56), 0xFF)
    return v.to(torch.uint8)


def _shift(fn: Callable) -> Callable:
    """A shift that runs uint8 in int64 (the ONNX exporter shifts uint8 as signed int8)."""

    def shift(x: torch.Tensor, s: Any) -> torch.Tensor:
        if isinstance(x, torch.Tensor) and x.dtype == torch.uint8:
            s = s.to(torch.int64) if isinstance(s, torch.Tensor) else s
            return fn(x.to(torch.int64), s).to(torch.uint8)
        return fn(x, s)

    shift.__name__ = shift.__qualname__ = f"np_{fn.__name__}"
    shift.__doc__ = f"{fn.__name__}, with uint8 computed in int64 (same bits)."
    return shift


np_left_shift = _shift(torch.bitwise_left_shift)
np_right_shift = _shift(torch.bitwise_right_shift)


def np_sign(x: torch.Tensor) -> torch.Tensor:
    """Sign with NaN kept as NaN (NumPy), 0 for zero."""
    if x.dtype.is_floating_point:
        return torch.where(torch.isnan(x), x, torch.sign(x))
    return torch.sign(x)


def np_heaviside(x: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
    """Heaviside step with NaN propagated as NumPy does."""
    return torch.heaviside(x, h0)


def np_logical_xor(x: Any, y: Any) -> torch.Tensor:
    """Logical xor of two truth values."""
    return torch.logical_xor(x, y)


def np_fabs(x: torch.Tensor) -> torch.Tensor:
    """Absolute value of a float array."""
    return torch.abs(x)


def _bool_product(fn: Callable, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Products of booleans as NumPy defines them (or of ands), via integers (no bool kernels)."""
    if x.dtype == torch.bool:
        return fn(x.to(torch.int64), y.to(torch.int64)) != 0
    return fn(x, y).to(torch.promote_types(x.dtype, y.dtype))


def np_matmul(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Matrix product, booleans included."""
    return _bool_product(torch.matmul, x, y)


def np_vecdot(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Dot product over the last axis (conjugating x), in the operands' dtype."""
    return _bool_product(lambda a, b: torch.sum(torch.conj_physical(a) * b, dim=-1), x, y)


def np_matvec(x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Matrix-vector product broadcast over leading dims."""
    return _bool_product(lambda a, b: torch.matmul(a, b.unsqueeze(-1)).squeeze(-1), x, v)


def np_vecmat(v: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """Vector-matrix product broadcast over leading dims (conjugating v)."""
    return _bool_product(
        lambda a, b: torch.matmul(torch.conj_physical(a).unsqueeze(-2), b).squeeze(-2), v, x
    )


def np_degrees(x: torch.Tensor) -> torch.Tensor:
    """Radians to degrees as NumPy computes it (a double constant, not a float32 one)."""
    return x * _exact(x, 180.0 / math.pi)


def np_radians(x: torch.Tensor) -> torch.Tensor:
    """Degrees to radians as NumPy computes it."""
    return x * _exact(x, math.pi / 180.0)


U = UfuncSpec
UFUNCS: dict[np.ufunc, UfuncSpec] = {
    # math
    np.add: U(torch.add),
    np.subtract: U(torch.sub),
    np.multiply: U(torch.mul),
    np.matmul: U(np_matmul, tensors_only=True),
    np.divide: U(np_true_divide),
    np.logaddexp: U(torch.logaddexp, tensors_only=True),
    np.logaddexp2: U(torch.logaddexp2, tensors_only=True),
    np.floor_divide: U(np_floor_divide),
    np.negative: U(torch.neg),
    np.positive: U(torch.positive),
    np.power: U(torch.pow),
    np.float_power: U(torch.pow),
    np.remainder: U(np_remainder),
    np.fmod: U(np_fmod),
    np.divmod: U(np_divmod, nout=2),
    np.absolute: U(torch.abs),
    np.fabs: U(np_fabs),
    np.rint: U(torch.round),
    np.sign: U(np_sign),
    np.heaviside: U(np_heaviside, tensors_only=True),
    np.conjugate: U(torch.conj_physical),
    np.exp: U(torch.exp),
    np.exp2: U(torch.exp2),
    np.log: U(torch.log),
    np.log2: U(torch.log2),
    np.log10: U(torch.log10),
    np.expm1: U(torch.expm1),
    np.log1p: U(torch.log1p),
    np.sqrt: U(torch.sqrt),
    np.square: U(torch.square),
    np.cbrt: U(np_cbrt),
    np.reciprocal: U(np_reciprocal),
    np.gcd: U(np_gcd, tensors_only=True),
    np.lcm: U(np_lcm, tensors_only=True),
    np.vecdot: U(np_vecdot, tensors_only=True),
    # trigonometric
    np.sin: U(torch.sin),
    np.cos: U(torch.cos),
    np.tan: U(torch.tan),
    np.arcsin: U(torch.asin),
    np.arccos: U(torch.acos),
    np.arctan: U(torch.atan),
    np.arctan2: U(torch.atan2, tensors_only=True),
    np.hypot: U(np_hypot, tensors_only=True),
    np.sinh: U(torch.sinh),
    np.cosh: U(torch.cosh),
    np.tanh: U(torch.tanh),
    np.arcsinh: U(torch.asinh),
    np.arccosh: U(torch.acosh),
    np.arctanh: U(torch.atanh),
    np.degrees: U(np_degrees),
    np.radians: U(np_radians),
    np.deg2rad: U(np_radians),
    np.rad2deg: U(np_degrees),
    # bitwise (stay bitwise: never mapped to logical ops)
    np.bitwise_and: U(torch.bitwise_and),
    np.bitwise_or: U(torch.bitwise_or),
    np.bitwise_xor: U(torch.bitwise_xor),
    np.invert: U(torch.bitwise_not),
    np.left_shift: U(np_left_shift),
    np.right_shift: U(np_right_shift),
    np.bitwise_count: U(np_bitwise_count),
    # comparison and logical
    np.greater: U(torch.gt, predicate=True),
    np.greater_equal: U(torch.ge, predicate=True),
    np.less: U(torch.lt, predicate=True),
    np.less_equal: U(torch.le, predicate=True),
    np.not_equal: U(torch.ne, predicate=True),
    np.equal: U(torch.eq, predicate=True),
    np.logical_and: U(torch.logical_and, predicate=True, tensors_only=True),
    np.logical_or: U(torch.logical_or, predicate=True, tensors_only=True),
    np.logical_xor: U(np_logical_xor, predicate=True, tensors_only=True),
    np.logical_not: U(torch.logical_not, predicate=True),
    np.maximum: U(torch.maximum, tensors_only=True),
    np.minimum: U(torch.minimum, tensors_only=True),
    np.fmax: U(np_fmax, tensors_only=True),
    np.fmin: U(np_fmin, tensors_only=True),
    # floating
    np.isfinite: U(np_isfinite, predicate=True, cast_inputs=False),
    np.isinf: U(np_isinf, predicate=True, cast_inputs=False),
    np.isnan: U(np_isnan, predicate=True, cast_inputs=False),
    np.signbit: U(torch.signbit, predicate=True, cast_inputs=False),
    np.copysign: U(np_copysign),
    np.nextafter: U(np_nextafter, tensors_only=True),
    np.spacing: U(np_spacing),
    np.modf: U(np_modf, nout=2),
    np.ldexp: U(np_ldexp),
    np.frexp: U(np_frexp, nout=2),
    np.floor: U(torch.floor),
    np.ceil: U(torch.ceil),
    np.trunc: U(torch.trunc),
}
for _name, _fn in (("matvec", np_matvec), ("vecmat", np_vecmat)):
    if hasattr(np, _name):
        UFUNCS[getattr(np, _name)] = U(_fn, tensors_only=True)

# ufuncs that are the identity on booleans (torch has no bool kernel for them)
BOOL_IDENTITY = {np.absolute, np.floor, np.ceil, np.trunc, np.positive, np.rint}

# ufuncs that are the identity on integers (ONNX Runtime has no integer Floor or Ceil)
INT_IDENTITY = {np.floor, np.ceil, np.trunc, np.rint}

_LOOP_CACHE: dict[tuple, tuple[tuple[np.dtype, ...], tuple[np.dtype, ...]] | None] = {}


def loop_dtypes(ufunc: np.ufunc, inputs: tuple, dtype: Any = None) -> tuple | None:
    """NumPy's loop dtypes (inputs, outputs) for these operands, cached by operand kinds."""
    keys = []
    for value in inputs:
        if isinstance(value, (np.ndarray, np.generic)):
            keys.append(value.dtype)
        elif isinstance(value, torch.Tensor):
            keys.append(dtype_of(value))
        elif type(value) in (int, float, complex):
            keys.append(type(value))
        else:
            keys.append(np.asarray(value).dtype)
    key = (ufunc, dtype, *keys)
    hit = _LOOP_CACHE.get(key, False)
    if hit is not False:
        return hit
    try:
        if dtype is not None:
            resolved = ufunc.resolve_dtypes(
                tuple(keys) + (None,) * ufunc.nout,
                signature=((None,) * ufunc.nin + (np.dtype(dtype),) * ufunc.nout),
            )
        else:
            resolved = ufunc.resolve_dtypes(tuple(keys) + (None,) * ufunc.nout)
        hit = (tuple(resolved[: ufunc.nin]), tuple(resolved[ufunc.nin :]))
    except (TypeError, ValueError):
        hit = None
    _LOOP_CACHE[key] = hit
    return hit


_UFUNC_PLANS: dict[tuple, tuple] = {}
_NODE, _CAST, _FULL, _LITERAL = 0, 1, 2, 3
_SCALARS = (int, float, complex, bool)


def _ufunc_key(ufunc: np.ufunc, inputs: tuple, dtype: Any) -> tuple:
    key: list[Any] = [ufunc, dtype]
    for value in inputs:
        kind = type(value)
        if kind in _SCALARS:
            key.append(kind)
        elif isinstance(value, np.generic):
            key.append((value.dtype, "scalar"))
        else:
            key.append(dtype_of(value))
    return tuple(key)


def _ufunc_plan(ufunc: np.ufunc, inputs: tuple, result: Any, dtype: Any) -> tuple:
    """How to build the torch call for these operand kinds (cached per kinds)."""
    spec = UFUNCS[ufunc]
    loops = loop_dtypes(ufunc, inputs, dtype)
    outs = result if spec.nout > 1 else (result,)
    if loops is None:
        loop_in = tuple(dtype_of(o) for o in outs[:1]) * len(inputs)
        loop_out = tuple(dtype_of(o) for o in outs)
    else:
        loop_in, loop_out = loops
    # torch lacks most kernels for uint16/32/64: compute in int64, cast back (same wraparound)
    loop_in = tuple(compute_dtype(d) for d in loop_in)
    loop_out = tuple(compute_dtype(d) for d in loop_out)
    steps = []
    for position, (value, want) in enumerate(zip(inputs, loop_in)):
        if is_array(value):
            cast = spec.cast_inputs and dtype_of(value) != want
            steps.append((_CAST, torch_dtype(want)) if cast else (_NODE, None))
        elif isinstance(value, np.generic) or position == 0 or spec.tensors_only:
            steps.append((_FULL, torch_dtype(want)))
        else:
            steps.append((_LITERAL, None))
    identity = (loop_in[0] == np.bool_ and ufunc in BOOL_IDENTITY) or (
        loop_in[0].kind in "iu" and ufunc in INT_IDENTITY
    )
    haves = (np.dtype(bool),) if spec.predicate else loop_out
    return tuple(steps), spec, haves, identity, loops is not None


def _finish_output(rec: Recorder, node: Any, have: np.dtype, want: np.dtype) -> Any:
    """Cast a ufunc output from torch's dtype to NumPy's (masking held unsigned results)."""
    if have == want:
        return node
    target = torch_dtype(want)
    if torch_dtype(have) != target:
        node = rec.cast(node, target)
    return wrap_unsigned(rec, node, want) if want in HELD_AS_INT64 else node


def record_ufunc(rec: Recorder, ufunc: np.ufunc, inputs: tuple, result: Any, dtype: Any) -> Any:
    """Record a ufunc ``__call__``; returns a node (or tuple of nodes for nout > 1)."""
    key = _ufunc_key(ufunc, inputs, dtype)
    plan = _UFUNC_PLANS.get(key)
    if plan is None:
        plan = _ufunc_plan(ufunc, inputs, result, dtype)
        if plan[4]:
            _UFUNC_PLANS[key] = plan
    steps, spec, haves, identity, _ = plan
    args = []
    for value, (kind, td) in zip(inputs, steps):
        if kind == _NODE:
            args.append(arg_of(rec, value))
        elif kind == _CAST:
            args.append(rec.cast(arg_of(rec, value), td))
        elif kind == _FULL:
            args.append(rec.call(torch.full, ((), _py(value)), {"dtype": td}))
        else:
            args.append(value)
    if identity:
        return args[0]
    node = rec.call(spec.fn, tuple(args))
    if spec.nout == 1:
        want = result.dtype if isinstance(result, (np.ndarray, np.generic)) else dtype_of(result)
        return node if haves[0] == want else _finish_output(rec, node, haves[0], want)
    nodes = []
    for i, (out, have) in enumerate(zip(result, haves)):
        part = rec.call(operator.getitem, (node, i))
        nodes.append(_finish_output(rec, part, have, dtype_of(out)))
    return tuple(nodes)


# ------------------------------------------------------------ ufunc reduce/accumulate
def np_prod(x: torch.Tensor, dims: tuple[int, ...] | None, keepdim: bool, dtype: Any) -> Any:
    """Product over several dims (torch.prod takes one)."""
    x = x.to(dtype)
    if dims is None:
        dims = tuple(range(x.ndim))
    for d in sorted((d % max(x.ndim, 1) for d in dims), reverse=True):
        x = torch.prod(x, dim=d, keepdim=keepdim) if x.is_floating_point() else _int_prod(x, d)
        if not keepdim and not x.is_floating_point():
            x = x.squeeze(d)
    return x


def _int_prod(x: torch.Tensor, dim: int) -> torch.Tensor:
    """Integer product along dim, kept with dim size 1, by halving: wraps like NumPy.

    (ONNX Runtime's integer ReduceProd saturates instead of wrapping.)
    """
    if x.dtype == torch.bool:
        x = x.to(torch.int64)
    return _halving(x, dim, torch.mul, 1)


def _halving(x: torch.Tensor, dim: int, combine: Callable, identity: int) -> torch.Tensor:
    """Reduce along dim (kept, size 1) by combining halves: log2(n) plain element-wise ops."""
    dim = dim % x.ndim
    if x.shape[dim] == 0:
        shape = list(x.shape)
        shape[dim] = 1
        return torch.full(shape, identity, dtype=x.dtype)
    while x.shape[dim] > 1:
        n = x.shape[dim]
        if n % 2:
            pad = torch.full_like(x.narrow(dim, 0, 1), identity)
            x = torch.cat([x, pad], dim=dim)
            n += 1
        pairs = x.unflatten(dim, (n // 2, 2))
        x = combine(pairs.select(dim + 1, 0), pairs.select(dim + 1, 1))
    return x


def np_all(x: torch.Tensor, dims: tuple[int, ...] | None, keepdim: bool) -> torch.Tensor:
    """Truth of all elements over dims."""
    x = x != 0 if x.dtype != torch.bool else x
    if dims is None:
        dims = tuple(range(x.ndim))
    return torch.all(x, dim=dims, keepdim=keepdim) if dims else x


def np_any(x: torch.Tensor, dims: tuple[int, ...] | None, keepdim: bool) -> torch.Tensor:
    """Truth of any element over dims."""
    x = x != 0 if x.dtype != torch.bool else x
    if dims is None:
        dims = tuple(range(x.ndim))
    return torch.any(x, dim=dims, keepdim=keepdim) if dims else x


def np_amax(x: torch.Tensor, dims: tuple[int, ...] | None, keepdim: bool) -> torch.Tensor:
    """Maximum over dims, NaN-propagating like NumPy, any dtype."""
    if x.dtype == torch.bool:
        return np_any(x, dims, keepdim)
    if dims is None:
        dims = tuple(range(x.ndim))  # explicit dims: exporters reject dim=()
    return torch.amax(x, dim=dims, keepdim=keepdim) if dims else x


def np_amin(x: torch.Tensor, dims: tuple[int, ...] | None, keepdim: bool) -> torch.Tensor:
    """Minimum over dims, NaN-propagating like NumPy, any dtype."""
    if x.dtype == torch.bool:
        return np_all(x, dims, keepdim)
    if dims is None:
        dims = tuple(range(x.ndim))  # explicit dims: exporters reject dim=()
    return torch.amin(x, dim=dims, keepdim=keepdim) if dims else x


def np_cum_and(x: torch.Tensor, dim: int) -> torch.Tensor:
    """Running logical and along dim: no zero seen so far."""
    return torch.cumsum((x == 0).to(torch.int64), dim=dim) == 0


def np_cum_or(x: torch.Tensor, dim: int) -> torch.Tensor:
    """Running logical or along dim."""
    return torch.cumsum((x != 0).to(torch.int64), dim=dim) != 0


def _prefix_scan(x: torch.Tensor, dim: int, combine: Callable) -> torch.Tensor:
    """Inclusive scan of an associative ``combine`` in log2(n) steps (exporters lack cummax)."""
    n = x.shape[dim] if x.ndim else 1
    shift = 1
    while shift < n:
        head = x.narrow(dim, 0, shift)
        x = torch.cat([head, combine(x.narrow(dim, shift, n - shift), x.narrow(dim, 0, n - shift))],
                      dim=dim)  # fmt: skip
        shift *= 2
    return x


def _nan_max(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.maximum(a, b) if a.dtype != torch.bool else a | b


def _nan_min(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.minimum(a, b) if a.dtype != torch.bool else a & b


def np_cummax(x: torch.Tensor, dim: int) -> torch.Tensor:
    """Running maximum along dim (NaN propagates, as in NumPy's maximum.accumulate)."""
    return _prefix_scan(x, dim, _nan_max)


def np_cummin(x: torch.Tensor, dim: int) -> torch.Tensor:
    """Running minimum along dim (NaN propagates)."""
    return _prefix_scan(x, dim, _nan_min)


def np_sum(x: torch.Tensor, dims: tuple[int, ...] | None, keepdim: bool, dtype: Any) -> Any:
    """Sum over dims (None: all) in ``dtype``."""
    if dims is None:
        dims = tuple(range(x.ndim))
    if not dims:
        return x.to(dtype)
    if dtype == torch.int64:  # ONNX Runtime's int64 ReduceSum saturates instead of wrapping
        x = x.to(dtype)
        for d in sorted((d % x.ndim for d in dims), reverse=True):
            x = _halving(x, d, torch.add, 0)
            x = x if keepdim else x.squeeze(d)
        return x
    return torch.sum(x.to(dtype), dim=dims, keepdim=keepdim).to(dtype)


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


def record_ufunc_method(
    rec: Recorder, ufunc: np.ufunc, method: str, inputs: tuple, kwargs: dict, result: Any
) -> Any:
    """Record ``ufunc.reduce`` / ``ufunc.accumulate``; None when not mapped."""
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
        dims = _axes(axis, x.ndim)
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


# -------------------------------------------------------------------- functions
FUNCTIONS: dict[Callable, Callable] = {}
# functions that only read metadata: answered eagerly, nothing recorded, no warning
METADATA_FUNCTIONS: set[Callable] = {
    np.shape,
    np.ndim,
    np.size,
    np.result_type,
    np.iscomplexobj,
    np.isrealobj,
    np.may_share_memory,
    np.shares_memory,
}


def implements(*functions: Callable) -> Callable:
    """Register a handler for NumPy functions (and their aliases)."""

    def register(handler: Callable) -> Callable:
        for fn in functions:
            FUNCTIONS[fn] = handler
        return handler

    return register


def _reshape_to_result(call: Call, a: Any) -> Node:
    return call.op(torch.reshape, a, tuple(call.result.shape))


@implements(np.reshape)
def _reshape(call: Call, a: Any, shape: Any = None, order: Any = "C", **kwargs: Any) -> Any:
    """``np.reshape``: a target with -1 or with sizes read from traced data is recorded as
    given (those sizes stay computed from the input's), any other as the result's shape."""
    target = kwargs.get("newshape", shape)
    items = tuple(target) if isinstance(target, (tuple, list)) else (target,)
    if order in ("C", "A", "K", None) and any(type(i) is not int or i == -1 for i in items):
        if all(isinstance(i, int) for i in items):
            return call.op(torch.reshape, a, items)
    return _reshape_like(call, a, order=order)


@implements(np.ravel)
def _ravel(call: Call, a: Any, order: Any = "C") -> Any:
    """``np.ravel``: a reshape to (-1,), whatever the input's size."""
    if order not in ("C", "A", "K", None):
        return None
    return call.op(torch.reshape, a, (-1,))


@implements(np.squeeze, np.expand_dims, np.atleast_1d, np.atleast_2d)
def _reshape_like(call: Call, *args: Any, **kwargs: Any) -> Any:
    """Pure reshapes: the eager result's static shape says it all."""
    if kwargs.get("order", "C") not in ("C", "A", "K", None):
        return None
    if isinstance(call.result, (tuple, list)):
        return tuple(call.op(torch.reshape, a, tuple(r.shape)) for a, r in zip(args, call.result))
    return _reshape_to_result(call, args[0])


@implements(np.atleast_3d)
def _atleast_3d(call: Call, *arys: Any) -> Any:
    """atleast_3d puts 1-d data in the middle axis: (n,) -> (1, n, 1)."""
    return _reshape_like(call, *arys)


@implements(np.transpose, np.permute_dims)
def _transpose(call: Call, a: Any, axes: Any = None) -> Node:
    axes = tuple(reversed(range(a.ndim))) if axes is None else tuple(int(i) for i in axes)
    return call.op(torch.permute, a, axes)


@implements(np.swapaxes)
def _swapaxes(call: Call, a: Any, axis1: int, axis2: int) -> Node:
    return call.op(torch.swapaxes, a, int(axis1), int(axis2))


@implements(np.moveaxis)
def _moveaxis(call: Call, a: Any, source: Any, destination: Any) -> Node:
    src = list(source) if isinstance(source, (tuple, list)) else int(source)
    dst = list(destination) if isinstance(destination, (tuple, list)) else int(destination)
    return call.op(torch.movedim, a, src, dst)


def _as_result_dtype(call: Call, arrays: Any) -> list:
    return [call.t(a) for a in arrays]


@implements(np.concatenate, np.concat)
def _concatenate(call: Call, arrays: Any, axis: Any = 0, out: Any = None, **kw: Any) -> Node:
    if axis is None:
        flat = [call.rec.call(torch.reshape, (call.t(a), (-1,))) for a in arrays]
        return _concat_nodes(call, flat, 0)
    return _concat_nodes(call, [call.t(a) for a in arrays], int(axis))


def _concat_nodes(call: Call, nodes: list, dim: int) -> Node:
    return call.rec.call(torch.cat, (nodes, dim))


@implements(np.stack)
def _stack(call: Call, arrays: Any, axis: int = 0, out: Any = None, **kw: Any) -> Node:
    return call.rec.call(torch.stack, (_as_result_dtype(call, arrays), int(axis)))


def _pieces(call: Call, arrays: Any, fix: Callable[[tuple], tuple]) -> list:
    nodes = []
    for a in arrays:
        shape = tuple(np.shape(a))
        node = call.t(a)
        new = fix(shape)
        if new != shape:
            node = call.rec.call(torch.reshape, (node, new))
        nodes.append(node)
    return nodes


def _shape2(s: tuple) -> tuple:
    return s if len(s) >= 2 else ((1, 1) if not s else (1, s[0]))


def _shape3(s: tuple) -> tuple:
    if len(s) >= 3:
        return s
    return {0: (1, 1, 1), 1: (1, *s, 1), 2: (*s, 1)}[len(s)]


@implements(np.vstack, np.row_stack) if hasattr(np, "row_stack") else implements(np.vstack)
def _vstack(call: Call, tup: Any, **kw: Any) -> Node:
    return _concat_nodes(call, _pieces(call, tup, _shape2), 0)


@implements(np.hstack)
def _hstack(call: Call, tup: Any, **kw: Any) -> Node:
    nodes = _pieces(call, tup, lambda s: s or (1,))
    return _concat_nodes(call, nodes, 0 if call.result.ndim == 1 else 1)


@implements(np.dstack)
def _dstack(call: Call, tup: Any, **kw: Any) -> Node:
    return _concat_nodes(call, _pieces(call, tup, _shape3), 2)


@implements(np.column_stack)
def _column_stack(call: Call, tup: Any) -> Node:
    nodes = _pieces(call, tup, lambda s: (s[0], 1) if len(s) == 1 else _shape2(s))
    return _concat_nodes(call, nodes, 1)


@implements(np.split, np.array_split)
def _split(call: Call, ary: Any, indices_or_sections: Any, axis: int = 0) -> tuple:
    dim = int(axis) % ary.ndim
    pieces, start = [], 0
    for r in call.result:  # one slice each: ONNX Runtime's SplitToSequence lacks small ints
        size = int(r.shape[dim])
        pieces.append(call.op(torch.narrow, ary, dim, start, size))
        start += size
    return tuple(pieces)


@implements(np.flip)
def _flip(call: Call, m: Any, axis: Any = None) -> Node:
    return call.op(torch.flip, m, _all_dims(axis, m.ndim))


@implements(np.fliplr)
def _fliplr(call: Call, m: Any) -> Node:
    return call.op(torch.flip, m, (1,))


@implements(np.flipud)
def _flipud(call: Call, m: Any) -> Node:
    return call.op(torch.flip, m, (0,))


@implements(np.roll)
def _roll(call: Call, a: Any, shift: Any, axis: Any = None) -> Node:
    if axis is None:
        return call.op(torch.roll, a, int(shift))
    shifts = tuple(int(s) for s in np.atleast_1d(shift))
    dims = tuple(int(d) for d in np.atleast_1d(axis))
    if len(shifts) == 1 and len(dims) > 1:
        shifts = shifts * len(dims)
    if len(dims) == 1 and len(shifts) > 1:
        dims = dims * len(shifts)
    return call.op(torch.roll, a, shifts, dims)


@implements(np.rot90)
def _rot90(call: Call, m: Any, k: int = 1, axes: Any = (0, 1)) -> Node:
    return call.op(torch.rot90, m, int(k), [int(a) for a in axes])


@implements(np.broadcast_to)
def _broadcast_to(call: Call, array: Any, shape: Any, subok: bool = False) -> Node:
    return call.op(torch.broadcast_to, array, tuple(call.result.shape))


@implements(np.broadcast_arrays)
def _broadcast_arrays(call: Call, *args: Any, subok: bool = False) -> tuple:
    return tuple(call.op(torch.broadcast_to, a, tuple(r.shape)) for a, r in zip(args, call.result))


@implements(np.tile)
def _tile(call: Call, A: Any, reps: Any) -> Node:
    reps = tuple(int(r) for r in np.atleast_1d(reps))
    return call.op(torch.tile, A, reps)


def np_repeat(x: torch.Tensor, repeats: Any, dim: int | None) -> torch.Tensor:
    """np.repeat: repeat elements along dim (None: flattened)."""
    if dim is None:
        x, dim = x.reshape(-1), 0
    if isinstance(repeats, (list, tuple)):
        repeats = torch.tensor(repeats, dtype=torch.int64)
    return torch.repeat_interleave(x, repeats, dim=dim)


@implements(np.repeat)
def _repeat(call: Call, a: Any, repeats: Any, axis: Any = None) -> Node:
    if is_array(repeats) and not isinstance(repeats, (TracedArray, TracedTensor)):
        repeats = [int(r) for r in np.ravel(repeats)]
        repeats = repeats[0] if len(repeats) == 1 else repeats
    dim = None if axis is None else int(axis) % a.ndim
    return call.op(np_repeat, a, repeats, dim)


def np_take_index(x: torch.Tensor, dim: int, index: list[int]) -> torch.Tensor:
    """Select a static list of positions along dim (used for edge/reflect/wrap padding)."""
    return torch.index_select(x, dim, torch.tensor(index, dtype=torch.int64))


def _pad_positions(n: int, before: int, after: int, mode: str) -> list[int]:
    """Source position of each padded element along one axis, NumPy's pad modes."""
    out = []
    for i in range(-before, n + after):
        if mode == "edge":
            j = min(max(i, 0), n - 1)
        elif mode == "wrap":
            j = i % n
        elif mode == "reflect":
            period = 2 * (n - 1) if n > 1 else 1
            j = i % period if n > 1 else 0
            j = period - j if j >= n else j
        else:  # symmetric
            period = 2 * n
            j = i % period
            j = period - 1 - j if j >= n else j
        out.append(j)
    return out


@implements(np.pad)
def _pad(call: Call, array: Any, pad_width: Any, mode: str = "constant", **kw: Any) -> Any:
    ndim = array.ndim
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (ndim, 2))
    if mode == "constant":
        value = kw.get("constant_values", 0)
        if np.ndim(value) != 0 or set(kw) - {"constant_values"}:
            return None
        flat: list[int] = []
        for before, after in reversed(widths.tolist()):
            flat += [int(before), int(after)]
        fill = np.asarray(value).astype(array.dtype).item()
        return call.op(F.pad, array, flat, "constant", fill)
    if mode not in ("edge", "reflect", "symmetric", "wrap") or kw.get("reflect_type", "even") != (
        "even"
    ):
        return None
    node = call.n(array)
    for dim, (before, after) in enumerate(widths.tolist()):
        if before or after:
            index = _pad_positions(array.shape[dim], int(before), int(after), mode)
            node = call.rec.call(np_take_index, (node, dim, index))
    return node


# --------------------------------------------------------------------- reductions
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
    return call.op(np_sum, a, _axes(axis, a.ndim), bool(keepdims), torch_dtype(call.result.dtype))


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
    return call.op(np_prod, a, _axes(axis, a.ndim), bool(keepdims), torch_dtype(call.result.dtype))


def np_mean(x: torch.Tensor, dims: Any, keepdim: bool, dtype: Any) -> torch.Tensor:
    """Mean over dims (None: all) computed in ``dtype``."""
    x = x.to(dtype)
    if dims is None:
        dims = tuple(range(x.ndim))
    return torch.mean(x, dim=dims, keepdim=keepdim) if dims else x


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
    return call.op(np_mean, a, _axes(axis, a.ndim), bool(keepdims), torch_dtype(call.result.dtype))


def np_var(x: torch.Tensor, dims: Any, correction: float, keepdim: bool, dtype: Any) -> Any:
    """Variance with NumPy's ddof as torch's correction."""
    x = x.to(dtype)
    if dims is None:
        dims = tuple(range(x.ndim))
    return torch.var(x, dim=dims, correction=correction, keepdim=keepdim)


def np_std(x: torch.Tensor, dims: Any, correction: float, keepdim: bool, dtype: Any) -> Any:
    """Standard deviation with NumPy's ddof as torch's correction."""
    return torch.sqrt(np_var(x, dims, correction, keepdim, dtype))


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
            fn, a, _axes(axis, a.ndim), ddof, bool(keepdims), torch_dtype(call.result.dtype)
        )

    return handler


FUNCTIONS[np.var] = _var_like(np_var)
FUNCTIONS[np.std] = _var_like(np_std)


@implements(np.max, np.amax)
def _max(
    call: Call, a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, **kw: Any
) -> Any:
    if kw:
        return None
    return call.op(np_amax, a, _axes(axis, a.ndim), bool(keepdims))


@implements(np.min, np.amin)
def _min(
    call: Call, a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, **kw: Any
) -> Any:
    if kw:
        return None
    return call.op(np_amin, a, _axes(axis, a.ndim), bool(keepdims))


@implements(np.ptp)
def _ptp(call: Call, a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
    dims = _axes(axis, a.ndim)
    hi = call.op(np_amax, a, dims, bool(keepdims))
    lo = call.op(np_amin, a, dims, bool(keepdims))
    return call.rec.call(torch.sub, (hi, lo))


def np_argmax(x: torch.Tensor, dim: int | None, keepdim: bool) -> torch.Tensor:
    """Index of the first maximum (flattened when dim is None)."""
    if x.dtype == torch.bool:
        x = x.to(torch.uint8)
    if dim is None:
        out = torch.argmax(x.reshape(-1))
        return out.reshape((1,) * x.ndim) if keepdim else out
    return torch.argmax(x, dim=dim, keepdim=keepdim)


def np_argmin(x: torch.Tensor, dim: int | None, keepdim: bool) -> torch.Tensor:
    """Index of the first minimum (flattened when dim is None)."""
    if x.dtype == torch.bool:
        x = x.to(torch.uint8)
    if dim is None:
        out = torch.argmin(x.reshape(-1))
        return out.reshape((1,) * x.ndim) if keepdim else out
    return torch.argmin(x, dim=dim, keepdim=keepdim)


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
    return call.op(np_all, a, _axes(axis, a.ndim), bool(keepdims))


@implements(np.any)
def _any(
    call: Call, a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, **kw: Any
) -> Any:
    if kw:
        return None
    return call.op(np_any, a, _axes(axis, a.ndim), bool(keepdims))


def np_count_nonzero(x: torch.Tensor, dims: Any, keepdim: bool) -> torch.Tensor:
    """Count of nonzero elements over dims (None: all)."""
    return np_sum(x != 0, dims, keepdim, torch.int64)


@implements(np.count_nonzero)
def _count_nonzero(call: Call, a: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    return call.op(np_count_nonzero, a, _axes(axis, a.ndim), bool(keepdims))


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
    dims = _axes(axis, a.ndim)
    if returned:
        return None
    if weights is None:
        return call.op(np_mean, a, dims, bool(keepdims), dtype)
    return call.op(np_weighted_average, a, weights, dims, bool(keepdims), dtype)


def np_weighted_average(x: torch.Tensor, w: Any, dims: Any, keepdim: bool, dtype: Any) -> Any:
    """sum(x * w) / sum(w) over dims, with 1-d weights aligned to a single axis."""
    x = x.to(dtype)
    w = torch.as_tensor(w).to(dtype)
    if dims is None:
        dims = tuple(range(x.ndim))
    if w.ndim == 1 and x.ndim > 1:
        shape = [1] * x.ndim
        shape[dims[0]] = w.shape[0]
        w = w.reshape(shape)
    w = torch.broadcast_to(w, x.shape)
    return torch.sum(x * w, dim=dims, keepdim=keepdim) / torch.sum(w, dim=dims, keepdim=keepdim)


def np_quantile(x: torch.Tensor, q: Any, dims: Any, keepdim: bool, dtype: Any) -> Any:
    """Linear-interpolation quantile over several dims (NumPy's default method)."""
    out_dtype = dtype
    if dtype in (torch.float16, torch.bfloat16):  # torch.quantile takes float32/64 only
        dtype = torch.float32
    x = x.to(dtype)
    if dims is None:
        dims = tuple(range(x.ndim))
    rest = [d for d in range(x.ndim) if d not in dims]
    moved = x.permute(*rest, *dims).reshape(*[x.shape[d] for d in rest], -1)
    qt = torch.as_tensor(q, dtype=dtype)
    out = torch.quantile(moved, qt, dim=-1)
    if keepdim:
        shape = list(x.shape)
        for d in dims:
            shape[d] = 1
        out = out.reshape(*qt.shape, *shape)
    return out.to(out_dtype)


def _quantile_like(scale: float) -> Callable:
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
        qv = qv.tolist()
        dtype = torch_dtype(call.result.dtype)
        return call.op(np_quantile, a, qv, _axes(axis, a.ndim), bool(keepdims), dtype)

    return handler


FUNCTIONS[np.quantile] = _quantile_like(1.0)
FUNCTIONS[np.percentile] = _quantile_like(100.0)


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
    return call.op(np_quantile, a, 0.5, _axes(axis, a.ndim), bool(keepdims), dtype)


# -------------------------------------------------------------------- indexing fns
def np_wrap_index(index: torch.Tensor, n: int) -> torch.Tensor:
    """Turn negative indices into positive ones (NumPy allows them, index_select does not)."""
    index = index.to(torch.int64)
    return torch.where(index < 0, index + n, index)


@implements(np.take)
def _take(
    call: Call, a: Any, indices: Any, axis: Any = None, out: Any = None, mode: str = "raise"
) -> Any:
    if mode != "raise":
        return None
    src = call.op(torch.reshape, a, (-1,)) if axis is None else call.n(a)
    dim = 0 if axis is None else int(axis) % a.ndim
    n = a.size if axis is None else a.shape[dim]
    idx = call.t(np.asarray(indices) if not is_array(indices) else indices, np.int64)
    idx = call.rec.call(np_wrap_index, (idx, n))
    flat = call.rec.call(torch.reshape, (idx, (-1,)))
    node = call.rec.call(torch.index_select, (src, dim, flat))
    return call.rec.call(torch.reshape, (node, tuple(call.result.shape)))


@implements(np.take_along_axis)
def _take_along_axis(call: Call, arr: Any, indices: Any, axis: Any = -1) -> Any:
    if axis is None:
        return None
    dim = int(axis) % arr.ndim
    idx = call.rec.call(np_wrap_index, (call.t(indices, np.int64), arr.shape[dim]))
    return call.rec.call(torch.take_along_dim, (call.n(arr), idx, dim))


@implements(np.where)
def _where(call: Call, condition: Any, x: Any = None, y: Any = None) -> Any:
    if x is None and y is None:
        return _nonzero(call, condition)
    cond = call.t(condition, bool)
    return call.rec.call(torch.where, (cond, call.t(x), call.t(y)))


@implements(np.nonzero)
def _nonzero(call: Call, a: Any) -> Any:
    node = call.op(torch.nonzero, a, as_tuple=True)
    return tuple(call.rec.call(operator.getitem, (node, i)) for i in range(len(call.result)))


@implements(np.argwhere)
def _argwhere(call: Call, a: Any) -> Any:
    return call.op(torch.argwhere, a)


@implements(np.flatnonzero)
def _flatnonzero(call: Call, a: Any) -> Any:
    flat = call.op(torch.reshape, a, (-1,))
    return call.rec.call(torch.flatten, (call.rec.call(torch.nonzero, (flat,)),))


def np_argsort(x: torch.Tensor, dim: int | None, stable: bool = False) -> torch.Tensor:
    """argsort along dim (None: flattened); stable only when NumPy was asked for it."""
    if dim is None:
        x, dim = x.reshape(-1), 0
    if stable:
        return torch.argsort(x, dim=dim, stable=True)
    return torch.sort(x, dim=dim).indices  # exporters support the default sort


def np_sort(x: torch.Tensor, dim: int | None) -> torch.Tensor:
    """Sorted values along dim (None: flattened), NaN last as in NumPy."""
    if dim is None:
        x, dim = x.reshape(-1), 0
    return torch.sort(x, dim=dim).values


@implements(np.argsort)
def _argsort(
    call: Call, a: Any, axis: Any = -1, kind: Any = None, order: Any = None, **kw: Any
) -> Any:
    if order is not None:
        return None
    dim = None if axis is None else int(axis) % a.ndim
    stable = kind in ("stable", "mergesort") or kw.get("stable") is True
    return call.op(np_argsort, a, dim, stable)


@implements(np.sort)
def _sort(
    call: Call, a: Any, axis: Any = -1, kind: Any = None, order: Any = None, **kw: Any
) -> Any:
    if order is not None:
        return None
    dim = None if axis is None else int(axis) % a.ndim
    return call.op(np_sort, a, dim)


def np_searchsorted(a: torch.Tensor, v: Any, right: bool) -> torch.Tensor:
    """Insertion positions of v in sorted 1-d a, by counting (exporters lack searchsorted)."""
    v = torch.as_tensor(v, dtype=a.dtype)
    below = a <= v.unsqueeze(-1) if right else a < v.unsqueeze(-1)
    return below.to(torch.int64).sum(dim=-1)


@implements(np.searchsorted)
def _searchsorted(call: Call, a: Any, v: Any, side: str = "left", sorter: Any = None) -> Any:
    if sorter is not None:
        return None
    common = np.result_type(dtype_of(a), dtype_of(v) if is_array(v) else np.asarray(v).dtype)
    return call.rec.call(np_searchsorted, (call.t(a, common), call.t(v, common), side == "right"))


@implements(np.digitize)
def _digitize(call: Call, x: Any, bins: Any, right: bool = False) -> Any:
    b = np.asarray(plain_data(bins))
    common = np.result_type(dtype_of(x), dtype_of(bins))
    xs, bs = call.t(x, common), call.t(bins, common)
    if b.size > 1 and b[0] > b[-1]:  # decreasing bins: mirror the increasing case
        flipped = call.rec.call(torch.flip, (bs, (0,)))
        pos = call.rec.call(np_searchsorted, (flipped, xs, not right))
        return call.done(call.rec.call(torch.rsub, (pos, b.size)), np.int64)
    return call.done(call.rec.call(np_searchsorted, (bs, xs, not right)), np.int64)


def plain_data(value: Any) -> Any:
    """Eager data of a possibly traced value, as a plain NumPy array."""
    if isinstance(value, torch.Tensor):
        return value.detach().as_subclass(torch.Tensor).cpu().numpy()
    return np.asarray(
        np.ndarray.view(value, np.ndarray) if isinstance(value, np.ndarray) else value
    )


def np_interp(x: torch.Tensor, xp: torch.Tensor, fp: torch.Tensor, left: Any, right: Any) -> Any:
    """Piecewise-linear interpolation with NumPy's edge values."""
    n = xp.shape[0]
    hi = torch.clamp(np_searchsorted(xp, x, True), 1, n - 1)
    lo = hi - 1
    x0, x1, y0, y1 = xp[lo], xp[hi], fp[lo], fp[hi]
    slope = (y1 - y0) / (x1 - x0)
    out = y0 + slope * (x - x0)
    out = torch.where(x == x1, y1, out)
    left_v = fp[0] if left is None else torch.as_tensor(left, dtype=fp.dtype)
    right_v = fp[-1] if right is None else torch.as_tensor(right, dtype=fp.dtype)
    out = torch.where(x < xp[0], left_v, out)
    return torch.where(x > xp[-1], right_v, out)


@implements(np.interp)
def _interp(
    call: Call, x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None, period: Any = None
) -> Any:
    if period is not None or np.iscomplexobj(call.result):
        return None
    f = np.float64
    xs = call.t(x if is_array(x) else np.asarray(x), f)
    return call.rec.call(np_interp, (xs, call.t(xp, f), call.t(fp, f), _py(left), _py(right)))


def np_bincount(x: torch.Tensor, weights: Any, length: int) -> torch.Tensor:
    """Counts (or weight sums) per value, padded/truncated to the traced length."""
    out = torch.bincount(x.to(torch.int64), weights=weights, minlength=length)
    return out[:length]


@implements(np.bincount)
def _bincount(call: Call, x: Any, weights: Any = None, minlength: int = 0) -> Any:
    w = None if weights is None else call.t(weights, np.float64)
    node = call.rec.call(np_bincount, (call.n(x), w, len(call.result)))
    return call.done(node, np.float64 if weights is not None else np.int64)


# --------------------------------------------------------------------- linear algebra
def np_dot(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """np.dot: scalars multiply, otherwise contract a's last axis with b's second-to-last."""
    if a.dtype == torch.bool:
        return np_dot(a.to(torch.int64), b.to(torch.int64)) != 0
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    return torch.tensordot(a, b, dims=([a.ndim - 1], [max(b.ndim - 2, 0)]))


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
    return call.rec.call(torch.linalg.norm, (call.t(x), ord, dims, bool(keepdims)))


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


@implements(np.diff)
def _diff(call: Call, a: Any, n: int = 1, axis: int = -1, **kw: Any) -> Any:
    if kw:
        return None
    return call.op(torch.diff, a, int(n), int(axis))


# ------------------------------------------------------------ elementwise functions
@implements(np.clip)
def _clip(
    call: Call, a: Any, a_min: Any = None, a_max: Any = None, out: Any = None, **kw: Any
) -> Any:
    lo = kw.get("min", a_min)
    hi = kw.get("max", a_max)
    if set(kw) - {"min", "max"}:
        return None
    x = call.t(a)
    kind = call.result.dtype
    if kind.kind in "iu":  # NumPy ignores Python-int bounds beyond the integer range
        info = np.iinfo(kind)
        if isinstance(lo, int) and lo <= info.min:
            lo = None
        if isinstance(hi, int) and hi >= info.max:
            hi = None
    lo = None if lo is None else call.t(lo)
    hi = None if hi is None else call.t(hi)
    if lo is not None and hi is not None:
        return call.rec.call(torch.minimum, (call.rec.call(torch.maximum, (x, lo)), hi))
    if lo is not None:
        return call.rec.call(torch.maximum, (x, lo))
    if hi is not None:
        return call.rec.call(torch.minimum, (x, hi))
    return x


def np_round(x: torch.Tensor, decimals: int) -> torch.Tensor:
    """Round half to even at ``decimals`` like NumPy (integers with decimals >= 0 unchanged)."""
    if not x.dtype.is_floating_point:
        if decimals >= 0:
            return x
        factor = 10 ** (-decimals)
        scaled = torch.round(x.to(torch.float64) / factor) * factor
        return scaled.to(x.dtype)
    if decimals == 0:
        return torch.round(x)
    factor = 10.0**decimals
    return torch.round(x * factor) / factor


@implements(np.round, np.around)
def _round(call: Call, a: Any, decimals: int = 0, out: Any = None) -> Any:
    return call.op(np_round, a, int(decimals))


@implements(np.nan_to_num)
def _nan_to_num(
    call: Call, x: Any, copy: bool = True, nan: float = 0.0, posinf: Any = None, neginf: Any = None
) -> Any:
    if not np.issubdtype(dtype_of(x), np.floating):
        return call.n(x)
    return call.op(np_nan_to_num, x, float(nan), _py(posinf), _py(neginf))


def np_nan_to_num(x: torch.Tensor, nan: float, posinf: Any, neginf: Any) -> torch.Tensor:
    """NaN and infinities replaced as NumPy does, by explicit selects (exports exactly)."""
    info = torch.finfo(x.dtype)
    big = info.max if posinf is None else posinf
    small = info.min if neginf is None else neginf
    x = torch.where(torch.isnan(x), torch.full_like(x, nan), x)
    x = torch.where(x == math.inf, _exact(x, big), x)
    return torch.where(x == -math.inf, _exact(x, small), x)


@implements(np.isclose)
def _isclose(
    call: Call, a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> Any:
    common = np.result_type(dtype_of(a), dtype_of(b), np.float64 if not is_array(b) else bool)
    if not np.issubdtype(common, np.inexact):
        common = np.dtype(np.float64)
    return call.rec.call(
        torch.isclose,
        (call.t(a, common), call.t(b, common)),
        {"rtol": float(rtol), "atol": float(atol), "equal_nan": bool(equal_nan)},
    )


@implements(np.copy)
def _copy(call: Call, a: Any, order: str = "K", subok: bool = False) -> Any:
    return call.n(a)


def np_nan_fill(x: torch.Tensor, fill: float) -> torch.Tensor:
    """x with NaNs replaced by ``fill`` (integers have none)."""
    if not x.dtype.is_floating_point:
        return x
    return torch.where(torch.isnan(x), torch.full_like(x, fill), x)


def np_nanmean(x: torch.Tensor, dims: Any, keepdim: bool, dtype: Any) -> torch.Tensor:
    """Mean ignoring NaNs (NaN where every value is NaN)."""
    x = x.to(dtype)
    valid = ~torch.isnan(x)
    total = np_sum(torch.where(valid, x, torch.zeros_like(x)), dims, keepdim, dtype)
    return total / np_sum(valid, dims, keepdim, dtype)


def _nan_reduction(fill: float, fn: Callable) -> Callable:
    def handler(
        call: Call, a: Any, axis: Any = None, *args: Any, keepdims: bool = False, **kw: Any
    ) -> Any:
        if args or set(kw) - {"out", "dtype"} or kw.get("out") is not None:
            return None
        filled = call.op(np_nan_fill, a, fill)
        dims = _axes(axis, a.ndim)
        if fn in (np_sum, np_prod):
            return call.rec.call(fn, (filled, dims, bool(keepdims), torch_dtype(call.result.dtype)))
        return call.done(call.rec.call(fn, (filled, dims, bool(keepdims))), dtype_of(a))

    return handler


FUNCTIONS[np.nansum] = _nan_reduction(0.0, np_sum)
FUNCTIONS[np.nanprod] = _nan_reduction(1.0, np_prod)
FUNCTIONS[np.nanmax] = _nan_reduction(-math.inf, np_amax)
FUNCTIONS[np.nanmin] = _nan_reduction(math.inf, np_amin)


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
    dims = _axes(axis, a.ndim)
    return call.op(np_nanmean, a, dims, bool(keepdims), torch_dtype(call.result.dtype))


def np_diag(x: torch.Tensor, k: int) -> torch.Tensor:
    """np.diag: a 1-d input becomes a square matrix, a 2-d input gives its k-th diagonal."""
    if x.ndim == 1:
        return torch.diag(x, k)
    return torch.diagonal(x, k)


@implements(np.diag)
def _diag(call: Call, v: Any, k: int = 0) -> Any:
    return call.op(np_diag, v, int(k))


@implements(np.append)
def _append(call: Call, arr: Any, values: Any, axis: Any = None) -> Any:
    if axis is None:
        parts = [call.rec.call(torch.reshape, (call.t(p), (-1,))) for p in (arr, values)]
        return _concat_nodes(call, parts, 0)
    return _concat_nodes(call, [call.t(arr), call.t(values)], int(axis))


@implements(np.select)
def _select(call: Call, condlist: Any, choicelist: Any, default: Any = 0) -> Any:
    shape = tuple(call.result.shape)
    node = call.rec.call(torch.broadcast_to, (call.t(default), shape))
    for cond, choice in reversed(list(zip(condlist, choicelist))):
        node = call.rec.call(torch.where, (call.t(cond, bool), call.t(choice), node))
    return node


@implements(np.fix)
def _fix(call: Call, x: Any, out: Any = None) -> Any:
    if call.result.dtype.kind in "biu":  # integers are whole already (ONNX has no int Floor)
        return call.t(x)
    return call.done(call.rec.call(torch.trunc, (call.t(x),)), call.result.dtype)


@implements(np.real)
def _real(call: Call, val: Any) -> Any:
    return None if np.iscomplexobj(val) else call.n(val)


@implements(np.imag)
def _imag(call: Call, val: Any) -> Any:
    if np.iscomplexobj(val):
        return None
    res = call.result
    return call.rec.call(torch.zeros, (tuple(res.shape),), {"dtype": torch_dtype(res.dtype)})


# --------------------------------------------------------------------- creation
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


def np_linspace(start: Any, stop: Any, num: int, endpoint: bool, dtype: Any) -> torch.Tensor:
    """NumPy's linspace along a new leading axis, for scalar or array endpoints."""
    start = torch.as_tensor(start, dtype=torch.float64)
    stop = torch.as_tensor(stop, dtype=torch.float64)
    div = (num - 1) if endpoint else num
    steps = torch.arange(num, dtype=torch.float64).reshape(num, *([1] * start.ndim))
    delta = stop - start
    if div > 0:
        out = steps * (delta / div) + start
    else:
        out = steps * delta + start
    if endpoint and num > 1:
        out = torch.cat([out[:-1], stop.unsqueeze(0)], dim=0)
    if not dtype.is_floating_point:
        out = torch.floor(out)
    return out.to(dtype)


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
        np_linspace, start, stop, int(num), bool(endpoint), torch_dtype(call.result.dtype)
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


def np_triangle(x: torch.Tensor, k: int, upper: bool) -> torch.Tensor:
    """triu/tril on the last two dims (1-d input is broadcast to a square first)."""
    if x.ndim == 1:
        x = torch.broadcast_to(x, (x.shape[0], x.shape[0]))
    return torch.triu(x, k) if upper else torch.tril(x, k)


@implements(np.triu)
def _triu(call: Call, m: Any, k: int = 0) -> Any:
    return call.op(np_triangle, m, int(k), True)


@implements(np.tril)
def _tril(call: Call, m: Any, k: int = 0) -> Any:
    return call.op(np_triangle, m, int(k), False)


# ---------------------------------------------------------------------- methods
# ndarray methods that are the NumPy function of the same meaning (self first)
METHOD_FUNCTIONS: dict[str, Callable] = {
    "sum": np.sum,
    "mean": np.mean,
    "std": np.std,
    "var": np.var,
    "min": np.min,
    "max": np.max,
    "argmin": np.argmin,
    "argmax": np.argmax,
    "prod": np.prod,
    "cumsum": np.cumsum,
    "cumprod": np.cumprod,
    "all": np.all,
    "any": np.any,
    "clip": np.clip,
    "round": np.round,
    "take": np.take,
    "repeat": np.repeat,
    "squeeze": np.squeeze,
    "swapaxes": np.swapaxes,
    "diagonal": np.diagonal,
    "trace": np.trace,
    "nonzero": np.nonzero,
    "argsort": np.argsort,
    "searchsorted": np.searchsorted,
    "dot": np.dot,
    "conj": np.conjugate,
    "conjugate": np.conjugate,
    "ravel": np.ravel,
    "ptp": np.ptp,
    "copy": np.copy,
}


# ---------------------------------------------------------- in-place functions
def np_put(base: torch.Tensor, index: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """``np.put``: a copy of ``base`` with flat positions ``index`` set to ``values``."""
    out = base.reshape(-1).clone()
    out[index] = values.to(out.dtype).expand(index.shape)
    return out.reshape(base.shape)


def _copyto(call: Call, dst: Any, src: Any, casting: str = "same_kind", where: Any = True) -> Any:
    node = call.rec.call(torch.broadcast_to, (call.t(src, dst.dtype), tuple(dst.shape)))
    if where is True:
        return node
    return call.rec.call(torch.where, (call.t(where, bool), node, call.n(dst)))


def _put(call: Call, a: Any, ind: Any, v: Any, mode: str = "raise") -> Any:
    n_index = int(np.size(ind))
    if mode != "raise" or int(np.size(v)) not in (1, n_index):
        return None  # NumPy repeats a shorter v cyclically: not mapped
    index = call.t(np.asarray(ind) if not is_array(ind) else ind, np.int64)
    index = call.rec.call(np_wrap_index, (call.rec.call(torch.reshape, (index, (-1,))), a.size))
    values = call.rec.call(torch.reshape, (call.t(v, a.dtype), (-1,)))
    return call.rec.call(np_put, (call.n(a), index, values))


def _putmask(call: Call, a: Any, mask: Any, values: Any) -> Any:
    if int(np.size(values)) not in (1, a.size):
        return None  # NumPy repeats a shorter values array cyclically: not mapped
    full = call.rec.call(torch.reshape, (call.t(values, a.dtype), (-1,)))
    full = call.rec.call(torch.reshape, (full, tuple(a.shape) if np.size(values) > 1 else ()))
    return call.rec.call(torch.where, (call.t(mask, bool), full, call.n(a)))


# functions writing their first argument in place -> handler giving its new node (or None)
INPLACE_FUNCTIONS: dict[Callable, Callable] = {
    np.copyto: _copyto,
    np.put: _put,
    np.putmask: _putmask,
}

# methods taking a shape or axes as varargs: a.reshape(2, 3), a.transpose(1, 0)
VARARG_METHODS: dict[str, Callable] = {"reshape": np.reshape, "transpose": np.transpose}
# methods that only read metadata or format for display: no recording, no warning
SILENT_METHODS = {
    "__repr__",
    "__str__",
    "__format__",
    "__len__",
    "__sizeof__",
    "__reduce__",
    "__reduce_ex__",
    "__setstate__",
    "__array_namespace__",
    "__dlpack_device__",
    "__class_getitem__",
    "__init_subclass__",
    "__subclasshook__",
    "__getstate__",
    "__array_finalize__",
    "__array_wrap__",
    "__array_priority__",
    "__dir__",
    "__getattribute__",
    "__setattr__",
    "__delattr__",
    "__init__",
    "__new__",
    "__hash__",
    "__eq__",
    "__ne__",
    "__lt__",
    "__le__",
    "__gt__",
    "__ge__",
    "__array_ufunc__",
    "__array_function__",
}
# methods that turn traced data into Python values or raw memory: trace loss
LOSS_METHODS = {
    "item",
    "tolist",
    "tobytes",
    "tostring",
    "tofile",
    "dump",
    "dumps",
    "__float__",
    "__int__",
    "__bool__",
    "__index__",
    "__complex__",
    "__iter__",
    "__dlpack__",
    "__contains__",
}
