"""Find the user's own ``file:line`` behind a traced operation.

Warnings and constant origins must point at the user's code, not at a line inside
patchport, NumPy or torch, so the stack is walked past those libraries' frames.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from functools import cache
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
# code object -> True when the frame is user code (outside the interpreter's libraries)
_USER_CACHE: dict[CodeType, bool] = {}


@cache
def library_roots() -> tuple[str, ...]:
    """Folders whose files are not user code: the standard library, site-packages, patchport."""
    paths = sysconfig.get_paths()
    roots = {paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib") if key in paths}
    roots.add(_PATCHPORT_DIR)
    roots.add(sys.prefix)
    roots.add(sys.base_prefix)
    return tuple(os.path.normcase(os.path.abspath(root)).rstrip(os.sep) + os.sep for root in roots)


def is_user_file(filename: str) -> bool:
    """The user-module rule: a file outside the interpreter's libraries and patchport."""
    if filename.startswith("<"):  # exec'd code, a notebook cell, the REPL
        return not filename.startswith(_LIBRARY_MARKERS)
    if not os.path.isabs(filename):
        filename = os.path.abspath(filename)
    return not os.path.normcase(filename).startswith(library_roots())


def is_user_code(code: CodeType) -> bool:
    """Whether a code object is user code (cached per code object)."""
    user = _USER_CACHE.get(code)
    if user is None:
        user = _USER_CACHE[code] = is_user_file(code.co_filename) and not _is_library(code)
    return user


def add_library_dir(path: str) -> None:
    """Treat frames under ``path`` as library frames (e.g. cv2) when locating user code."""
    global _LIBRARY_DIRS
    full = os.path.abspath(path) + os.sep
    if full not in _LIBRARY_DIRS:
        _LIBRARY_DIRS = (*_LIBRARY_DIRS, full)
        _SKIP_CACHE.clear()
        _USER_CACHE.clear()


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
    """Return the innermost user frame (the alias scan's user-module rule: a call into a
    pure-Python library names the user's line that made it); failing that, the innermost
    frame outside patchport, NumPy and torch."""
    first = sys._getframe(depth)
    frame = first
    while frame is not None and not is_user_code(frame.f_code):
        frame = frame.f_back
    if frame is not None:
        return frame
    frame = first
    while frame is not None and _is_library(frame.f_code):
        frame = frame.f_back
    return frame


def user_location(depth: int = 2) -> str:
    """Return ``"file:line"`` of the innermost user frame, or ``"<unknown>"``."""
    frame = user_frame(depth)
    if frame is None:
        return "<unknown>"
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


def library_callee(target: FrameType | None, depth: int = 2) -> str | None:
    """``module.function`` of the library frame the user's frame ``target`` called, when
    the loss happened inside a library (``PIL.Image.fromarray``); None when patchport's
    own code (a dispatch, a watcher) or nothing stands between them."""
    if target is None:
        return None
    frame, callee = sys._getframe(depth), None
    while frame is not None and frame is not target:
        frame, callee = frame.f_back, frame
    if frame is None or callee is None:
        return None
    code = callee.f_code
    if code.co_filename.startswith(_PATCHPORT_DIR) or code.co_filename.startswith("<frozen "):
        return None
    module = callee.f_globals.get("__name__", "")
    name = getattr(code, "co_qualname", code.co_name)
    return f"{module}.{name}" if module else name
