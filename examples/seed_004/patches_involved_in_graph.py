"""Seed 004, "How to identify which patches affected the exported graph", plus the report."""

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

patches = details.patches_involved_in_graph(ep.graph)
print(f"Patches that contributed nodes: {len(patches)}")
for patch_info, nodes in patches:
    node_names = [n.name for n in nodes]
    print(f"  {patch_info.name}: {node_names}")

report = details.make_report(patches, format="raw")
print(report)
