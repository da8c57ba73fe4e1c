"""Names of an exported model's flat ONNX inputs and outputs, and of its dynamic dimensions.

Caches are flat tensors named as ONNX Runtime GenAI and optimum name them:
``past_key_values.N.key`` / ``.value`` in, ``present.N.key`` / ``.value`` out, and for an
encoder-decoder cache ``past_key_values.N.decoder.key`` (self-attention) and
``past_key_values.N.encoder.key`` (cross-attention). Other leaves are named by their path
(``input_ids``, ``logits``). Dimensions keep the names the user gave in ``dynamic_shapes``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch.utils import _pytree as pytree

_CACHE_PART = {"key_cache": "key", "value_cache": "value"}
_ATTENTION = {"self_attention_cache": "decoder", "cross_attention_cache": "encoder"}


def _key_text(key: Any) -> str:
    if isinstance(key, pytree.MappingKey):
        return str(key.key)
    if isinstance(key, pytree.SequenceKey):
        return str(key.idx)
    if isinstance(key, pytree.GetAttrKey):
        return key.name
    return str(key)


def leaf_onnx_name(path: Sequence[Any], cache_prefix: str) -> str:
    """``past_key_values.0.key`` for a cache leaf (``cache_prefix`` names the cache),
    ``input_ids`` or ``a.b.0`` for others."""
    texts = [_key_text(key) for key in path]
    for index, text in enumerate(texts):
        if text in _CACHE_PART and index + 1 < len(texts):
            attention = [_ATTENTION[t] for t in texts[:index] if t in _ATTENTION]
            parts = [cache_prefix, texts[index + 1], *attention, _CACHE_PART[text]]
            return ".".join(parts)
    return ".".join(texts) if texts else "output"


def tensor_leaves(tree: Any, cache_prefix: str) -> list[tuple[str, torch.Tensor]]:
    """The tensor leaves of ``tree`` in pytree order, each with its ONNX name."""
    named = []
    for path, leaf in pytree.tree_flatten_with_path(tree)[0]:
        if isinstance(leaf, torch.Tensor):
            named.append((leaf_onnx_name(path, cache_prefix), leaf))
    names = [name for name, _ in named]
    if len(set(names)) != len(names):  # two leaves alike: fall back to their index
        return [(f"{name}.{i}", leaf) for i, (name, leaf) in enumerate(named)]
    return named


def ordered_inputs(program: Any, model: torch.nn.Module, args: tuple, kwargs: dict) -> Any:
    """``(args, kwargs)`` in the order the program flattens them (its traced kwargs order),
    positional arguments named by ``forward``'s parameters."""
    import inspect

    from torch.export._tree_utils import reorder_kwargs

    ordered = reorder_kwargs(kwargs, program.call_spec.in_spec) if kwargs else {}
    parameters = list(inspect.signature(model.forward).parameters)
    named_args = dict(zip(parameters, args))
    return {**named_args, **ordered}


def input_dimension_names(
    model: torch.nn.Module, args: tuple, kwargs: dict, dynamic_shapes: Any
) -> dict[int, dict[int, str]]:
    """For each tensor leaf (by ``id``), its dynamic axes named as in ``dynamic_shapes``."""
    from torch._export.non_strict_utils import _flatten_dynamic_shapes
    from torch.export.dynamic_shapes import _combine_args

    from .export_dimensions import _axes, _dim_label, leaf_name, name_dims

    if dynamic_shapes is None:
        return {}
    marked = name_dims(dynamic_shapes)[0]
    combined = _combine_args(model, args, kwargs)
    if isinstance(marked, (tuple, list)):
        marked = dict(zip(combined, marked))
    specs = _flatten_dynamic_shapes(combined, marked)
    leaves = pytree.tree_flatten_with_path(combined)[0]
    found: dict[int, dict[int, str]] = {}
    for (path, leaf), spec in zip(leaves, specs):
        axes = _axes(spec)
        if isinstance(leaf, torch.Tensor) and axes:
            found[id(leaf)] = {
                axis: _dim_label(dim, f"{leaf_name(path)}.shape[{axis}]")
                for axis, dim in axes.items()
            }
    return found
