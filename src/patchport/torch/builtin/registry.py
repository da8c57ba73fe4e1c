"""The shipped patches, declared once; ``patchport patches list`` and the docs read this."""

from __future__ import annotations

from ...patching import PatchFamily
from .spec import BuiltinPatch
from .torch_broadcast import (
    broadcast_shapes_any_size,
    infer_size_any_size,
    maybe_broadcast_any_size,
)
from .torch_export_fixes import get_range_constraints_by_name, print_symbol_or_name
from .transformers_attention import attention_interface_for_export
from .transformers_cache import lazy_initialization_without_constants

# every torch patch is verified by the test suite on torch 2.13 and 2.14
_VERIFIED = ">=2.13,<2.15"

# in yobx's order (its tests read details[0]), so programs indexing the list agree
TORCH_PATCHES: tuple[BuiltinPatch, ...] = (
    BuiltinPatch(
        family=PatchFamily.TORCH,
        module="torch.fx.experimental.symbolic_shapes",
        attribute="DynamicDimConstraintPrinter._print_Symbol",
        replacement=print_symbol_or_name,
        distribution="torch",
        versions=_VERIFIED,
        why="constraint suggestions print solver symbols instead of crashing",
    ),
    BuiltinPatch(
        family=PatchFamily.TORCH,
        module="torch._subclasses.fake_impls",
        attribute="infer_size",
        replacement=infer_size_any_size,
        distribution="torch",
        versions=_VERIFIED,
        why="binary ops on fake tensors broadcast symbolic sizes without failing on hints",
    ),
    BuiltinPatch(
        family=PatchFamily.TORCH,
        module="torch._refs",
        attribute="_broadcast_shapes",
        replacement=broadcast_shapes_any_size,
        distribution="torch",
        versions=_VERIFIED,
        why="undecided symbolic broadcasts give max(a, b) instead of guards on example sizes",
    ),
    BuiltinPatch(
        family=PatchFamily.TORCH,
        module="torch.export._trace",
        attribute="_get_range_constraints",
        replacement=get_range_constraints_by_name,
        distribution="torch",
        versions=_VERIFIED,
        why="positional dynamic_shapes stay paired with their inputs when kwargs are reordered, "
        "and inputs forward takes through **kwargs are paired at all",
    ),
    BuiltinPatch(
        family=PatchFamily.TORCH,
        module="torch._refs",
        attribute="_maybe_broadcast",
        replacement=maybe_broadcast_any_size,
        distribution="torch",
        versions=_VERIFIED,
        why="fake tensors with undecided broadcasts are not expanded through guarded checks",
    ),
)

TRANSFORMERS_PATCHES: tuple[BuiltinPatch, ...] = (
    BuiltinPatch(
        family=PatchFamily.TRANSFORMERS,
        module="transformers.modeling_utils",
        attribute="AttentionInterface.get_interface",
        replacement=attention_interface_for_export,
        distribution="transformers",
        versions=">=5.0,<6.0",
        why="SDPA attention takes one path for every query length, so seq=1 (decode) stays "
        "accepted by the exported program",
    ),
    BuiltinPatch(
        family=PatchFamily.TRANSFORMERS,
        module="transformers.cache_utils",
        attribute="DynamicLayer.lazy_initialization",
        replacement=lazy_initialization_without_constants,
        distribution="transformers",
        versions=">=5.0,<6.0",
        why="empty cache layers are made from the incoming states, not torch.tensor([]), so "
        "a program taking a cache has no lifted constants and converts to ONNX",
        group="cache",
    ),
)
# Patches found from a model's own modules (rotary embeddings) are declared in
# patchport.torch.transformers_patches.MODULE_PATCHES; transformers' own export patches
# are read from transformers.exporters at run time.


def builtin_patches(family: str | None = None) -> tuple[BuiltinPatch, ...]:
    """All shipped patch declarations, or those of one family."""
    everything = TORCH_PATCHES + TRANSFORMERS_PATCHES
    return tuple(p for p in everything if family is None or p.family == family)
