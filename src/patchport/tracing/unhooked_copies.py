"""Arrays NumPy's C code makes from traced data without any dispatch.

``np.float32(x)`` (``np.uint8(img)``, ``np.bool_(mask)``...) on an array copies it through
NumPy's C API: no ``__array_function__``, no method, only ``__array_finalize__`` on the new
array, before its data is written. Such a new array (not a view) of the traced source's
shape is recorded as the cast it almost always is; the source's data is kept, and when the
pass ends (:func:`check`) an array whose values turn out not to be that cast (an unbound
``np.ndarray.argsort(x)`` makes one too) is reported at the line that made it. On a 0-d
array NumPy turns the copy into a NumPy scalar, which cannot be traced: the number is
remembered, and reported at the line that made it once it reaches a traced operation.
"""

from __future__ import annotations

import warnings
import weakref
from typing import Any

import numpy as np

from ..errors import TraceLossError, TraceLossWarning
from .dtypes import NP_TO_TORCH, numpy_cast
from .location import user_frame
from .trace_state import TraceState
from .unhooked import note_scalar_copy

_base = np.ndarray.base.__get__
_shape = np.ndarray.shape.__get__
_dtype = np.ndarray.dtype.__get__


def finalize(self: np.ndarray, obj: Any) -> None:
    """``TracedArray.__array_finalize__``: a view starts untracked (its maker sets the
    node); a new array copied from traced data is recorded as a cast of it; a 0-d copy on
    its way to a NumPy scalar is remembered (see :mod:`.unhooked`); any other array NumPy
    made from traced data in C notes the user's line that made it, for the loss report."""
    state = getattr(obj, "_pp", None)
    if state is None:
        self._pp = TraceState(None)
        return
    rec = state.rec
    self._pp = TraceState(rec)
    if state.node is None or rec is None or not rec.active:
        return
    if _base(self) is None and not _shape(self) and not _shape(obj):
        note_scalar_copy(rec, self, obj)  # np.float32(x) of a 0-d value: a NumPy scalar
        return
    frame = user_frame(1)
    where = (frame.f_code.co_filename, frame.f_lineno) if frame is not None else ("?", 0)
    if _base(self) is not None or _shape(self) != _shape(obj) or _dtype(self) not in NP_TO_TORCH:
        if frame is not None:
            self._pp.made_at = where
        return
    source = np.array(np.ndarray.view(obj, np.ndarray), copy=True)
    node = numpy_cast(rec, state.node, _dtype(obj), _dtype(self))
    self._pp.node = node
    rec.assumed_copies.append((weakref.ref(self), node, source, where))


def check(rec: Any) -> None:
    """Report each array taken for a cast of traced data whose values are no such cast."""
    for ref, node, source, (filename, lineno) in rec.assumed_copies:
        made = ref()
        if made is None or made._pp.node is not node:  # gone, or rebound by a recorded write
            continue
        data = np.ndarray.view(made, np.ndarray)
        with np.errstate(all="ignore"):
            expected = source.astype(data.dtype)
        if np.array_equal(data, expected, equal_nan=data.dtype.kind in "fc"):
            continue
        message = (
            f"trace lost at {filename}:{lineno}: an array NumPy made from traced data without "
            f"any hook (an unbound ndarray method such as np.ndarray.argsort(x)) is not a cast "
            f"of it; it was recorded as one, so the exported graph computes something else "
            f"(call the NumPy function, np.argsort(x), or the array's own method)"
        )
        rec.losses.append(message)
        if rec.strict:
            raise TraceLossError(message)
        warnings.warn_explicit(message, TraceLossWarning, filename, lineno)
    rec.assumed_copies.clear()
