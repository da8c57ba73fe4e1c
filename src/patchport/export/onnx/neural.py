"""Emitters of neural-network layers: matmul, linear, convolution, pooling, softmax."""

from __future__ import annotations

from typing import Any

import torch

from ...errors import Untranslatable
from .builder import NATIVE, Builder, onnx_arithmetic_dtype
from .registry import Emitter, emits


@emits("matmul", "__matmul__", "mm", "bmm")
def _matmul(b: Builder, out: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> str:
    if out.dtype not in (torch.float32, torch.float64):
        raise Untranslatable(f"matmul in {out.dtype}")
    if y.ndim == 1 and x.ndim >= 2:  # as a one-column matrix: see runtime_quirks
        column = b.node("Unsqueeze", [b.tensor(y), b.ints([-1])])
        return b.node("Squeeze", [b.node("MatMul", [b.tensor(x), column]), b.ints([-1])])
    return b.node("MatMul", [b.tensor(x), b.tensor(y)])


@emits("linear")
def _linear(b: Builder, out: torch.Tensor, x: torch.Tensor, weight: Any, bias: Any = None) -> str:
    if out.dtype not in (torch.float32, torch.float64):
        raise Untranslatable(f"linear in {out.dtype}")
    if x.ndim == 2:
        inputs = [b.tensor(x), b.tensor(weight)] + ([b.tensor(bias)] if bias is not None else [])
        return b.node("Gemm", inputs, transB=1)
    result = b.node("MatMul", [b.tensor(x), b.node("Transpose", [b.tensor(weight)], perm=[1, 0])])
    return result if bias is None else b.node("Add", [result, b.tensor(bias)])


def _pair(value: Any, n: int) -> list[int]:
    return list(value) if isinstance(value, (tuple, list)) else [int(value)] * n


@emits("conv1d", "conv2d", "conv3d")
def _conv(
    b: Builder,
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
    if isinstance(padding, str) or x.ndim != n + 2 or out.dtype not in NATIVE[:2]:
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


@emits("adaptive_avg_pool2d", "adaptive_avg_pool1d")
def _adaptive_avg(b: Builder, out: torch.Tensor, x: torch.Tensor, output_size: Any) -> str:
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


@emits("max_pool2d", "max_pool1d")
def _max_pool(
    b: Builder,
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
        b: Builder, out: torch.Tensor, x: torch.Tensor, dim: Any = None, *args: Any, **kw: Any
    ) -> str:
        if dim is None or not out.dtype.is_floating_point:
            raise Untranslatable(f"{op} without dim")
        compute = onnx_arithmetic_dtype(out.dtype)
        result = b.node(op, [b.value(x, compute)], axis=dim % max(x.ndim, 1))
        return b.cast(result, compute, out.dtype)

    return emit


emits("softmax")(_softmax_op("Softmax"))
emits("log_softmax")(_softmax_op("LogSoftmax"))
