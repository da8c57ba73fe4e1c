"""add, subtract, multiply, divide, absdiff, min, max, bitwise ops and LUT with torch ops.

Integer results are computed exactly in float64 and saturated like OpenCV (rounded half
to even, clamped); float32 results are float32 operations, as OpenCV does them. A second
operand is an array like the first, or a Scalar (a number applies to every channel).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from . import layout
from ._base import (
    as_tensor,
    integer_limits,
    no_dst,
    refuse,
    replaces,
    to_numpy,
)
from .semantics import current, installed_release, scalar_loop_elements

_DTYPES = ("uint8", "uint16", "int16", "float32")
_BIT_DTYPES = ("uint8", "uint16", "int16")
_MUL_DTYPES = ("uint8", "float32")  # OpenCV 5's 16-bit products are not reproduced
_CHANNELS = (1, 2, 3, 4)
_OPERAND = (
    "an array of src1's shape and dtype, a number, up to 4 numbers as a tuple, or a float "
    "array OpenCV reads as a Scalar ((1, channels), (4,) or (4, 1))"
)


def _scalar_array(value: Any, channels: int) -> bool:
    """A float array OpenCV reads as a Scalar: a (1, channels) row, such as the
    ``mean.reshape(1, -1)`` of normalisation helpers, or 4 numbers as (4,) or (4, 1)."""
    return (
        isinstance(value, np.ndarray)
        and value.dtype in (np.float32, np.float64)
        and ((value.shape == (1, channels) and channels > 1) or value.shape in ((4,), (4, 1)))
    )


def _operand(
    function: str, value: Any, src: np.ndarray, t: torch.Tensor, exact: bool = False
) -> torch.Tensor:
    """The second operand as a tensor broadcastable to t's (H, W, C)."""
    if isinstance(value, np.ndarray) and value.shape == src.shape:
        if value.dtype != src.dtype:
            raise refuse(function, "src2.dtype", value.dtype, f"{src.dtype} like src1")
        return as_tensor(function, value, (src.dtype.name,), _CHANNELS, "src2")
    channels = t.shape[2]
    if isinstance(value, (int, float, np.integer, np.floating)):
        numbers = [float(value)] * channels
    elif (
        isinstance(value, (tuple, list)) and 1 <= len(value) <= 4 or _scalar_array(value, channels)
    ):
        try:
            numbers = [float(v) for v in np.ravel(value)] + [0.0] * 4
        except (TypeError, ValueError):
            raise refuse(function, "src2", repr(value), _OPERAND) from None
        numbers = numbers[:channels]
    else:
        shown = f"{value.dtype}{list(value.shape)}" if isinstance(value, np.ndarray) else value
        raise refuse(function, "src2", shown if isinstance(shown, str) else repr(shown), _OPERAND)
    if t.dtype.is_floating_point:
        return torch.tensor(numbers, dtype=torch.float32).reshape(1, 1, channels)
    if not all(math.isfinite(n) for n in numbers):
        raise refuse(function, "src2", repr(value), "finite numbers for integer images")
    if exact:  # multiply/divide use the Scalar as given
        return torch.tensor(numbers, dtype=torch.float64).reshape(1, 1, channels)
    return _rounded_scalar(function, value, numbers, src)


def _rounded_scalar(function: str, value: Any, numbers: list[float], src: np.ndarray) -> Any:
    """The Scalar of add/subtract/absdiff on an integer image as the installed OpenCV uses
    it: int32 numbers (rounded half to even first), or float32 numbers when it computes in
    float32 (OpenCV 5.1, for a Scalar with a fractional part)."""
    rules = current()
    if rules.fractional_scalar_in_float32 and any(n != math.floor(n) for n in numbers):
        return torch.tensor(numbers, dtype=torch.float32).reshape(1, 1, -1)
    rounded = np.rint(numbers)
    if function == "absdiff" and rules.absdiff_saturates_integer_scalar:
        low, high = integer_limits(src.dtype) or (0, 0)
        if low < 0 and (rounded < low).any():  # int16: OpenCV 5.1's result is erratic
            raise refuse(
                function,
                "src2",
                repr(value),
                f"integers >= {low} or numbers with a fraction for {src.dtype} images "
                f"(OpenCV {installed_release()})",
            )
        rounded = np.clip(rounded, low, high) if low == 0 else rounded
    # beyond +-2**20 every 16-bit result saturates the same way: int32 arithmetic is exact
    rounded = np.clip(rounded, -(1 << 20), 1 << 20).astype(np.int32)
    return torch.from_numpy(rounded).reshape(1, 1, -1)


def _mask(function: str, mask: Any, src: np.ndarray) -> torch.Tensor | None:
    """A uint8 (H, W) mask as an (H, W, 1) uint8 tensor of 255 (kept) and 0, or None."""
    if mask is None:
        return None
    if (
        not isinstance(mask, np.ndarray)
        or mask.dtype != np.uint8
        or mask.shape not in (src.shape[:2], (*src.shape[:2], 1))
    ):
        shown = f"{mask.dtype}{list(mask.shape)}" if isinstance(mask, np.ndarray) else mask
        raise refuse(function, "mask", shown, "None or a uint8 (H, W) array like src1")
    flags = torch.from_numpy(mask).reshape(*src.shape[:2], 1)
    return torch.minimum(flags, torch.ones((), dtype=torch.uint8)) * 255


def _masked(out: torch.Tensor, keep: torch.Tensor | None) -> torch.Tensor:
    """``out`` with 0 where ``keep`` (from :func:`_mask`) is 0. The mask is widened to
    out's channels by whole rows (:mod:`.layout`): ONNX Runtime broadcasts a trailing
    axis of 1 element by element; uint8 takes the minimum with it (255 keeps a value)."""
    if keep is None:
        return out
    channels = out.shape[2]
    wide = keep if channels == 1 else layout.reorder(keep, (0,) * channels)
    if out.dtype == torch.uint8:
        return torch.minimum(out, wide)
    return torch.where(wide != 0, out, torch.zeros_like(out))


def _finish(values: torch.Tensor, src: np.ndarray, t: torch.Tensor, mask: Any) -> np.ndarray:
    """Saturate to src's type, zero what the mask leaves out, return OpenCV's layout."""
    limits = integer_limits(src.dtype)
    if limits is None:
        out = values.to(torch.float32)
    elif values.is_floating_point():
        out = torch.clamp(torch.round(values), *limits).to(t.dtype)
    else:  # exact integer arithmetic: saturate only
        out = torch.clamp(values, *limits).to(t.dtype)
    return to_numpy(_masked(out, mask), src.dtype)


def _pair(
    function: str, src1: Any, src2: Any, dtype: int, dtypes: tuple[str, ...] = _DTYPES
) -> tuple[torch.Tensor, torch.Tensor]:
    if dtype != -1:
        raise refuse(function, "dtype", dtype, "-1 (the type of src1)")
    a = as_tensor(function, src1, dtypes, _CHANNELS, "src1")
    exact = function in ("multiply", "divide")
    b = _operand(function, src2, src1, a, exact)
    if a.dtype.is_floating_point or b.dtype == torch.float32:
        return a.to(torch.float32), b.to(torch.float32)
    if exact:  # products and quotients: float64 (exact products, one rounding)
        return a.to(torch.float64), b.to(torch.float64)
    return a.to(torch.int32), b.to(torch.int32)  # sums and differences: exact in int32


def _uint8_saturating(
    function: str, src1: Any, src2: Any, mask: Any, sign: int
) -> np.ndarray | None:
    """uint8 add (``sign`` 1), subtract (-1) or absdiff (0) saturated without widening:
    a + min(b, 255 - a) (min(a, 255 - b) + b when b is a constant), a - min(a, b),
    max(a, b) - min(a, b) never leave 0..255, so the
    exported graph stays in uint8 (exact; no casts, no int32 image). None when a Scalar's
    channels need both signs (the int32 path handles those)."""
    a = as_tensor(function, src1, _DTYPES, _CHANNELS, "src1")
    if a.dtype != torch.uint8:
        return None
    b = _operand(function, src2, src1, a)
    if b.is_floating_point():  # a Scalar OpenCV adds in float32
        return None
    if b.dtype != torch.uint8:  # a rounded Scalar per channel
        addend = b.reshape(-1).numpy() * (sign or 1)
        if sign:  # past +-255 every sum saturates alike (not so |a - s|: s must fit)
            addend = np.clip(addend, -255, 255)
        elif (addend > 255).any():
            return None
        if sign and (addend <= 0).all():  # adding a non-positive Scalar subtracts
            sign, addend = -1, -addend
        elif sign:
            sign = 1
        if (addend < 0).any():  # mixed signs, or absdiff with a negative Scalar
            return None
        b = torch.from_numpy(addend.astype(np.uint8)).reshape(1, 1, -1)
    if sign > 0 and type(b) is torch.Tensor:  # b plain data: 255 - b is a constant, so
        out = torch.minimum(a, 255 - b) + b  # two passes over the image instead of three
    elif sign > 0:
        out = a + torch.minimum(b, 255 - a)
    elif sign < 0:
        out = a - torch.minimum(a, b)
    else:
        out = torch.maximum(a, b) - torch.minimum(a, b)
    return to_numpy(_masked(out, _mask(function, mask, src1)), src1.dtype)


_ARITHMETIC = {
    "src2": (
        "same-shape array",
        "number (every channel)",
        "tuple or float (1, channels) / (4, 1) array (per channel)",
    ),
    "dtype": ("-1",),
}


@replaces(
    "add",
    family="elementwise",
    dtypes=_DTYPES,
    channels=_CHANNELS,
    accuracy="exact (saturated, rounded half to even)",
    arguments={**_ARITHMETIC, "mask": ("None", "uint8 (H, W)")},
)
def add(src1: Any, src2: Any, dst: Any = None, mask: Any = None, dtype: int = -1) -> Any:
    """Traceable ``cv2.add``: saturate(src1 + src2), zero outside ``mask`` (exact)."""
    no_dst("add", dst)
    a, b = _pair("add", src1, src2, dtype)
    fast = _uint8_saturating("add", src1, src2, mask, 1)
    if fast is not None:
        return fast
    return _finish(
        a + b, src1, as_tensor("add", src1, _DTYPES, _CHANNELS, "src1"), _mask("add", mask, src1)
    )


@replaces(
    "subtract",
    family="elementwise",
    dtypes=_DTYPES,
    channels=_CHANNELS,
    accuracy="exact (saturated, rounded half to even)",
    arguments={**_ARITHMETIC, "mask": ("None", "uint8 (H, W)")},
)
def subtract(src1: Any, src2: Any, dst: Any = None, mask: Any = None, dtype: int = -1) -> Any:
    """Traceable ``cv2.subtract``: saturate(src1 - src2), zero outside ``mask`` (exact)."""
    no_dst("subtract", dst)
    a, b = _pair("subtract", src1, src2, dtype)
    fast = _uint8_saturating("subtract", src1, src2, mask, -1)
    if fast is not None:
        return fast
    t = as_tensor("subtract", src1, _DTYPES, _CHANNELS, "src1")
    return _finish(a - b, src1, t, _mask("subtract", mask, src1))


@replaces(
    "absdiff",
    family="elementwise",
    dtypes=_DTYPES,
    channels=_CHANNELS,
    accuracy="exact",
    arguments={"src2": _ARITHMETIC["src2"]},
)
def absdiff(src1: Any, src2: Any, dst: Any = None) -> Any:
    """Traceable ``cv2.absdiff``: saturate(|src1 - src2|) (exact)."""
    no_dst("absdiff", dst)
    a, b = _pair("absdiff", src1, src2, -1)
    fast = _uint8_saturating("absdiff", src1, src2, None, 0)
    if fast is not None:
        return fast
    t = as_tensor("absdiff", src1, _DTYPES, _CHANNELS, "src1")
    return _finish(torch.abs(a - b), src1, t, None)


_EXTREMA_DTYPES = ("uint8", "uint16", "int16", "float32", "float64")


def _extremum(function: str, src1: Any, src2: Any, dst: Any, pick: Any) -> np.ndarray:
    """cv2.min / cv2.max: the element-wise pick of ``src1`` and an array like it, or of a
    number (OpenCV's ``Scalar(v, 0, 0, 0)``: the first channel only), converted to the
    image's type as OpenCV does (rounded half to even and saturated for integers)."""
    no_dst(function, dst)
    a = as_tensor(function, src1, _EXTREMA_DTYPES, _CHANNELS, "src1")
    if isinstance(src2, np.ndarray) and src2.shape == src1.shape:
        if src2.dtype != src1.dtype:
            raise refuse(function, "src2.dtype", src2.dtype, f"{src1.dtype} like src1")
        b = as_tensor(function, src2, (src1.dtype.name,), _CHANNELS, "src2")
        return to_numpy(pick(a, b), src1.dtype)
    if isinstance(src2, (int, float, np.integer, np.floating)):
        numbers = [float(src2)]
    else:  # OpenCV 5 broadcasts a tuple as an array or reads it as a Scalar, by shape
        shown = f"{src2.dtype}{list(src2.shape)}" if isinstance(src2, np.ndarray) else src2
        raise refuse(
            function, "src2", shown if isinstance(shown, str) else repr(shown), _EXTREMA_OPERAND
        )
    values = np.array((numbers + [0.0] * 4)[: a.shape[2]])
    limits = integer_limits(src1.dtype)
    if limits is not None:
        values = np.clip(np.rint(values), *limits)
    scalar = torch.from_numpy(values.astype(src1.dtype)).to(a.dtype).reshape(1, 1, -1)
    return to_numpy(pick(a, scalar), src1.dtype)


_EXTREMA_OPERAND = (
    "an array of src1's shape and dtype, or a number (OpenCV 5 reads a tuple as a Scalar or "
    "broadcasts it as an array depending on the image's shape)"
)
_EXTREMA_ARGUMENTS = {
    "src2": ("same-shape array", "number (Scalar(v, 0, 0, 0): the first channel)"),
}


@replaces(
    "min",
    family="elementwise",
    dtypes=_EXTREMA_DTYPES,
    channels=_CHANNELS,
    accuracy="exact",
    arguments=_EXTREMA_ARGUMENTS,
)
def min_(src1: Any, src2: Any, dst: Any = None) -> Any:
    """Traceable ``cv2.min``: the element-wise minimum (exact)."""
    return _extremum("min", src1, src2, dst, torch.minimum)


@replaces(
    "max",
    family="elementwise",
    dtypes=_EXTREMA_DTYPES,
    channels=_CHANNELS,
    accuracy="exact",
    arguments=_EXTREMA_ARGUMENTS,
)
def max_(src1: Any, src2: Any, dst: Any = None) -> Any:
    """Traceable ``cv2.max``: the element-wise maximum (exact)."""
    return _extremum("max", src1, src2, dst, torch.maximum)


@replaces(
    "multiply",
    family="elementwise",
    dtypes=_MUL_DTYPES,
    channels=_CHANNELS,
    uint8_units=1,
    accuracy="uint8: exact for array operands; a Scalar operand within 1 (OpenCV's Scalar "
    "path rounds exact halves its own way); float32 within 1e-5",
    arguments={**_ARITHMETIC, "scale": ("any number",)},
)
def multiply(src1: Any, src2: Any, dst: Any = None, scale: float = 1, dtype: int = -1) -> Any:
    """Traceable ``cv2.multiply``: saturate(src1 * src2 * scale), computed as OpenCV does
    (float32 products for uint8 arrays)."""
    no_dst("multiply", dst)
    a, b = _pair("multiply", src1, src2, dtype, _MUL_DTYPES)
    t = as_tensor("multiply", src1, _MUL_DTYPES, _CHANNELS, "src1")
    if t.dtype.is_floating_point:  # float32 products, as OpenCV
        return _finish(a * b * float(np.float32(scale)), src1, t, None)
    if t.dtype == torch.uint8 and isinstance(src2, np.ndarray) and src2.shape == src1.shape:
        return _finish(_uint8_product(a, b, scale, src1, src2), src1, t, None)
    return _finish(a * b * float(scale), src1, t, None)  # exact products, one rounding


def _uint8_product(
    a: torch.Tensor, b: torch.Tensor, scale: float, src1: np.ndarray, src2: np.ndarray
) -> torch.Tensor:
    """OpenCV's float32 uint8 products: (src1*scale)*src2 in its SIMD loop, and in its
    scalar loop too except in OpenCV 5.0, whose scalar loop computes (src1*src2)*scale."""
    f32, factor = torch.float32, float(np.float32(scale))
    vector = (a.to(f32) * factor) * b.to(f32)
    where = scalar_loop_elements(src1, src2)
    if where is None or not current().multiply_scalar_loop_scales_last:
        return vector
    scalar = (a.to(f32) * b.to(f32)) * factor
    return scalar if where.all() else torch.where(torch.from_numpy(where), scalar, vector)


@replaces(
    "divide",
    family="elementwise",
    dtypes=("uint8",),
    channels=_CHANNELS,
    uint8_units=1,
    accuracy="exact for array operands (float32 quotients, as OpenCV 5); a Scalar operand "
    "within 1; division by 0 gives 0",
    arguments={
        "src2": ("same-shape array", "number", "tuple"),
        "scale": ("any number",),
        "dtype": ("-1",),
    },
)
def divide(src1: Any, src2: Any, dst: Any = None, scale: float = 1, dtype: int = -1) -> Any:
    """Traceable ``cv2.divide``: saturate(src1 * scale / src2), 0 where an integer src2 is 0
    (float32 arithmetic, as OpenCV 5)."""
    no_dst("divide", dst)
    a, b = _pair("divide", src1, src2, dtype, ("uint8",))
    t = as_tensor("divide", src1, ("uint8",), _CHANNELS, "src1")
    f32 = torch.float32
    numerator = a.to(f32) * float(np.float32(scale))
    divisor = b.to(f32)
    zero = divisor == 0
    quotient = numerator / torch.where(zero, torch.ones_like(divisor), divisor)
    quotient = torch.where(zero, torch.zeros_like(quotient), quotient)
    return _finish(quotient.to(torch.float64), src1, t, None)


def _bitwise(function: str, op: Any, src1: Any, src2: Any, mask: Any) -> np.ndarray:
    t = as_tensor(function, src1, _BIT_DTYPES, _CHANNELS, "src1")
    if src2 is None:
        other = None
    elif isinstance(src2, np.ndarray) and src2.shape == src1.shape:
        if src2.dtype != src1.dtype:
            raise refuse(function, "src2.dtype", src2.dtype, f"{src1.dtype} like src1")
        other = as_tensor(function, src2, _BIT_DTYPES, _CHANNELS, "src2")
    else:  # OpenCV 5's Scalar operands of bitwise ops are not reproduced
        shown = f"{src2.dtype}{list(src2.shape)}" if isinstance(src2, np.ndarray) else src2
        raise refuse(
            function,
            "src2",
            shown if isinstance(shown, str) else repr(shown),
            "an array of src1's shape and dtype (Scalars are not supported)",
        )
    if src2 is src1 and op is not torch.bitwise_xor:  # x & x and x | x: the masked copy idiom
        out = t.clone()
    elif other is None and src1.dtype == np.uint8:  # ~x is 255 - x: one plain uint8 pass
        out = 255 - t
    else:
        out = op(t) if other is None else op(t, other)  # as_tensor: the same (H, W, C)
    if src1.dtype == np.int16 or src1.dtype == np.uint8:
        out = out.to(t.dtype)
    elif src1.dtype == np.uint16:
        out = out & 0xFFFF  # int32 carrier: keep the 16 bits a uint16 holds
    return to_numpy(_masked(out, _mask(function, mask, src1)), src1.dtype)


_BITWISE_ARGS = {
    "src2": ("same-shape array",),
    "mask": ("None", "uint8 (H, W)"),
}


@replaces(
    "bitwise_and",
    family="elementwise",
    dtypes=_BIT_DTYPES,
    channels=_CHANNELS,
    accuracy="exact",
    arguments=_BITWISE_ARGS,
)
def bitwise_and(src1: Any, src2: Any, dst: Any = None, mask: Any = None) -> Any:
    """Traceable ``cv2.bitwise_and``, zero outside ``mask`` (exact)."""
    no_dst("bitwise_and", dst)
    return _bitwise("bitwise_and", torch.bitwise_and, src1, src2, mask)


@replaces(
    "bitwise_or",
    family="elementwise",
    dtypes=_BIT_DTYPES,
    channels=_CHANNELS,
    accuracy="exact",
    arguments=_BITWISE_ARGS,
)
def bitwise_or(src1: Any, src2: Any, dst: Any = None, mask: Any = None) -> Any:
    """Traceable ``cv2.bitwise_or``, zero outside ``mask`` (exact)."""
    no_dst("bitwise_or", dst)
    return _bitwise("bitwise_or", torch.bitwise_or, src1, src2, mask)


@replaces(
    "bitwise_xor",
    family="elementwise",
    dtypes=_BIT_DTYPES,
    channels=_CHANNELS,
    accuracy="exact",
    arguments=_BITWISE_ARGS,
)
def bitwise_xor(src1: Any, src2: Any, dst: Any = None, mask: Any = None) -> Any:
    """Traceable ``cv2.bitwise_xor``, zero outside ``mask`` (exact)."""
    no_dst("bitwise_xor", dst)
    return _bitwise("bitwise_xor", torch.bitwise_xor, src1, src2, mask)


@replaces(
    "bitwise_not",
    family="elementwise",
    dtypes=_BIT_DTYPES,
    channels=_CHANNELS,
    accuracy="exact",
    arguments={"mask": _BITWISE_ARGS["mask"]},
)
def bitwise_not(src: Any, dst: Any = None, mask: Any = None) -> Any:
    """Traceable ``cv2.bitwise_not``, zero outside ``mask`` (exact)."""
    no_dst("bitwise_not", dst)
    return _bitwise("bitwise_not", torch.bitwise_not, src, None, mask)


@replaces(
    "LUT",
    family="elementwise",
    dtypes=("uint8",),
    channels=_CHANNELS,
    accuracy="exact",
    arguments={"lut": ("256 entries, one table or one per channel; any dtype but float16",)},
)
def LUT(src: Any, lut: Any, dst: Any = None) -> Any:
    """Traceable ``cv2.LUT``: each uint8 value replaced by its table entry (exact); the
    table may be traced (it becomes a graph input)."""
    no_dst("LUT", dst)
    t = as_tensor("LUT", src, ("uint8",), _CHANNELS)
    channels = t.shape[2]
    if (
        not isinstance(lut, np.ndarray)
        or lut.size not in (256, 256 * channels)
        or lut.shape[0] * (lut.shape[1] if lut.ndim > 1 else 1) != 256
        or lut.dtype.name not in ("uint8", "int8", "uint16", "int16", "int32", "float32", "float64")
    ):
        shown = f"{lut.dtype}{list(lut.shape)}" if isinstance(lut, np.ndarray) else type(lut)
        raise refuse("LUT", "lut", shown, "a 256-entry array with 1 or src's channels")
    table = torch.from_numpy(np.ascontiguousarray(lut))
    if lut.dtype == np.uint16:
        table = table.to(torch.int32)
    table = table.reshape(256, -1)
    # one GatherElements over a 1-D table (ONNX Runtime's Gather copies element by
    # element, ten times slower); per-channel tables lie channel after channel, each
    # value's index offset by 256 * its channel. A 1-byte table is read as int16 and the
    # result cast back: ONNX Runtime gathers 2-byte elements a quarter faster.
    kept = table.dtype
    if kept in (torch.uint8, torch.int8):
        table = table.to(torch.int16)
    index = t.reshape(t.shape[0], -1).to(torch.int32)  # int32: the exported indices
    if table.shape[1] > 1:
        offsets = (torch.arange(channels, dtype=torch.int32) * 256).repeat(t.shape[1])
        index = index + offsets
        table = table.t()
    flat = index.reshape(-1).to(torch.int64)
    out = torch.gather(table.reshape(-1), 0, flat).reshape_as(t)
    return to_numpy(out.to(kept), lut.dtype)
