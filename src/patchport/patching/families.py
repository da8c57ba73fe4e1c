"""The families of patches patchport itself makes; a user's PatchInfo may name its own."""

from __future__ import annotations

import enum


class PatchFamily(str, enum.Enum):
    """Who made a patch and why; reads (``str``, f-strings, ``==``) as its plain name."""

    TORCH = "torch"  # shipped fixes of torch internals (apply_patches_for_model)
    TRANSFORMERS = "transformers"  # shipped and found transformers patches
    EXPORT = "export"  # patchport's own patches around its ONNX exports
    INTEROP = "interop"  # NumPy <-> torch conversions that keep traced data traced
    WATCH = "watch"  # native functions that warn when traced data reaches them
    USER = "user"  # a session's FunctionPatch, where it was declared
    ALIAS = "alias"  # the same FunctionPatch where user code from-imported the function
    CUSTOM = "custom"  # what a PatchInfo without a family is listed as

    def __str__(self) -> str:
        return self.value

    __format__ = str.__format__
