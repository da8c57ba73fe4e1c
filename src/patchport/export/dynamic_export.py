"""What each backend is given for a node's dynamic axes (``annotate.input_tensors(dynamic=)``).

``torch.export`` and the dynamo ONNX exporter take ``Dim.AUTO`` for each dynamic axis
(torch then keeps the range the graph allows instead of refusing, e.g. a crop at
``h // 4`` needs ``h >= 2``); :func:`accepted_ranges` reads back what the program
accepts, refuses a dimension torch fixed, and the bundle records narrowed ranges. The
TorchScript ONNX exporter takes ``dynamic_axes``. An axis traced at size 1 is exported
from an example grown to 2 along it (torch treats a size-1 example as a constant).
"""

from __future__ import annotations

from typing import Any

import torch

from ..errors import DynamicShapeError


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


def torch_dynamic_shapes(
    dynamic: list[dict[int, str]], auto: bool = False, minimum: int = 1
) -> tuple[dict[int, Any] | None, ...]:
    """``dynamic_shapes=`` for ``torch.export`` / ``torch.onnx.export(dynamo=True)``, by
    input position: one ``Dim(name, min=minimum)`` per name, or ``Dim.AUTO`` on each axis."""
    dims: dict[str, Any] = {}
    for axes in dynamic:
        for name in axes.values():
            dims.setdefault(
                name, torch.export.Dim.AUTO if auto else torch.export.Dim(name, min=minimum)
            )
    return tuple({axis: dims[name] for axis, name in axes.items()} or None for axes in dynamic)


def export_dynamic(export: Any, args: tuple, names: list[str], dynamic: Any) -> Any:
    """``export(args, dynamic_shapes=...)`` with every size from 1 allowed; where torch
    finds the graph needs a narrower range (``Constraints violated``, not a dimension
    fixed to a constant), exported again with ``Dim.AUTO`` (ranges read back after); where
    torch cannot say the range (sizes computed with ``//`` and ``%``, as cv2.resize's
    ``fx``/``fy`` sizes are), again from each smallest size 2, 4, 8... up to the traced one."""
    per_input = [dict(dynamic.get(name) or {}) for name in names]
    try:
        return export(args, dynamic_shapes=torch_dynamic_shapes(per_input))
    except Exception as exc:
        text = str(exc)
        if "specialized it to be a constant" in text:
            raise
        first = exc
    if "Constraints violated" in str(first):
        try:
            return export(args, dynamic_shapes=torch_dynamic_shapes(per_input, auto=True))
        except Exception as exc:  # torch's range solver fails on some floor expressions
            if "specialized it to be a constant" in str(exc):
                raise
    traced = min(
        (int(a.shape[axis]) for a, axes in zip(args, per_input) for axis in axes), default=1
    )
    minimum = 2
    while minimum <= traced:
        try:
            return export(args, dynamic_shapes=torch_dynamic_shapes(per_input, minimum=minimum))
        except Exception:
            minimum *= 2
    raise first


def accepted_ranges(
    node: str, program: Any, names: list[str], dynamic: dict[str, dict[int, str]]
) -> dict[str, list[int | None]]:
    """``{name: [min, max or None]}`` the exported program accepts, where narrower than
    ``[1, None]``; a dimension torch fixed to its example size is refused in words."""
    placeholders = [n for n in program.graph.nodes if n.op == "placeholder"]
    user_inputs = [
        spec.arg.name
        for spec in program.graph_signature.input_specs
        if spec.kind.name == "USER_INPUT"
    ]
    by_name = {n.name: n for n in placeholders}
    ranges: dict[str, list[int | None]] = {}
    fixed = []
    for port, placeholder in zip(names, user_inputs):
        value = by_name[placeholder].meta.get("val")
        for axis, name in (dynamic.get(port) or {}).items():
            size = value.shape[axis] if value is not None else None
            if not isinstance(size, torch.SymInt):
                fixed.append(
                    f"  {name} is fixed to {size} by the recorded graph ({port!r} {axis=})"
                )
                continue
            bounds = program.range_constraints.get(size.node.expr)
            if bounds is None:
                continue
            low, high = _bound(bounds.lower) or 1, _bound(bounds.upper)
            if low > 1 or high is not None:
                known = ranges.setdefault(name, [low, high])
                known[0] = max(known[0] or 1, low)
    if fixed:
        raise DynamicShapeError(
            f"node {node!r}: torch fixed dynamic dimensions while exporting:\n"
            + "\n".join(fixed)
            + "\n  fix: compute sizes with traced operations, or drop the axis from dynamic=."
        )
    return ranges


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
    return examples, {}  # dynamic_shapes: see export_dynamic


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
    if len(lines) == 1:
        said = str(exc).strip().splitlines()
        lines.append(f"  torch said: {type(exc).__name__}: {said[0][:300] if said else ''}")
    lines.append(
        "  fix: compute sizes with traced operations instead of Python numbers from .shape, "
        "or drop the axis from dynamic=."
    )
    return "\n".join(lines)


def _bound(value: Any) -> int | None:
    """A finite sympy bound as an int; None for infinity."""
    try:
        number = int(value)
    except (TypeError, ValueError, AttributeError, OverflowError):
        return None
    return number if abs(number) < 2**62 else None


def name_onnx_dims(path: Any, names: list[str], dynamic: dict[str, dict[int, str]]) -> None:
    """Give the ONNX inputs' dynamic dimensions the user's names (``batch``, ``width``)."""
    import onnx

    model = onnx.load(str(path))
    for value in model.graph.input:
        axes = dynamic.get(value.name) or {}
        dims = value.type.tensor_type.shape.dim
        for axis, name in axes.items():
            if axis < len(dims):
                dims[axis].dim_param = name
    onnx.save(model, str(path))
