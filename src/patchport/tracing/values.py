"""Traced values: an ``np.ndarray`` and a ``torch.Tensor`` subclass carrying recorder + node.

Each traced value holds a :class:`~patchport.tracing.trace_state.TraceState` (``_pp``):
the :class:`~patchport.tracing.recorder.Recorder` it belongs to and the ``fx.Node``
computing it in that recorder's graph. The eager data is always what the original library
computed. How each type records operations is installed by the package (numpy_dispatch,
torch_dispatch).
"""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np
import torch
from torch import fx

from .location import user_location
from .loss import report_loss
from .node_facts import NodeFacts
from .recorder import _ACTIVE_COUNT, Recorder
from .trace_state import TraceState


class TracedArray(NodeFacts, np.ndarray):
    """An ndarray whose operations are recorded into its recorder's graph."""

    _pp: TraceState

    def __array_finalize__(self, obj: Any) -> None:
        # views made outside our dispatch are untracked until wrap() sets the node
        state = getattr(obj, "_pp", None)
        self._pp = TraceState(None if state is None else state.rec)


class TracedTensor(NodeFacts, torch.Tensor):
    """A torch.Tensor whose operations are recorded into its recorder's graph."""

    _pp: TraceState

    def as_subclass(self, cls: type) -> torch.Tensor:
        """``Tensor.as_subclass``; torch gives it no ``__torch_function__`` hook, so a
        conversion of traced data to another library's tensor type (torchvision's
        ``tv_tensors.Image``) is named here as the trace loss it is, before it happens."""
        if cls is not torch.Tensor and cls is not TracedTensor and _ACTIVE_COUNT[0]:
            state = self._pp
            rec = state.rec
            if rec is not None and rec.active and state.node is not None:
                report_loss(
                    rec,
                    f"Tensor.as_subclass({cls.__name__}) on a traced tensor (another "
                    f"library's tensor type, which is not traced)",
                    "the result is no longer traced and would be frozen as a constant; keep "
                    "plain torch.Tensor data on this path (for torchvision, torch.from_numpy("
                    "x).permute(2, 0, 1) and the v2.functional calls instead of to_image / "
                    "tv_tensors)",
                )
        return _AS_SUBCLASS(self, cls)


_AS_SUBCLASS = torch.Tensor.as_subclass


_TRACED_TYPES = (TracedArray, TracedTensor)


def active_recorder(value: Any) -> Recorder | None:
    """Return the active recorder of ``value`` if it is traced data, else None."""
    if type(value) in _TRACED_TYPES:
        state = value._pp
        rec = state.rec
        if rec is not None and rec.active and state.node is not None:
            return rec
    return None


def is_traced(value: Any) -> bool:
    """True when ``value`` is traced data of an active recorder (cheap on plain data)."""
    if not _ACTIVE_COUNT[0] or type(value) not in _TRACED_TYPES:
        return False
    rec = value._pp.rec
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
    """Iteratively search ``obj`` (tuples, lists, dicts, objects whose class defines
    ``__pp_traced__(self)`` returning the traced values they carry) for active traced data."""
    stack = [obj]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind in _TRACED_TYPES:
            state = item._pp
            rec = state.rec
            if rec is not None and rec.active and state.node is not None:
                return rec
        elif kind is tuple or kind is list:
            stack.extend(item)
        elif kind is dict:
            stack.extend(item.values())
        elif isinstance(item, (tuple, list, deque)):  # a deque of recent frames too
            stack.extend(item)
        else:  # an object carrying traced data names it (a traced scipy Rotation)
            carried = getattr(kind, "__pp_traced__", None)
            if carried is not None:
                stack.extend(carried(item))
    return None


def find_orphan(*structures: Any) -> tuple[TracedArray, Recorder] | None:
    """An orphan in ``structures``: a TracedArray of an active recorder with no node, made
    from traced data by a copy NumPy gives no hook for (``np.float32(x)`` on an array); its
    recorder is cleared here so that each orphan is reported once (its ``_pp.made_at``
    says where it was made, when known)."""
    if not _ACTIVE_COUNT[0]:
        return None
    stack = list(structures)
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is TracedArray:
            state = item._pp
            rec = state.rec
            if rec is not None and rec.active and state.node is None and state.fresh is None:
                if state.view_of is None:
                    state.rec = None
                    return item, rec
        elif kind is tuple or kind is list:
            stack.extend(item)
        elif kind is dict:
            stack.extend(item.values())
    return None


def make_traced(rec: Recorder, value: Any, node: fx.Node) -> Any:
    """Wrap an eager result (array, NumPy scalar or tensor) as a traced value of ``rec``."""
    if isinstance(value, torch.Tensor):
        out = value.as_subclass(TracedTensor)
        out._pp = TraceState(rec, node)
        return out
    if isinstance(value, np.ndarray):
        out = np.ndarray.view(value, TracedArray)  # a fresh state from __array_finalize__
        state = out._pp
    elif isinstance(value, np.generic):
        out = np.ndarray.view(np.asarray(value), TracedArray)
        state = out._pp
        state.scalar = True  # stands for a NumPy scalar (torch treats those as numbers)
    else:
        raise TypeError(f"cannot trace a {type(value).__name__}")
    state.rec = rec
    state.node = node
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
    """Replace traced values by their plain data inside tuples, lists, deques and dicts."""
    kind = type(obj)
    if kind in _TRACED_TYPES:
        return plain(obj)
    if kind is tuple or kind is list:
        if _only_literals(obj):  # sizes, axes: nothing to replace
            return obj if kind is tuple else list(obj)
        return kind(plain_tree(o) for o in obj)
    if kind is dict:
        return {k: plain_tree(v) for k, v in obj.items()}
    if kind is deque:  # NumPy reads a deque as a list: np.stack(history) of recent frames
        return deque((plain_tree(o) for o in obj), obj.maxlen)
    return obj


# Python values that are graph literals as they are
_LITERALS = {int, float, bool, str, complex, type(None)}


def _only_literals(items: tuple | list) -> bool:
    for item in items:
        if type(item) not in _LITERALS:
            return False
    return True


BEFORE_SESSION = " (made before the session)"  # ends the origin of a watched user array


BY_LIBRARY = " (made by a library function handed traced data)"  # ends such a buffer's origin


def fresh_origin(fresh: str) -> str:
    """Where a fresh buffer's data came from, for the constants list: the line that made it
    in the session, or the user array made before it (and the line it entered the graph)."""
    if fresh.endswith(BEFORE_SESSION):
        made = fresh[: -len(BEFORE_SESSION)]
        return f"entered the graph at {user_location(3)} ({made}, made before the session)"
    return f"array created at {fresh}"


def _uniform(data: np.ndarray) -> bool:
    """Whether every element equals the first (a buffer as np.zeros / np.full made it)."""
    with np.errstate(invalid="ignore"):
        return not data.size or bool(np.all(data == data.flat[0]))


def report_library_buffer(rec: Recorder, fresh: str) -> None:
    """A buffer a library made while it held traced data, never written by a traced op:
    its content came from code with no hook (C reading the traced memory), a loss."""
    report_loss(
        rec,
        f"an array made {fresh[: -len(BY_LIBRARY)]} while that function was handed traced "
        f"data, filled without a hook (native code reading the traced memory)",
        "its content is frozen in the graph as a constant of this sample; enable the patch "
        "set for that library (patchport.start(..., patching=[...])) or compute the value "
        "with NumPy / torch",
    )


def arg_of(rec: Recorder, value: Any) -> Any:
    """Turn ``value`` into a graph argument: a node for data, a literal for Python values."""
    kind = type(value)
    if kind in _TRACED_TYPES:
        state = value._pp
        if state.rec is rec and state.node is not None:
            return state.node
        if state.fresh is not None:  # a buffer created in the session, read as a table
            if state.fresh.endswith(BY_LIBRARY) and not _uniform(plain(value)):
                report_library_buffer(rec, state.fresh)
            return rec.constant(plain(value), origin=fresh_origin(state.fresh))
        if state.node is None and state.rec is rec:
            report_loss(rec, "an array derived from traced data by an unrecorded view")
        elif state.rec is not None and state.rec is not rec and state.rec.active:
            other, this = state.rec.name.partition("#")[0], rec.name.partition("#")[0]
            report_loss(
                rec,
                f"a traced value of {other!r}, which is still open, was used in {this!r} "
                f"(Cannot mix multiple active TracedTensors from different contexts)",
                f"it is frozen as a constant of {this!r}; finish {other!r} with "
                f"annotate.output_tensors and pass the value it returns",
            )
        return rec.constant(plain(value), origin=_foreign_origin(rec, value))
    if isinstance(value, (np.ndarray, torch.Tensor)):
        return rec.constant(value)
    if isinstance(value, np.generic):
        return value.item()
    if kind is tuple or kind is list:
        if _only_literals(value):
            return value if kind is tuple else list(value)
        return kind(arg_of(rec, v) for v in value)
    if kind is dict:
        return {k: arg_of(rec, v) for k, v in value.items()}
    if kind is slice:
        return slice(arg_of(rec, value.start), arg_of(rec, value.stop), arg_of(rec, value.step))
    return value


def _foreign_origin(rec: Recorder, value: Any) -> str:
    owner = value._pp.rec
    if owner is None or value._pp.node is None:
        what = "an array derived from traced data without being recorded"
    elif owner is not rec:
        what = f"a traced value of another recorder ({owner.name!r})"
    else:  # pragma: no cover - handled by the caller
        what = "a traced value"
    return f"{what}, entered the graph at {user_location(3)}"
