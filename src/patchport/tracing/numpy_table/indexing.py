"""Indexing, selection, sorting and searching, and the functions that write in place."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from ..dtypes import dtype_of
from ..loss import report_loss
from ..values import active_recorder
from .calls import Call, handler_table, is_array, plain_data
from .targets import (
    np_argsort,
    np_place,
    np_put,
    np_put_along_axis,
    np_searchsorted,
    np_sort,
    np_ufunc_at,
    np_wrap_index,
)

HANDLERS: dict[Callable, Callable] = {}
implements = handler_table(HANDLERS)


@implements(np.take)
def _take(
    call: Call, a: Any, indices: Any, axis: Any = None, out: Any = None, mode: str = "raise"
) -> Any:
    if mode not in ("raise", "clip", "wrap"):
        return None
    src = call.op(torch.reshape, a, (-1,)) if axis is None else call.n(a)
    dim = 0 if axis is None else int(axis) % a.ndim
    n = a.size if axis is None else a.shape[dim]
    idx = call.t(np.asarray(indices) if not is_array(indices) else indices, np.int64)
    if mode == "clip":  # NumPy clips negative indices to 0 too
        idx = call.rec.call(torch.clamp, (idx, 0, n - 1))
    elif mode == "wrap":
        idx = call.rec.call(torch.remainder, (idx, n))
    else:
        idx = call.rec.call(np_wrap_index, (idx, n))
    flat = call.rec.call(torch.reshape, (idx, (-1,)))
    node = call.rec.call(torch.index_select, (src, dim, flat))
    return call.rec.call(torch.reshape, (node, tuple(call.result.shape)))


@implements(np.take_along_axis)
def _take_along_axis(call: Call, arr: Any, indices: Any, axis: Any = -1) -> Any:
    if axis is None:
        return None
    dim = int(axis) % arr.ndim
    idx = call.rec.call(np_wrap_index, (call.t(indices, np.int64), arr.shape[dim]))
    return call.rec.call(torch.take_along_dim, (call.n(arr), idx, dim))


@implements(np.where)
def _where(call: Call, condition: Any, x: Any = None, y: Any = None) -> Any:
    if x is None and y is None:
        return _nonzero(call, condition)
    cond = call.t(condition, bool)
    return call.rec.call(torch.where, (cond, call.t(x), call.t(y)))


@implements(np.nonzero)
def _nonzero(call: Call, a: Any) -> Any:
    node = call.op(torch.nonzero, a, as_tuple=True)
    return tuple(call.rec.call(operator.getitem, (node, i)) for i in range(len(call.result)))


@implements(np.argwhere)
def _argwhere(call: Call, a: Any) -> Any:
    return call.op(torch.argwhere, a)


@implements(np.flatnonzero)
def _flatnonzero(call: Call, a: Any) -> Any:
    flat = call.op(torch.reshape, a, (-1,))
    return call.rec.call(torch.flatten, (call.rec.call(torch.nonzero, (flat,)),))


@implements(np.unravel_index)
def _unravel_index(call: Call, indices: Any, shape: Any, order: str = "C") -> Any:
    """Flat indices to one index array per axis of ``shape`` (heatmap peaks from an
    argmax): floor division by the axis's stride, then remainder by its size (the
    slowest axis is not wrapped: NumPy rejects indices past the end anyway)."""
    dims = [int(d) for d in (shape if isinstance(shape, (tuple, list)) else (shape,))]
    if order not in ("C", "F"):
        return None
    flat = call.t(np.asarray(indices) if not is_array(indices) else indices, np.int64)
    axes = list(range(len(dims))) if order == "F" else list(reversed(range(len(dims))))
    nodes: list[Any] = [None] * len(dims)
    stride = 1
    for position, axis in enumerate(axes):
        node = flat if stride == 1 else call.rec.call(torch.floor_divide, (flat, stride))
        if position < len(axes) - 1:
            node = call.rec.call(torch.remainder, (node, dims[axis]))
        nodes[axis] = node
        stride *= dims[axis]
    return tuple(nodes)


@implements(np.select)
def _select(call: Call, condlist: Any, choicelist: Any, default: Any = 0) -> Any:
    shape = tuple(call.result.shape)
    node = call.rec.call(torch.broadcast_to, (call.t(default), shape))
    for cond, choice in reversed(list(zip(condlist, choicelist))):
        node = call.rec.call(torch.where, (call.t(cond, bool), call.t(choice), node))
    return node


_TIES = (
    "which of the tied elements NumPy's {how} puts first is its implementation's choice, "
    "not the index order the exported model uses, so the indices and what they select may "
    'differ on new data; use np.argsort(..., kind="stable"), which orders ties by index '
    "as the export does"
)
# NumPy sorts and selects runs this short by insertion and selection: ties keep index order
_SHORT = 16


def _lanes(values: np.ndarray, axis: Any) -> np.ndarray:
    """``values`` as (lanes, length) rows along ``axis`` (None: flattened)."""
    if values.ndim == 0:
        return values.reshape(1, 1)
    if axis is None:
        return values.reshape(1, -1)
    moved = np.moveaxis(values, int(axis) % values.ndim, -1)
    return moved.reshape(-1, moved.shape[-1])


def _tie_order(call: Call, a: Any, axis: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """(NumPy's indices, the index-ordered ones) as lanes when the sample holds tied values
    along ``axis``, else None (distinct values have one order)."""
    if active_recorder(a) is not call.rec:
        return None
    data = _lanes(plain_data(a), axis)
    ordered = np.sort(data, axis=-1)
    if data.shape[-1] < 2 or not (ordered[:, 1:] == ordered[:, :-1]).any():
        return None
    chosen = _lanes(np.asarray(plain_data(call.result)), axis)
    return chosen, np.argsort(data, axis=-1, kind="stable")


def _warn_ties(call: Call, function: str, how: str, where: str) -> None:
    report_loss(
        call.rec,
        f"np.{function} of traced data with tied values {where}",
        _TIES.format(how=how),
    )


@implements(np.argsort)
def _argsort(
    call: Call, a: Any, axis: Any = -1, kind: Any = None, order: Any = None, **kw: Any
) -> Any:
    if order is not None:
        return None
    dim = None if axis is None else int(axis) % a.ndim
    stable = kind in ("stable", "mergesort") or kw.get("stable") is True
    ties = None if stable else _tie_order(call, a, axis)
    if ties is not None:  # the export orders ties by index: NumPy may not, warned
        if ties[0].shape[-1] > _SHORT or not np.array_equal(*ties):
            _warn_ties(call, "argsort", "unstable sort", '(kind is not "stable")')
        stable = True
    return call.op(np_argsort, a, dim, stable)


@implements(np.sort)
def _sort(
    call: Call, a: Any, axis: Any = -1, kind: Any = None, order: Any = None, **kw: Any
) -> Any:
    if order is not None:
        return None
    dim = None if axis is None else int(axis) % a.ndim
    return call.op(np_sort, a, dim)


@implements(np.partition)
def _partition(
    call: Call, a: Any, kth: Any, axis: Any = -1, kind: str = "introselect", order: Any = None
) -> Any:
    return _partitioned(call, a, axis, order, indices=False)


@implements(np.argpartition)
def _argpartition(
    call: Call, a: Any, kth: Any, axis: Any = -1, kind: str = "introselect", order: Any = None
) -> Any:
    ties = None if order is not None else _tie_order(call, a, axis)
    if ties is None:
        return _partitioned(call, a, axis, order, indices=True)
    chosen, ordered = ties  # the export's partition: the index-ordered sort
    for k in np.atleast_1d(np.asarray(plain_data(kth))).reshape(-1):
        k = int(k) % chosen.shape[-1]
        same = np.array_equal(chosen[:, k], ordered[:, k]) and np.array_equal(
            np.sort(chosen[:, :k], axis=-1), np.sort(ordered[:, :k], axis=-1)
        )
        # which index sits at k, and on which side, is NumPy's own pick where ties meet
        # there: on this sample, or on new data along a long axis with ties
        if chosen.shape[-1] > _SHORT or not same:
            _warn_ties(call, "argpartition", "introselect", f"(kth={k})")
            break
    return call.op(np_argsort, a, None if axis is None else int(axis) % a.ndim, True)


def _partitioned(call: Call, a: Any, axis: Any, order: Any, indices: bool) -> Any:
    """A partition is recorded as a full sort: a valid partition for every ``kth``. NumPy
    leaves the order inside each partition unspecified, so an output that depends on it
    may differ from NumPy's (compile_graph's replay of the traced samples shows it)."""
    if order is not None:
        return None
    dim = None if axis is None else int(axis) % a.ndim
    if indices:
        return call.op(np_argsort, a, dim, False)
    return call.op(np_sort, a, dim)


@implements(np.searchsorted)
def _searchsorted(call: Call, a: Any, v: Any, side: str = "left", sorter: Any = None) -> Any:
    if sorter is not None:
        return None
    common = np.result_type(dtype_of(a), dtype_of(v) if is_array(v) else np.asarray(v).dtype)
    return call.rec.call(np_searchsorted, (call.t(a, common), call.t(v, common), side == "right"))


@implements(np.digitize)
def _digitize(call: Call, x: Any, bins: Any, right: bool = False) -> Any:
    b = np.asarray(plain_data(bins))
    common = np.result_type(dtype_of(x), dtype_of(bins))
    xs, bs = call.t(x, common), call.t(bins, common)
    if b.size > 1 and b[0] > b[-1]:  # decreasing bins: mirror the increasing case
        flipped = call.rec.call(torch.flip, (bs, (0,)))
        pos = call.rec.call(np_searchsorted, (flipped, xs, not right))
        return call.done(call.rec.call(torch.rsub, (pos, b.size)), np.int64)
    return call.done(call.rec.call(np_searchsorted, (bs, xs, not right)), np.int64)


# functions writing their first argument in place -> handler giving its new node (or None)
INPLACE_HANDLERS: dict[Callable, Callable] = {}
writes = handler_table(INPLACE_HANDLERS)


@writes(np.copyto)
def _copyto(call: Call, dst: Any, src: Any, casting: str = "same_kind", where: Any = True) -> Any:
    node = call.rec.call(torch.broadcast_to, (call.t(src, dst.dtype), tuple(dst.shape)))
    if where is True:
        return node
    return call.rec.call(torch.where, (call.t(where, bool), node, call.n(dst)))


@writes(np.put)
def _put(call: Call, a: Any, ind: Any, v: Any, mode: str = "raise") -> Any:
    n_index = int(np.size(ind))
    if mode != "raise" or int(np.size(v)) not in (1, n_index):
        return None  # NumPy repeats a shorter v cyclically: not mapped
    index = call.t(np.asarray(ind) if not is_array(ind) else ind, np.int64)
    index = call.rec.call(np_wrap_index, (call.rec.call(torch.reshape, (index, (-1,))), a.size))
    values = call.rec.call(torch.reshape, (call.t(v, a.dtype), (-1,)))
    return call.rec.call(np_put, (call.n(a), index, values))


@writes(np.put_along_axis)
def _put_along_axis(call: Call, arr: Any, indices: Any, values: Any, axis: Any) -> Any:
    """``np.put_along_axis`` (a logits processor's scatter back): values broadcast to the
    indices' cells, negative indices wrapped; ``axis=None`` is not mapped."""
    if axis is None:
        return None
    dim = int(axis) % arr.ndim
    rec = call.rec
    index = rec.call(np_wrap_index, (call.t(indices, np.int64), arr.shape[dim]))
    return rec.call(np_put_along_axis, (call.n(arr), index, call.t(values, arr.dtype), dim))


@writes(np.putmask)
def _putmask(call: Call, a: Any, mask: Any, values: Any) -> Any:
    if int(np.size(values)) not in (1, a.size):
        return None  # NumPy repeats a shorter values array cyclically: not mapped
    full = call.rec.call(torch.reshape, (call.t(values, a.dtype), (-1,)))
    full = call.rec.call(torch.reshape, (full, tuple(a.shape) if np.size(values) > 1 else ()))
    return call.rec.call(torch.where, (call.t(mask, bool), full, call.n(a)))


@writes(np.place)
def _place(call: Call, arr: Any, mask: Any, vals: Any) -> Any:
    if int(np.size(vals)) == 0:
        return None  # NumPy refuses it when the mask holds a True
    values = call.t(vals if is_array(vals) else np.asarray(vals), arr.dtype)
    values = call.rec.call(torch.reshape, (values, (-1,)))
    return call.rec.call(np_place, (call.n(arr), call.t(mask, bool), values))


# ufunc -> (scatter_reduce mode, whether values are negated first) for ``ufunc.at``
_AT_REDUCTIONS: dict[np.ufunc, tuple[str, bool]] = {
    np.add: ("sum", False),
    np.subtract: ("sum", True),
    np.multiply: ("prod", False),
    np.maximum: ("amax", False),
    np.minimum: ("amin", False),
}


def record_ufunc_at(call: Call, ufunc: np.ufunc, a: Any, indices: Any, b: Any = None) -> Any:
    """The node of ``a`` after ``ufunc.at(a, indices, b)`` (None: not mapped, a loss).

    Mapped: the combining ufuncs of ``_AT_REDUCTIONS`` with integer index arrays or ints
    for the leading dims (traced or not); slices, masks and unary ufuncs are not.
    """
    spec = _AT_REDUCTIONS.get(ufunc)
    if spec is None or b is None or a.dtype.kind not in "iuf":
        return None
    parts = indices if isinstance(indices, tuple) else (indices,)
    if not parts or len(parts) > a.ndim:
        return None
    index_nodes = []
    for part in parts:
        part = np.asarray(part) if isinstance(part, list) else part
        if is_array(part):
            if np.dtype(part.dtype).kind not in "iu":
                return None
        elif not isinstance(part, (int, np.integer)) or isinstance(part, bool):
            return None
        index_nodes.append(call.t(part, np.int64))
    reduce, negate = spec
    values = call.t(b, a.dtype)
    if negate:
        values = call.rec.call(torch.neg, (values,))
    return call.rec.call(np_ufunc_at, (call.n(a), index_nodes, values, reduce))
