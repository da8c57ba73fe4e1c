"""Emitters of reductions over dims: sum, mean, amax/amin, all/any."""

from __future__ import annotations

from typing import Any

import torch

from ...errors import Untranslatable
from .builder import Builder, onnx_arithmetic_dtype
from .elementwise import extreme_op, truth
from .registry import Emitter, emits


def _reduce(op: str, cast_first: bool = True) -> Emitter:
    def emit(
        b: Builder,
        out: torch.Tensor,
        x: torch.Tensor,
        dim: Any = None,
        keepdim: bool = False,
        *,
        dtype: Any = None,
    ) -> str:
        if out.dtype == torch.bool:
            raise Untranslatable(f"{op} on bool")
        compute = onnx_arithmetic_dtype(out.dtype)
        dims = [] if dim is None else [dim] if isinstance(dim, int) else list(dim)
        if dim is not None and not dims:
            raise Untranslatable(f"{op} over dim=()")
        inputs = [b.value(x, compute)]
        if dims:
            inputs.append(b.ints([d % max(x.ndim, 1) for d in dims]))
        result = b.node(op, inputs, keepdims=int(bool(keepdim)))
        return b.cast(result, compute, out.dtype)

    return emit


emits("sum")(_reduce("ReduceSum"))
emits("mean")(_reduce("ReduceMean"))
emits("amax")(_reduce("ReduceMax"))
emits("amin")(_reduce("ReduceMin"))


def _arg_extreme(op: str, fill: float) -> Emitter:
    """torch.argmax / argmin: the first extreme (ONNX's select_last_index=0); torch counts
    NaN as the extreme, so a float row with NaN gives its first NaN's index."""

    def emit(
        b: Builder, out: torch.Tensor, x: torch.Tensor, dim: Any = None, keepdim: bool = False
    ) -> str:
        if x.dtype == torch.bool:
            raise Untranslatable(f"{op} on bool")
        compute = onnx_arithmetic_dtype(x.dtype)
        data = b.value(x, compute)
        if dim is None:
            data = b.node("Reshape", [data, b.ints([-1])])
        axis = 0 if dim is None else dim % max(x.ndim, 1)
        keep = int(bool(keepdim) and dim is not None)

        def extreme(kind: str, values: str) -> str:
            return b.node(kind, [values], axis=axis, keepdims=keep, select_last_index=0)

        if compute.is_floating_point:
            nan = b.node("IsNaN", [data])
            clean = b.node("Where", [nan, b.value(fill, compute), data])
            flags = b.cast(nan, torch.bool, torch.int32)
            first_nan = extreme("ArgMax", flags)  # the first 1 of the NaN flags
            any_nan = b.node("ReduceMax", [flags, b.ints([axis])], keepdims=keep)
            has = b.cast(any_nan, torch.int32, torch.bool)
            result = b.node("Where", [has, first_nan, extreme(op, clean)])
        else:
            result = extreme(op, data)
        if dim is None and keepdim:
            result = b.node("Reshape", [result, b.ints([1] * x.ndim)])
        return b.cast(result, torch.int64, out.dtype)

    return emit


emits("argmax")(_arg_extreme("ArgMax", float("-inf")))
emits("argmin")(_arg_extreme("ArgMin", float("inf")))


def _all_any(op: str) -> Emitter:
    def emit(
        b: Builder, out: torch.Tensor, x: torch.Tensor, dim: Any = None, keepdim: bool = False
    ) -> str:
        dims = [] if dim is None else [dim] if isinstance(dim, int) else list(dim)
        if dim is not None and not dims:
            raise Untranslatable(f"{op} over dim=()")
        inputs = [b.cast(truth(b, x), torch.bool, torch.int64)]
        if dims:
            inputs.append(b.ints([d % max(x.ndim, 1) for d in dims]))
        result = b.node(op, inputs, keepdims=int(bool(keepdim)))
        return b.cast(result, torch.int64, out.dtype)

    return emit


emits("all")(_all_any("ReduceMin"))
emits("any")(_all_any("ReduceMax"))


def _max_min(reduce: str, pairwise: str) -> Emitter:
    """``x.max()`` (the whole tensor) and ``x.max(other)`` (elementwise); the dim forms
    return (values, indices) and go to torch.onnx."""
    whole, elementwise = _reduce(reduce), extreme_op(pairwise)

    def emit(b: Builder, out: Any, x: torch.Tensor, *args: Any, **kwargs: Any) -> str:
        if not args and not kwargs:
            return whole(b, out, x)
        if len(args) == 1 and not kwargs and isinstance(args[0], torch.Tensor):
            return elementwise(b, out, x, args[0])
        raise Untranslatable(f"{reduce} over a dim (values and indices)")

    return emit


emits("max")(_max_min("ReduceMax", "Max"))
emits("min")(_max_min("ReduceMin", "Min"))
