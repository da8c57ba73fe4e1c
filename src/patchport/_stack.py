"""Where a patchport warning should point: the first frame of the user's own code.

Light on purpose (no numpy or torch import): the patch model uses it too. Frames inside
patchport and contextlib (``with patchport.session(...)``) are skipped.
"""

from __future__ import annotations

import contextlib
import os
import sys

_PATCHPORT_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_CONTEXTLIB = contextlib.__file__


def user_stacklevel() -> int:
    """``stacklevel`` for a ``warnings.warn`` made by the caller of this function."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None and (
        frame.f_code.co_filename.startswith(_PATCHPORT_DIR)
        or frame.f_code.co_filename == _CONTEXTLIB
    ):
        frame = frame.f_back
        level += 1
    return level
