"""The ONNX graph the direct translator is writing: nodes, initializers, a name per traced
tensor, and the dtype ONNX arithmetic runs in for each torch dtype."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from ...dtype_table import torch_to_onnx
from ...errors import Untranslatable
from . import proto

NATIVE = (torch.float32, torch.float64, torch.int32, torch.int64)


def onnx_arithmetic_dtype(dtype: torch.dtype) -> torch.dtype:
    """The dtype an elementwise ONNX op runs in for a torch result of ``dtype``.

    ONNX Runtime's kernels cover float32/64 and int32/64; torch computes float16 and
    bfloat16 in float32 and rounds, and small integers wrap exactly as int64 cast back.
    """
    if dtype in NATIVE:
        return dtype
    if dtype in (torch.float16, torch.bfloat16):
        return torch.float32
    if dtype in (torch.int8, torch.int16, torch.uint8, torch.uint16, torch.uint32):
        return torch.int64
    raise Untranslatable(f"no exact ONNX arithmetic for {dtype}")


class Builder:
    """The ONNX graph being written: nodes, initializers, and a name per traced tensor."""

    def __init__(self, reserved: set[str]) -> None:
        self.nodes: list[Any] = []
        self.constants_by_name: dict[str, np.ndarray] = {}  # the initializers, encoded last
        self.known: dict[str, tuple[np.dtype, tuple[int, ...]]] = {}  # eager dtype and shape
        self.names: dict[int, str] = {}  # id(tensor) -> ONNX value name (depends on inputs)
        self.keep: list[Any] = []  # keeps the tensors alive so ids stay unique
        self.constants: dict[int, str] = {}
        self.prefix = "_pp"
        while any(name.startswith(self.prefix) for name in reserved):
            self.prefix += "_"
        self.count = 0
        self.onnx_type = {dtype: e.code for dtype, e in torch_to_onnx().items()}
        self.numpy_type = {d: np.dtype(e.numpy) for d, e in torch_to_onnx().items() if e.numpy}
        self.nonnegative: set[str] = set()  # values >= 0 by construction (elementwise._nonnegative)

    def fresh(self) -> str:
        self.count += 1
        return f"{self.prefix}{self.count}"

    def node(self, op: str, inputs: Sequence[str], **attrs: Any) -> str:
        out = self.fresh()
        self.nodes.append(proto.Node(op, list(inputs), [out], attrs))
        return out

    def bind(self, tensor: torch.Tensor, name: str) -> None:
        self.names[id(tensor)] = name
        self.keep.append(tensor)
        if tensor.dtype in self.numpy_type:  # what the graph optimiser may rely on
            self.known[name] = (self.numpy_type[tensor.dtype], tuple(tensor.shape))

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
        self.constants_by_name[name] = np.array(array, copy=True)  # encoded at the end
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
