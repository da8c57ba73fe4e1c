"""Casts made explicit where torch.onnx's type promotion cannot re-dispatch an op.

``torch.onnx.export`` decomposes ``aten.rsub.Scalar(x, number)`` (``1.0 - mask``, the
inverted attention mask of XLNet and ProphetNet) into ``aten.sub.Tensor(number, x)``, a
call no schema of ``aten.sub`` takes with a number first. When ``x`` needs promoting (an
integer mask minus a float), its type-promotion pass casts ``x`` and looks the op up again
by its arguments, and fails ("Cannot find a compatible OpOverload for aten.sub"). Casting
``x`` to the result's dtype in the program first leaves nothing to promote: torch computes
the promoted subtraction in that dtype anyway, so the file computes the same thing.
"""

from __future__ import annotations

from typing import Any

import torch


def cast_before_promoted_rsub(program: Any) -> int:
    """Rewrite, in place, each ``aten.rsub.Scalar`` of ``program`` (an ExportedProgram,
    subgraphs included) whose tensor's dtype differs from its result's as the same rsub of
    that tensor cast to the result's dtype; returns how many."""
    rsub, cast = torch.ops.aten.rsub.Scalar, torch.ops.aten._to_copy.default
    changed = 0
    for module in program.graph_module.modules():
        graph = getattr(module, "graph", None)
        if not isinstance(graph, torch.fx.Graph):
            continue
        count = 0
        for node in list(graph.nodes):
            if node.op != "call_function" or node.target is not rsub:
                continue
            source = node.args[0]
            before = getattr(source, "meta", {}).get("val")
            after = node.meta.get("val")
            if not isinstance(before, torch.Tensor) or not isinstance(after, torch.Tensor):
                continue
            if before.dtype == after.dtype:
                continue
            with graph.inserting_before(node):
                promoted = graph.call_function(cast, (source,), {"dtype": after.dtype})
            promoted.meta.update(
                {k: v for k, v in node.meta.items() if k not in ("val", "tensor_meta")}
            )
            promoted.meta["val"] = before.to(after.dtype)
            node.args = (promoted, *node.args[1:])
            count += 1
        if count:
            module.recompile()
            changed += count
    return changed
