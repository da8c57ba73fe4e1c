"""Source text of callables and unified diffs between two of them.

Patches are audited by reading what changed, so every patch can show the diff between
the function it replaces and its replacement, even for methods and wrapped functions.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import textwrap
from collections.abc import Callable
from typing import Any


def wraps_original(original: Callable[..., Any]) -> Callable[[Callable], Callable]:
    """Decorator: give a replacement the original's face (``__doc__``, ``__name__``,
    ``__qualname__``, ``__module__``, signature and a builtin's ``__text_signature__``,
    ``__wrapped__`` to the original) so it is
    invisible to plain code; its own source stays the one a patch's diff shows."""

    def decorate(replacement: Callable[..., Any]) -> Callable[..., Any]:
        source = getattr(replacement, "__pp_source__", replacement)
        try:
            functools.update_wrapper(replacement, original)
        except (AttributeError, TypeError):  # pragma: no cover - exotic callables
            pass
        text_signature = getattr(original, "__text_signature__", None)
        if text_signature is not None:  # a builtin's; code (NumPy's tests) reads it
            replacement.__text_signature__ = text_signature  # type: ignore[attr-defined]
        if not hasattr(original, "__module__"):  # a C method descriptor has none
            replacement.__module__ = None  # type: ignore[assignment]
        replacement.__pp_source__ = source  # type: ignore[attr-defined]
        return replacement

    return decorate


def _source_target(func: Callable[..., Any]) -> Any:
    """The function whose source a patch shows: a replacement with the original's face
    names its own source (``__pp_source__``); otherwise ``__wrapped__`` is followed."""
    source = getattr(func, "__pp_source__", None)
    return source if source is not None else inspect.unwrap(func)


def source_of(func: Callable[..., Any]) -> str:
    """Return the dedented source of ``func``, or a one-line note saying why there is none."""
    target = _source_target(func)
    target = getattr(target, "__func__", target)  # bound methods, classmethods
    try:
        return textwrap.dedent(inspect.getsource(target)).strip("\n")
    except (OSError, TypeError):
        qualname = getattr(target, "__qualname__", repr(target))
        return f"# source unavailable for {qualname} (compiled or generated code)"


def unified_diff(original: str, rewritten: str) -> str:
    """Return a unified diff ``--- original`` / ``+++ rewritten`` of two source texts."""
    lines = difflib.unified_diff(
        original.splitlines(),
        rewritten.splitlines(),
        fromfile="original",
        tofile="rewritten",
        lineterm="",
    )
    return "\n".join(lines)


def source_span(func: Callable[..., Any]) -> tuple[str, int, int] | None:
    """Return ``(file, first_line, last_line)`` of ``func``'s source, or None if unknown."""
    target = _source_target(func)
    target = getattr(target, "__func__", target)
    try:
        filename = inspect.getsourcefile(target)
        lines, first = inspect.getsourcelines(target)
    except (OSError, TypeError):
        return None
    if filename is None:
        return None
    return filename, first, first + len(lines) - 1
