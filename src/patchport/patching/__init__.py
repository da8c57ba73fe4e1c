"""The patch model: every replacement patchport makes is a PatchInfo held in a PatchDetails."""

from .patch_details import PatchDetails, SkippedPatch
from .patch_info import PatchInfo, active_patch_of, original_of

__all__ = ["PatchDetails", "PatchInfo", "SkippedPatch", "active_patch_of", "original_of"]
