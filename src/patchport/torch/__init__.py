"""patchport.torch: patches that make ``torch.export.export`` succeed, and their helpers."""

from .apply import apply_patches_for_model, collect_patches
from .dynamic_shapes import use_dyn_not_str

__all__ = ["apply_patches_for_model", "collect_patches", "use_dyn_not_str"]
