"""What each backend is given for a node's dynamic axes (``annotate.input_tensors(dynamic=)``).

``torch.export`` and the dynamo ONNX exporter take one ``Dim`` per name (a name shared by
ports is one ``Dim``: equal sizes); the TorchScript ONNX exporter takes ``dynamic_axes``.
An axis traced at size 1 is exported from an example grown to 2 along it (torch treats a
size-1 example as a constant); the exported program still accepts 1.
"""

from __future__ import annotations

from typing import Any

import torch

from ..errors import PatchportError


class DynamicShapeError(PatchportError, ValueError):
    """A dynamic axis cannot change size in the exported model; the message says why."""


def grown_examples(args: tuple[torch.Tensor, ...], dynamic: list[dict[int, str]]) -> tuple:
    """The example inputs, each axis of a name traced at size 0 or 1 repeated to size 2."""
    small = {
        name
        for tensor, axes in zip(args, dynamic)
        for axis, name in axes.items()
        if tensor.shape[axis] < 2
    }
    if not small:
        return args
    grown = []
    for tensor, axes in zip(args, dynamic):
        for axis, name in axes.items():
            if name in small and tensor.shape[axis] == 1:
                tensor = tensor.repeat_interleave(2, dim=axis)
        grown.append(tensor)
    return tuple(grown)


def torch_dynamic_shapes(dynamic: list[dict[int, str]]) -> tuple[dict[int, Any] | None, ...]:
    """``dynamic_shapes=`` for ``torch.export`` / ``torch.onnx.export(dynamo=True)``,
    by input position: one ``Dim`` per name, accepting sizes from 1."""
    dims: dict[str, Any] = {}
    for axes in dynamic:
        for name in axes.values():
            dims.setdefault(name, torch.export.Dim(name, min=1))
    return tuple({axis: dims[name] for axis, name in axes.items()} or None for axes in dynamic)


def export_arguments(
    args: tuple[torch.Tensor, ...],
    names: list[str],
    dynamic: dict[str, dict[int, str]],
    exporter: str,
) -> tuple[tuple, dict[str, Any]]:
    """``(example args, extra keyword arguments)`` for ``exporter`` (``"torch.export"``,
    ``"onnx-dynamo"`` or ``"onnx-torchscript"``); unchanged when no axis is dynamic."""
    if not dynamic:
        return args, {}
    per_input = [dict(dynamic.get(name) or {}) for name in names]
    examples = grown_examples(args, per_input)
    if exporter == "onnx-torchscript":
        axes = {name: dict(a) for name, a in zip(names, per_input) if a}
        return examples, {"dynamic_axes": axes}
    return examples, {"dynamic_shapes": torch_dynamic_shapes(per_input)}


def explain_export_failure(node: str, dynamic: dict[str, dict[int, str]], exc: Exception) -> str:
    """A torch refusal of the dynamic axes, said with the user's dimension names."""
    text = str(exc)
    named = sorted({name for axes in dynamic.values() for name in axes.values()})
    fixed = [name for name in named if f"marked {name} as dynamic" in text]
    lines = [
        f"node {node!r}: torch fixed {', '.join(fixed) or 'a dynamic dimension'} while "
        f"exporting with dynamic axes {dynamic}."
    ]
    for line in text.splitlines():
        if "specialized it to be a constant" in line:
            name = line.split("marked ", 1)[-1].split(" as dynamic", 1)[0]
            value = line.rsplit("(", 1)[-1].rstrip(").")
            lines.append(f"  {name} is fixed to {value} by the recorded graph")
    lines.append(
        "  fix: compute sizes with traced operations instead of Python numbers from .shape, "
        "or drop the axis from dynamic=."
    )
    return "\n".join(lines)
