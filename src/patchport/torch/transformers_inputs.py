"""Caches as export inputs: pytree registration and building a filled ``DynamicCache``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from ..versions import installed_version


def register_cache_pytrees() -> bool:
    """Register transformers' ``DynamicCache`` as a pytree node (idempotent).

    ``torch.export`` flattens inputs and outputs with pytrees; a model that takes or
    returns a cache cannot be exported or run without this. Returns False when
    transformers is not installed or offers no registration helper.
    """
    if installed_version("transformers") is None:
        return False
    try:
        from transformers.integrations.executorch import register_dynamic_cache_export_support
    except ImportError:
        return False
    register_dynamic_cache_export_support()
    return True


def make_dynamic_cache(
    config: Any,
    keys: Sequence[torch.Tensor],
    values: Sequence[torch.Tensor],
    full_sliding_layers: bool = False,
) -> Any:
    """A ``DynamicCache`` laid out for ``config`` (sliding layers where it says so),
    holding ``keys[i]`` / ``values[i]`` (``batch, kv_heads, past, head_dim``) for layer ``i``.

    With ``full_sliding_layers``, sliding-window layers keep the whole past instead of
    the last ``window - 1`` positions: that is what a program exported with transformers'
    sliding-window export patch reads (it traces those layers as full layers).
    """
    from transformers import DynamicCache

    if len(keys) != len(values):
        raise ValueError(
            f"make_dynamic_cache: got {len(keys)} key tensors and {len(values)} value tensors; "
            f"pass one of each per layer."
        )
    cache = DynamicCache(config=config)
    if len(cache.layers) != len(keys):
        raise ValueError(
            f"make_dynamic_cache: the config has {len(cache.layers)} layers but {len(keys)} key "
            f"tensors were given; pass one per layer."
        )
    for index, (key, value) in enumerate(zip(keys, values)):
        layer = cache.layers[index]
        if full_sliding_layers and hasattr(layer, "activate_past_recording"):
            layer.activate_past_recording()
        cache.update(key, value, index)
    return cache
