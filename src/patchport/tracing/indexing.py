"""Indexing recorded as torch: ``a[index]`` reads, and ``a[index] = v`` writes recorded
functionally (the graph gets a copy of the base with the values put in).

Torch indexing follows NumPy's rules except that it has no negative-step slices; those
dimensions are flipped first and indexed with the equivalent positive slice.
"""

from __future__ import annotations

import copy
import operator
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from .data_sized import is_mask_index
from .dtypes import dtype_of, torch_dtype
from .values import TracedArray, arg_of, contains_traced, plain_tree

if TYPE_CHECKING:
    from torch import fx

    from .recorder import Recorder


def index_put(base: torch.Tensor, index: Any, value: Any) -> torch.Tensor:
    """Return a copy of ``base`` with ``base[index] = value`` (NumPy casting to base dtype)."""
    if base.is_complex() and base.dtype in (torch.complex64, torch.complex128):
        return _complex_index_put(base, index, value)
    out = base.clone()
    if isinstance(value, torch.Tensor):
        value = cast_complex(value, out.dtype) if value.is_complex() else value.to(out.dtype)
    out[index] = value
    return out


def _complex_index_put(base: torch.Tensor, index: Any, value: Any) -> torch.Tensor:
    """``index_put`` on a complex buffer, written on its (..., 2) real view: ONNX export has
    no complex setitem or complex cast (an FFT stored frame by frame into a complex64
    buffer, as transformers' spectrogram does); the same values on every backend."""
    if isinstance(value, torch.Tensor):
        value = cast_complex(
            value.to(torch.complex128) if not value.is_complex() else value, base.dtype
        )
    else:
        value = torch.tensor(value, dtype=base.dtype)
    out = torch.view_as_real(base).clone()
    out[_expand_index(index, base.ndim) + (slice(None),)] = torch.view_as_real(value.resolve_conj())
    return torch.view_as_complex(out)


def cast_complex(value: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """``value.to(dtype)`` for a complex ``value``; between complex dtypes as a cast of its
    real and imaginary parts (the same rounding), which ONNX export converts where a
    complex-to-complex ``_to_copy`` has no translation (a complex128 FFT stored into a
    complex64 buffer)."""
    if dtype.is_complex and value.dtype != dtype:
        real = torch.float32 if dtype == torch.complex64 else torch.float64
        if value.dtype in (torch.complex64, torch.complex128) and dtype != torch.complex32:
            return torch.view_as_complex(torch.view_as_real(value).to(real))
    return value.to(dtype)


def inline_index_puts(module: fx.GraphModule) -> fx.GraphModule:
    """A copy of ``module`` with each ``index_put`` call written out as clone, cast and
    ``out[index] = value``: TorchScript then types every index from its own literal, where
    the one ``index_put(base, index: Any, value: Any)`` cannot be compiled."""
    from torch import fx

    graph = copy.deepcopy(module.graph)
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target is not index_put:
            continue
        base, index, value = node.args
        with graph.inserting_before(node):
            out = graph.call_method("clone", (base,))
            if isinstance(value, fx.Node):  # a tensor (plain numbers are literals)
                dtype = graph.call_function(getattr, (out, "dtype"))
                value = graph.call_method("to", (value, dtype))
            graph.call_function(operator.setitem, (out, index, value))
        node.replace_all_uses_with(out)
        graph.erase_node(node)
    return fx.GraphModule(module, graph)


def _expand_index(index: Any, ndim: int) -> tuple:
    """Return the index as a tuple with any Ellipsis replaced by full slices."""
    items = index if isinstance(index, tuple) else (index,)
    used = 0
    for item in items:
        if item is None or item is Ellipsis:
            continue
        if isinstance(item, (np.ndarray, torch.Tensor)) and item.dtype in (np.bool_, torch.bool):
            used += item.ndim
        else:
            used += 1
    out: list[Any] = []
    seen_ellipsis = False
    for item in items:
        if item is Ellipsis and not seen_ellipsis:
            out.extend([slice(None)] * (ndim - used))
            seen_ellipsis = True
        else:
            out.append(item)
    return tuple(out)


def split_negative_steps(index: Any, shape: tuple[int, ...]) -> tuple[Any, tuple[int, ...]]:
    """Rewrite negative-step slices for torch: return (index on flipped data, dims to flip)."""
    items = index if isinstance(index, tuple) else (index,)
    if not any(type(i) is slice and i.step is not None and i.step < 0 for i in items):
        return index, ()
    items = _expand_index(index, len(shape))
    dim = 0
    flips: list[int] = []
    out: list[Any] = []
    for item in items:
        if item is None:
            out.append(item)
            continue
        if type(item) is slice and item.step is not None and item.step < 0:
            n = shape[dim]
            start, stop, step = item.indices(n)
            # position p in the original is n-1-p once the dimension is flipped
            out.append(slice(n - 1 - start, n - 1 - stop, -step))
            flips.append(dim)
            dim += 1
            continue
        is_mask = getattr(item, "dtype", None) in (np.bool_, torch.bool)
        dim += item.ndim if is_mask else 1
        out.append(item)
    return tuple(out), tuple(flips)


def is_basic_numpy_index(index: Any) -> bool:
    """Whether a NumPy index makes a view (ints, slices, ``...``, ``None``)."""
    items = index if isinstance(index, tuple) else (index,)
    return all(
        i is None or i is Ellipsis or type(i) in (int, slice) or isinstance(i, np.integer)
        for i in items
    )


def _numpy_index_arg(rec: Recorder, index: Any) -> Any:
    """Graph form of a NumPy index: int arrays as int64, NumPy scalars as Python ints."""
    items = index if isinstance(index, tuple) else (index,)
    out = []
    for item in items:
        if isinstance(item, (np.ndarray, torch.Tensor)):
            dt = dtype_of(item)
            node = arg_of(rec, item)
            if dt.kind in "iu" and dt != np.int64:
                node = rec.cast(node, torch.int64)
            out.append(node)
        elif isinstance(item, np.integer):
            out.append(int(item))
        elif isinstance(item, np.bool_):
            out.append(bool(item))
        elif isinstance(item, list) and contains_traced((item,)):
            out.append(_stacked_positions(rec, item))
        else:
            out.append(arg_of(rec, item))
    return tuple(out) if isinstance(index, tuple) else out[0]


def _stacked_positions(rec: Recorder, items: list) -> Any:
    """A list of positions holding traced integers (``v[[i, j]]``), one int64 array as
    NumPy reads it: stacked in the graph (torch would take the list for a tuple)."""
    nodes = []
    for item in items:
        if isinstance(item, list):
            nodes.append(_stacked_positions(rec, item))
        elif isinstance(item, (np.ndarray, torch.Tensor)):
            node = arg_of(rec, item)
            nodes.append(node if dtype_of(item) == np.int64 else rec.cast(node, torch.int64))
        else:
            nodes.append(rec.call(torch.full, ((), int(item)), {"dtype": torch.int64}))
    return rec.call(torch.stack, (nodes,))


def _is_scalar_index(item: Any) -> bool:
    """A 0-d integer array or tensor in an index: torch would read its value by ``.item()``,
    a data-dependent guard torch.export refuses when the value is traced."""
    return (
        isinstance(item, (np.ndarray, torch.Tensor))
        and item.ndim == 0
        and dtype_of(item).kind in "iu"
    )


def _is_integer(item: Any) -> bool:
    return isinstance(item, (int, np.integer)) and not isinstance(item, (bool, np.bool_))


def _is_basic_item(item: Any) -> bool:
    return item is None or type(item) is slice or _is_integer(item)


def _one_element_index(rec: Recorder, index: Any, shape: tuple) -> tuple[tuple, int] | None:
    """An index of ints, slices and 0-d integer arrays (one at least) as advanced indexing
    by one-element int64 tensors (negatives wrapped), and the axis where their size-1 result
    axis lands (NumPy's rule: in place when they are adjacent, else first); None for any
    other index."""
    raw = index if isinstance(index, tuple) else (index,)
    if not any(_is_scalar_index(i) for i in raw):  # the common case: one pass, no copy
        return None
    items = _expand_index(index, len(shape))
    if not all(_is_basic_item(i) or _is_scalar_index(i) for i in items):
        return None
    out: list[Any] = []
    positions = []
    dim = 0
    for k, item in enumerate(items):
        if item is None or type(item) is slice:
            out.append(item)
            dim += item is not None
            continue
        size = int(shape[dim])
        if _is_integer(item):
            value = int(item) + (size if int(item) < 0 else 0)
            node = rec.call(torch.full, ((1,), value), {"dtype": torch.int64})
        else:
            node = arg_of(rec, item)
            if dtype_of(item) != np.int64:
                node = rec.cast(node, torch.int64)
            node = rec.call(torch.remainder, (node, size))  # NumPy's negative positions
            node = rec.call(torch.reshape, (node, (1,)))
        out.append(node)
        positions.append(k)
        dim += 1
    adjacent = positions == list(range(positions[0], positions[-1] + 1))
    lands = sum(1 for i in items[: positions[0]] if i is None or type(i) is slice)
    return tuple(out), lands if adjacent else 0


def record_getitem(rec: Recorder, base: Any, index: Any) -> fx.Node:
    """Record ``base[index]``: NumPy semantics for a traced array (negative steps via
    flips), torch's for a tensor; an index holding traced integers as one-element advanced
    indexing (see :func:`_one_element_index`)."""
    call = rec.call_sized_by_data if is_mask_index(index) else rec.call
    if type(base) is not TracedArray:
        by_scalars = _one_element_index(rec, index, tuple(base.shape))
        if by_scalars is not None:
            picked = call(operator.getitem, (arg_of(rec, base), by_scalars[0]))
            return rec.call(torch.squeeze, (picked, by_scalars[1]))
        return call(operator.getitem, (arg_of(rec, base), arg_of(rec, index)))
    index2, flips = split_negative_steps(index, base.shape)
    node = arg_of(rec, base)
    if flips:
        node = rec.call(torch.flip, (node, flips))
    by_scalars = _one_element_index(rec, index2, tuple(base.shape))
    if by_scalars is not None:
        picked = call(operator.getitem, (node, by_scalars[0]))
        return rec.call(torch.squeeze, (picked, by_scalars[1]))
    return call(operator.getitem, (node, _numpy_index_arg(rec, index2)))


def _covers_all(index: Any) -> bool:
    """Whether a NumPy index selects every element once: ``...``, ``:`` per axis."""
    items = index if isinstance(index, tuple) else (index,)
    return all(i is Ellipsis or _is_full_slice(i) for i in items)


def _is_full_slice(item: Any) -> bool:
    """``:``, compared by identity: ``==`` would compare traced bounds elementwise."""
    return type(item) is slice and item.start is None and item.stop is None and item.step is None


def record_setitem(rec: Recorder, base: Any, index: Any, value: Any) -> fx.Node:
    """Record ``base[index] = value`` functionally; returns the node of the new base.

    A write of every element (``a[...] = v``, ``a[:] = v``) does not depend on the old
    content: the new base is ``v`` broadcast, so an output overwritten with constant data
    is not counted as depending on the inputs."""
    if type(base) is TracedArray and _covers_all(index) and base.ndim:
        shape = tuple(base.shape)
        dtype = torch_dtype(base.dtype)
        if isinstance(value, (np.ndarray, torch.Tensor)):
            val = rec.cast(arg_of(rec, value), dtype)
            return rec.call(torch.broadcast_to, (val, shape))
        if not isinstance(value, (list, tuple)):
            fill = np.asarray(value).astype(base.dtype).item()
            return rec.call(torch.full, (shape, fill), {"dtype": dtype})
    if type(base) is not TracedArray:
        val = arg_of(rec, value)
        by_scalars = _one_element_index(rec, index, tuple(base.shape))
        if by_scalars is not None:
            val = _value_at_one_element(rec, base, index, value, val, by_scalars[1])
            return rec.call(index_put, (arg_of(rec, base), by_scalars[0], val))
        return rec.call(index_put, (arg_of(rec, base), arg_of(rec, index), val))
    index2, flips = split_negative_steps(index, base.shape)
    node = arg_of(rec, base)
    if flips:
        node = rec.call(torch.flip, (node, flips))
    if isinstance(value, (np.ndarray, torch.Tensor)):
        val = arg_of(rec, value)
    elif isinstance(value, (list, tuple)):
        # a list holding traced scalars (``buf[0, 7:10] = [y, z, w + z]``) is stacked in the
        # graph by the session's np.asarray; a list of plain numbers is a constant
        value = _list_value(value, base.dtype)
        val = arg_of(rec, value)
    else:
        val = np.asarray(value).astype(base.dtype).item()
    by_scalars = _one_element_index(rec, index2, tuple(base.shape))
    if by_scalars is not None:
        val = _value_at_one_element(rec, base, index, value, val, by_scalars[1])
        graph_index = by_scalars[0]
    else:
        graph_index = _numpy_index_arg(rec, index2)
    node = rec.call(index_put, (node, graph_index, val))
    if flips:
        node = rec.call(torch.flip, (node, flips))
    return node


def _traced_bound(item: Any) -> bool:
    return isinstance(item, (np.ndarray, torch.Tensor)) and contains_traced((item,))


def bounded_slice_write(index: Any, value: Any) -> bool:
    """Whether ``a[index] = value`` writes a number into one slice whose start or stop is
    traced (``out[b, n:] = 0``), the other items being ints, 0-d integers, ``:`` spans
    with plain bounds or ``None``: a write of a fixed shape, recorded as a masked one."""
    if isinstance(value, (np.ndarray, torch.Tensor)) and value.ndim:
        return False
    if not isinstance(value, (int, float, bool, np.generic, np.ndarray, torch.Tensor)):
        return False
    items = index if isinstance(index, tuple) else (index,)
    bounded = [
        i for i in items if type(i) is slice and (_traced_bound(i.start) or _traced_bound(i.stop))
    ]
    if len(bounded) != 1 or _traced_bound(bounded[0].step) or bounded[0].step not in (None, 1):
        return False
    others = (i for i in items if i is not bounded[0])
    return all(
        i is Ellipsis or _is_scalar_index(i) or (_is_basic_item(i) and not _has_traced_bound(i))
        for i in others
    )


def _has_traced_bound(item: Any) -> bool:
    return type(item) is slice and any(_traced_bound(b) for b in (item.start, item.stop, item.step))


def plain_bounds(index: Any) -> Any:
    """``index`` with traced slice bounds as the Python ints they hold (no loss reported:
    the caller records the write with the bounds in the graph)."""
    items = index if isinstance(index, tuple) else (index,)

    def number(bound: Any) -> Any:
        return int(plain_tree(bound)) if _traced_bound(bound) else bound

    out = tuple(
        slice(number(i.start), number(i.stop), i.step) if type(i) is slice else i for i in items
    )
    return out if isinstance(index, tuple) else out[0]


def _slice_bound(rec: Recorder, bound: Any, size: int, default: int) -> Any:
    """A slice bound as NumPy resolves it on an axis of ``size``: negatives counted from
    the end, then clamped to [0, size]; a graph node for a traced bound."""
    if bound is None:
        return default
    if not _traced_bound(bound):
        value = int(bound)
        return min(max(value + size if value < 0 else value, 0), size)
    node = arg_of(rec, bound)
    if dtype_of(bound) != np.int64:
        node = rec.cast(node, torch.int64)
    negative = rec.call(operator.lt, (node, 0))
    node = rec.call(torch.where, (negative, rec.call(operator.add, (node, size)), node))
    return rec.call(torch.clamp, (node, 0, size))


def record_bounded_write(rec: Recorder, base: Any, index: Any, value: Any) -> fx.Node:
    """Record ``base[index] = value`` for :func:`bounded_slice_write`: the span's axis of
    ``base[index with that slice as :]`` is compared with the traced bounds, the value
    put where the mask holds, and that part written back; returns the new base's node."""
    items = _expand_index(index, base.ndim)
    k = next(i for i, item in enumerate(items) if type(item) is slice and _has_traced_bound(item))
    span = items[k]
    source_dim = sum(1 for item in items[:k] if item is not None)
    axis = sum(1 for item in items[:k] if item is None or type(item) is slice)
    size = int(base.shape[source_dim])
    whole = (*items[:k], slice(None), *items[k + 1 :])
    part = record_getitem(rec, base, whole)
    cells = np.ndarray.view(base, np.ndarray)[plain_tree(whole)].shape
    positions = rec.call(torch.arange, (size,))
    low = _slice_bound(rec, span.start, size, 0)
    high = _slice_bound(rec, span.stop, size, size)
    inside = rec.call(
        operator.and_,
        (rec.call(operator.ge, (positions, low)), rec.call(operator.lt, (positions, high))),
    )
    shape = [1] * len(cells)
    shape[axis] = size
    inside = rec.call(torch.reshape, (inside, tuple(shape)))
    dtype = torch_dtype(base.dtype)
    if isinstance(value, (np.ndarray, torch.Tensor)):
        val = rec.cast(arg_of(rec, value), dtype)
    else:
        val = rec.call(
            torch.full, ((), np.asarray(value).astype(base.dtype).item()), {"dtype": dtype}
        )
    updated = rec.call(torch.where, (inside, val, part))
    node = arg_of(rec, base)
    by_scalars = _one_element_index(rec, whole, tuple(base.shape))
    if by_scalars is None:
        return rec.call(index_put, (node, _numpy_index_arg(rec, whole), updated))
    updated = rec.call(torch.unsqueeze, (updated, by_scalars[1]))
    return rec.call(index_put, (node, by_scalars[0], updated))


def _value_at_one_element(rec: Recorder, base: Any, index: Any, value: Any, val: Any, dim: int):
    """The written value shaped for :func:`_one_element_index`'s cells: broadcast to what
    ``base[index]`` reads (NumPy's rule), then the size-1 advanced axis put in at ``dim``."""
    if not isinstance(value, (np.ndarray, torch.Tensor)) or value.ndim == 0:
        return val  # a number or 0-d value broadcasts to any cells
    if isinstance(base, torch.Tensor):
        with torch._C.DisableTorchFunctionSubclass():
            cells = tuple(base.detach().as_subclass(torch.Tensor)[plain_tree(index)].shape)
    else:
        cells = np.ndarray.view(base, np.ndarray)[plain_tree(index)].shape
    val = rec.call(torch.broadcast_to, (val, tuple(cells)))
    return rec.call(torch.unsqueeze, (val, dim))


def _list_value(value: list | tuple, dtype: Any) -> Any:
    """A written list as an array: traced when it holds traced data (a session's
    ``np.asarray`` records the stack), else a plain constant."""
    if contains_traced((value,)):
        stacked = np.asarray(value, dtype=dtype)
        if type(stacked) is TracedArray:
            return stacked
    return np.asarray(plain_tree(value), dtype=dtype)
