"""ONNX translations for ops that exported transformers programs contain and torch's ONNX
exporter does not know, for ``torch.onnx.export(program, dynamo=True,
custom_translation_table=onnx_translation_table())``.

MoE experts in transformers >= 5 call ``torch.ops.transformers.grouped_mm_fallback`` (one
matrix product per expert over the rows routed to it, rows sorted by expert). It has no
ONNX translation in torch; the one here unrolls the experts (their number is a weight
dimension, static) into one ``MatMul`` per expert on that expert's rows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def grouped_mm_fallback_onnx(input: Any, weight: Any, offs: Any) -> Any:  # noqa: A002
    """``out[r] = input[r] @ weight[e]`` for the rows ``r`` of expert ``e``, the rows of
    expert ``e`` ending at ``offs[e]``: a ``Slice`` and a ``MatMul`` per expert."""
    from onnxscript import opset18 as op

    experts = weight.shape[0]
    if not isinstance(experts, int):
        raise ValueError(
            "grouped_mm_fallback: the number of experts (weight.shape[0]) must be static to "
            "translate to ONNX"
        )
    ends = op.Cast(offs, to=7)  # INT64
    zero = op.Constant(value_ints=[0])
    start = zero
    pieces = []
    for expert in range(experts):
        index = op.Constant(value_ints=[expert])
        end = op.Slice(ends, index, op.Constant(value_ints=[expert + 1]), zero)
        rows = op.Slice(input, start, end, zero)
        matrix = op.Squeeze(op.Gather(weight, index, axis=0), zero)
        pieces.append(op.MatMul(rows, matrix))
        start = end
    return op.Concat(*pieces, axis=0)


def onnx_translation_table() -> dict[Any, Callable[..., Any]]:
    """Translations for ``custom_translation_table``: the ops above that exist here."""
    import torch

    table: dict[Any, Callable[..., Any]] = {}
    namespace = getattr(torch.ops, "transformers", None)
    if namespace is not None:
        try:
            table[namespace.grouped_mm_fallback.default] = grouped_mm_fallback_onnx
        except (AttributeError, RuntimeError):  # transformers without the MoE op
            pass
    return table
