"""Tracing sessions: function patches, annotations, and the session lifecycle."""

from ..patching import FunctionPatch
from . import annotate
from .dispatch import PatchRuleError
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
