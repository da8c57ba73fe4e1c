"""The one table of element types: NumPy dtype, ONNX ``TensorProto`` type, torch dtype.

Every map between the three (the ONNX writer's type codes, the kernel fitter's type names,
the tracer's NumPy <-> torch dtypes) is derived from :data:`ELEMENT_TYPES`. The module is a
leaf and imports no torch at load time, so a torch-free bundle runtime can read NumPy <->
ONNX types from it; the torch maps are built on their first call.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import torch


@dataclass(frozen=True)
class ElementType:
    """One element type under its three names (None where a library has no such type)."""

    onnx: str  # TensorProto.DataType name as ONNX Runtime writes it: "tensor(<onnx>)"
    code: int  # TensorProto.DataType value
    numpy: str | None  # NumPy dtype name (NumPy has no bfloat16 and no ONNX string tensor)
    torch: str | None  # torch dtype attribute name


ELEMENT_TYPES: tuple[ElementType, ...] = (
    ElementType("float", 1, "float32", "float32"),
    ElementType("uint8", 2, "uint8", "uint8"),
    ElementType("int8", 3, "int8", "int8"),
    ElementType("uint16", 4, "uint16", "uint16"),
    ElementType("int16", 5, "int16", "int16"),
    ElementType("int32", 6, "int32", "int32"),
    ElementType("int64", 7, "int64", "int64"),
    ElementType("string", 8, None, None),
    ElementType("bool", 9, "bool", "bool"),
    ElementType("float16", 10, "float16", "float16"),
    ElementType("double", 11, "float64", "float64"),
    ElementType("uint32", 12, "uint32", "uint32"),
    ElementType("uint64", 13, "uint64", "uint64"),
    ElementType("complex64", 14, "complex64", "complex64"),
    ElementType("complex128", 15, "complex128", "complex128"),
    ElementType("bfloat16", 16, None, "bfloat16"),
)

BY_CODE: dict[int, ElementType] = {e.code: e for e in ELEMENT_TYPES}
BY_ONNX_NAME: dict[str, ElementType] = {e.onnx: e for e in ELEMENT_TYPES}
BY_NUMPY: dict[np.dtype, ElementType] = {np.dtype(e.numpy): e for e in ELEMENT_TYPES if e.numpy}


def onnx_code(dtype: np.dtype) -> int:
    """TensorProto.DataType of a NumPy dtype; KeyError for one ONNX has no type for."""
    return BY_NUMPY[np.dtype(dtype)].code


def numpy_name(onnx_name: str) -> str:
    """NumPy's name for an ONNX type name ("double" -> "float64"); itself where NumPy has
    no such dtype (bfloat16, string): for messages that speak NumPy to the user."""
    element = BY_ONNX_NAME.get(onnx_name)
    return element.numpy if element is not None and element.numpy else onnx_name


def numpy_dtype_of_onnx(type_string: str) -> np.dtype | None:
    """NumPy dtype of an ONNX Runtime type string ("tensor(float)"); None if it has none."""
    element = BY_ONNX_NAME.get(type_string.removeprefix("tensor(").removesuffix(")"))
    return np.dtype(element.numpy) if element is not None and element.numpy else None


@functools.cache
def numpy_to_torch() -> dict[np.dtype, torch.dtype]:
    """NumPy dtype -> the torch dtype of the same name (imports torch)."""
    import torch

    return {
        np.dtype(e.numpy): getattr(torch, e.torch) for e in ELEMENT_TYPES if e.numpy and e.torch
    }


@functools.cache
def torch_to_onnx() -> dict[torch.dtype, ElementType]:
    """Torch dtype -> its ONNX element type, real dtypes only (imports torch): torch.onnx
    writes a complex tensor as real pairs, so no ONNX complex type stands for a torch one."""
    import torch

    return {
        getattr(torch, e.torch): e
        for e in ELEMENT_TYPES
        if e.torch and not e.onnx.startswith("complex")
    }


def wrap_integer(value: int, dtype: torch.dtype) -> int:
    """``value`` as an integer tensor of ``dtype`` holds it: a Python int beside a tensor
    is converted to the tensor's type by eager torch, so ``u8 < 300`` compares with 44 and
    ``-3 // u8`` divides 253. ``dtype`` must be an integer (not bool) dtype."""
    import torch

    info = torch.iinfo(dtype)
    value = int(value) & ((1 << info.bits) - 1)
    if info.min < 0 and value >= 1 << (info.bits - 1):
        value -= 1 << info.bits
    return value
