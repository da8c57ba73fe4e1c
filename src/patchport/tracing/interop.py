"""NumPy <-> torch conversions that keep traced data traced.

``torch.from_numpy``, ``torch.as_tensor``, ``torch.tensor``, ``np.asarray``, ``np.array``,
``np.ascontiguousarray`` and ``np.frombuffer`` are C functions that would silently drop the
trace (the last three also read a traced array's memory through a ``memoryview``). This
module provides traced replacements (``REPLACEMENTS``) and :func:`interop_patch_infos`,
the PatchInfo objects a session installs; :func:`interop_patches` applies the same ones
for a block (the engine's tests and benchmarks).
"""

from __future__ import annotations

import contextlib
import inspect
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np
import torch

from ..patching import PatchDetails, PatchFamily, PatchInfo
from ..patching.source_diff import wraps_original
from .dtypes import (
    HELD_AS_INT64,
    NP_TO_TORCH,
    real_torch_dtype,
    to_numpy_side,
    to_torch_side,
    torch_dtype,
    wrap_unsigned,
)
from .fresh import REPLACEMENTS as CREATION_REPLACEMENTS
from .fresh import copied_by_user, made_by_user
from .fresh_tensors import REPLACEMENTS as TENSOR_CREATION_REPLACEMENTS
from .loss import report_loss
from .recorder import _ACTIVE_COUNT
from .size_ranges import REPLACEMENTS as ARANGE_REPLACEMENTS
from .values import TracedArray, TracedTensor, active_recorder, find_recorder, make_traced, plain

_ORIGINALS: dict[str, Callable] = {
    "torch.from_numpy": torch.from_numpy,
    "torch.as_tensor": torch.as_tensor,
    "torch.tensor": torch.tensor,
    "np.asarray": np.asarray,
    "np.array": np.array,
    "np.ascontiguousarray": np.ascontiguousarray,
    "np.frombuffer": np.frombuffer,
}


# argument types that never stand in for a traced array (no attribute lookup for them)
_NOT_CARRIERS = frozenset(
    {np.ndarray, TracedArray, TracedTensor, torch.Tensor, list, tuple, dict, int, float, bool}
    | {str, bytes, memoryview, type(None), complex}
)


def _traced_to_tensor(rec: Any, value: Any, result: torch.Tensor) -> torch.Tensor:
    node = value._pp.node
    if isinstance(value, torch.Tensor):
        source = value.dtype
    else:
        node = to_torch_side(rec, node, value.dtype)
        source = real_torch_dtype(value.dtype)
    if result.dtype != source:
        node = rec.cast(node, result.dtype)
    return make_traced(rec, result, node)


def from_numpy(array: Any) -> torch.Tensor:
    """``torch.from_numpy`` that keeps a traced array traced (shares memory, like the original)."""
    rec = active_recorder(array)
    if rec is None or type(array) is not TracedArray:
        return _ORIGINALS["torch.from_numpy"](array)
    result = _ORIGINALS["torch.from_numpy"](np.ndarray.view(array, np.ndarray))
    return make_traced(rec, result, to_torch_side(rec, array._pp.node, array.dtype))


def carried_array(value: Any) -> Any:
    """The traced array an object stands in for (a traced PIL image: its class defines
    ``__pp_array__(self)``, the array NumPy would read from it, or None once it holds no
    traced data), else None; plain values cost one type lookup."""
    kind = type(value)
    if kind in _NOT_CARRIERS or not _ACTIVE_COUNT[0]:
        return None
    carried = getattr(kind, "__pp_array__", None)
    return None if carried is None else carried(value)


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> torch.Tensor:
    """``torch.as_tensor`` that keeps traced arrays and tensors traced."""
    rec = active_recorder(data)
    original = _ORIGINALS["torch.as_tensor"]
    if rec is None:
        if type(data) in (list, tuple) and find_recorder(data) is not None:
            # a list is always copied: torch.tensor's traced stacking (torch's own C path
            # would read each traced array as a nested sequence and fail)
            return tensor(data, dtype=dtype, device=device)
        return original(data, dtype=dtype, device=device)
    with torch._C.DisableTorchFunctionSubclass():
        result = original(plain(data), dtype=dtype, device=device)
    return _traced_to_tensor(rec, data, result)


def tensor(data: Any, *args: Any, **kwargs: Any) -> torch.Tensor:
    """``torch.tensor`` (a copy) that keeps traced arrays and tensors traced."""
    rec = active_recorder(data)
    original = _ORIGINALS["torch.tensor"]
    if rec is None:
        rec = find_recorder(data) if isinstance(data, (list, tuple)) else None
        if rec is None:
            return original(data, *args, **kwargs)
        with torch._C.DisableTorchFunctionSubclass():
            result = original(_eager_tree(data), *args, **kwargs)
        node = _stack_tree(rec, data, result.dtype, numpy_side=False)
        if node is None:
            report_loss(rec, "torch.tensor() of a list holding traced values")
            return result
        return make_traced(rec, result, node)
    with torch._C.DisableTorchFunctionSubclass():
        result = original(plain(data), *args, **kwargs)
    return _traced_to_tensor(rec, data, result)


def _numpy_entry(name: str, fresh_tables: bool = False) -> Callable:
    """A traced ``np.asarray``-like entry; with ``fresh_tables``, a new array user code
    builds from Python lists is a fresh buffer (see fresh)."""
    original = _ORIGINALS[name]
    first = _first_parameter(original)  # np.array's is "object", np.asarray's "a"

    def replacement(*args: Any, **kwargs: Any) -> Any:
        if args and type(args[0]) is np.ndarray:  # plain data: never traced, NumPy's own
            return original(*args, **kwargs)
        if args:
            a, args = args[0], args[1:]
        elif first in kwargs:
            a = kwargs.pop(first)
        else:
            return original(*args, **kwargs)  # NumPy's own error for a missing argument
        rec = active_recorder(a)
        if rec is None:
            carried = carried_array(a)
            if carried is not None:  # np.asarray(image) of a traced PIL image stand-in
                return replacement(carried, *args, **kwargs)
        if rec is None and type(a) is memoryview and _traced_buffer(a) is not None:
            return replacement(_memory_of(a), *args, **kwargs)
        if rec is None and type(a) is deque and find_recorder(a) is not None:
            a = list(a)  # recent frames kept in a deque: NumPy reads it as the list of them
        if rec is None:
            rec = find_recorder(a) if isinstance(a, (list, tuple)) else None
            if rec is None:
                result = original(a, *args, **kwargs)
                if result is a:
                    return result
                if isinstance(a, np.ndarray):  # a fresh buffer not yet traced
                    return copied_by_user(a, result)
                if not fresh_tables:
                    return result
                return made_by_user(result)  # a table user code builds from a list
            eager = _eager_tree(a)
            result = original(eager, *args, **kwargs)
            node = None
            if isinstance(result, np.ndarray) and result.dtype in NP_TO_TORCH:
                node = _stack_tree(rec, a, torch_dtype(result.dtype), numpy_side=True)
            if node is None:
                report_loss(rec, f"{name}() of a list holding traced values")
                return result
            node = _leading_axes(rec, node, np.ndim(eager), result)
            return make_traced(rec, result, node)
        data = np.ndarray.view(a, np.ndarray) if type(a) is TracedArray else _tensor_numpy(a)
        result = original(data, *args, **kwargs)
        if not isinstance(result, np.ndarray):
            return result
        if result.dtype not in NP_TO_TORCH and result.dtype not in HELD_AS_INT64:
            report_loss(rec, f"{name}(..., dtype={result.dtype}) of traced data (no torch dtype)")
            return result
        node = a._pp.node
        if type(a) is TracedArray:
            if torch_dtype(result.dtype) != torch_dtype(a.dtype):
                node = rec.cast(node, torch_dtype(result.dtype))
            if result.dtype != a.dtype:
                node = wrap_unsigned(rec, node, result.dtype)
        else:
            if real_torch_dtype(result.dtype) != a.dtype:
                node = rec.cast(node, real_torch_dtype(result.dtype))
            node = to_numpy_side(rec, node, result.dtype)
        return make_traced(rec, result, _leading_axes(rec, node, a.ndim, result))

    return wraps_original(original)(replacement)


def _leading_axes(rec: Any, node: Any, ndim: int, result: np.ndarray) -> Any:
    """``node`` (of ``ndim`` axes) with the leading axes of size one that ``ndmin=``
    gave ``result`` (np.array's, and np.r_'s conversion of each item)."""
    for _ in range(result.ndim - ndim):
        node = rec.call(torch.unsqueeze, (node, 0))
    return node  # NumPy's name, doc, signature


def _traced_buffer(buffer: Any) -> TracedArray | None:
    """The active traced array whose memory ``buffer`` is: the array, or a memoryview of it
    (``memoryview(x)``, ``x.data``, a cast or slice of one)."""
    if type(buffer) is memoryview:
        try:
            buffer = buffer.obj
        except ValueError:  # released
            return None
    if type(buffer) is TracedArray and active_recorder(buffer) is not None:
        return buffer
    return None


def _memory_node(source: TracedArray, result: np.ndarray) -> Any:
    """Node of ``result``, a plain array over ``source``'s memory: the same array, or (for
    C-contiguous data) the same bytes read as another dtype from an item offset; else None."""
    rec = source._pp.rec
    base = np.ndarray.view(source, np.ndarray)
    start = result.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    same = (result.shape, result.strides, result.dtype) == (base.shape, base.strides, base.dtype)
    if start == 0 and same:
        return source._pp.node
    item = result.dtype.itemsize
    if not (base.flags.c_contiguous and result.flags.c_contiguous) or start % item:
        return None
    if start < 0 or start + result.nbytes > base.nbytes or base.nbytes % item:
        return None
    node = rec.call(torch.reshape, (to_torch_side(rec, source._pp.node, base.dtype), (-1,)))
    if result.dtype != base.dtype:
        node = rec.call("view", (node, real_torch_dtype(result.dtype)), None, "call_method")
    if start or result.size != base.nbytes // item:
        node = rec.call(torch.narrow, (node, 0, start // item, result.size))
    node = rec.call(torch.reshape, (node, result.shape))
    return to_numpy_side(rec, node, result.dtype)


def _memory_of(buffer: memoryview) -> Any:
    """``np.asarray(buffer)`` (no copy) traced as the bytes of the traced array under it."""
    source = _traced_buffer(buffer)
    result = _ORIGINALS["np.asarray"](buffer)
    node = _memory_node(source, result)
    if node is None:
        report_loss(source._pp.rec, "a memoryview of traced data read as an array")
        return result
    return make_traced(source._pp.rec, result, node)


def frombuffer(buffer: Any, *args: Any, **kwargs: Any) -> Any:
    """``np.frombuffer`` of a traced array (or a memoryview of one): the same bytes, traced."""
    source = _traced_buffer(buffer)
    original = _ORIGINALS["np.frombuffer"]
    if source is None:
        return original(buffer, *args, **kwargs)
    result = original(buffer, *args, **kwargs)
    node = _memory_node(source, result)
    if node is None:
        report_loss(source._pp.rec, "np.frombuffer() of traced data at this offset or layout")
        return result
    return make_traced(source._pp.rec, result, node)


def _first_parameter(function: Callable) -> str:
    """The name of ``function``'s first parameter, for keyword calls (``np.array(object=x)``)."""
    try:
        return next(iter(inspect.signature(function).parameters))
    except (StopIteration, TypeError, ValueError):
        return "a"


def _eager_tree(data: Any) -> Any:
    """Plain data of a nested list; traced NumPy scalars become NumPy scalars again."""
    if isinstance(data, (list, tuple)):
        return type(data)(_eager_tree(item) for item in data)
    if type(data) is TracedArray and data._pp.scalar:
        return np.ndarray.view(data, np.ndarray)[()]
    return plain(data)


def _stack_tree(rec: Any, data: Any, dtype: torch.dtype, numpy_side: bool) -> Any:
    """Graph node building nested lists of traced values and numbers by stacking; or None."""
    if isinstance(data, (list, tuple)):
        if not data:
            return None
        nodes = [_stack_tree(rec, item, dtype, numpy_side) for item in data]
        if any(n is None for n in nodes):
            return None
        return rec.call(torch.stack, (nodes, 0))
    if type(data) is TracedArray and active_recorder(data) is rec:
        node, have = data._pp.node, torch_dtype(data.dtype)
        if not numpy_side:
            node, have = to_torch_side(rec, node, data.dtype), real_torch_dtype(data.dtype)
    elif type(data) is TracedTensor and active_recorder(data) is rec:
        node, have = data._pp.node, data.dtype
    elif isinstance(data, (np.ndarray, torch.Tensor)):
        node = rec.constant(plain(data))
        have = data.dtype if isinstance(data, torch.Tensor) else torch_dtype(data.dtype)
        if isinstance(data, np.ndarray) and not numpy_side:
            node, have = to_torch_side(rec, node, data.dtype), real_torch_dtype(data.dtype)
    elif isinstance(data, (int, float, bool, np.generic)):
        value = data.item() if isinstance(data, np.generic) else data
        return rec.call(torch.full, ((), value), {"dtype": dtype})
    else:
        return None
    return node if have == dtype else rec.cast(node, dtype)


def _tensor_numpy(t: TracedTensor) -> np.ndarray:
    with torch._C.DisableTorchFunctionSubclass():
        return t.detach().numpy()


from_numpy = wraps_original(_ORIGINALS["torch.from_numpy"])(from_numpy)
as_tensor = wraps_original(_ORIGINALS["torch.as_tensor"])(as_tensor)
tensor = wraps_original(_ORIGINALS["torch.tensor"])(tensor)
asarray = _numpy_entry("np.asarray")
array = _numpy_entry("np.array", fresh_tables=True)
ascontiguousarray = _numpy_entry("np.ascontiguousarray")
frombuffer = wraps_original(_ORIGINALS["np.frombuffer"])(frombuffer)


# (module, attribute) -> traced replacement; what a session installs as interop patches
REPLACEMENTS: dict[tuple[Any, str], Callable] = {
    (torch, "from_numpy"): from_numpy,
    (torch, "as_tensor"): as_tensor,
    (torch, "tensor"): tensor,
    (np, "asarray"): asarray,
    (np, "array"): array,
    (np, "ascontiguousarray"): ascontiguousarray,
    (np, "frombuffer"): frombuffer,
    **ARANGE_REPLACEMENTS,
}


_CREATIONS = {**CREATION_REPLACEMENTS, **TENSOR_CREATION_REPLACEMENTS}
_UNCOUNTED = frozenset(_CREATIONS.values())

# finds where user code bound some of the given originals (keyed by id): (module, name, original)
AliasFinder = Callable[[dict[int, Any]], Iterable[tuple[Any, str, Any]]]


def interop_patch_infos(
    aliases: AliasFinder | None = None, fresh_buffers: bool = False
) -> list[PatchInfo]:
    """The conversion replacements as PatchInfo objects (family ``interop``).

    With ``aliases``, also one per place user code from-imported an original
    (``from torch import from_numpy``), found by calling ``aliases(originals)``. With
    ``fresh_buffers`` (a session), also the creation functions whose results user code
    fills with traced data (see fresh).
    """
    from .torchscript import SESSION_PATCHES

    table = {**REPLACEMENTS, **_CREATIONS} if fresh_buffers else REPLACEMENTS
    points = [(module, attribute, r) for (module, attribute), r in table.items()]
    if aliases is not None:
        originals = {id(getattr(m, a)): getattr(m, a) for m, a, _ in points}
        replacement_of = {id(getattr(m, a)): r for m, a, r in points}
        points += [(m, name, replacement_of[id(o)]) for m, name, o in aliases(originals)]
    points += list(SESSION_PATCHES)  # scripted functions on traced data are inlined
    return [
        PatchInfo(
            replacement,
            module,
            attribute,
            family=PatchFamily.INTEROP,
            description="keeps traced data traced across NumPy/torch conversions",
            count_calls=replacement not in _UNCOUNTED,  # creation: as cheap as NumPy's
        )
        for module, attribute, replacement in points
    ]


@contextlib.contextmanager
def interop_patches() -> Iterator[PatchDetails]:
    """Apply the interop replacements for the block (all or nothing); restore on exit."""
    with PatchDetails(interop_patch_infos()) as details:
        yield details
