"""Rewrites that keep ONNX Runtime's own graph optimisations from miscomputing a model.

ORT's Transpose+MatMul fusion (on at its default level, ENABLE_ALL) folds a Transpose of
the first MatMul input into a FusedMatMul and, when the second input is a vector (rank 1),
computes ``A @ v`` instead of ``A.T @ v`` (onnxruntime 1.32, float32 and float64). Every
``R.T @ v`` of geometry code would replay wrong. A rank-1 second input is therefore
written as a one-column matrix: ``Squeeze(MatMul(A, Unsqueeze(v, -1)), -1)``, the same
product, which the fusion handles.
"""

from __future__ import annotations

from typing import Any


def _ranks(model: Any) -> dict[str, int]:
    """The rank of every value whose shape the model (or ONNX shape inference) knows."""
    import onnx

    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001 - without inference, only the declared shapes
        inferred = model
    graph = inferred.graph
    ranks: dict[str, int] = {}
    for value in (*graph.input, *graph.value_info, *graph.output):
        tensor = value.type.tensor_type
        if tensor.HasField("shape"):
            ranks[value.name] = len(tensor.shape.dim)
    for init in graph.initializer:
        ranks[init.name] = len(init.dims)
    return ranks


def _fresh(name: str, used: set[str]) -> str:
    while name in used:
        name += "_"
    used.add(name)
    return name


def vector_products_as_matrix_products(model: Any) -> int:
    """Rewrite each MatMul with a rank-1 second input in place; return how many."""
    import onnx
    from onnx import helper

    graph = model.graph
    ranks = _ranks(model)
    nodes = list(graph.node)
    chosen = [
        n.op_type == "MatMul"
        and n.domain in ("", "ai.onnx")
        and ranks.get(n.input[1]) == 1
        and ranks.get(n.input[0], 0) >= 2
        for n in nodes
    ]
    if not any(chosen):
        return 0
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 13)
    used = {name for node in graph.node for name in (*node.input, *node.output)}
    used |= {i.name for i in graph.initializer} | {v.name for v in graph.input}
    axes = _fresh("_pp_vector_axis", used)
    graph.initializer.append(onnx.numpy_helper.from_array(_axis(), axes))
    new_nodes: list[Any] = []
    for node, rewrite in zip(nodes, chosen):
        if not rewrite:
            new_nodes.append(node)
            continue
        column = _fresh(f"{node.input[1]}_as_column", used)
        product = _fresh(f"{node.output[0]}_as_column", used)
        if opset >= 13:
            unsqueeze = helper.make_node("Unsqueeze", [node.input[1], axes], [column])
            squeeze = helper.make_node("Squeeze", [product, axes], [node.output[0]])
        else:
            unsqueeze = helper.make_node("Unsqueeze", [node.input[1]], [column], axes=[-1])
            squeeze = helper.make_node("Squeeze", [product], [node.output[0]], axes=[-1])
        unsqueeze.name, squeeze.name = column, f"{product}_squeeze"
        node.input[1] = column
        node.output[0] = product
        new_nodes.extend([unsqueeze, node, squeeze])
    del graph.node[:]
    graph.node.extend(new_nodes)
    return sum(chosen)


def _axis() -> Any:
    import numpy as np

    return np.array([-1], dtype=np.int64)
