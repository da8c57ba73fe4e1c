"""Report traced data leaving the traced world: a warning, or an error when strict.

Every message names the operation and the user's own ``file:line`` so that a value
frozen into the graph as a constant can be traced back to the line that lost it.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

from .._stack import user_stacklevel
from ..errors import TraceLossError, TraceLossWarning
from .location import _is_library, user_location

if TYPE_CHECKING:
    from .recorder import Recorder


def report_loss(recorder: Recorder | None, what: str, consequence: str | None = None) -> str:
    """Warn (or raise when strict) that ``what`` took data out of the trace; return the location."""
    where = user_location(2)
    tail = consequence or "the result is no longer traced and would be frozen as a constant"
    message = f"trace lost at {where}: {what}; {tail}"
    if recorder is not None:
        recorder.losses.append(message)
        if recorder.strict:
            raise TraceLossError(message)
    warnings.warn(message, TraceLossWarning, stacklevel=user_stacklevel(_is_library))
    return where
