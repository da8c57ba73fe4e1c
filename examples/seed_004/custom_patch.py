"""Seed 004, "How to write a custom patch" (do / undo by hand)."""

import torch
import torch._refs

from patchport.patching import PatchInfo


def my_broadcast_shapes(*_shapes):
    """Minimal stand-in that returns the first non-empty shape."""
    for s in _shapes:
        if s:
            return list(s)
    return []


patch = PatchInfo.make(
    my_broadcast_shapes,
    torch._refs,
    "_broadcast_shapes",
    family="torch",
)

patch.do()
print("active patch:", patch.name)
print("patched function:", torch._refs._broadcast_shapes.__name__)

patch.undo()
print("after undo:", torch._refs._broadcast_shapes.__name__)
