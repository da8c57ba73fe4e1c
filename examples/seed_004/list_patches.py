"""Seed 004, "How to list the patches that were applied"."""

from patchport.torch import apply_patches_for_model

with apply_patches_for_model(patch_torch=True) as details:
    for patch in details:
        print(f"[{patch.family}] {patch.name}")
