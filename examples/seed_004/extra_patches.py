"""Seed 004, custom patch passed through ``extra_patches``."""

import torch
import torch._refs

from patchport.patching import PatchInfo
from patchport.torch import apply_patches_for_model


def my_broadcast_shapes(*_shapes):
    """Minimal stand-in that returns the first non-empty shape."""
    for s in _shapes:
        if s:
            return list(s)
    return []


my_patch = PatchInfo.make(
    my_broadcast_shapes,
    torch._refs,
    "_broadcast_shapes",
    family="custom",
)

with apply_patches_for_model(extra_patches=[my_patch]) as details:
    print(f"Total patches: {details.n_patches}")
    for p in details:
        print(f"  [{p.family}] {p.name}")
    print("patched function:", torch._refs._broadcast_shapes.__name__)

print("after context, function restored:", torch._refs._broadcast_shapes.__name__)
