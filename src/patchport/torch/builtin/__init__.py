"""Shipped patches of torch (and later transformers) internals, declared with their versions."""

from .registry import TORCH_PATCHES, TRANSFORMERS_PATCHES, builtin_patches
from .spec import BuiltinPatch

__all__ = ["TORCH_PATCHES", "TRANSFORMERS_PATCHES", "BuiltinPatch", "builtin_patches"]
