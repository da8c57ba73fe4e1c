"""Rewrites that keep ONNX Runtime's own graph optimisations from miscomputing a model.

ORT's Transpose+MatMul fusion (on at its default level, ENABLE_ALL) folds a Transpose of
the first MatMul input into a FusedMatMul and, when the second input is a vector (rank 1),
computes ``A @ v`` instead of ``A.T @ v`` (onnxruntime 1.32, float32 and float64). Every
``R.T @ v`` of geometry code would replay wrong. A rank-1 second input is therefore
written as a one-column matrix: ``Squeeze(MatMul(A, Unsqueeze(v, -1)), -1)``, the same
product, which the fusion handles.

The same level crashes the process (a segmentation fault while the session opens,
onnxruntime 1.32, through its NCHWc transformer) on an integer Transpose whose result is
cast to float and multiplied: ``Transpose -> Gather -> Transpose -> Cast -> MatMul``, what
``np.ascontiguousarray(bgr[..., ::-1]).astype(np.float64) @ M`` translates to. The cast
is moved before the Transpose (:func:`cast_before_transposes_into_products`): the same
values, one Transpose of floats instead of bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
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


_PRODUCTS = {"MatMul", "Gemm"}
_RESHAPES = {"Reshape", "Identity", "Squeeze", "Unsqueeze", "Flatten"}


def cast_before_transposes_into_products(nodes: list[Any], outputs: Sequence[str]) -> int:
    """In the direct translator's node list (``proto.Node``), move each Cast that feeds a
    MatMul/Gemm and reads a Transpose (through reshapes that only it reads, none of them a
    graph output) to before that Transpose (see the module note); return how many moved."""
    rewritten = 0
    while True:
        move = _cast_to_move(nodes, set(outputs))
        if move is None:
            return rewritten
        cast, chain = move
        transpose, last = chain[0], chain[-1]
        widened = f"{cast.outputs[0]}_before_transpose"
        moved = type(cast)("Cast", [transpose.inputs[0]], [widened], dict(cast.attributes))
        transpose.inputs = [widened, *transpose.inputs[1:]]
        last.outputs = list(cast.outputs)
        nodes.remove(cast)
        nodes.insert(nodes.index(transpose), moved)
        rewritten += 1


def _cast_to_move(nodes: list[Any], outputs: set[str]) -> tuple[Any, list[Any]] | None:
    """A Cast feeding a product and the Transpose..reshapes chain it reads, or None."""
    producer = {out: node for node in nodes for out in node.outputs}
    readers: dict[str, list[Any]] = {}
    for node in nodes:
        for name in node.inputs:
            readers.setdefault(name, []).append(node)
    for cast in nodes:
        if cast.op_type != "Cast" or not cast.inputs:
            continue
        if not any(r.op_type in _PRODUCTS for r in readers.get(cast.outputs[0], [])):
            continue
        chain: list[Any] = []
        value = cast.inputs[0]
        while True:
            node = producer.get(value)
            alone = len(readers.get(value, [])) == 1 and value not in outputs
            if node is None or not alone or len(node.outputs) != 1:
                break
            if node.op_type == "Transpose":
                return cast, [node, *reversed(chain)]
            if node.op_type not in _RESHAPES:
                break
            chain.append(node)
            value = node.inputs[0]
    return None
