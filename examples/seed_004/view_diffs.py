"""Seed 004, "How to view the diff for each patch"."""

from patchport.torch import apply_patches_for_model

with apply_patches_for_model(patch_torch=True) as details:
    pass  # patches are removed on exit but diffs remain accessible

# Show the first few lines of each diff.
for patch in details:
    diff_lines = patch.format_diff(format="raw").splitlines()
    print(f"=== {patch.name} ===")
    print("\n".join(diff_lines[:8]))
    print("...")
    print()
