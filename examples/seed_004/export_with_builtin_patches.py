"""Seed 004, "How to apply the built-in patches when exporting" (imports mapped to patchport)."""

import torch

from patchport.torch import apply_patches_for_model, use_dyn_not_str
from patchport.torch.tiny_models import TinyBroadcastAddModel

model = TinyBroadcastAddModel()
inputs = TinyBroadcastAddModel._export_inputs()
dynamic_shapes = use_dyn_not_str(TinyBroadcastAddModel._dynamic_shapes())

with (
    torch.fx.experimental._config.patch(backed_size_oblivious=True),
    apply_patches_for_model(patch_torch=True) as details,
):
    ep = torch.export.export(model, (), kwargs=inputs, dynamic_shapes=dynamic_shapes)

print(f"Applied {details.n_patches} patch(es).")
print(ep)
