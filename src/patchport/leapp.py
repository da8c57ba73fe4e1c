"""LEAPP's ``leapp.leapp`` module path: the manager instance and the session functions.

LEAPP programs and tests import ``from leapp.leapp import _MANAGER as annotate``; with the
imports rewritten to ``patchport`` they get the same objects as ``patchport``'s own names.
Importing it also lets ``annotate`` answer the manager's other names (see
:func:`_manager_name`); it sits above sessions and export, so imports keep one direction.
"""

from __future__ import annotations

from typing import Any

from .export import ExportManager, compile_graph
from .sessions import annotate, start, stop

_MANAGER = ExportManager()


def _manager_name(name: str) -> Any:
    """``annotate.<name>`` for the manager's other names (``start``, ``stop``,
    ``compile_graph``, ``nodes``, ``detected_pipeline``, ...), for LEAPP revisions where
    ``annotate`` is the manager. Read from ``ExportManager()``; nothing is stored."""
    if not name.startswith("_"):
        try:
            return getattr(ExportManager(), name)
        except AttributeError:
            pass
    raise AttributeError(f"module {annotate.__name__!r} has no attribute {name!r}")


annotate.__getattr__ = _manager_name  # module-level __getattr__ (PEP 562), set from above

__all__ = ["_MANAGER", "annotate", "compile_graph", "start", "stop"]
