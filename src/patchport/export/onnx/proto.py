"""A minimal writer of ONNX model bytes (the protobuf wire format of ``onnx.proto``).

The direct translator writes a handful of message kinds (model, graph, node, attribute,
tensor, value info). Encoding them here avoids importing the ``onnx`` package on the
first export: it imports ``ml_dtypes``, which alone costs seconds of start-up. Field
numbers are those of onnx.proto (proto2); ONNX Runtime and ``onnx.load`` read the result.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...dtype_table import onnx_code


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # negative int64 values take ten bytes, two's complement
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def _key(number: int, wire: int) -> bytes:
    return _varint(number << 3 | wire)


def _int(number: int, value: int) -> bytes:
    return _key(number, 0) + _varint(int(value))


def _bytes(number: int, value: bytes | str) -> bytes:
    data = value.encode() if isinstance(value, str) else bytes(value)
    return _key(number, 2) + _varint(len(data)) + data


def _float(number: int, value: float) -> bytes:
    return _key(number, 5) + struct.pack("<f", value)


def tensor(name: str, array: np.ndarray) -> bytes:
    """TensorProto: dims, data_type, name, raw_data (little-endian)."""
    array = np.ascontiguousarray(array)
    kind = onnx_code(array.dtype)
    data = array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()
    dims = b"".join(_int(1, d) for d in array.shape)
    return dims + _int(2, kind) + _bytes(8, name) + _bytes(9, data)


def attribute(name: str, value: Any) -> bytes:
    """AttributeProto for an int, float, string, or list of ints/floats."""
    head = _bytes(1, name)
    if isinstance(value, bool) or isinstance(value, int):
        return head + _int(3, value) + _int(20, 2)
    if isinstance(value, float):
        return head + _float(2, value) + _int(20, 1)
    if isinstance(value, str):
        return head + _bytes(4, value) + _int(20, 3)
    values = list(value)
    if all(isinstance(v, int) for v in values):
        return head + b"".join(_int(8, v) for v in values) + _int(20, 7)
    return head + b"".join(_float(7, float(v)) for v in values) + _int(20, 6)


@dataclass
class Node:
    """One NodeProto: operator, inputs, outputs, attributes."""

    op_type: str
    inputs: Sequence[str]
    outputs: Sequence[str]
    attributes: dict[str, Any] = field(default_factory=dict)

    def encode(self) -> bytes:
        parts = [_bytes(1, name) for name in self.inputs]
        parts += [_bytes(2, name) for name in self.outputs]
        parts.append(_bytes(4, self.op_type))
        parts += [_bytes(5, attribute(k, v)) for k, v in self.attributes.items()]
        return b"".join(parts)


def value_info(name: str, elem_type: int, shape: Iterable[int | str]) -> bytes:
    """ValueInfoProto of a tensor with a fixed (int) or named (str) size per dim."""
    dims = b"".join(_bytes(1, _bytes(2, d) if isinstance(d, str) else _int(1, d)) for d in shape)
    tensor_type = _int(1, elem_type) + _bytes(2, dims)
    return _bytes(1, name) + _bytes(2, _bytes(1, tensor_type))


def model(
    nodes: Sequence[Node],
    initializers: Sequence[bytes],
    inputs: Sequence[bytes],
    outputs: Sequence[bytes],
    opset: int,
    ir_version: int = 10,
    name: str = "main_graph",
    producer: str = "patchport",
) -> bytes:
    """ModelProto bytes of one graph in the default ONNX domain."""
    graph = b"".join(
        [
            *(_bytes(1, node.encode()) for node in nodes),
            _bytes(2, name),
            *(_bytes(5, init) for init in initializers),
            *(_bytes(11, value) for value in inputs),
            *(_bytes(12, value) for value in outputs),
        ]
    )
    opset_id = _bytes(1, "") + _int(2, opset)
    return _int(1, ir_version) + _bytes(2, producer) + _bytes(7, graph) + _bytes(8, opset_id)
