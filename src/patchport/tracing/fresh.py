"""Fresh buffers: arrays user code creates during a session, traced from their first
traced write.

``obs = np.zeros((1, 47)); obs[0, 0:3] = traced`` is NumPy's most common output idiom.
A plain ndarray's ``__setitem__`` gives Python no hook, so the session's creation
replacements (``np.zeros``, ``ones``, ``empty``, ``full``, ``eye``, ``identity``) return
a :class:`TracedArray` view that belongs to no recorder when the caller is user code
(the alias scan's user-module rule) or a library function holding traced data in its
locals (it was handed the traced waveform); other library calls get the plain array. NumPy's
table makers called from user code (``np.hanning``, ``np.fft.rfftfreq``...) do the same. Such
a buffer behaves as plain data until traced data is written into it (any write form:
``[...] =``, ``np.copyto``, ``np.put``, ``out=``); then its content before the write
becomes the graph's starting value (``torch.full`` when uniform, else a constant) and
the write is recorded. Reading it with a traced index is a gather from a constant table.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from ..patching.source_diff import wraps_original
from . import prior_buffers
from .dtypes import HELD_AS_INT64, NP_TO_TORCH, torch_dtype
from .indexing import record_getitem
from .location import _PATCHPORT_DIR, is_user_code, library_callee, user_frame, user_location
from .recorder import _ACTIVE_COUNT
from .values import BY_LIBRARY, TracedArray, active_recorder, find_recorder
from .views import link_view

CREATION_NAMES = (
    "zeros",
    "ones",
    "empty",
    "full",
    "eye",
    "identity",
    "zeros_like",
    "ones_like",
    "empty_like",
    "full_like",
    "linspace",
    "tri",
    "indices",
)


# code object -> whether arrays it creates become fresh buffers (user code, not patchport)
_CREATES_FRESH: dict[Any, bool] = {}


#: dtype kinds no traced number is ever written into (structured and record, bytes and
#: str, datetime and timedelta): such arrays stay plain ndarrays, ``type(a) is np.ndarray``
NEVER_TRACED_KINDS = frozenset("VSUMmT")


def _creation(original: Callable) -> Callable:
    """Installed without a counting wrapper: a library's call costs a dict lookup more."""

    @wraps_original(original)
    def replacement(*args: Any, **kwargs: Any) -> Any:
        like = kwargs.get("like")
        if like is not None and not isinstance(like, np.ndarray):
            return _dispatch_like(replacement, original, like, args, kwargs)
        result = original(*args, **kwargs)
        frame = sys._getframe(1)
        code = frame.f_code
        fresh = _CREATES_FRESH.get(code)
        if fresh is None:
            if len(_CREATES_FRESH) > 8192:
                _CREATES_FRESH.clear()
            name = code.co_filename
            fresh = _CREATES_FRESH[code] = not name.startswith(_PATCHPORT_DIR) and is_user_code(
                code
            )
        if type(result) is not np.ndarray or result.dtype.kind in NEVER_TRACED_KINDS:
            return result
        if not fresh and not (_ACTIVE_COUNT[0] and _holds_traced(frame)):
            return result
        out = np.ndarray.view(result, TracedArray)
        out._pp.fresh = f"{code.co_filename}:{frame.f_lineno}"
        if not fresh:  # in a library: content no traced op wrote is a loss (see values)
            target = user_frame(2)
            callee = library_callee(target, 2) or code.co_name
            where = "<unknown>" if target is None else user_location(2)
            out._pp.fresh = f"by {callee}() at {where}{BY_LIBRARY}"
        return out

    return replacement


def _holds_traced(frame: Any) -> bool:
    """A library frame that holds traced data in its locals (a function handed the traced
    waveform or image): its buffers are the ones that data is written into, so they are
    fresh buffers as user code's are. Patchport's own frames never qualify."""
    if frame.f_code.co_filename.startswith(_PATCHPORT_DIR):
        return False
    return find_recorder(tuple(frame.f_locals.values())) is not None


def _installed_as(replacement: Callable, original: Callable) -> Any:
    """What ``np.<name>`` holds for ``replacement`` (the non-binding wrapper around it while
    installed), so ``func is np.<name>`` holds in an ``__array_function__``."""
    held = getattr(np, original.__name__, None)
    layer = held
    while layer is not None and layer is not replacement:
        layer = getattr(layer, "__wrapped__", None)
    return held if layer is replacement else replacement


def _dispatch_like(
    public: Callable, original: Callable, like: Any, args: tuple, kwargs: dict
) -> Any:
    """NEP 35's ``like=`` dispatch done with the function ``np.<name>`` is in the session
    (NumPy would hand ``like.__array_function__`` its own original, which is not
    ``np.ones`` while the session's stand-in is)."""
    method = getattr(type(like), "__array_function__", None)
    if method is None:
        return original(*args, **kwargs)  # NumPy's own TypeError about ``like``
    rest = {key: value for key, value in kwargs.items() if key != "like"}
    result = method(like, _installed_as(public, original), (type(like),), args, rest)
    if result is NotImplemented:
        raise TypeError(
            f"no implementation found for 'numpy.{original.__name__}' on types that "
            f"implement __array_function__: [{type(like)}]"
        )
    return result


# NumPy functions that build tables for user code from sizes alone (windows, FFT bin
# frequencies, log grids): a table read with traced indices is a gather, as np.arange's is
TABLE_MAKERS = (
    (np, "hanning"),
    (np, "hamming"),
    (np, "blackman"),
    (np, "bartlett"),
    (np, "kaiser"),
    (np, "logspace"),
    (np, "geomspace"),
    (np.fft, "fftfreq"),
    (np.fft, "rfftfreq"),
)


def _take(original: Callable) -> Callable:
    """``np.take`` dispatches on its array alone, so a plain table (a local made before the
    session) read with traced indices never reached the trace: the table is then handed
    over as a constant the graph reads, the indices stay traced."""

    @wraps_original(original)
    def take(a: Any, indices: Any, *args: Any, **kwargs: Any) -> Any:
        if type(a) is np.ndarray and type(indices) is TracedArray and active_recorder(indices):
            table = np.ndarray.view(a, TracedArray)
            table._pp.fresh = user_location()
            return original(table, indices, *args, **kwargs)
        return original(a, indices, *args, **kwargs)

    return take


# (module, attribute) -> replacement; installed by the session with the interop patches
REPLACEMENTS: dict[tuple[Any, str], Callable] = {
    (module, name): _creation(getattr(module, name))
    for module, name in (*((np, n) for n in CREATION_NAMES), *TABLE_MAKERS)
}
REPLACEMENTS[(np, "take")] = _take(np.take)


def is_fresh(value: Any) -> bool:
    """A fresh buffer not traced in an active recorder (a write of traced data adopts it)."""
    if type(value) is not TracedArray:
        return False
    state = value._pp
    if state.fresh is None:
        return False
    rec = state.rec
    return rec is None or not rec.active or state.node is None


def fresh_view(base: TracedArray, index: Any, result: np.ndarray) -> TracedArray:
    """``base[index]`` of a fresh buffer (basic index): a fresh view linked to ``base``."""
    out = np.ndarray.view(result, TracedArray)
    out._pp.fresh = base._pp.fresh
    out._pp.rec = None
    link_view(base, out, index)
    return out


def keep_fresh(result: Any, sources: Any) -> Any:
    """A new plain array computed from a fresh one (``np.clip(lut * g, 0, 255)``,
    ``.astype``) is fresh too: a table built in the session stays readable by traced
    indices. Anything else is returned as it is."""
    if type(result) is not np.ndarray or result.dtype.kind in NEVER_TRACED_KINDS:
        return result
    for source in sources:
        if type(source) is TracedArray and source._pp.fresh is not None:
            out = np.ndarray.view(result, TracedArray)
            out._pp.fresh = source._pp.fresh
            out._pp.rec = None
            return out
    return result


def made_by_user(result: Any) -> Any:
    """``result`` as a fresh buffer when the code calling patchport is user code."""
    if type(result) is not np.ndarray or result.dtype.kind in NEVER_TRACED_KINDS:
        return result
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename.startswith(_PATCHPORT_DIR):
        frame = frame.f_back
    if frame is None or not is_user_code(frame.f_code):
        return result
    out = np.ndarray.view(result, TracedArray)
    out._pp.fresh = f"{frame.f_code.co_filename}:{frame.f_lineno}"
    return out


def copied_by_user(source: np.ndarray, result: Any) -> Any:
    """``np.array(table)`` (``np.asarray(t, dtype=...)``, ``np.ascontiguousarray``) of a
    fresh buffer (a table made before the session or in it), called by user code: a new
    array is a buffer user code may fill with traced data (a screw table copied, then
    columns written), so it is fresh too, made at the caller's line (a copy of a table made
    before the session holds this pass's content, not state); where NumPy handed back the
    table's own memory, the table itself, as plain NumPy does. A plain ndarray's copy
    stays NumPy's own."""
    if type(result) is not np.ndarray or not _ACTIVE_COUNT[0]:
        return result
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PATCHPORT_DIR):
        frame = frame.f_back
    if frame is None or not is_user_code(frame.f_code):
        return result
    if np.may_share_memory(result, source):
        same = (result.shape, result.strides, result.dtype)
        if is_fresh(source) and same == (source.shape, source.strides, source.dtype):
            return source
        return result
    out = np.ndarray.view(result, TracedArray)  # made here: its content is this pass's table
    out._pp.fresh = f"{frame.f_code.co_filename}:{frame.f_lineno}"
    return out


def untraced_as_plain(obj: Any) -> Any:
    """``obj`` with each fresh buffer not yet traced replaced by its plain ndarray view
    (inside tuples, lists and dicts): a replacement sees such data as the plain array it is."""
    kind = type(obj)
    if kind is TracedArray:
        return np.ndarray.view(obj, np.ndarray) if is_fresh(obj) else obj
    if kind is tuple or kind is list:
        return kind(untraced_as_plain(item) for item in obj)
    if kind is dict:
        return {key: untraced_as_plain(value) for key, value in obj.items()}
    return obj


def adopt(rec: Any, value: Any) -> bool:
    """Make a fresh buffer traced in ``rec`` before a write; True when it now is."""
    if not is_fresh(value):
        return active_recorder(value) is rec
    state = value._pp
    link = state.view_of
    if link is not None and adopt(rec, link[0]):
        state.rec = rec
        state.node = record_getitem(rec, link[0], link[1])
        return True
    state.view_of = None
    data = np.ndarray.view(value, np.ndarray)
    state.rec = rec
    state.node = _initial(rec, data, state.fresh)
    if prior_buffers.is_prior(state.fresh):  # its content may be state: checked at the end
        prior_buffers.note_start(rec, state.node, data.shape, state.fresh, user_location())
    return True


def _initial(rec: Any, data: np.ndarray, where: str | None) -> Any:
    """Graph node holding a buffer's content before its first traced write."""
    dtype = data.dtype
    if data.size and dtype in NP_TO_TORCH and dtype not in HELD_AS_INT64:
        first = data.flat[0]
        with np.errstate(invalid="ignore"):  # np.empty's garbage may be a signalling NaN
            same = data == first
        if bool(np.all(same)) and not (dtype.kind in "fc" and np.isnan(first)):
            kwargs = {"dtype": torch_dtype(dtype)}
            return rec.call(torch.full, (tuple(data.shape), first.item()), kwargs)
    made = where[: -len(prior_buffers.BEFORE_SESSION)] if prior_buffers.is_prior(where) else None
    origin = (
        f"content of {made} (made before the session) at its first traced write"
        if made
        else f"content before the first traced write of the array created at {where}"
    )
    return rec.constant(np.array(data, copy=True), origin=origin)
