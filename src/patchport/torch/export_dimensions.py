"""Dimension names: strings in ``dynamic_shapes`` name a dimension for the report; each
requested dynamic dimension is found again, with its size, in the exported program."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch.utils import _pytree as pytree


def name_dims(dynamic_shapes: Any) -> tuple[Any, Any]:
    """``(marked, plain)``: names (strings) kept as markers for the report, and replaced by
    ``Dim.DYNAMIC`` for torch.export."""
    dynamic = torch.export.Dim.DYNAMIC

    def convert(value: Any) -> Any:
        if isinstance(value, str):
            return _NamedDynamic(value)
        if isinstance(value, dict):
            return {key: convert(item) for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(convert(item) for item in value)
        return value

    marked = convert(dynamic_shapes)

    def strip(value: Any) -> Any:
        if isinstance(value, _NamedDynamic):
            return dynamic
        if isinstance(value, dict):
            return {key: strip(item) for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(strip(item) for item in value)
        return value

    return marked, strip(marked)


class _NamedDynamic:
    """A placeholder for a dimension the user named with a string."""

    def __init__(self, name: str) -> None:
        self.name = name


def _dim_label(dim: Any, fallback: str) -> str:
    if isinstance(dim, _NamedDynamic):
        return dim.name
    name = getattr(dim, "__name__", None)
    if isinstance(name, str) and name and not name.startswith("_"):
        return name
    return fallback


def _axes(spec: Any) -> dict[int, Any]:
    if isinstance(spec, dict):
        return {int(axis): dim for axis, dim in spec.items() if dim is not None}
    if isinstance(spec, (list, tuple)):
        return {axis: dim for axis, dim in enumerate(spec) if dim is not None}
    return {}


def leaf_name(path: Sequence[Any]) -> str:
    """``cache.key_cache[0]``: a pytree path as the user would write it."""
    text = ""
    for key in path:
        if isinstance(key, pytree.MappingKey):
            text += f".{key.key}" if text else str(key.key)
        elif isinstance(key, pytree.SequenceKey):
            text += f"[{key.idx}]"
        elif isinstance(key, pytree.GetAttrKey):
            text += f".{key.name}"
        else:
            text += str(key)
    return text


def _leaf_source(path: Sequence[Any]) -> str:
    text = "L"
    for key in path:
        if isinstance(key, pytree.MappingKey):
            text += f"[{key.key!r}]"
        elif isinstance(key, pytree.SequenceKey):
            text += f"[{key.idx}]"
        elif isinstance(key, pytree.GetAttrKey):
            text += f".{key.name}"
    return text


@dataclass
class Dimension:
    """A requested dynamic dimension: its label, its source in torch's guards, its size in
    the program (a SymInt, or an int when torch fixed it) and the range asked for."""

    label: str
    source: str
    size: Any
    requested_min: int
    requested_max: int | None


def requested_dimensions(
    model: torch.nn.Module, args: tuple, kwargs: dict, marked_shapes: Any, ep: Any
) -> list[Dimension]:
    """Each requested dynamic dimension with its size in the exported program."""
    from torch._export.non_strict_utils import _flatten_dynamic_shapes
    from torch.export.dynamic_shapes import _combine_args

    combined = _combine_args(model, args, kwargs)
    if isinstance(marked_shapes, (tuple, list)):  # positional: in signature order
        marked_shapes = dict(zip(combined, marked_shapes))
    specs = _flatten_dynamic_shapes(combined, marked_shapes)
    leaves = pytree.tree_flatten_with_path(combined)[0]
    by_id = {id(leaf): (path, spec) for (path, leaf), spec in zip(leaves, specs)}
    placeholders = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    user_inputs = [
        placeholders.get(name) if isinstance(name, str) else None
        for name in ep.graph_signature.user_inputs
    ]
    from torch.export._tree_utils import reorder_kwargs

    ordered = reorder_kwargs(kwargs, ep.call_spec.in_spec) if kwargs else {}
    flat = pytree.tree_leaves((args, ordered))
    found = []
    for leaf, node in zip(flat, user_inputs):
        if node is None or id(leaf) not in by_id or not isinstance(leaf, torch.Tensor):
            continue
        path, spec = by_id[id(leaf)]
        value = node.meta.get("val")
        for axis, dim in _axes(spec).items():
            label = _dim_label(dim, f"{leaf_name(path)}.shape[{axis}]")
            low = getattr(dim, "min", None)
            high = getattr(dim, "max", None)
            found.append(
                Dimension(
                    label,
                    f"{_leaf_source(path)}.size()[{axis}]",
                    value.shape[axis] if value is not None else None,
                    max(int(low), 1) if isinstance(low, int) else 1,
                    int(high) if isinstance(high, int) and high < 2**62 else None,
                )
            )
    return found


def sizes_by_label(
    model: torch.nn.Module, args: tuple, kwargs: dict, dynamic_shapes: Any
) -> dict[str, set[int]]:
    """The sizes each named dynamic dimension takes in one set of inputs
    (``{"seq": {1}, "batch": {2}}``): which sizes a shape check ran."""
    from torch._export.non_strict_utils import _flatten_dynamic_shapes
    from torch.export.dynamic_shapes import _combine_args

    marked = name_dims(dynamic_shapes)[0]
    combined = _combine_args(model, args, kwargs)
    if isinstance(marked, (tuple, list)):
        marked = dict(zip(combined, marked))
    found: dict[str, set[int]] = {}
    leaves = pytree.tree_flatten_with_path(combined)[0]
    for (path, leaf), spec in zip(leaves, _flatten_dynamic_shapes(combined, marked)):
        if isinstance(leaf, torch.Tensor):
            for axis, dim in _axes(spec).items():
                label = _dim_label(dim, f"{leaf_name(path)}.shape[{axis}]")
                found.setdefault(label, set()).add(int(leaf.shape[axis]))
    return found


def labels_by_source(
    model: torch.nn.Module, args: tuple, kwargs: dict, dynamic_shapes: Any
) -> dict[str, str]:
    """``{"L['input_ids'].size()[1]": "seq"}``: torch's name of each requested dynamic
    dimension, with the user's."""
    from torch._export.non_strict_utils import _flatten_dynamic_shapes
    from torch.export.dynamic_shapes import _combine_args

    marked = name_dims(dynamic_shapes)[0]
    combined = _combine_args(model, args, kwargs)
    if isinstance(marked, (tuple, list)):
        marked = dict(zip(combined, marked))
    found: dict[str, str] = {}
    leaves = pytree.tree_flatten_with_path(combined)[0]
    for (path, leaf), spec in zip(leaves, _flatten_dynamic_shapes(combined, marked)):
        if isinstance(leaf, torch.Tensor):
            for axis, dim in _axes(spec).items():
                label = _dim_label(dim, f"{leaf_name(path)}.shape[{axis}]")
                found[f"{_leaf_source(path)}.size()[{axis}]"] = label
    return found
