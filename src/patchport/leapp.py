"""LEAPP's ``leapp.leapp`` module path: the manager instance and the session functions.

LEAPP programs and tests import ``from leapp.leapp import _MANAGER as annotate``; with the
imports rewritten to ``patchport`` they get the same objects as ``patchport``'s own names.
"""

from __future__ import annotations

from .export import ExportManager, compile_graph
from .sessions import annotate, start, stop

_MANAGER = ExportManager()

__all__ = ["_MANAGER", "annotate", "compile_graph", "start", "stop"]
