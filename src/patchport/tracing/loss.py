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
from .location import _is_library, user_frame

if TYPE_CHECKING:
    from .recorder import Recorder


# what a conversion to a Python value does to the graph, and how to keep it traced
PYTHON_VALUE_CONSEQUENCES = {
    "__bool__": "a Python if / while / and / or on traced data takes this sample's branch "
    "and the graph keeps only that branch; compute both sides and pick with np.where / "
    "torch.where (guards such as `if norm > 0: x / norm` become np.where(norm > 0, x / "
    "np.maximum(norm, tiny), x))",
    "__float__": "the number is frozen into the graph as a constant; keep it an array or tensor "
    "(x[()] or x.reshape(())) and use NumPy / torch functions on it (np.sqrt, not math.sqrt)",
}
PYTHON_VALUE_CONSEQUENCES["__int__"] = PYTHON_VALUE_CONSEQUENCES["__float__"]
PYTHON_VALUE_CONSEQUENCES["item"] = PYTHON_VALUE_CONSEQUENCES["__float__"]


def report_loss(recorder: Recorder | None, what: str, consequence: str | None = None) -> str:
    """Warn (or raise when strict) that ``what`` took data out of the trace; return the location."""
    target = user_frame(2)
    where = "<unknown>" if target is None else f"{target.f_code.co_filename}:{target.f_lineno}"
    tail = consequence or "the result is no longer traced and would be frozen as a constant"
    message = f"trace lost at {where}: {what}; {tail}"
    if recorder is not None:
        recorder.losses.append(message)
        if recorder.strict:
            raise TraceLossError(message)
    warnings.warn(message, TraceLossWarning, stacklevel=_level_of(target))
    return where


def _level_of(target: FrameType | None) -> int:
    """``stacklevel`` making a warning from ``report_loss`` point at frame ``target``."""
    frame, level = sys._getframe(2), 2
    while frame is not None and frame is not target:
        frame, level = frame.f_back, level + 1
    return level if frame is not None else user_stacklevel(_is_library) - 1
