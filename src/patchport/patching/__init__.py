"""The patch model: every replacement patchport makes is a PatchInfo held in a PatchDetails.

Declarations become PatchInfo objects: a user's :class:`FunctionPatch` through a tracing
session, a shipped :class:`~patchport.patching.declaration.PatchDeclaration` through its
``resolve(model)``.
"""

from .declaration import PatchDeclaration, split_resolved, version_skip_reason
from .families import PatchFamily
from .function_patch import FunctionPatch
from .patch_details import PatchDetails, SkippedPatch
from .patch_info import PatchInfo, active_patch_of, original_of

__all__ = [
    "FunctionPatch",
    "PatchDeclaration",
    "PatchDetails",
    "PatchFamily",
    "PatchInfo",
    "SkippedPatch",
    "active_patch_of",
    "original_of",
    "split_resolved",
    "version_skip_reason",
]
