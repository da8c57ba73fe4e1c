"""Tracing sessions: function patches, annotations, and the session lifecycle."""

from . import annotate
from .dispatch import PatchRuleError
from .function_patch import FunctionPatch
from .lifecycle import current_session, last_session, session, session_patches, start, stop

__all__ = [
    "FunctionPatch",
    "PatchRuleError",
    "annotate",
    "current_session",
    "last_session",
    "session",
    "session_patches",
    "start",
    "stop",
]
