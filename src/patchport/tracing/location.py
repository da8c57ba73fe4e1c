"""Find the user's own ``file:line`` behind a traced operation.

Warnings and constant origins must point at the user's code, not at a line inside
patchport, NumPy or torch, so the stack is walked past those libraries' frames.
"""

from __future__ import annotations

import os
import sys
from types import CodeType, FrameType

import numpy as _np
import torch as _torch

_PATCHPORT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_LIBRARY_DIRS: tuple[str, ...] = (
    _PATCHPORT_DIR,
    os.path.dirname(os.path.abspath(_np.__file__)) + os.sep,
    os.path.dirname(os.path.abspath(_torch.__file__)) + os.sep,
)
_LIBRARY_MARKERS = ("<__array_function__", "<frozen ")

# code object -> True when the frame belongs to a library we skip
_SKIP_CACHE: dict[CodeType, bool] = {}


def add_library_dir(path: str) -> None:
    """Treat frames under ``path`` as library frames (e.g. cv2) when locating user code."""
    global _LIBRARY_DIRS
    full = os.path.abspath(path) + os.sep
    if full not in _LIBRARY_DIRS:
        _LIBRARY_DIRS = (*_LIBRARY_DIRS, full)
        _SKIP_CACHE.clear()


def _is_library(code: CodeType) -> bool:
    skip = _SKIP_CACHE.get(code)
    if skip is None:
        name = code.co_filename
        skip = name.startswith(_LIBRARY_DIRS) or name.startswith(_LIBRARY_MARKERS)
        if not skip and not os.path.isabs(name) and not name.startswith("<"):
            skip = os.path.abspath(name).startswith(_LIBRARY_DIRS)
        _SKIP_CACHE[code] = skip
    return skip


def user_frame(depth: int = 1) -> FrameType | None:
    """Return the innermost stack frame that is not inside patchport, NumPy or torch."""
    frame = sys._getframe(depth)
    while frame is not None and _is_library(frame.f_code):
        frame = frame.f_back
    return frame


def user_location(depth: int = 2) -> str:
    """Return ``"file:line"`` of the innermost user frame, or ``"<unknown>"``."""
    frame = user_frame(depth)
    if frame is None:
        return "<unknown>"
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"
