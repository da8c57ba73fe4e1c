"""Fresh torch buffers: tensors user code creates in a session, traced from their first
traced write (the torch twin of :mod:`.fresh`).

``rot = torch.zeros(b, 4, 4); rot[:, 0, 0] = traced`` is how torch geometry code
(monodepth2's ``rot_from_axisangle``, box and pose helpers) builds matrices. The session's
creation replacements (``torch.zeros``, ``ones``, ``empty``, ``full``, ``eye`` and the
``*_like`` functions) note each tensor user code creates while a node is being traced
(about 1 us each; nothing when none is); the tensor itself stays a plain ``torch.Tensor``
(same class, same speed). A write of traced data into a noted tensor
(``[...] =``, an in-place method or operator, ``out=``) adopts it first: its content before
the write becomes the graph's starting value and the tensor becomes traced from then on.
A tensor made before the session, or by a library, is not adopted: a traced write into it
stays a reported loss. TorchScript keeps compiling these functions as the aten builtins.
"""

from __future__ import annotations

import sys
import weakref
from collections.abc import Callable
from typing import Any

import torch

from ..patching.source_diff import wraps_original
from .location import _PATCHPORT_DIR, is_user_code
from .recorder import _ACTIVE_COUNT, RECORDED_AS, Recorder
from .trace_state import TraceState
from .values import TracedTensor

CREATION_NAMES = (
    "zeros",
    "ones",
    "empty",
    "full",
    "eye",
    "zeros_like",
    "ones_like",
    "empty_like",
    "full_like",
)

_USER_CODE: dict[Any, bool] = {}  # code object -> whether it is user code (not a library)


class _Note(weakref.ref):
    """A weak reference to a fresh tensor that knows its key and where it was made."""

    __slots__ = ("key", "code", "line")


def _forget(note: _Note) -> None:
    if _FRESH.get(note.key) is note:
        del _FRESH[note.key]


_FRESH: dict[int, _Note] = {}  # id(tensor) -> its note


def _creation(original: Callable) -> Callable:
    @wraps_original(original)
    def replacement(*args: Any, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)
        if not _ACTIVE_COUNT[0] or type(result) is not torch.Tensor:
            return result  # nothing is being traced: nothing can be written into it
        frame = sys._getframe(1)
        code = frame.f_code
        user = _USER_CODE.get(code)
        if user is None:
            if len(_USER_CODE) > 8192:
                _USER_CODE.clear()
            name = code.co_filename
            user = _USER_CODE[code] = not name.startswith(_PATCHPORT_DIR) and is_user_code(code)
        if user:
            note = _Note(result, _forget)
            note.key, note.code, note.line = id(result), code, frame.f_lineno
            _FRESH[note.key] = note
        return result

    return replacement


# (module, attribute) -> replacement; installed by the session with the interop patches
REPLACEMENTS: dict[tuple[Any, str], Callable] = {
    (torch, name): _creation(getattr(torch, name)) for name in CREATION_NAMES
}
RECORDED_AS.update({creation: creation.__wrapped__ for creation in REPLACEMENTS.values()})


def fresh_origin(value: Any) -> str | None:
    """Where user code made ``value`` in this session, if it is a fresh plain tensor."""
    if type(value) is not torch.Tensor:
        return None
    note = _FRESH.get(id(value))
    if note is None or note() is not value:
        return None
    return f"{note.code.co_filename}:{note.line}"


def adopt_tensor(rec: Recorder, value: Any) -> bool:
    """Make a fresh plain tensor traced in ``rec`` before a write; True when it now is.

    Call it before the write runs: the content it holds now is the graph's starting value.
    """
    where = fresh_origin(value)
    if where is None or value.requires_grad:
        return False
    del _FRESH[id(value)]
    data = value.detach().clone()
    value.__class__ = TracedTensor
    value._pp = TraceState(rec, _initial(rec, data, where))
    return True


def _initial(rec: Recorder, data: torch.Tensor, where: str) -> Any:
    """Graph node holding a tensor's content before its first traced write."""
    if data.numel() and not data.is_complex():
        first = data.reshape(-1)[0]
        same = bool((data == first).all()) and not bool(torch.isnan(first))
        if same:
            return rec.call(torch.full, (tuple(data.shape), first.item()), {"dtype": data.dtype})
    origin = f"content before the first traced write of the tensor created at {where}"
    return rec.constant(data, origin=origin)
