"""Copies where the program asks for contiguous memory, before ``torch.onnx.export``.

``torch.onnx.export`` decomposes the program again (under its own
``backed_size_oblivious``, for dimensions of size 0 and 1). In that trace Swin's and T5's
attention output, ``x.transpose(1, 2).contiguous()``, comes back with the transposed
strides, and the view the model takes of it next fails ("Cannot view a tensor with shape
[4*s99, 16, 2, 8] and strides (256, 8, 128, 1)"; whether T5 reaches it depended on the
attention torch picked earlier in the process). ``aten.contiguous`` may return its input
when it judges it contiguous; ``aten.clone(memory_format=torch.contiguous_format)``
always gives contiguous strides. So each ``aten.contiguous`` becomes that clone; ONNX has
no memory layout, so the file computes the same thing.
"""

from __future__ import annotations

from typing import Any

import torch


def contiguous_as_clones(program: Any) -> int:
    """Rewrite, in place, each ``aten.contiguous.default`` of ``program`` (an
    ExportedProgram, subgraphs included) as a contiguous ``aten.clone``; returns how many."""
    contiguous, clone = torch.ops.aten.contiguous.default, torch.ops.aten.clone.default
    changed = 0
    for module in program.graph_module.modules():
        graph = getattr(module, "graph", None)
        if not isinstance(graph, torch.fx.Graph):
            continue
        count = 0
        for node in graph.nodes:
            if node.op == "call_function" and node.target is contiguous:
                layout = node.kwargs.get("memory_format", torch.contiguous_format)
                node.target = clone
                node.args = node.args[:1]
                node.kwargs = {"memory_format": layout}
                count += 1
        if count:
            module.recompile()
            changed += count
    return changed
