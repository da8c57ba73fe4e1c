"""Shape functions: reshapes, transposes, joins, splits, flips, tiling and padding."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from ..values import TracedArray, TracedTensor, is_traced
from .calls import Call, Node, all_dims, handler_table, is_array
from .targets import np_repeat, np_take_index

HANDLERS: dict[Callable, Callable] = {}
implements = handler_table(HANDLERS)


def _reshape_to_result(call: Call, a: Any) -> Node:
    return call.op(torch.reshape, a, tuple(call.result.shape))


@implements(np.reshape)
def _reshape(call: Call, a: Any, shape: Any = None, order: Any = "C", **kwargs: Any) -> Any:
    """``np.reshape``: a target with -1 or with sizes read from traced data is recorded as
    given (those sizes stay computed from the input's), any other as the result's shape."""
    target = kwargs.get("newshape", shape)
    items = tuple(target) if isinstance(target, (tuple, list)) else (target,)
    if order in ("C", "A", "K", None) and any(type(i) is not int or i == -1 for i in items):
        if all(isinstance(i, int) for i in items):
            return call.op(torch.reshape, a, items)
    return _reshape_like(call, a, order=order)


@implements(np.ravel)
def _ravel(call: Call, a: Any, order: Any = "C") -> Any:
    """``np.ravel``: a reshape to (-1,), whatever the input's size."""
    if order not in ("C", "A", "K", None):
        return None
    return call.op(torch.reshape, a, (-1,))


@implements(np.expand_dims)
def _expand_dims(call: Call, a: Any, axis: Any) -> Any:
    """New axes of size one by ``unsqueeze``: the other sizes stay whatever the input's
    are (a count of rows kept by a mask, a dynamic axis), not the sample's."""
    if not is_array(a):
        return _reshape_like(call, a)
    ndim = call.result.ndim
    axes = sorted(int(i) % ndim for i in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    node = call.n(a)
    for dim in axes:
        node = call.rec.call(torch.unsqueeze, (node, dim))
    return node


@implements(np.squeeze)
def _squeeze(call: Call, a: Any, axis: Any = None) -> Any:
    """Axes of size one dropped by ``squeeze`` one at a time (last first): the sample
    says which axes go, the others keep the input's sizes."""
    if not is_array(a):
        return _reshape_like(call, a)
    if axis is None:
        dims = [d for d, size in enumerate(a.shape) if size == 1]
    else:
        dims = [int(i) % a.ndim for i in (axis if isinstance(axis, (tuple, list)) else (axis,))]
    node = call.n(a)
    for dim in sorted(dims, reverse=True):
        node = call.rec.call(torch.squeeze, (node, dim))
    return node


@implements(np.atleast_1d, np.atleast_2d)
def _atleast(call: Call, *arys: Any) -> Any:
    """At least one (two) axes: leading axes of size one added by ``unsqueeze`` (a 0-d
    input by reshape), an input with enough axes passed through with its own sizes."""
    results = call.result if len(arys) > 1 else (call.result,)
    nodes = []
    for a, r in zip(arys, results):
        if not is_array(a) or a.ndim == 0:
            nodes.append(call.op(torch.reshape, a, tuple(r.shape)))
            continue
        node = call.n(a)
        for _ in range(r.ndim - a.ndim):
            node = call.rec.call(torch.unsqueeze, (node, 0))
        nodes.append(node)
    return tuple(nodes) if len(arys) > 1 else nodes[0]


def _reshape_like(call: Call, *args: Any, **kwargs: Any) -> Any:
    """Pure reshapes: the eager result's static shape says it all."""
    if kwargs.get("order", "C") not in ("C", "A", "K", None):
        return None
    if isinstance(call.result, (tuple, list)):
        return tuple(call.op(torch.reshape, a, tuple(r.shape)) for a, r in zip(args, call.result))
    return _reshape_to_result(call, args[0])


@implements(np.atleast_3d)
def _atleast_3d(call: Call, *arys: Any) -> Any:
    """atleast_3d puts 1-d data in the middle axis: (n,) -> (1, n, 1)."""
    return _reshape_like(call, *arys)


@implements(np.transpose, np.permute_dims)
def _transpose(call: Call, a: Any, axes: Any = None) -> Node:
    axes = tuple(reversed(range(a.ndim))) if axes is None else tuple(int(i) for i in axes)
    return call.op(torch.permute, a, axes)


@implements(np.swapaxes)
def _swapaxes(call: Call, a: Any, axis1: int, axis2: int) -> Node:
    return call.op(torch.swapaxes, a, int(axis1), int(axis2))


@implements(np.moveaxis)
def _moveaxis(call: Call, a: Any, source: Any, destination: Any) -> Node:
    src = list(source) if isinstance(source, (tuple, list)) else int(source)
    dst = list(destination) if isinstance(destination, (tuple, list)) else int(destination)
    return call.op(torch.movedim, a, src, dst)


def _as_result_dtype(call: Call, arrays: Any) -> list:
    return [call.t(a) for a in arrays]


@implements(np.concatenate, np.concat)
def _concatenate(call: Call, arrays: Any, axis: Any = 0, out: Any = None, **kw: Any) -> Node:
    if axis is None:
        flat = [call.rec.call(torch.reshape, (call.t(a), (-1,))) for a in arrays]
        return _concat_nodes(call, flat, 0)
    return _concat_nodes(call, [call.t(a) for a in arrays], int(axis))


def _concat_nodes(call: Call, nodes: list, dim: int) -> Node:
    return call.rec.call(torch.cat, (nodes, dim))


@implements(np.stack)
def _stack(call: Call, arrays: Any, axis: int = 0, out: Any = None, **kw: Any) -> Node:
    return call.rec.call(torch.stack, (_as_result_dtype(call, arrays), int(axis)))


def _pieces(call: Call, arrays: Any, fix: Callable[[tuple], tuple]) -> list:
    nodes = []
    for a in arrays:
        shape = tuple(np.shape(a))
        node = call.t(a)
        new = fix(shape)
        if new != shape:
            node = call.rec.call(torch.reshape, (node, new))
        nodes.append(node)
    return nodes


def _shape2(s: tuple) -> tuple:
    return s if len(s) >= 2 else ((1, 1) if not s else (1, s[0]))


def _shape3(s: tuple) -> tuple:
    if len(s) >= 3:
        return s
    return {0: (1, 1, 1), 1: (1, *s, 1), 2: (*s, 1)}[len(s)]


@implements(np.vstack, np.row_stack) if hasattr(np, "row_stack") else implements(np.vstack)
def _vstack(call: Call, tup: Any, **kw: Any) -> Node:
    return _concat_nodes(call, _pieces(call, tup, _shape2), 0)


@implements(np.hstack)
def _hstack(call: Call, tup: Any, **kw: Any) -> Node:
    nodes = _pieces(call, tup, lambda s: s or (1,))
    return _concat_nodes(call, nodes, 0 if call.result.ndim == 1 else 1)


@implements(np.dstack)
def _dstack(call: Call, tup: Any, **kw: Any) -> Node:
    return _concat_nodes(call, _pieces(call, tup, _shape3), 2)


@implements(np.column_stack)
def _column_stack(call: Call, tup: Any) -> Node:
    nodes = _pieces(call, tup, lambda s: (s[0], 1) if len(s) == 1 else _shape2(s))
    return _concat_nodes(call, nodes, 1)


@implements(np.block)
def _block(call: Call, arrays: Any) -> Node:
    """np.block: the innermost lists joined on the last axis, each outer level on the axis
    before; every piece first given the result's rank by leading axes of one."""

    def depth(item: Any) -> int:
        return 1 + depth(item[0]) if type(item) is list and item else 0

    rank = call.result.ndim

    def build(item: Any, level: int) -> Node:
        if type(item) is list:
            return _concat_nodes(call, [build(x, level + 1) for x in item], level - depth_all)
        shape = tuple(np.shape(item))
        node = call.t(item)
        full = (1,) * (rank - len(shape)) + shape
        return call.rec.call(torch.reshape, (node, full)) if full != shape else node

    depth_all = depth(arrays)
    return build(arrays, 0) if type(arrays) is list else build([arrays], 0)


@implements(np.append)
def _append(call: Call, arr: Any, values: Any, axis: Any = None) -> Any:
    if axis is None:
        parts = [call.rec.call(torch.reshape, (call.t(p), (-1,))) for p in (arr, values)]
        return _concat_nodes(call, parts, 0)
    return _concat_nodes(call, [call.t(arr), call.t(values)], int(axis))


@implements(np.insert)
def _insert(call: Call, arr: Any, obj: Any, values: Any, axis: Any = None) -> Any:
    """``np.insert`` at one plain index: the values cast to the array's dtype, shaped as
    NumPy shapes them (``ndmin``, first axis moved to ``axis``, broadcast to the slot),
    joined between the two halves. Lists of indices and slices are not mapped."""
    if is_traced(obj) or isinstance(obj, slice) or np.ndim(obj) != 0 or is_traced(axis):
        return None
    rec, res = call.rec, call.result
    data = call.t(arr)
    if axis is None:
        data, dim, length = rec.call(torch.reshape, (data, (-1,))), 0, int(np.size(arr))
    else:
        dim = int(axis) % max(np.ndim(arr), 1)
        length = int(np.shape(arr)[dim])
    shape = tuple(np.shape(values))
    node = rec.call(torch.reshape, (call.t(values), (1,) * (res.ndim - len(shape)) + shape))
    node = rec.call(torch.movedim, (node, 0, dim))
    slot = list(res.shape)
    slot[dim] -= length
    node = rec.call(torch.broadcast_to, (node, tuple(slot)))
    before = (slice(None),) * dim  # slices, not lengths: a dynamic axis stays dynamic
    left = rec.call(operator.getitem, (data, (*before, slice(None, int(obj)))))
    right = rec.call(operator.getitem, (data, (*before, slice(int(obj), None))))
    return _concat_nodes(call, [left, node, right], dim)


@implements(np.split, np.array_split)
def _split(call: Call, ary: Any, indices_or_sections: Any, axis: int = 0) -> tuple:
    dim = int(axis) % ary.ndim
    pieces, start = [], 0
    for r in call.result:  # one slice each: ONNX Runtime's SplitToSequence lacks small ints
        size = int(r.shape[dim])
        pieces.append(call.op(torch.narrow, ary, dim, start, size))
        start += size
    return tuple(pieces)


@implements(np.flip)
def _flip(call: Call, m: Any, axis: Any = None) -> Node:
    return call.op(torch.flip, m, all_dims(axis, m.ndim))


@implements(np.fliplr)
def _fliplr(call: Call, m: Any) -> Node:
    return call.op(torch.flip, m, (1,))


@implements(np.flipud)
def _flipud(call: Call, m: Any) -> Node:
    return call.op(torch.flip, m, (0,))


@implements(np.roll)
def _roll(call: Call, a: Any, shift: Any, axis: Any = None) -> Node:
    if axis is None:
        return call.op(torch.roll, a, int(shift))
    shifts = tuple(int(s) for s in np.atleast_1d(shift))
    dims = tuple(int(d) for d in np.atleast_1d(axis))
    if len(shifts) == 1 and len(dims) > 1:
        shifts = shifts * len(dims)
    if len(dims) == 1 and len(shifts) > 1:
        dims = dims * len(shifts)
    return call.op(torch.roll, a, shifts, dims)


@implements(np.rot90)
def _rot90(call: Call, m: Any, k: int = 1, axes: Any = (0, 1)) -> Node:
    return call.op(torch.rot90, m, int(k), [int(a) for a in axes])


@implements(np.broadcast_to)
def _broadcast_to(call: Call, array: Any, shape: Any, subok: bool = False) -> Node:
    return call.op(torch.broadcast_to, array, tuple(call.result.shape))


@implements(np.broadcast_arrays)
def _broadcast_arrays(call: Call, *args: Any, subok: bool = False) -> tuple:
    return tuple(call.op(torch.broadcast_to, a, tuple(r.shape)) for a, r in zip(args, call.result))


@implements(np.tile)
def _tile(call: Call, A: Any, reps: Any) -> Node:
    reps = tuple(int(r) for r in np.atleast_1d(reps))
    return call.op(torch.tile, A, reps)


@implements(np.repeat)
def _repeat(call: Call, a: Any, repeats: Any, axis: Any = None) -> Node:
    if is_array(repeats) and not isinstance(repeats, (TracedArray, TracedTensor)):
        repeats = [int(r) for r in np.ravel(repeats)]
        repeats = repeats[0] if len(repeats) == 1 else repeats
    dim = None if axis is None else int(axis) % a.ndim
    return call.op(np_repeat, a, repeats, dim)


def _pad_positions(n: int, before: int, after: int, mode: str) -> list[int]:
    """Source position of each padded element along one axis, NumPy's pad modes."""
    out = []
    for i in range(-before, n + after):
        if mode == "edge":
            j = min(max(i, 0), n - 1)
        elif mode == "wrap":
            j = i % n
        elif mode == "reflect":
            period = 2 * (n - 1) if n > 1 else 1
            j = i % period if n > 1 else 0
            j = period - j if j >= n else j
        else:  # symmetric
            period = 2 * n
            j = i % period
            j = period - 1 - j if j >= n else j
        out.append(j)
    return out


@implements(np.pad)
def _pad(call: Call, array: Any, pad_width: Any, mode: str = "constant", **kw: Any) -> Any:
    ndim = array.ndim
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (ndim, 2))
    if mode == "constant":
        value = kw.get("constant_values", 0)
        if np.ndim(value) != 0 or set(kw) - {"constant_values"}:
            return None
        flat: list[int] = []
        for before, after in reversed(widths.tolist()):
            flat += [int(before), int(after)]
        fill = np.asarray(value).astype(array.dtype).item()
        return call.op(F.pad, array, flat, "constant", fill)
    if mode not in ("edge", "reflect", "symmetric", "wrap") or kw.get("reflect_type", "even") != (
        "even"
    ):
        return None
    node = call.n(array)
    for dim, (before, after) in enumerate(widths.tolist()):
        if before or after:
            index = _pad_positions(array.shape[dim], int(before), int(after), mode)
            node = call.rec.call(np_take_index, (node, dim, index))
    return node
