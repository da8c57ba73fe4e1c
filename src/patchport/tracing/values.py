"""Traced values: an ``np.ndarray`` and a ``torch.Tensor`` subclass carrying recorder + node.

Each traced value knows the :class:`~patchport.tracing.recorder.Recorder` it belongs to
(``_pp_rec``) and the ``fx.Node`` computing it in that recorder's graph (``_pp_node``).
The eager data is always what the original library computed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import fx

from . import shape_reads as _shape_reads
from .recorder import _ACTIVE_COUNT, Recorder

NP_TO_TORCH: dict[np.dtype, torch.dtype] = {
    np.dtype(np.bool_): torch.bool,
    np.dtype(np.uint8): torch.uint8,
    np.dtype(np.int8): torch.int8,
    np.dtype(np.int16): torch.int16,
    np.dtype(np.int32): torch.int32,
    np.dtype(np.int64): torch.int64,
    np.dtype(np.uint16): torch.uint16,
    np.dtype(np.uint32): torch.uint32,
    np.dtype(np.uint64): torch.uint64,
    np.dtype(np.float16): torch.float16,
    np.dtype(np.float32): torch.float32,
    np.dtype(np.float64): torch.float64,
    np.dtype(np.complex64): torch.complex64,
    np.dtype(np.complex128): torch.complex128,
}
TORCH_TO_NP: dict[torch.dtype, np.dtype] = {v: k for k, v in NP_TO_TORCH.items()}


# torch has few kernels for these: NumPy data of these dtypes is held as int64 in the graph
# (uint16/uint32 results of arithmetic are masked back into range; uint64 keeps its bits)
HELD_AS_INT64: dict[np.dtype, int | None] = {
    np.dtype(np.uint16): 0xFFFF,
    np.dtype(np.uint32): 0xFFFFFFFF,
    np.dtype(np.uint64): None,
}


def torch_dtype(dtype: Any) -> torch.dtype:
    """Torch dtype that NumPy data of ``dtype`` has in the graph (uint16/32/64: int64)."""
    dt = np.dtype(dtype)
    if dt in HELD_AS_INT64:
        return torch.int64
    try:
        return NP_TO_TORCH[dt]
    except KeyError:
        raise TypeError(f"NumPy dtype {dt} has no torch equivalent") from None


def real_torch_dtype(dtype: Any) -> torch.dtype:
    """The torch dtype with the same name as a NumPy dtype (for handing data to torch)."""
    try:
        return NP_TO_TORCH[np.dtype(dtype)]
    except KeyError:
        raise TypeError(f"NumPy dtype {np.dtype(dtype)} has no torch equivalent") from None


def to_torch_side(rec: Recorder, node: Any, dtype: Any) -> Any:
    """Node of NumPy data as torch sees it (held uint16/32/64 cast back to their dtype)."""
    dt = np.dtype(dtype)
    return rec.cast(node, NP_TO_TORCH[dt]) if dt in HELD_AS_INT64 else node


def to_numpy_side(rec: Recorder, node: Any, dtype: Any) -> Any:
    """Node of torch data handed to NumPy (uint16/32/64 held as int64)."""
    return rec.cast(node, torch.int64) if np.dtype(dtype) in HELD_AS_INT64 else node


def wrap_unsigned(rec: Recorder, node: Any, dtype: Any) -> Any:
    """Mask a held uint16/uint32 result back into its range (NumPy's wraparound)."""
    mask = HELD_AS_INT64.get(np.dtype(dtype))
    return rec.call(torch.bitwise_and, (node, mask)) if mask else node


class TracedArray(np.ndarray):
    """An ndarray whose operations are recorded into its recorder's graph."""

    _pp_rec: Recorder | None
    _pp_node: fx.Node | None
    _pp_view_of: Any

    def __array_finalize__(self, obj: Any) -> None:
        # views made outside our dispatch are untracked until wrap() sets the node
        self._pp_rec = getattr(obj, "_pp_rec", None)
        self._pp_node = None
        self._pp_view_of = None
        self._pp_views = None
        self._pp_scalar = False


class TracedTensor(torch.Tensor):
    """A torch.Tensor whose operations are recorded into its recorder's graph."""

    _pp_rec: Recorder | None
    _pp_node: fx.Node | None
    _pp_view_of: Any

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        """Run ``func`` eagerly on plain tensors and record it (see torch_dispatch)."""
        return _torch_dispatch.torch_function(func, args, kwargs or {})


def _scalar_aware(name: str) -> Any:
    """Tensor operator that, like torch untraced, takes a traced NumPy scalar as a number."""
    base = getattr(torch.Tensor, name)

    def op(self: TracedTensor, other: Any) -> Any:
        if type(other) is TracedArray and other._pp_scalar:
            return _torch_dispatch.torch_function(base, (self, other), {})
        return base(self, other)

    op.__name__ = name
    return op


for _name in ("__radd__", "__rsub__", "__rmul__", "__rtruediv__", "__rfloordiv__", "__rmod__",
              "__rpow__", "__rmatmul__", "__rand__", "__ror__", "__rxor__", "__gt__", "__ge__",
              "__lt__", "__le__", "__eq__", "__ne__"):  # fmt: skip
    setattr(TracedTensor, _name, _scalar_aware(_name))
TracedTensor.__hash__ = torch.Tensor.__hash__  # defining __eq__ must not drop hashing
# sizes read in a node with dynamic axes are noted where used (see shape_reads)
TracedArray.shape = property(_shape_reads.traced_shape, np.ndarray.shape.__set__)  # type: ignore[assignment]
TracedArray.__len__ = _shape_reads.traced_len  # type: ignore[method-assign]

_TRACED_TYPES = (TracedArray, TracedTensor)


def active_recorder(value: Any) -> Recorder | None:
    """Return the active recorder of ``value`` if it is traced data, else None."""
    if type(value) in _TRACED_TYPES:
        rec = value._pp_rec
        if rec is not None and rec.active and value._pp_node is not None:
            return rec
    return None


def is_traced(value: Any) -> bool:
    """True when ``value`` is traced data of an active recorder (cheap on plain data)."""
    if not _ACTIVE_COUNT[0] or type(value) not in _TRACED_TYPES:
        return False
    rec = value._pp_rec
    return rec is not None and rec.active


def contains_traced(args: tuple, kwargs: dict | None = None) -> bool:
    """True when traced data of an active recorder is in args/kwargs (tuples, lists, dicts)."""
    if not _ACTIVE_COUNT[0]:
        return False
    for value in args:  # flat fast path: most calls pass arrays and numbers
        if type(value) not in _LEAVES:
            return _find_in(args) is not None or (bool(kwargs) and _find_in(kwargs) is not None)
    if kwargs:
        for value in kwargs.values():
            if type(value) not in _LEAVES:
                return _find_in(kwargs) is not None
    return False


# types that can neither be traced nor hold traced values
_LEAVES = {np.ndarray, torch.Tensor, int, float, bool, str, bytes, type(None), complex}


def find_recorder(*structures: Any) -> Recorder | None:
    """Return the first active recorder found in nested tuples/lists/dicts, or None."""
    if not _ACTIVE_COUNT[0]:
        return None
    for structure in structures:
        rec = _find_in(structure)
        if rec is not None:
            return rec
    return None


def _find_in(obj: Any) -> Recorder | None:
    """Iteratively search ``obj`` (tuples, lists, dicts) for active traced data."""
    stack = [obj]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind in _TRACED_TYPES:
            rec = item._pp_rec
            if rec is not None and rec.active and item._pp_node is not None:
                return rec
        elif kind is tuple or kind is list:
            stack.extend(item)
        elif kind is dict:
            stack.extend(item.values())
        elif isinstance(item, (tuple, list)):
            stack.extend(item)
    return None


def make_traced(rec: Recorder, value: Any, node: fx.Node) -> Any:
    """Wrap an eager result (array, NumPy scalar or tensor) as a traced value of ``rec``."""
    if isinstance(value, torch.Tensor):
        out = value.as_subclass(TracedTensor)
    elif isinstance(value, np.ndarray):
        out = value.view(TracedArray)
    elif isinstance(value, np.generic):
        out = np.asarray(value).view(TracedArray)
        out._pp_rec = rec
        out._pp_node = node
        out._pp_scalar = True  # stands for a NumPy scalar (torch treats those as numbers)
        return out
    else:
        raise TypeError(f"cannot trace a {type(value).__name__}")
    out._pp_rec = rec
    out._pp_node = node
    out._pp_view_of = None
    out._pp_views = None
    return out


def plain(value: Any) -> Any:
    """Return the untraced eager data of ``value`` (a base-class view; others unchanged)."""
    kind = type(value)
    if kind is TracedArray:
        return np.ndarray.view(value, np.ndarray)
    if kind is TracedTensor:
        return value.as_subclass(torch.Tensor)
    return value


def plain_tree(obj: Any) -> Any:
    """Replace traced values by their plain data inside tuples, lists and dicts."""
    kind = type(obj)
    if kind in _TRACED_TYPES:
        return plain(obj)
    if kind is tuple or kind is list:
        return kind(plain_tree(o) for o in obj)
    if kind is dict:
        return {k: plain_tree(v) for k, v in obj.items()}
    return obj


def arg_of(rec: Recorder, value: Any) -> Any:
    """Turn ``value`` into a graph argument: a node for data, a literal for Python values."""
    kind = type(value)
    if kind in _TRACED_TYPES:
        if value._pp_rec is rec and value._pp_node is not None:
            return value._pp_node
        if value._pp_node is None and value._pp_rec is rec:
            from .loss import report_loss

            report_loss(rec, "an array derived from traced data by an unrecorded view")
        return rec.constant(plain(value), origin=_foreign_origin(rec, value))
    if isinstance(value, (np.ndarray, torch.Tensor)):
        return rec.constant(value)
    if isinstance(value, np.generic):
        return value.item()
    if kind is tuple or kind is list:
        return kind(arg_of(rec, v) for v in value)
    if kind is dict:
        return {k: arg_of(rec, v) for k, v in value.items()}
    if kind is slice:
        return slice(arg_of(rec, value.start), arg_of(rec, value.stop), arg_of(rec, value.step))
    return value


def _foreign_origin(rec: Recorder, value: Any) -> str:
    from .location import user_location

    owner = value._pp_rec
    if owner is None or value._pp_node is None:
        what = "an array derived from traced data without being recorded"
    elif owner is not rec:
        what = f"a traced value of another recorder ({owner.name!r})"
    else:  # pragma: no cover - handled by the caller
        what = "a traced value"
    return f"{what}, entered the graph at {user_location(3)}"


from . import numpy_dispatch as _numpy_dispatch  # noqa: E402, F401
from . import torch_dispatch as _torch_dispatch  # noqa: E402
