"""Emitters of indexing: ``x[index]`` reads (Slice, Gather, GatherND), ``select``,
``gather``, ``scatter_add`` and ``x[index] = value`` writes (ScatterND)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from ...errors import Untranslatable
from . import proto
from .builder import Builder, onnx_arithmetic_dtype
from .registry import emits


@emits("__getitem__")
def _getitem(b: Builder, out: torch.Tensor, x: torch.Tensor, index: Any) -> str:
    items = index if isinstance(index, tuple) else (index,)
    items = tuple(_as_index_tensor(i) for i in items)  # x[..., [2, 1, 0]]: a constant Gather
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
    picked = _picked_element(b, name, tuple(x.shape), starts, ends, axes, steps)
    if picked is not None:
        name = picked
    elif axes:
        name = b.node("Slice", [name, b.ints(starts), b.ints(ends), b.ints(axes), b.ints(steps)])
    sliced = list(x.shape)
    for start, end, axis, step in zip(starts, ends, axes, steps):
        sliced[axis] = len(range(start, end, step))
    if tuple(out.shape) == tuple(sliced) and axes:
        return name  # no axis dropped or added: the Slice is the result
    return b.node("Reshape", [name, b.ints(out.shape)])


def _as_index_tensor(item: Any) -> Any:
    """A list of Python ints in an index is the integer tensor NumPy and torch take it for."""
    if isinstance(item, list) and item and all(type(v) is int for v in item):
        return torch.tensor(item, dtype=torch.int64)
    return item


_FEW = 8  # axes up to this size are split whole to pick one element of the innermost


def _picked_element(
    b: Builder,
    name: str,
    shape: tuple[int, ...],
    starts: list[int],
    ends: list[int],
    axes: list[int],
    steps: list[int],
) -> str | None:
    """One element of a short innermost axis, every other axis whole (``image[..., 2]``):
    output ``start`` of a Split of that axis, made once per value and axis. ONNX
    Runtime's Slice copies there one element at a time (1.26 ms for a channel of a
    480x640x3 uint8 image), its Split runs all of them in 0.26 ms. None otherwise."""
    if len(axes) != 1 or steps[0] != 1 or ends[0] - starts[0] != 1:
        return None
    axis = axes[0]
    if math.prod(shape[axis + 1 :]) != 1 or not 1 < shape[axis] <= _FEW:
        return None
    made = b.__dict__.setdefault("_splits", {})
    if (name, axis) not in made:
        outputs = [b.fresh() for _ in range(shape[axis])]
        b.nodes.append(
            proto.Node("Split", [name], outputs, {"axis": axis, "num_outputs": len(outputs)})
        )
        made[(name, axis)] = outputs
    return made[(name, axis)][starts[0]]


def _gather_index(b: Builder, out: torch.Tensor, x: torch.Tensor, items: tuple) -> str:
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


@emits("select")
def _select(b: Builder, out: torch.Tensor, x: torch.Tensor, dim: int, index: Any) -> str:
    if isinstance(index, torch.Tensor):
        raise Untranslatable("select with a tensor index")
    dim %= x.ndim
    index = index + x.shape[dim] if index < 0 else index
    name = b.tensor(x)
    picked = _picked_element(b, name, tuple(x.shape), [index], [index + 1], [dim], [1])
    if picked is None:
        starts, ends, axes = b.ints([index]), b.ints([index + 1]), b.ints([dim])
        picked = b.node("Slice", [name, starts, ends, axes])
    return b.node("Reshape", [picked, b.ints(out.shape)])  # select drops the axis


@emits("index_select")
def _index_select(b: Builder, out: torch.Tensor, x: torch.Tensor, dim: int, index: Any) -> str:
    if index.ndim != 1:
        raise Untranslatable("index_select with a 0-d index")
    return b.node("Gather", [b.tensor(x), b.value(index, torch.int64)], axis=dim % x.ndim)


@emits("gather")
def _gather(
    b: Builder, out: torch.Tensor, x: torch.Tensor, dim: int, index: Any, *, sparse_grad=False
) -> str:
    """GatherElements; a constant index that fits is stored as int32 (half the bytes)."""
    if isinstance(index, torch.Tensor) and not b.traced(index) and index.numel():
        if int(index.max()) < 2**31 and int(index.min()) >= 0:
            name = b.array(index.numpy().astype(np.int32))
            return b.node("GatherElements", [b.tensor(x), name], axis=dim % x.ndim)
    return b.node("GatherElements", [b.tensor(x), b.value(index, torch.int64)], axis=dim % x.ndim)


@emits("scatter_add")
def _scatter_add(
    b: Builder, out: torch.Tensor, x: torch.Tensor, dim: int, index: Any, src: Any
) -> str:
    """ScatterElements with reduction "add" (histograms of traced values, e.g. CLAHE)."""
    compute = onnx_arithmetic_dtype(out.dtype)
    operands = [b.value(x, compute), b.value(index, torch.int64), b.value(src, compute)]
    result = b.node("ScatterElements", operands, axis=dim % x.ndim, reduction="add")
    return b.cast(result, compute, out.dtype)


def setitem(b: Builder, func: Any, x: torch.Tensor, index: Any, value: Any) -> None:
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
