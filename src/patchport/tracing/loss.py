"""Report traced data leaving the traced world: a warning, or an error when strict.

Every message names the operation and the user's own ``file:line`` so that a value
frozen into the graph as a constant can be traced back to the line that lost it.
"""

from __future__ import annotations

import sys
import warnings
from types import FrameType
from typing import TYPE_CHECKING

from .._stack import user_stacklevel
from ..errors import TraceLossError, TraceLossWarning
from .location import _is_library, library_callee, user_frame

if TYPE_CHECKING:
    from .recorder import Recorder


_BRANCH = (
    "a Python branch on traced data: this sample's path is fixed and the graph keeps only "
    "that branch; compute both sides and select with {where} instead of if/while/and/or "
    "(a guard such as `if norm > 0: x / norm` becomes "
    "{where}(norm > 0, x / maximum(norm, tiny), x))"
)
_NUMBER = (
    "a Python number is frozen in the graph as a constant; keep it an array (no {call}), "
    "e.g. x[()] or x.reshape(()), and use NumPy / torch functions on it (np.sqrt, not "
    "math.sqrt), or index or compare with the traced value itself"
)


def python_value_hint(name: str, where: str) -> str | None:
    """The consequence and fix for traced data turned into a Python value by ``name``
    (``__bool__``, ``__int__``, ``item``...), or None for other losses; ``where`` names
    the select function of the value's library (``np.where``, ``torch.where``)."""
    if name in ("__bool__", "is_nonzero"):
        return _BRANCH.format(where=where)
    calls = {"__int__": "int()", "__index__": "int()/indexing by it", "__float__": "float()"}
    if name in calls or name in ("item", "tolist"):
        return _NUMBER.format(call=calls.get(name, f".{name}()"))
    return None


def report_loss(recorder: Recorder | None, what: str, consequence: str | None = None) -> str:
    """Warn (or raise when strict) that ``what`` took data out of the trace; return the location."""
    target = user_frame(2)
    where = "<unknown>" if target is None else f"{target.f_code.co_filename}:{target.f_lineno}"
    tail = consequence or "the result is no longer traced and would be frozen as a constant"
    callee = library_callee(target, 2)
    inside = f" inside {callee}()" if callee else ""
    message = f"trace lost at {where}: {what}{inside}; {tail}"
    if recorder is not None:
        recorder.losses.append(message)
        if recorder.strict:
            raise TraceLossError(message)
    warnings.warn(message, TraceLossWarning, stacklevel=_level_of(target))
    return where


def report_loss_at(
    recorder: Recorder | None, filename: str, lineno: int, what: str, consequence: str
) -> None:
    """:func:`report_loss` for a loss found after the fact: the warning points at the user's
    line that made it (``filename:lineno``), which is no longer on the stack."""
    message = f"trace lost at {filename}:{lineno}: {what}; {consequence}"
    if recorder is not None:
        recorder.losses.append(message)
        if recorder.strict:
            raise TraceLossError(message)
    warnings.warn_explicit(message, TraceLossWarning, filename, lineno)


def _level_of(target: FrameType | None) -> int:
    """``stacklevel`` making a warning from ``report_loss`` point at frame ``target``."""
    frame, level = sys._getframe(2), 2
    while frame is not None and frame is not target:
        frame, level = frame.f_back, level + 1
    return level if frame is not None else user_stacklevel(_is_library) - 1
