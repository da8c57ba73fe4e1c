"""Emitters of elementwise torch ops: arithmetic, comparisons, logic, bit operations,
unary functions, clamps, casts."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from ...dtype_table import onnx_code
from ...errors import Untranslatable
from .builder import NATIVE, Builder, onnx_arithmetic_dtype
from .integers import integer_power, shift, torch_number
from .registry import TABLE, Emitter, emits

_SHORT_SPAN = 64  # innermost runs this short make ONNX Runtime broadcast element by element
_EXPANDED_CONSTANT = 1 << 16  # largest constant (elements) widened to avoid that


def _wide_constant(b: Builder, value: Any, out: torch.Tensor) -> Any:
    """A small constant operand broadcast inside the innermost axes, e.g. a (1, 1, 3) colour
    against (H, W, 3), widened over those axes to (1, W, 3): ONNX Runtime then broadcasts
    whole rows (about 200x faster on a 480x640 image) with the same values."""
    if not isinstance(value, torch.Tensor) or b.traced(value) or value.ndim == 0:
        return value
    shape = (1,) * (out.ndim - value.ndim) + tuple(value.shape)
    broadcast = [s == 1 and o > 1 for s, o in zip(shape, out.shape)]
    if not any(broadcast) or math.prod(shape) == 1:
        return value
    last = max(i for i, x in enumerate(broadcast) if x)
    if last == len(shape) - 1 or math.prod(out.shape[last + 1 :]) >= _SHORT_SPAN:
        return value  # scalar runs or long spans: ONNX Runtime's fast paths
    wide = list(shape)
    for i in range(last, -1, -1):  # widen outward until the contiguous span is long
        wide[i] = out.shape[i]
        if math.prod(wide[i:]) >= _SHORT_SPAN:
            break
    if math.prod(wide) > _EXPANDED_CONSTANT:
        return value
    return value.reshape(shape).expand(tuple(wide)).contiguous()


def _stays_uint8(out: torch.Tensor, *operands: Any) -> bool:
    """True when a uint8 result of uint8 operands (or Python ints 0..255) can be computed
    in uint8 itself: ONNX Runtime's uint8 Add/Sub/Mul wrap modulo 256 like torch, Min/Max
    select, so the int64 round trip (8x the memory traffic, two casts) buys nothing."""
    return _stays_native(out, (torch.uint8,), *operands)


_WRAPPING = (torch.uint8, torch.int8, torch.int16)  # ONNX Runtime's Add/Sub/Mul wrap alike


def _stays_native(out: torch.Tensor, dtypes: tuple[torch.dtype, ...], *operands: Any) -> bool:
    """True when ``out``'s dtype is one of ``dtypes`` and every operand is a tensor of it or
    a Python int it holds: the op runs in that dtype, wrapping like torch."""
    if out.dtype not in dtypes:
        return False
    info = torch.iinfo(out.dtype)
    return all(
        (isinstance(v, torch.Tensor) and v.dtype == out.dtype)
        or (type(v) is int and info.min <= v <= info.max)
        for v in operands
    )


_BOOL_ARITHMETIC = {"Add": "Or", "Mul": "And"}  # torch's + and * on bools


def _binary(op: str, swap: bool = False) -> Emitter:
    def emit(b: Builder, out: torch.Tensor, x: Any, y: Any, *, alpha: Any = None) -> str:
        if out.dtype == torch.bool and alpha in (None, 1) and op in _BOOL_ARITHMETIC:
            return b.node(_BOOL_ARITHMETIC[op], [truth(b, x), truth(b, y)])  # m * True
        if alpha not in (None, 1) or out.dtype == torch.bool:
            raise Untranslatable(f"{op} with alpha={alpha!r} or on bool")
        native = op in ("Add", "Sub", "Mul") and _stays_native(out, _WRAPPING, x, y)
        compute = out.dtype if native else onnx_arithmetic_dtype(out.dtype)
        x, y = _wide_constant(b, x, out), _wide_constant(b, y, out)
        first, second = (y, x) if swap else (x, y)
        result = b.node(op, [b.value(first, compute), b.value(second, compute)])
        return b.cast(result, compute, out.dtype)

    return emit


for _names, _op, _swap in (
    (("add", "__add__", "__radd__"), "Add", False),
    (("sub", "subtract", "__sub__"), "Sub", False),
    (("__rsub__", "rsub"), "Sub", True),
    (("mul", "multiply", "__mul__", "__rmul__"), "Mul", False),
    (("true_divide", "__truediv__"), "Div", False),
    (("__rtruediv__", "__rdiv__"), "Div", True),
):
    emits(*_names)(_binary(_op, _swap))


@emits("div", "divide")
def _div(b: Builder, out: torch.Tensor, x: Any, y: Any, *, rounding_mode: Any = None) -> str:
    """``torch.div``: true division, or ``rounding_mode="floor"`` as floor_divide, or
    ``"trunc"``: integers by ONNX's truncating Div, floats as trunc(x / y) (torch's order:
    the quotient rounded once, then truncated; inf and NaN kept; ONNX Runtime may give a
    zero quotient as +0.0 where torch has -0.0)."""
    if rounding_mode is None:
        return _binary("Div")(b, out, x, y)
    if rounding_mode == "floor":
        return _floor_divide(b, out, x, y)
    if rounding_mode != "trunc" or out.dtype == torch.bool:
        raise Untranslatable(f"div rounding_mode={rounding_mode!r} on {out.dtype}")
    if out.dtype in (torch.float32, torch.float64):
        quotient = _binary("Div")(b, out, x, y)
        negative = b.node("Less", [quotient, b.value(0, out.dtype)])
        ceil, floor = b.node("Ceil", [quotient]), b.node("Floor", [quotient])
        return b.node("Where", [negative, ceil, floor])
    if out.dtype.is_floating_point:
        raise Untranslatable(f"div rounding_mode='trunc' on {out.dtype}")
    compute = onnx_arithmetic_dtype(out.dtype)
    x, y = torch_number(x, out.dtype), torch_number(y, out.dtype)
    quotient = b.node("Div", [b.value(x, compute), b.value(y, compute)])
    return b.cast(quotient, compute, out.dtype)


@emits("floor_divide", "__floordiv__")
def _floor_divide(b: Builder, out: torch.Tensor, x: Any, y: Any) -> str:
    """Integer floor division: truncating Div, minus one where the remainder's sign differs;
    float floor division by NumPy's (and torch's) fmod-based rule (see _float_floor_divide)."""
    if out.dtype in (torch.float32, torch.float64):
        return _float_floor_divide(b, out.dtype, b.value(x, out.dtype), b.value(y, out.dtype))
    if out.dtype.is_floating_point or out.dtype == torch.bool:
        raise Untranslatable("float floor_divide")  # torch's float rule is not Floor(Div)
    compute = onnx_arithmetic_dtype(out.dtype)
    x, y = torch_number(x, out.dtype), torch_number(y, out.dtype)
    a, c = b.value(x, compute), b.value(y, compute)
    zero = b.value(0, compute)
    quotient = b.node("Div", [a, c])
    inexact = b.node("Not", [b.node("Equal", [b.node("Mod", [a, c], fmod=1), zero])])
    signs = b.node("Xor", [b.node("Less", [a, zero]), b.node("Less", [c, zero])])
    adjust = b.cast(b.node("And", [inexact, signs]), torch.bool, compute)
    return b.cast(b.node("Sub", [quotient, adjust]), compute, out.dtype)


def _float_fmod_adjust(b: Builder, dtype: torch.dtype, a: str, c: str) -> tuple[str, str]:
    """``fmod(a, c)`` and where it is nonzero with a sign other than ``c``'s (Python's rule)."""
    zero = b.value(0, dtype)
    mod = b.node("Mod", [a, c], fmod=1)
    nonzero = b.node("Not", [b.node("Equal", [mod, zero])])
    signs = b.node("Xor", [b.node("Less", [c, zero]), b.node("Less", [mod, zero])])
    return mod, b.node("And", [nonzero, signs])


def _float_floor_divide(b: Builder, dtype: torch.dtype, a: str, c: str) -> str:
    """NumPy's float ``a // c``: ``(a - fmod(a, c)) / c`` less one where the remainder's sign
    differs, floored and rounded up past .5; near a cell border ``Floor(Div)`` is one off.
    A zero divisor gives ``a / c`` (inf or nan) as NumPy does."""
    mod, adjust = _float_fmod_adjust(b, dtype, a, c)
    div = b.node("Div", [b.node("Sub", [a, mod]), c])
    div = b.node("Sub", [div, b.cast(adjust, torch.bool, dtype)])
    floor = b.node("Floor", [div])
    up = b.node("Greater", [b.node("Sub", [div, floor]), b.value(0.5, dtype)])
    floor = b.node("Where", [up, b.node("Add", [floor, b.value(1, dtype)]), floor])
    by_zero = b.node("Equal", [c, b.value(0, dtype)])
    return b.node("Where", [by_zero, b.node("Div", [a, c]), floor])


@emits("remainder", "__mod__")
def _remainder(b: Builder, out: torch.Tensor, x: Any, y: Any) -> str:
    if out.dtype in (torch.float32, torch.float64):
        a, c = b.value(x, out.dtype), b.value(y, out.dtype)
        mod, adjust = _float_fmod_adjust(b, out.dtype, a, c)
        return b.node("Where", [adjust, b.node("Add", [mod, c]), mod])
    if out.dtype.is_floating_point or out.dtype == torch.bool:
        raise Untranslatable("float remainder")
    compute = onnx_arithmetic_dtype(out.dtype)
    x, y = torch_number(x, out.dtype), torch_number(y, out.dtype)
    result = b.node("Mod", [b.value(x, compute), b.value(y, compute)], fmod=0)
    return b.cast(result, compute, out.dtype)


def _compare(op: str, negate: bool = False) -> Emitter:
    def emit(b: Builder, out: torch.Tensor, x: Any, y: Any) -> str:
        have = torch.result_type(x, y)
        compute = torch.int64 if have == torch.bool else onnx_arithmetic_dtype(have)
        x, y = torch_number(x, have), torch_number(y, have)
        result = b.node(op, [b.value(x, compute), b.value(y, compute)])
        return b.node("Not", [result]) if negate else result

    return emit


for _names, _op, _neg in (
    (("eq", "__eq__"), "Equal", False),
    (("ne", "__ne__", "not_equal"), "Equal", True),
    (("lt", "__lt__", "less"), "Less", False),
    (("le", "__le__", "less_equal"), "LessOrEqual", False),
    (("gt", "__gt__", "greater"), "Greater", False),
    (("ge", "__ge__", "greater_equal"), "GreaterOrEqual", False),
):
    emits(*_names)(_compare(_op, _neg))


def _logical(op: str) -> Emitter:
    def emit(b: Builder, out: torch.Tensor, x: Any, y: Any) -> str:
        if out.dtype != torch.bool:
            raise Untranslatable(f"{op} producing {out.dtype}")
        return b.node(op, [truth(b, x), truth(b, y)])

    return emit


def truth(b: Builder, x: Any) -> str:
    if isinstance(x, torch.Tensor) and x.dtype != torch.bool:
        return b.node("Not", [b.node("Equal", [b.tensor(x), b.value(0, x.dtype)])])
    return b.value(x, torch.bool)


emits("logical_and")(_logical("And"))
emits("logical_or")(_logical("Or"))
emits("logical_xor")(_logical("Xor"))


def _bitwise_op(op_bool: str, op_int: str) -> Emitter:
    def emit(b: Builder, out: torch.Tensor, x: Any, y: Any) -> str:
        if out.dtype == torch.bool:
            return b.node(op_bool, [b.value(x, torch.bool), b.value(y, torch.bool)])
        if out.dtype.is_floating_point:
            raise Untranslatable("bitwise op on floats")
        x, y = torch_number(x, out.dtype), torch_number(y, out.dtype)
        return b.node(op_int, [b.value(x, out.dtype), b.value(y, out.dtype)])

    return emit


for _names, _ops in (
    (("__and__", "bitwise_and"), ("And", "BitwiseAnd")),
    (("__or__", "bitwise_or"), ("Or", "BitwiseOr")),
    (("__xor__", "bitwise_xor"), ("Xor", "BitwiseXor")),
):
    emits(*_names)(_bitwise_op(*_ops))


@emits("__rshift__", "bitwise_right_shift")
def _shift_right(b: Builder, out: torch.Tensor, x: Any, count: Any) -> str:
    """``x >> k`` (k a number) on integers: floor division by 2**k, exact for every sign as
    (x - (x mod 2**k)) / 2**k (ONNX's BitShift takes unsigned types only)."""
    if not isinstance(x, torch.Tensor) or type(count) is not int or not 0 <= count < 31:
        return shift(b, out, x, count, left=False)  # exact BitShift form (see integers)
    if out.dtype == torch.bool or out.dtype.is_floating_point:
        raise Untranslatable(f"right shift of {out.dtype}")
    compute = onnx_arithmetic_dtype(out.dtype)
    value, step = b.value(x, compute), b.value(1 << count, compute)
    if not _nonnegative(b, value):  # Div truncates: exact for non-negative values only
        value = b.node("Sub", [value, b.node("Mod", [value, step], fmod=0)])
    return b.cast(b.node("Div", [value, step]), compute, out.dtype)


_KEEPS_SIGN = {"Gather", "GatherElements", "Reshape", "Identity", "Expand", "Slice", "Transpose"}
_SIGN_OF_ALL = {"Mul", "Add", "Div", "Concat"}
# casts to these keep a value's sign (float to integer truncates toward zero)
_SIGN_KEEPING_CASTS = {
    onnx_code(np.dtype(name)) for name in ("float16", "float32", "float64", "int32", "int64")
}


def _nonnegative(b: Builder, name: str, depth: int = 0) -> bool:
    """Whether the ONNX value ``name`` is >= 0 by construction (integer overflow aside):
    casts of unsigned data, non-negative constants, and what gathers, reshapes, products,
    sums and quotients of such values give."""
    if name in b.nonnegative:
        return True
    if depth > 32:
        return False
    node = next((n for n in reversed(b.nodes) if name in n.outputs), None)
    if node is None:
        return False
    if node.op_type in _KEEPS_SIGN or (
        node.op_type == "Cast" and node.attributes["to"] in _SIGN_KEEPING_CASTS
    ):
        return _nonnegative(b, node.inputs[0], depth + 1)
    if node.op_type in _SIGN_OF_ALL:
        return all(_nonnegative(b, i, depth + 1) for i in node.inputs)
    return False


@emits("logical_not")
def _logical_not(b: Builder, out: torch.Tensor, x: Any) -> str:
    return b.cast(b.node("Not", [truth(b, x)]), torch.bool, out.dtype)


@emits("bitwise_not", "__invert__")
def _invert(b: Builder, out: torch.Tensor, x: torch.Tensor) -> str:
    if x.dtype == torch.bool:
        return b.node("Not", [b.tensor(x)])
    return b.node("BitwiseNot", [b.tensor(x)])


_FLOAT_UNARY = {
    "exp": "Exp",
    "log": "Log",
    "sqrt": "Sqrt",
    "sin": "Sin",
    "cos": "Cos",
    "tan": "Tan",
    "tanh": "Tanh",
    "sigmoid": "Sigmoid",
    "erf": "Erf",
    "reciprocal": "Reciprocal",
    "asin": "Asin",
    "acos": "Acos",
    "atan": "Atan",
}
_ROUNDING = {"floor": "Floor", "ceil": "Ceil", "round": "Round"}
_ANY_UNARY = {"neg": "Neg", "__neg__": "Neg", "negative": "Neg", "abs": "Abs", "__abs__": "Abs"}


def _unary(name: str) -> Emitter:
    def emit(b: Builder, out: torch.Tensor, x: torch.Tensor, **kwargs: Any) -> str:
        if kwargs.get("decimals", 0) != 0 or out.dtype == torch.bool:
            raise Untranslatable(f"{name} with {kwargs} or on bool")
        if name in _ROUNDING and not x.dtype.is_floating_point:
            return b.cast(b.tensor(x), x.dtype, out.dtype)
        op = _FLOAT_UNARY.get(name) or _ROUNDING.get(name) or _ANY_UNARY[name]
        if op in _FLOAT_UNARY.values() and not out.dtype.is_floating_point:
            raise Untranslatable(f"{name} producing {out.dtype}")
        compute = onnx_arithmetic_dtype(out.dtype)
        return b.cast(b.node(op, [b.value(x, compute)]), compute, out.dtype)

    return emit


for _name in (*_FLOAT_UNARY, *_ROUNDING, *_ANY_UNARY):
    emits(_name)(_unary(_name))


def _float_operand(b: Builder, out: torch.Tensor, x: Any, name: str) -> tuple[str, torch.dtype]:
    """``x`` in the float dtype ``out`` is computed in (refused for a non-float result)."""
    if not out.dtype.is_floating_point:
        raise Untranslatable(f"{name} producing {out.dtype}")
    compute = onnx_arithmetic_dtype(out.dtype)
    return b.value(x, compute), compute


@emits("log1p", "special_log1p")
def _log1p(b: Builder, out: torch.Tensor, x: Any) -> str:
    """``log(1 + x)`` to a few ulp for tiny ``x`` too (Goldberg: ``log(u) * x / (u - 1)``
    with ``u = 1 + x``, which cancels the rounding of ``u``); ``x`` where ``u`` rounds to 1,
    and infinity kept."""
    v, compute = _float_operand(b, out, x, "log1p")
    u = b.node("Add", [v, b.value(1.0, compute)])
    d = b.node("Sub", [u, b.value(1.0, compute)])
    scaled = b.node("Mul", [b.node("Log", [u]), b.node("Div", [v, d])])
    infinite = b.node("IsInf", [u], detect_negative=0)
    result = b.node("Where", [infinite, u, scaled])
    result = b.node("Where", [b.node("Equal", [d, b.value(0.0, compute)]), v, result])
    return b.cast(result, compute, out.dtype)


@emits("expm1", "special_expm1")
def _expm1(b: Builder, out: torch.Tensor, x: Any) -> str:
    """``exp(x) - 1`` to a few ulp for tiny ``x`` too (Kahan: ``(u - 1) * x / log(u)`` with
    ``u = exp(x)``); ``x`` where ``u`` rounds to 1, -1 and infinity at the limits."""
    v, compute = _float_operand(b, out, x, "expm1")
    u = b.node("Exp", [v])
    d = b.node("Sub", [u, b.value(1.0, compute)])
    scaled = b.node("Mul", [d, b.node("Div", [v, b.node("Log", [u])])])
    result = b.node("Where", [b.node("IsInf", [u], detect_negative=0), u, scaled])
    result = b.node("Where", [b.node("Equal", [d, b.value(-1.0, compute)]), d, result])
    result = b.node("Where", [b.node("Equal", [d, b.value(0.0, compute)]), v, result])
    return b.cast(result, compute, out.dtype)


def _log_base(base: float) -> Emitter:
    def emit(b: Builder, out: torch.Tensor, x: Any) -> str:
        """``log(x) / log(base)``, with exact powers of ``base`` (within float64's exact
        powers) giving their exponent exactly, as torch does: ``floor(log2(8.0))`` is 3."""
        v, compute = _float_operand(b, out, x, f"log{base:g}")
        result = b.node("Mul", [b.node("Log", [v]), b.value(1.0 / math.log(base), compute)])
        exponent = b.node("Round", [result])
        power = b.node("Pow", [b.value(base, compute), exponent])
        result = b.node("Where", [b.node("Equal", [power, v]), exponent, result])
        return b.cast(result, compute, out.dtype)

    return emit


emits("log2")(_log_base(2.0))
emits("log10")(_log_base(10.0))


@emits("isnan")
def _isnan(b: Builder, out: torch.Tensor, x: torch.Tensor) -> str:
    """ONNX IsNaN on floats."""
    if not x.dtype.is_floating_point:
        raise Untranslatable(f"isnan of {x.dtype}")
    compute = onnx_arithmetic_dtype(x.dtype)
    return b.node("IsNaN", [b.value(x, compute)])


@emits("relu")
def _relu(b: Builder, out: torch.Tensor, x: torch.Tensor, inplace: bool = False) -> str:
    compute = onnx_arithmetic_dtype(out.dtype)
    if compute.is_floating_point:
        return b.cast(b.node("Relu", [b.value(x, compute)]), compute, out.dtype)
    return b.cast(b.node("Max", [b.value(x, compute), b.value(0, compute)]), compute, out.dtype)


@emits("clamp", "clip")
def _clamp(b: Builder, out: torch.Tensor, x: torch.Tensor, min: Any = None, max: Any = None) -> str:
    if isinstance(min, torch.Tensor) or isinstance(max, torch.Tensor) or out.dtype == torch.bool:
        raise Untranslatable("clamp with tensor bounds")
    given = [v for v in (min, max) if v is not None]
    # uint8 in, integer bounds 0..255: ONNX Runtime's uint8 Clip (0.03 ms at 1280x720,
    # where the int64 round trip took 1.2 ms)
    native = x.dtype == torch.uint8 and _stays_uint8(out, x, *given)
    compute = torch.uint8 if native else onnx_arithmetic_dtype(out.dtype)
    bounds = [b.value(v, compute) if v is not None else "" for v in (min, max)]
    while bounds and bounds[-1] == "":
        bounds.pop()
    result = b.node("Clip", [b.value(x, compute), *bounds])
    return b.cast(result, compute, out.dtype)


@emits("where")
def _where(b: Builder, out: torch.Tensor, condition: Any, x: Any = None, y: Any = None) -> str:
    if x is None or y is None:
        raise Untranslatable("where(condition) alone")
    if out.dtype.is_floating_point or out.dtype == torch.bool or out.dtype.is_complex:
        compute = torch.int64 if out.dtype == torch.bool else onnx_arithmetic_dtype(out.dtype)
        result = b.node("Where", [truth(b, condition), b.value(x, compute), b.value(y, compute)])
        return b.cast(result, compute, out.dtype)
    return _integer_select(b, out, condition, x, y)


def _integer_select(b: Builder, out: torch.Tensor, condition: Any, x: Any, y: Any) -> str:
    """An integer ``where`` as arithmetic on the condition as 0/1: ``y + (x - y) * c``,
    exact in wrapping integer arithmetic (``x * c`` or ``y * (1 - c)`` where the other
    value is 0). ONNX Runtime's Where branches on every element: 6-7 ms at 921,600
    elements whatever the type, against 0.2 ms for these uint8 passes."""
    x, y = torch_number(x, out.dtype), torch_number(y, out.dtype)
    native = _stays_native(out, _WRAPPING, x, y)
    compute = out.dtype if native else onnx_arithmetic_dtype(out.dtype)
    flag = truth(b, condition)
    if _zero(b, y) and _shape_of(x, condition) == tuple(out.shape):
        result = b.node("Mul", [b.value(x, compute), b.cast(flag, torch.bool, compute)])
    elif _zero(b, x) and _shape_of(y, condition) == tuple(out.shape):
        unset = b.cast(b.node("Not", [flag]), torch.bool, compute)
        result = b.node("Mul", [b.value(y, compute), unset])
    else:
        first, second = b.value(x, compute), b.value(y, compute)
        step = b.node("Mul", [b.node("Sub", [first, second]), b.cast(flag, torch.bool, compute)])
        result = b.node("Add", [second, step])
    return b.cast(result, compute, out.dtype)


def _zero(b: Builder, value: Any) -> bool:
    """A Python 0, or a constant tensor of zeros (``torch.zeros_like``)."""
    if isinstance(value, torch.Tensor):
        return not b.traced(value) and value.numel() > 0 and not bool(value.any())
    return type(value) in (int, float) and value == 0


def _shape_of(*operands: Any) -> tuple[int, ...]:
    """The broadcast shape of tensors and numbers."""
    shapes = [tuple(v.shape) for v in operands if isinstance(v, torch.Tensor)]
    return tuple(torch.broadcast_shapes(*shapes)) if shapes else ()


def extreme_op(op: str) -> Emitter:
    def emit(b: Builder, out: torch.Tensor, x: Any, y: Any) -> str:
        if _stays_uint8(out, x, y):
            compute = torch.uint8
        else:
            compute = torch.int64 if out.dtype == torch.bool else onnx_arithmetic_dtype(out.dtype)
        x, y = _wide_constant(b, x, out), _wide_constant(b, y, out)
        result = b.node(op, [b.value(x, compute), b.value(y, compute)])
        return b.cast(result, compute, out.dtype)

    return emit


emits("maximum")(extreme_op("Max"))
emits("minimum")(extreme_op("Min"))


@emits("__lshift__", "bitwise_left_shift")
def _shift_left(b: Builder, out: torch.Tensor, x: Any, count: Any) -> str:
    return shift(b, out, x, count, left=True)


@emits("pow", "__pow__")
def _pow(b: Builder, out: torch.Tensor, x: Any, exponent: Any) -> str:
    if not out.dtype.is_floating_point:
        if out.dtype == torch.bool:
            raise Untranslatable("pow on bool")
        compute = onnx_arithmetic_dtype(out.dtype)
        return b.cast(integer_power(b, out, x, exponent, compute), compute, out.dtype)
    compute = onnx_arithmetic_dtype(out.dtype)
    result = b.node("Pow", [b.value(x, compute), b.value(exponent, compute)])
    return b.cast(result, compute, out.dtype)


@emits("square")
def _square(b: Builder, out: torch.Tensor, x: torch.Tensor) -> str:
    return _binary("Mul")(b, out, x, x)


@emits("cumsum")
def _cumsum(b: Builder, out: torch.Tensor, x: torch.Tensor, dim: int, *, dtype: Any = None) -> str:
    if out.dtype == torch.bool or out.dtype.is_floating_point and out.dtype not in NATIVE:
        raise Untranslatable(f"cumsum in {out.dtype}")
    compute = onnx_arithmetic_dtype(out.dtype)
    result = b.node("CumSum", [b.value(x, compute), b.ints([dim % max(x.ndim, 1)])])
    return b.cast(result, compute, out.dtype)


# ------------------------------------------------------------------------------ casts
@emits("to", "type", "float", "double", "half", "int", "long", "short", "char", "byte", "bool")
def _to(b: Builder, out: torch.Tensor, x: torch.Tensor, *args: Any, **kwargs: Any) -> str:
    return b.cast(b.tensor(x), x.dtype, out.dtype)


@emits("clone", "contiguous", "detach", "positive", "__pos__", "alias")
def _identity(b: Builder, out: torch.Tensor, x: torch.Tensor, *args: Any, **kwargs: Any) -> str:
    return b.node("Identity", [b.tensor(x)])


def _reflected(name: str) -> Emitter:
    """``Tensor.__r<op>__(x, other)``: ``other <op> x``, emitted by ``<op>``'s emitter."""

    def emit(b: Builder, out: torch.Tensor, x: Any, other: Any) -> str:
        return TABLE[name](b, out, other, x)

    return emit


for _name, _forward in (
    ("__rfloordiv__", "floor_divide"),
    ("__rmod__", "remainder"),
    ("__rpow__", "pow"),
    ("__rlshift__", "__lshift__"),
    ("__rrshift__", "__rshift__"),
    ("__rand__", "__and__"),
    ("__ror__", "__or__"),
    ("__rxor__", "__xor__"),
):
    emits(_name)(_reflected(_forward))
