"""Where :class:`FunctionPatch` lived first; it belongs to the patch model in ``patching``."""

from ..patching.function_patch import FunctionPatch, check_tolerances, validate_function_patches

__all__ = ["FunctionPatch", "check_tolerances", "validate_function_patches"]
