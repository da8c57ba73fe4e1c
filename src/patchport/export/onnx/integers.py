"""Integer shifts and powers written exactly: ``BitShift`` on the unsigned view of the same
width (right shifts of negative values through their complement, which is the arithmetic
shift), out-of-range shift counts as ATen treats them (0, or the sign for a signed right
shift), and integer powers by repeated squaring (ONNX Runtime's integer ``Pow`` goes
through double and is off beyond 2**53)."""

from __future__ import annotations

from typing import Any

import torch

from ...dtype_table import wrap_integer
from ...errors import Untranslatable
from .builder import Builder

_UNSIGNED = {8: torch.uint8, 16: torch.uint16, 32: torch.uint32, 64: torch.uint64}
MAX_SQUARING_EXPONENT = 64  # larger constant integer exponents are left to torch.onnx


def torch_number(value: Any, dtype: torch.dtype) -> Any:
    """A Python int operand as eager torch converts it for an integer result of ``dtype``."""
    if type(value) is int and not (dtype.is_floating_point or dtype == torch.bool):
        return wrap_integer(value, dtype)
    return value


def shift(b: Builder, out: torch.Tensor, x: Any, count: Any, left: bool) -> str:
    """``x << count`` / ``x >> count`` for integer ``out`` (tensors or Python ints)."""
    dtype = out.dtype
    if dtype.is_floating_point or dtype == torch.bool or dtype.is_complex:
        raise Untranslatable(f"shift producing {dtype}")
    info = torch.iinfo(dtype)
    unsigned, wide = _UNSIGNED[info.bits], torch.int64
    value = b.value(torch_number(x, dtype), dtype)
    count_dtype = count.dtype if isinstance(count, torch.Tensor) else dtype
    counted = b.value(torch_number(count, count_dtype), count_dtype)
    counted = b.cast(counted, count_dtype, wide)
    # ATen: a left shift by a count < 0 or >= bits gives 0; a signed right shift by a
    # count < 0 or > bits - 1 shifts by bits - 1 (the sign), an unsigned one gives 0
    top = info.bits if left or info.min == 0 else info.bits - 1
    limit = b.node("Less", [counted, b.value(0, wide)])
    limit = b.node("Or", [limit, b.node("GreaterOrEqual", [counted, b.value(top, wide)])])
    if left or info.min == 0:
        safe = b.node("Where", [limit, b.value(0, wide), counted])
        moved = _bitshift(b, b.cast(value, dtype, unsigned), safe, unsigned, left)
        moved = b.cast(moved, unsigned, wide)
        return b.cast(b.node("Where", [limit, b.value(0, wide), moved]), wide, dtype)
    safe = b.node("Where", [limit, b.value(top, wide), counted])
    value = b.cast(value, dtype, wide)
    negative = b.node("Less", [value, b.value(0, wide)])
    magnitude = b.node("Where", [negative, b.node("BitwiseNot", [value]), value])  # >= 0
    moved = _bitshift(b, b.cast(magnitude, wide, unsigned), safe, unsigned, left)
    moved = b.cast(moved, unsigned, wide)
    return b.cast(b.node("Where", [negative, b.node("BitwiseNot", [moved]), moved]), wide, dtype)


def _bitshift(b: Builder, value: str, count: str, unsigned: torch.dtype, left: bool) -> str:
    direction = "LEFT" if left else "RIGHT"
    count = b.cast(count, torch.int64, unsigned)
    return b.node("BitShift", [value, count], direction=direction)


def integer_power(
    b: Builder, out: torch.Tensor, x: Any, exponent: Any, compute: torch.dtype
) -> str:
    """``x ** k`` for a Python int ``k`` >= 0 by repeated squaring, wrapping like torch."""
    if type(exponent) is not int or not 0 <= exponent <= MAX_SQUARING_EXPONENT:
        raise Untranslatable(f"integer pow with exponent {exponent!r}")
    base = b.value(torch_number(x, out.dtype), compute)
    result = None
    while exponent:
        if exponent & 1:
            result = base if result is None else b.node("Mul", [result, base])
        exponent >>= 1
        if exponent:
            base = b.node("Mul", [base, base])
    if result is None:
        return b.node("Add", [b.node("Mul", [base, b.value(0, compute)]), b.value(1, compute)])
    return result
