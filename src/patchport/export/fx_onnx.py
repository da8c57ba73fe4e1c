"""A direct translator from a recorded ``torch.fx`` graph to ONNX, without torch.onnx.

torch.onnx's exporter spends seconds on start-up (torch.export, decomposition, its op
registry) before it writes a single node. patchport's graphs are made of a small set of
torch operations, so this module runs the graph once on the example inputs under a
``TorchFunctionMode`` and writes each torch call it sees as the equivalent ONNX nodes,
with the exact dtypes the eager run produced (values that do not depend on an input are
folded into initializers). Anything outside its table raises :class:`Untranslatable`, and
the caller falls back to torch.onnx. Shapes are the example's: graphs with dynamic
dimensions are not translated here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

from ..errors import Untranslatable
from . import onnx_proto

OPSET = 20


def _dtype_table() -> dict[torch.dtype, int]:
    P = onnx_proto
    return {
        torch.float32: P.FLOAT,
        torch.float64: P.DOUBLE,
        torch.float16: P.FLOAT16,
        torch.bfloat16: P.BFLOAT16,
        torch.int8: P.INT8,
        torch.int16: P.INT16,
        torch.int32: P.INT32,
        torch.int64: P.INT64,
        torch.uint8: P.UINT8,
        torch.uint16: P.UINT16,
        torch.uint32: P.UINT32,
        torch.uint64: P.UINT64,
        torch.bool: P.BOOL,
    }


_NATIVE = (torch.float32, torch.float64, torch.int32, torch.int64)


def compute_dtype(dtype: torch.dtype) -> torch.dtype:
    """The dtype an elementwise ONNX op runs in for a torch result of ``dtype``.

    ONNX Runtime's kernels cover float32/64 and int32/64; torch computes float16 and
    bfloat16 in float32 and rounds, and small integers wrap exactly as int64 cast back.
    """
    if dtype in _NATIVE:
        return dtype
    if dtype in (torch.float16, torch.bfloat16):
        return torch.float32
    if dtype in (torch.int8, torch.int16, torch.uint8, torch.uint16, torch.uint32):
        return torch.int64
    raise Untranslatable(f"no exact ONNX arithmetic for {dtype}")


class _Builder:
    """The ONNX graph being written: nodes, initializers, and a name per traced tensor."""

    def __init__(self, reserved: set[str]) -> None:
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self.names: dict[int, str] = {}  # id(tensor) -> ONNX value name (depends on inputs)
        self.keep: list[Any] = []  # keeps the tensors alive so ids stay unique
        self.constants: dict[int, str] = {}
        self.prefix = "_pp"
        while any(name.startswith(self.prefix) for name in reserved):
            self.prefix += "_"
        self.count = 0
        self.onnx_type = _dtype_table()
        self.nonnegative: set[str] = set()  # values >= 0 by construction (see _nonnegative)

    def fresh(self) -> str:
        self.count += 1
        return f"{self.prefix}{self.count}"

    def node(self, op: str, inputs: Sequence[str], **attrs: Any) -> str:
        out = self.fresh()
        self.nodes.append(onnx_proto.Node(op, list(inputs), [out], attrs))
        return out

    def bind(self, tensor: torch.Tensor, name: str) -> None:
        self.names[id(tensor)] = name
        self.keep.append(tensor)

    def traced(self, value: Any) -> bool:
        if isinstance(value, torch.Tensor):
            return id(value) in self.names
        if isinstance(value, (list, tuple)):
            return any(self.traced(v) for v in value)
        if isinstance(value, dict):
            return any(self.traced(v) for v in value.values())
        return False

    def array(self, array: np.ndarray) -> str:
        name = self.fresh()
        self.initializers.append(onnx_proto.tensor(name, array))
        if array.dtype.kind in "bu" or (array.dtype.kind in "if" and (array >= 0).all()):
            self.nonnegative.add(name)
        return name

    def tensor(self, value: torch.Tensor) -> str:
        """Name of a tensor: its traced value, or an initializer holding its current data."""
        name = self.names.get(id(value))
        if name is not None:
            return name
        if value.dtype == torch.bfloat16 or value.is_complex() or value.device.type != "cpu":
            raise Untranslatable(f"constant of dtype {value.dtype} on {value.device}")
        name = self.array(value.detach().as_subclass(torch.Tensor).numpy())
        self.names[id(value)] = name  # constant from now on: its data must not change
        self.constants[id(value)] = name
        self.keep.append(value)
        return name

    def ints(self, values: Sequence[int]) -> str:
        return self.array(np.asarray(list(values), dtype=np.int64))

    def cast(self, name: str, have: torch.dtype, want: torch.dtype) -> str:
        if have == want:
            return name
        out = self.node("Cast", [name], to=self.onnx_type[want])
        if not (have.is_floating_point or have.is_signed or want == torch.bool):
            self.nonnegative.add(out)  # unsigned or bool data cast: >= 0
        return out

    def value(self, value: Any, want: torch.dtype) -> str:
        """Name of ``value`` (tensor or Python number) as a tensor of dtype ``want``."""
        if isinstance(value, torch.Tensor):
            return self.cast(self.tensor(value), value.dtype, want)
        if isinstance(value, (bool, int, float)):
            return self.array(np.asarray(value, dtype=torch.empty((), dtype=want).numpy().dtype))
        raise Untranslatable(f"argument of type {type(value).__name__}")


Emitter = Callable[..., str]
_TABLE: dict[str, Emitter] = {}


def _emits(*names: str) -> Callable[[Emitter], Emitter]:
    def register(fn: Emitter) -> Emitter:
        for name in names:
            _TABLE[name] = fn
        return fn

    return register


def _dtype(value: Any) -> torch.dtype:
    return value.dtype if isinstance(value, torch.Tensor) else torch.result_type(value, value)


# ------------------------------------------------------------------------- elementwise
_SHORT_SPAN = 64  # innermost runs this short make ONNX Runtime broadcast element by element
_EXPANDED_CONSTANT = 1 << 16  # largest constant (elements) widened to avoid that


def _wide_constant(b: _Builder, value: Any, out: torch.Tensor) -> Any:
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
    if out.dtype != torch.uint8:
        return False
    return all(
        (isinstance(v, torch.Tensor) and v.dtype == torch.uint8)
        or (type(v) is int and 0 <= v <= 255)
        for v in operands
    )


def _binary(op: str, swap: bool = False) -> Emitter:
    def emit(b: _Builder, out: torch.Tensor, x: Any, y: Any, *, alpha: Any = None) -> str:
        if alpha not in (None, 1) or out.dtype == torch.bool:
            raise Untranslatable(f"{op} with alpha={alpha!r} or on bool")
        native = op in ("Add", "Sub", "Mul") and _stays_uint8(out, x, y)
        compute = torch.uint8 if native else compute_dtype(out.dtype)
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
    _emits(*_names)(_binary(_op, _swap))


@_emits("div", "divide")
def _div(b: _Builder, out: torch.Tensor, x: Any, y: Any, *, rounding_mode: Any = None) -> str:
    if rounding_mode is not None:
        raise Untranslatable(f"div rounding_mode={rounding_mode!r}")
    return _binary("Div")(b, out, x, y)


@_emits("floor_divide", "__floordiv__")
def _floor_divide(b: _Builder, out: torch.Tensor, x: Any, y: Any) -> str:
    """Integer floor division: truncating Div, minus one where the remainder's sign differs."""
    if out.dtype.is_floating_point or out.dtype == torch.bool:
        raise Untranslatable("float floor_divide")  # torch's float rule is not Floor(Div)
    compute = compute_dtype(out.dtype)
    a, c = b.value(x, compute), b.value(y, compute)
    zero = b.value(0, compute)
    quotient = b.node("Div", [a, c])
    inexact = b.node("Not", [b.node("Equal", [b.node("Mod", [a, c], fmod=1), zero])])
    signs = b.node("Xor", [b.node("Less", [a, zero]), b.node("Less", [c, zero])])
    adjust = b.cast(b.node("And", [inexact, signs]), torch.bool, compute)
    return b.cast(b.node("Sub", [quotient, adjust]), compute, out.dtype)


@_emits("remainder", "__mod__")
def _remainder(b: _Builder, out: torch.Tensor, x: Any, y: Any) -> str:
    if out.dtype.is_floating_point or out.dtype == torch.bool:
        raise Untranslatable("float remainder")
    compute = compute_dtype(out.dtype)
    result = b.node("Mod", [b.value(x, compute), b.value(y, compute)], fmod=0)
    return b.cast(result, compute, out.dtype)


def _compare(op: str, negate: bool = False) -> Emitter:
    def emit(b: _Builder, out: torch.Tensor, x: Any, y: Any) -> str:
        have = torch.result_type(x, y)
        compute = torch.int64 if have == torch.bool else compute_dtype(have)
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
    _emits(*_names)(_compare(_op, _neg))


def _logical(op: str) -> Emitter:
    def emit(b: _Builder, out: torch.Tensor, x: Any, y: Any) -> str:
        if out.dtype != torch.bool:
            raise Untranslatable(f"{op} producing {out.dtype}")
        return b.node(op, [_truth(b, x), _truth(b, y)])

    return emit


def _truth(b: _Builder, x: Any) -> str:
    if isinstance(x, torch.Tensor) and x.dtype != torch.bool:
        return b.node("Not", [b.node("Equal", [b.tensor(x), b.value(0, x.dtype)])])
    return b.value(x, torch.bool)


_emits("logical_and")(_logical("And"))
_emits("logical_or")(_logical("Or"))
_emits("logical_xor")(_logical("Xor"))


def _bitwise_op(op_bool: str, op_int: str) -> Emitter:
    def emit(b: _Builder, out: torch.Tensor, x: Any, y: Any) -> str:
        if out.dtype == torch.bool:
            return b.node(op_bool, [b.value(x, torch.bool), b.value(y, torch.bool)])
        if out.dtype.is_floating_point:
            raise Untranslatable("bitwise op on floats")
        return b.node(op_int, [b.value(x, out.dtype), b.value(y, out.dtype)])

    return emit


for _names, _ops in (
    (("__and__", "bitwise_and"), ("And", "BitwiseAnd")),
    (("__or__", "bitwise_or"), ("Or", "BitwiseOr")),
    (("__xor__", "bitwise_xor"), ("Xor", "BitwiseXor")),
):
    _emits(*_names)(_bitwise_op(*_ops))


@_emits("__rshift__", "bitwise_right_shift")
def _shift_right(b: _Builder, out: torch.Tensor, x: Any, shift: Any) -> str:
    """``x >> k`` (k a number) on integers: floor division by 2**k, exact for every sign as
    (x - (x mod 2**k)) / 2**k (ONNX's BitShift takes unsigned types only)."""
    if not isinstance(x, torch.Tensor) or type(shift) is not int or out.dtype.is_floating_point:
        raise Untranslatable("right shift of a tensor by a number only")
    if out.dtype == torch.bool or not 0 <= shift < 31:
        raise Untranslatable(f"right shift by {shift!r} of {out.dtype}")
    compute = compute_dtype(out.dtype)
    value, step = b.value(x, compute), b.value(1 << shift, compute)
    if not _nonnegative(b, value):  # Div truncates: exact for non-negative values only
        value = b.node("Sub", [value, b.node("Mod", [value, step], fmod=0)])
    return b.cast(b.node("Div", [value, step]), compute, out.dtype)


_KEEPS_SIGN = {"Gather", "Reshape", "Identity", "Expand", "Slice"}
_SIGN_OF_ALL = {"Mul", "Add", "Div", "Concat"}


def _nonnegative(b: _Builder, name: str, depth: int = 0) -> bool:
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
    if node.op_type in _KEEPS_SIGN:
        return _nonnegative(b, node.inputs[0], depth + 1)
    if node.op_type in _SIGN_OF_ALL:
        return all(_nonnegative(b, i, depth + 1) for i in node.inputs)
    return False


@_emits("logical_not")
def _logical_not(b: _Builder, out: torch.Tensor, x: Any) -> str:
    return b.cast(b.node("Not", [_truth(b, x)]), torch.bool, out.dtype)


@_emits("bitwise_not", "__invert__")
def _invert(b: _Builder, out: torch.Tensor, x: torch.Tensor) -> str:
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
    def emit(b: _Builder, out: torch.Tensor, x: torch.Tensor, **kwargs: Any) -> str:
        if kwargs.get("decimals", 0) != 0 or out.dtype == torch.bool:
            raise Untranslatable(f"{name} with {kwargs} or on bool")
        if name in _ROUNDING and not x.dtype.is_floating_point:
            return b.cast(b.tensor(x), x.dtype, out.dtype)
        op = _FLOAT_UNARY.get(name) or _ROUNDING.get(name) or _ANY_UNARY[name]
        if op in _FLOAT_UNARY.values() and not out.dtype.is_floating_point:
            raise Untranslatable(f"{name} producing {out.dtype}")
        compute = compute_dtype(out.dtype)
        return b.cast(b.node(op, [b.value(x, compute)]), compute, out.dtype)

    return emit


for _name in (*_FLOAT_UNARY, *_ROUNDING, *_ANY_UNARY):
    _emits(_name)(_unary(_name))


@_emits("relu")
def _relu(b: _Builder, out: torch.Tensor, x: torch.Tensor, inplace: bool = False) -> str:
    compute = compute_dtype(out.dtype)
    if compute.is_floating_point:
        return b.cast(b.node("Relu", [b.value(x, compute)]), compute, out.dtype)
    return b.cast(b.node("Max", [b.value(x, compute), b.value(0, compute)]), compute, out.dtype)


@_emits("clamp", "clip")
def _clamp(
    b: _Builder, out: torch.Tensor, x: torch.Tensor, min: Any = None, max: Any = None
) -> str:
    if isinstance(min, torch.Tensor) or isinstance(max, torch.Tensor) or out.dtype == torch.bool:
        raise Untranslatable("clamp with tensor bounds")
    compute = compute_dtype(out.dtype)
    bounds = [b.value(v, compute) if v is not None else "" for v in (min, max)]
    while bounds and bounds[-1] == "":
        bounds.pop()
    result = b.node("Clip", [b.value(x, compute), *bounds])
    return b.cast(result, compute, out.dtype)


@_emits("where")
def _where(b: _Builder, out: torch.Tensor, condition: Any, x: Any = None, y: Any = None) -> str:
    if x is None or y is None:
        raise Untranslatable("where(condition) alone")
    compute = torch.int64 if out.dtype == torch.bool else compute_dtype(out.dtype)
    result = b.node("Where", [_truth(b, condition), b.value(x, compute), b.value(y, compute)])
    return b.cast(result, compute, out.dtype)


def _extreme_op(op: str) -> Emitter:
    def emit(b: _Builder, out: torch.Tensor, x: Any, y: Any) -> str:
        if _stays_uint8(out, x, y):
            compute = torch.uint8
        else:
            compute = torch.int64 if out.dtype == torch.bool else compute_dtype(out.dtype)
        x, y = _wide_constant(b, x, out), _wide_constant(b, y, out)
        result = b.node(op, [b.value(x, compute), b.value(y, compute)])
        return b.cast(result, compute, out.dtype)

    return emit


_emits("maximum")(_extreme_op("Max"))
_emits("minimum")(_extreme_op("Min"))


@_emits("pow", "__pow__")
def _pow(b: _Builder, out: torch.Tensor, x: Any, exponent: Any) -> str:
    if not out.dtype.is_floating_point:
        raise Untranslatable("integer pow")
    compute = compute_dtype(out.dtype)
    result = b.node("Pow", [b.value(x, compute), b.value(exponent, compute)])
    return b.cast(result, compute, out.dtype)


@_emits("square")
def _square(b: _Builder, out: torch.Tensor, x: torch.Tensor) -> str:
    return _binary("Mul")(b, out, x, x)


@_emits("cumsum")
def _cumsum(b: _Builder, out: torch.Tensor, x: torch.Tensor, dim: int, *, dtype: Any = None) -> str:
    if out.dtype == torch.bool or out.dtype.is_floating_point and out.dtype not in _NATIVE:
        raise Untranslatable(f"cumsum in {out.dtype}")
    compute = compute_dtype(out.dtype)
    result = b.node("CumSum", [b.value(x, compute), b.ints([dim % max(x.ndim, 1)])])
    return b.cast(result, compute, out.dtype)


# ------------------------------------------------------------------------------ casts
@_emits("to", "type", "float", "double", "half", "int", "long", "short", "char", "byte", "bool")
def _to(b: _Builder, out: torch.Tensor, x: torch.Tensor, *args: Any, **kwargs: Any) -> str:
    return b.cast(b.tensor(x), x.dtype, out.dtype)


@_emits("clone", "contiguous", "detach", "positive", "__pos__", "alias")
def _identity(b: _Builder, out: torch.Tensor, x: torch.Tensor, *args: Any, **kwargs: Any) -> str:
    return b.node("Identity", [b.tensor(x)])


# ------------------------------------------------------------------------------ shape
@_emits(
    "reshape", "view", "flatten", "unsqueeze", "squeeze", "view_as", "reshape_as", "ravel",
    "unflatten",
)  # fmt: skip
def _reshape(b: _Builder, out: torch.Tensor, x: torch.Tensor, *args: Any, **kwargs: Any) -> str:
    if args and isinstance(args[0], torch.dtype):
        raise Untranslatable("view(dtype)")
    return b.node("Reshape", [b.tensor(x), b.ints(out.shape)])


@_emits("expand", "expand_as", "broadcast_to")
def _expand(b: _Builder, out: torch.Tensor, x: torch.Tensor, *args: Any, **kwargs: Any) -> str:
    return b.node("Expand", [b.tensor(x), b.ints(out.shape)])


def _dims(args: tuple, kwargs: dict, key: str = "dims") -> list[int]:
    dims = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args
    return list(kwargs.get(key, dims))


@_emits("permute")
def _permute(b: _Builder, out: torch.Tensor, x: torch.Tensor, *args: Any, **kwargs: Any) -> str:
    perm = [d % max(x.ndim, 1) for d in _dims(args, kwargs)]
    return b.node("Transpose", [b.tensor(x)], perm=perm)


@_emits("transpose", "swapaxes", "swapdims")
def _transpose(b: _Builder, out: torch.Tensor, x: torch.Tensor, dim0: int, dim1: int) -> str:
    perm = list(range(x.ndim))
    a, c = dim0 % x.ndim, dim1 % x.ndim
    perm[a], perm[c] = perm[c], perm[a]
    return b.node("Transpose", [b.tensor(x)], perm=perm)


@_emits("t")
def _t(b: _Builder, out: torch.Tensor, x: torch.Tensor) -> str:
    return b.node("Transpose", [b.tensor(x)], perm=list(range(x.ndim))[::-1])


@_emits("flip")
def _flip(b: _Builder, out: torch.Tensor, x: torch.Tensor, *args: Any, **kwargs: Any) -> str:
    axes = sorted({d % x.ndim for d in _dims(args, kwargs)})
    if not axes:
        return b.node("Identity", [b.tensor(x)])
    return _flip_axes(b, b.tensor(x), axes)


def _flip_axes(b: _Builder, name: str, axes: list[int]) -> str:
    n = len(axes)
    inputs = [name, b.ints([-1] * n), b.ints([-(2**63)] * n), b.ints(axes), b.ints([-1] * n)]
    return b.node("Slice", inputs)


@_emits("rot90")
def _rot90(b: _Builder, out: torch.Tensor, x: torch.Tensor, k: int = 1, dims: Any = (0, 1)) -> str:
    first, second = (d % x.ndim for d in dims)
    k %= 4
    if k == 0:
        return b.node("Identity", [b.tensor(x)])
    if k == 2:
        return _flip_axes(b, b.tensor(x), sorted({first, second}))
    perm = list(range(x.ndim))
    perm[first], perm[second] = perm[second], perm[first]
    flipped = _flip_axes(b, b.tensor(x), [second if k == 1 else first])
    return b.node("Transpose", [flipped], perm=perm)


@_emits("roll")
def _roll(b: _Builder, out: torch.Tensor, x: torch.Tensor, shifts: Any, dims: Any = None) -> str:
    shifts = [shifts] if isinstance(shifts, int) else list(shifts)
    if dims is None or dims == ():
        name = b.node("Reshape", [b.tensor(x), b.ints([-1])])
        rolled = _roll_axes(b, name, [x.numel()], shifts, [0])
        return b.node("Reshape", [rolled, b.ints(out.shape)])
    dims = [dims] if isinstance(dims, int) else list(dims)
    return _roll_axes(b, b.tensor(x), list(x.shape), shifts, [d % x.ndim for d in dims])


def _roll_axes(b: _Builder, name: str, shape: list[int], shifts: list, dims: list) -> str:
    for shift, dim in zip(shifts, dims):
        n = shape[dim]
        k = shift % n if n else 0
        if not k:
            continue
        tail = b.node("Slice", [name, b.ints([n - k]), b.ints([n]), b.ints([dim])])
        head = b.node("Slice", [name, b.ints([0]), b.ints([n - k]), b.ints([dim])])
        name = b.node("Concat", [tail, head], axis=dim)
    return name


@_emits("narrow")
def _narrow(
    b: _Builder, out: torch.Tensor, x: torch.Tensor, dim: int, start: Any, length: int
) -> str:
    if isinstance(start, torch.Tensor):
        raise Untranslatable("narrow with a tensor start")
    dim %= x.ndim
    start = start + x.shape[dim] if start < 0 else start
    inputs = [b.tensor(x), b.ints([start]), b.ints([start + length]), b.ints([dim])]
    return b.node("Slice", inputs)


@_emits("__getitem__")
def _getitem(b: _Builder, out: torch.Tensor, x: torch.Tensor, index: Any) -> str:
    items = index if isinstance(index, tuple) else (index,)
    if any(isinstance(i, torch.Tensor) for i in items):
        return _gather_index(b, out, x, items)
    if any(not (i is None or i is Ellipsis or type(i) in (int, slice)) for i in items):
        raise Untranslatable("advanced indexing")
    if sum(i is Ellipsis for i in items) > 1:
        raise Untranslatable("several Ellipsis")
    used = sum(i is not None and i is not Ellipsis for i in items)
    starts, ends, axes, steps = [], [], [], []
    dim = 0
    for item in items:
        if item is None:
            continue
        if item is Ellipsis:
            dim += x.ndim - used
            continue
        n = x.shape[dim]
        if type(item) is int:
            start = item % n if n else 0
            starts.append(start), ends.append(start + 1), axes.append(dim), steps.append(1)
        else:
            start, stop, step = item.indices(n)
            if step <= 0:
                raise Untranslatable("negative step")
            if (start, stop, step) != (0, n, 1):
                starts.append(start), ends.append(max(stop, start)), axes.append(dim)
                steps.append(step)
        dim += 1
    name = b.tensor(x)
    if axes:
        name = b.node("Slice", [name, b.ints(starts), b.ints(ends), b.ints(axes), b.ints(steps)])
    if tuple(out.shape) == tuple(x.shape) and axes:
        return name
    return b.node("Reshape", [name, b.ints(out.shape)])


def _gather_index(b: _Builder, out: torch.Tensor, x: torch.Tensor, items: tuple) -> str:
    """``x[..., idx, ...]`` with one integer tensor (Gather), or ``x[i, j, ...]`` with
    integer tensors on the leading dims and nothing after them but full slices (GatherND)."""
    full = slice(None)
    if Ellipsis in items:
        at = items.index(Ellipsis)
        items = items[:at] + (full,) * (x.ndim - len(items) + 1) + items[at + 1 :]
    tensors = [i for i, item in enumerate(items) if isinstance(item, torch.Tensor)]
    rest = [item for item in items if not isinstance(item, torch.Tensor)]
    if any(not (isinstance(item, slice) and item == full) for item in rest):
        raise Untranslatable("advanced indexing mixed with basic indexing")
    if any(items[i].dtype in (torch.bool,) or items[i].is_floating_point() for i in tensors):
        raise Untranslatable("boolean or float index")
    if len(tensors) == 1:
        index = b.value(items[tensors[0]], torch.int64)
        return b.node("Gather", [b.tensor(x), index], axis=tensors[0])
    if tensors != list(range(len(tensors))):
        raise Untranslatable("advanced indices not leading")
    shape = list(torch.broadcast_shapes(*(items[i].shape for i in tensors)))
    columns = [
        b.node("Reshape", [b.node("Expand", [b.value(items[i], torch.int64), b.ints(shape)]),
                           b.ints([*shape, 1])])
        for i in tensors
    ]  # fmt: skip
    return b.node("GatherND", [b.tensor(x), b.node("Concat", columns, axis=-1)])


@_emits("select")
def _select(b: _Builder, out: torch.Tensor, x: torch.Tensor, dim: int, index: Any) -> str:
    if isinstance(index, torch.Tensor):
        raise Untranslatable("select with a tensor index")
    dim %= x.ndim
    index = index + x.shape[dim] if index < 0 else index
    starts, ends, axes = b.ints([index]), b.ints([index + 1]), b.ints([dim])
    picked = b.node("Slice", [b.tensor(x), starts, ends, axes])
    return b.node("Reshape", [picked, b.ints(out.shape)])  # select drops the axis


@_emits("index_select")
def _index_select(b: _Builder, out: torch.Tensor, x: torch.Tensor, dim: int, index: Any) -> str:
    if index.ndim != 1:
        raise Untranslatable("index_select with a 0-d index")
    return b.node("Gather", [b.tensor(x), b.value(index, torch.int64)], axis=dim % x.ndim)


@_emits("gather")
def _gather(
    b: _Builder, out: torch.Tensor, x: torch.Tensor, dim: int, index: Any, *, sparse_grad=False
) -> str:
    """GatherElements; a constant index that fits is stored as int32 (half the bytes)."""
    if isinstance(index, torch.Tensor) and not b.traced(index) and index.numel():
        if int(index.max()) < 2**31 and int(index.min()) >= 0:
            name = b.array(index.numpy().astype(np.int32))
            return b.node("GatherElements", [b.tensor(x), name], axis=dim % x.ndim)
    return b.node("GatherElements", [b.tensor(x), b.value(index, torch.int64)], axis=dim % x.ndim)


@_emits("scatter_add")
def _scatter_add(
    b: _Builder, out: torch.Tensor, x: torch.Tensor, dim: int, index: Any, src: Any
) -> str:
    """ScatterElements with reduction "add" (histograms of traced values, e.g. CLAHE)."""
    compute = compute_dtype(out.dtype)
    operands = [b.value(x, compute), b.value(index, torch.int64), b.value(src, compute)]
    result = b.node("ScatterElements", operands, axis=dim % x.ndim, reduction="add")
    return b.cast(result, compute, out.dtype)


@_emits("cat", "concat", "concatenate")
def _cat(b: _Builder, out: torch.Tensor, tensors: Sequence[Any], dim: int = 0) -> str:
    parts = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0 and out.ndim != 1)]
    return b.node("Concat", [b.value(t, out.dtype) for t in parts], axis=dim % out.ndim)


@_emits("stack")
def _stack(b: _Builder, out: torch.Tensor, tensors: Sequence[Any], dim: int = 0) -> str:
    dim %= out.ndim
    parts = []
    for t in tensors:
        shape = list(t.shape)
        shape.insert(dim, 1)
        parts.append(b.node("Reshape", [b.value(t, out.dtype), b.ints(shape)]))
    return b.node("Concat", parts, axis=dim)


# ------------------------------------------------------------------------- reductions
def _reduce(op: str, cast_first: bool = True) -> Emitter:
    def emit(
        b: _Builder,
        out: torch.Tensor,
        x: torch.Tensor,
        dim: Any = None,
        keepdim: bool = False,
        *,
        dtype: Any = None,
    ) -> str:
        if out.dtype == torch.bool:
            raise Untranslatable(f"{op} on bool")
        compute = compute_dtype(out.dtype)
        dims = [] if dim is None else [dim] if isinstance(dim, int) else list(dim)
        if dim is not None and not dims:
            raise Untranslatable(f"{op} over dim=()")
        inputs = [b.value(x, compute)]
        if dims:
            inputs.append(b.ints([d % max(x.ndim, 1) for d in dims]))
        result = b.node(op, inputs, keepdims=int(bool(keepdim)))
        return b.cast(result, compute, out.dtype)

    return emit


_emits("sum")(_reduce("ReduceSum"))
_emits("mean")(_reduce("ReduceMean"))
_emits("amax")(_reduce("ReduceMax"))
_emits("amin")(_reduce("ReduceMin"))


def _all_any(op: str) -> Emitter:
    def emit(
        b: _Builder, out: torch.Tensor, x: torch.Tensor, dim: Any = None, keepdim: bool = False
    ) -> str:
        dims = [] if dim is None else [dim] if isinstance(dim, int) else list(dim)
        if dim is not None and not dims:
            raise Untranslatable(f"{op} over dim=()")
        inputs = [b.cast(_truth(b, x), torch.bool, torch.int64)]
        if dims:
            inputs.append(b.ints([d % max(x.ndim, 1) for d in dims]))
        result = b.node(op, inputs, keepdims=int(bool(keepdim)))
        return b.cast(result, torch.int64, out.dtype)

    return emit


_emits("all")(_all_any("ReduceMin"))
_emits("any")(_all_any("ReduceMax"))


@_emits("max", "min")
def _max_min(b: _Builder, out: Any, x: torch.Tensor, *args: Any, **kwargs: Any) -> str:
    raise Untranslatable("max/min")  # dim forms return (values, indices)


# ------------------------------------------------------------------------------ neural
@_emits("matmul", "__matmul__", "mm", "bmm")
def _matmul(b: _Builder, out: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> str:
    if out.dtype not in (torch.float32, torch.float64):
        raise Untranslatable(f"matmul in {out.dtype}")
    return b.node("MatMul", [b.tensor(x), b.tensor(y)])


@_emits("linear")
def _linear(b: _Builder, out: torch.Tensor, x: torch.Tensor, weight: Any, bias: Any = None) -> str:
    if out.dtype not in (torch.float32, torch.float64):
        raise Untranslatable(f"linear in {out.dtype}")
    if x.ndim == 2:
        inputs = [b.tensor(x), b.tensor(weight)] + ([b.tensor(bias)] if bias is not None else [])
        return b.node("Gemm", inputs, transB=1)
    result = b.node("MatMul", [b.tensor(x), b.node("Transpose", [b.tensor(weight)], perm=[1, 0])])
    return result if bias is None else b.node("Add", [result, b.tensor(bias)])


def _pair(value: Any, n: int) -> list[int]:
    return list(value) if isinstance(value, (tuple, list)) else [int(value)] * n


@_emits("conv1d", "conv2d", "conv3d")
def _conv(
    b: _Builder,
    out: torch.Tensor,
    x: torch.Tensor,
    weight: torch.Tensor,
    bias: Any = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> str:
    n = weight.ndim - 2
    if isinstance(padding, str) or x.ndim != n + 2 or out.dtype not in _NATIVE[:2]:
        raise Untranslatable("conv with string padding or unbatched input")
    pads = _pair(padding, n)
    inputs = [b.tensor(x), b.tensor(weight)] + ([b.tensor(bias)] if bias is not None else [])
    return b.node(
        "Conv",
        inputs,
        strides=_pair(stride, n),
        pads=pads + pads,
        dilations=_pair(dilation, n),
        group=groups,
        kernel_shape=list(weight.shape[2:]),
    )


@_emits("adaptive_avg_pool2d", "adaptive_avg_pool1d")
def _adaptive_avg(b: _Builder, out: torch.Tensor, x: torch.Tensor, output_size: Any) -> str:
    n = out.ndim - 2
    if x.ndim != n + 2 or not x.dtype.is_floating_point:
        raise Untranslatable("unbatched adaptive pooling")
    src, dst = list(x.shape[2:]), list(out.shape[2:])
    if dst == [1] * n:
        return b.node("GlobalAveragePool", [b.tensor(x)])
    if any(s % d for s, d in zip(src, dst)):
        raise Untranslatable("adaptive pooling with uneven windows")
    kernel = [s // d for s, d in zip(src, dst)]
    return b.node("AveragePool", [b.tensor(x)], kernel_shape=kernel, strides=kernel)


@_emits("max_pool2d", "max_pool1d")
def _max_pool(
    b: _Builder,
    out: torch.Tensor,
    x: torch.Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> str:
    n = out.ndim - 2
    if return_indices or x.ndim != n + 2 or not x.dtype.is_floating_point:
        raise Untranslatable("max pool with indices or unbatched")
    kernel = _pair(kernel_size, n)
    pads = _pair(padding, n)
    return b.node(
        "MaxPool",
        [b.tensor(x)],
        kernel_shape=kernel,
        strides=_pair(stride if stride not in (None, []) else kernel, n),
        pads=pads + pads,
        dilations=_pair(dilation, n),
        ceil_mode=int(ceil_mode),
    )


def _softmax_op(op: str) -> Emitter:
    def emit(
        b: _Builder, out: torch.Tensor, x: torch.Tensor, dim: Any = None, *args: Any, **kw: Any
    ) -> str:
        if dim is None or not out.dtype.is_floating_point:
            raise Untranslatable(f"{op} without dim")
        compute = compute_dtype(out.dtype)
        result = b.node(op, [b.value(x, compute)], axis=dim % max(x.ndim, 1))
        return b.cast(result, compute, out.dtype)

    return emit


_emits("softmax")(_softmax_op("Softmax"))
_emits("log_softmax")(_softmax_op("LogSoftmax"))


# ------------------------------------------------------------------------ the tracing
# results that depend only on an input's (static) shape and dtype: folded to constants
_SHAPE_ONLY = {"zeros_like", "ones_like", "full_like", "new_zeros", "new_ones", "new_full"}


class _Translating(TorchFunctionMode):
    """Runs the graph's torch calls eagerly and writes the ONNX node(s) for each."""

    def __init__(self, builder: _Builder) -> None:
        super().__init__()
        self.b = builder

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: Any = None):
        kwargs = kwargs or {}
        b = self.b
        name = getattr(func, "__name__", "")
        touched = name not in _SHAPE_ONLY and (b.traced(args) or b.traced(kwargs))
        if name == "__get__":
            attr = getattr(getattr(func, "__self__", None), "__name__", "")
            result = func(*args, **kwargs)
            if touched and isinstance(result, torch.Tensor):
                if attr not in ("data", "T", "mT", "real"):
                    raise Untranslatable(f"Tensor.{attr}")
                x = args[0]
                if attr in ("T", "mT") and x.ndim > 1:
                    perm = list(range(x.ndim))
                    perm = perm[::-1] if attr == "T" else perm[:-2] + perm[-2:][::-1]
                    b.bind(result, b.node("Transpose", [b.tensor(x)], perm=perm))
                elif attr == "real" and x.is_complex():
                    raise Untranslatable("complex")
                else:
                    b.bind(result, b.node("Identity", [b.tensor(x)]))
            return result
        if name == "__setitem__" and touched:
            return _setitem(b, func, *args)
        if name in ("__setitem__",) or (name.endswith("_") and not name.startswith("_")):
            if touched or (args and id(args[0]) in b.names):
                raise Untranslatable(f"in-place {name}")
            return func(*args, **kwargs)
        result = func(*args, **kwargs)
        if not touched:
            return result  # computed from constants only: folded
        if "out" in kwargs or not isinstance(result, torch.Tensor):
            if isinstance(result, (bool, int, float)) or result is None:
                if name in ("item", "tolist", "__bool__", "__int__", "__float__", "__index__"):
                    raise Untranslatable(f"data-dependent {name}")
                return result  # shape or dtype queries
            raise Untranslatable(f"{name} returning {type(result).__name__}")
        emit = _TABLE.get(name)
        if emit is None or not _is_torch_callable(func, name):
            raise Untranslatable(f"no ONNX translation for torch {name!r}")
        try:
            value = emit(b, result, *args, **kwargs)
        except TypeError as exc:  # a signature the emitter does not know
            raise Untranslatable(f"{name}: {exc}") from None
        b.bind(result, value)
        return result


def _setitem(b: _Builder, func: Any, x: torch.Tensor, index: Any, value: Any) -> None:
    """``x[index] = value`` with a basic index: a ScatterND of the positions it covers.

    Refused when another traced tensor shares x's memory (a view would change too)."""
    items = index if isinstance(index, tuple) else (index,)
    if any(not (i is None or i is Ellipsis or type(i) in (int, slice)) for i in items):
        raise Untranslatable("__setitem__ with an advanced index")
    storage = x.untyped_storage().data_ptr()
    for other in b.keep:
        if (
            other is not x
            and isinstance(other, torch.Tensor)
            and id(other) in b.names
            and id(other) not in b.constants
            and other.untyped_storage().data_ptr() == storage
        ):
            raise Untranslatable("__setitem__ on a tensor that has traced views")
    base = b.tensor(x)  # before the write: an initializer holds the data as it was
    positions = np.arange(x.numel(), dtype=np.int64).reshape(tuple(x.shape))[index]
    func(x, index, value)
    flat = b.node("Reshape", [base, b.ints([-1])])
    updates = b.node("Expand", [b.value(value, x.dtype), b.ints(positions.shape)])
    scattered = b.node(
        "ScatterND",
        [flat, b.array(positions.reshape(-1, 1)), b.node("Reshape", [updates, b.ints([-1])])],
    )
    b.constants.pop(id(x), None)
    b.bind(x, b.node("Reshape", [scattered, b.ints(x.shape)]))


def _is_torch_callable(func: Any, name: str) -> bool:
    owners = (torch.Tensor, torch, F, torch._C._nn, torch._C._VariableFunctions, torch.special)
    return any(getattr(owner, name, None) is func for owner in owners)


def translate(
    graph_module: torch.nn.Module,
    args: Sequence[torch.Tensor],
    input_names: list[str],
    output_names: list[str],
    opset: int = OPSET,
) -> tuple[Any, list[Any]]:
    """The ONNX model bytes of ``graph_module`` on ``args``, and the eager outputs they
    must give. Raises :class:`Untranslatable` when some call is outside the table.
    """
    from torch import fx
    from torch.utils import _pytree

    if not isinstance(graph_module, fx.GraphModule):
        raise Untranslatable("not an fx graph")
    if opset < 18:
        raise Untranslatable(f"opset {opset} < 18")
    placeholders = [n for n in graph_module.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(args) or len(input_names) != len(args):
        raise Untranslatable("inputs do not match the graph's placeholders")
    b = _Builder(set(input_names) | set(output_names))
    inputs = []
    feeds = []
    for name, value in zip(input_names, args):
        tensor = value.detach().as_subclass(torch.Tensor).clone()
        if tensor.dtype not in b.onnx_type or tensor.device.type != "cpu":
            raise Untranslatable(f"input {name!r} of dtype {tensor.dtype}")
        b.bind(tensor, name)
        feeds.append(tensor)
        inputs.append(onnx_proto.value_info(name, b.onnx_type[tensor.dtype], tensor.shape))
    with torch.no_grad(), _Translating(b):
        result = fx.Interpreter(graph_module).run(*feeds)
    flat, _ = _pytree.tree_flatten(result)
    if len(flat) != len(output_names) or not all(isinstance(t, torch.Tensor) for t in flat):
        raise Untranslatable("outputs do not match the node's output ports")
    outputs = []
    for name, tensor in zip(output_names, flat):
        if tensor.dtype not in b.onnx_type:
            raise Untranslatable(f"output {name!r} of dtype {tensor.dtype}")
        b.nodes.append(onnx_proto.Node("Identity", [b.tensor(tensor)], [name]))
        outputs.append(onnx_proto.value_info(name, b.onnx_type[tensor.dtype], tensor.shape))
    model = onnx_proto.model(b.nodes, b.initializers, inputs, outputs, opset)
    return model, [t.detach().clone() for t in flat]


def _same(got: np.ndarray, want: torch.Tensor) -> bool:
    want_np = want.numpy()
    if got.dtype != want_np.dtype or got.shape != want_np.shape:
        return False
    if want_np.dtype.kind in "fc":
        return bool(np.allclose(got, want_np, rtol=1e-5, atol=1e-6, equal_nan=True))
    return bool(np.array_equal(got, want_np))


def write_direct(
    graph_module: torch.nn.Module,
    args: Sequence[torch.Tensor],
    input_names: list[str],
    output_names: list[str],
    path: Any,
    opset: int = OPSET,
) -> None:
    """Translate, check the model in ONNX Runtime against the eager graph on ``args``,
    and save it to ``path``; raise :class:`Untranslatable` (nothing written) otherwise."""
    import onnxruntime

    data, expected = translate(graph_module, args, input_names, output_names, opset)
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    try:
        session = onnxruntime.InferenceSession(data, options, providers=["CPUExecutionProvider"])
        feed = {
            name: a.detach().as_subclass(torch.Tensor).numpy() for name, a in zip(input_names, args)
        }
        got = session.run(None, feed)
    except Exception as exc:  # a kernel ONNX Runtime lacks for some dtype
        raise Untranslatable(f"ONNX Runtime refused the translation: {exc}") from None
    for name, have, want in zip(output_names, got, expected):
        if not _same(np.asarray(have), want):
            raise Untranslatable(f"output {name!r} differs from the eager graph")
    Path(path).write_bytes(data)
