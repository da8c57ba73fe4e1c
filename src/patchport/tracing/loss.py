"""Report traced data leaving the traced world: a warning, or an error when strict.

Every message names the operation and the user's own ``file:line`` so that a value
frozen into the graph as a constant can be traced back to the line that lost it.
"""

from __future__ import annotations

import linecache
import sys
import warnings
from types import FrameType
from typing import Protocol

from .._stack import user_stacklevel
from ..errors import TraceLossError, TraceLossWarning
from .location import _is_library, library_callee, user_frame


class LossCollector(Protocol):
    """What a loss report needs of the recorder (the recorder imports this module)."""

    losses: list[str]
    strict: bool


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


_SEQUENCE = (
    "a NumPy call reads a traced value held in a list or tuple this way (np.square([a, b]), "
    "np.diag([...])) and the value is frozen in the graph as a constant; build the array "
    "first with np.array([...]) or np.stack(...), which stay traced; otherwise keep the value "
    "an array and use NumPy / torch functions on it"
)
# conversions a user writes on purpose: their own hint (keep it an array) applies
_DIRECT_CALLS = ("float(", "int(", "complex(", "bool(", "round(", "range(", "math.", "operator.")


def running_expression(frame: FrameType | None) -> str | None:
    """Source text of the expression ``frame`` is executing (its instruction's column span,
    one line), or None where Python or the source does not say."""
    if frame is None:
        return None
    try:
        positions = list(frame.f_code.co_positions())
        line, end_line, col, end_col = positions[frame.f_lasti // 2]
    except (AttributeError, IndexError, ValueError):
        return None
    if line is None or line != end_line or col is None or end_col is None:
        return None
    text = linecache.getline(frame.f_code.co_filename, line).encode()
    return text[col:end_col].decode(errors="replace") or None


def conversion_by_numpy(name: str) -> tuple[str, str] | None:
    """(what, hint) for ``name`` (``__float__``...) run by the expression on the user's line
    when that is not a conversion the user wrote (``float(x)``, ``math.sqrt(x)``): a NumPy
    call reading a list of traced values, most often; None where the source does not say."""
    expression = running_expression(user_frame(3))
    if expression is None or expression.startswith(_DIRECT_CALLS):
        return None
    return f"{expression} read traced data as a Python number (ndarray.{name}())", _SEQUENCE


def report_loss(recorder: LossCollector | None, what: str, consequence: str | None = None) -> str:
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
    recorder: LossCollector | None, filename: str, lineno: int, what: str, consequence: str
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
