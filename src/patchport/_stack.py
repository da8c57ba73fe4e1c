"""Where a patchport warning should point: the first frame of the user's own code.

Light on purpose (no numpy or torch import): the patch model uses it too. Frames inside
patchport and contextlib (``with patchport.session(...)``) are skipped.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from types import CodeType

_PATCHPORT_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_CONTEXTLIB = contextlib.__file__


def user_stacklevel(is_library: Callable[[CodeType], bool] | None = None) -> int:
    """``stacklevel`` for a ``warnings.warn`` made by the caller of this function.

    ``is_library`` skips more frames (the tracing engine passes one that also skips
    NumPy and torch, whose functions sit between a traced operation and the user).
    """
    frame = sys._getframe(1)
    level = 1
    while frame is not None and (
        frame.f_code.co_filename.startswith(_PATCHPORT_DIR)
        or frame.f_code.co_filename == _CONTEXTLIB
        or (is_library is not None and is_library(frame.f_code))
    ):
        frame = frame.f_back
        level += 1
    return level
