"""Caches as export inputs: pytree registration and building a filled ``DynamicCache``."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import torch

from ..verbose import say
from ..versions import installed_version

logger = logging.getLogger(__name__)


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
    if not _register_dynamic_cache():
        register_dynamic_cache_export_support()
    _register_encoder_decoder_cache()
    return True


def _register_dynamic_cache() -> bool:
    """``DynamicCache`` as a node with transformers' flattening (same leaves, same context
    ``[dict keys, sliding windows]``) but patchport's unflattening, which rebuilds a
    sliding-window layer from the window as a Python int.

    transformers' ``_unflatten_dynamic_cache`` passes the window through
    ``torch.tensor([window]).item()``: harmless eagerly and under ``torch.export``, but
    when ``torch.onnx`` traces the program again under fake tensors that ``item()`` is a
    data-dependent value and the conversion fails (``GuardOnDataDependentSymNode``).
    A transformers registration already in place is replaced (the context format is
    the same, so programs and specs stay valid). Returns False when this transformers
    lacks the helpers, and the caller falls back to transformers' registration.
    """
    from torch.fx import _pytree as fx_pytree
    from torch.utils import _pytree as pytree

    try:
        from transformers import DynamicCache
        from transformers.integrations.executorch import (
            _flatten_cache_dict,
            _flatten_cache_dict_spec,
            _flatten_cache_dict_with_keys,
            _get_cache_dict,
            _get_dynamic_cache_layout,
        )
    except ImportError:
        return False
    registered = pytree.SUPPORTED_NODES.get(DynamicCache)
    if registered is not None:
        if registered.unflatten_fn is _unflatten_dynamic_cache:
            return True
        pytree._deregister_pytree_node(DynamicCache)
        fx_pytree.SUPPORTED_NODES.pop(DynamicCache, None)
        fx_pytree.SUPPORTED_NODES_EXACT_MATCH.pop(DynamicCache, None)
    pytree.register_pytree_node(
        DynamicCache,
        lambda cache: _flatten_cache_dict(_get_cache_dict(cache), _get_dynamic_cache_layout(cache)),
        _unflatten_dynamic_cache,
        serialized_type_name=f"{DynamicCache.__module__}.{DynamicCache.__name__}",
        flatten_with_keys_fn=lambda cache: _flatten_cache_dict_with_keys(
            _get_cache_dict(cache), _get_dynamic_cache_layout(cache)
        ),
    )
    fx_pytree.register_pytree_flatten_spec(
        DynamicCache,
        lambda cache, spec: _flatten_cache_dict_spec(
            _get_cache_dict(cache), _get_dynamic_cache_layout(cache), spec
        ),
    )
    return True


def _unflatten_dynamic_cache(values: list[Any], context: Any) -> Any:
    """A ``DynamicCache`` from its leaves, as transformers builds it, except that a
    sliding-window layer gets its window as the int of the context (no tensor, no
    ``item()``), so torch.onnx can trace the program again."""
    from itertools import zip_longest

    from torch.utils import _pytree as pytree
    from transformers import DynamicCache
    from transformers.cache_utils import DynamicLayer, DynamicSlidingWindowLayer

    dictionary_keys, layout = context
    dictionary = pytree._dict_unflatten(values, dictionary_keys)
    if all(window is None for window in layout):
        # no sliding layer: exactly transformers' construction
        return DynamicCache(zip_longest(dictionary["key_cache"], dictionary["value_cache"], layout))
    layers = [
        DynamicLayer() if window is None else DynamicSlidingWindowLayer(sliding_window=int(window))
        for window in layout
    ]
    cache = DynamicCache()  # then given its layers, as ``Cache(layers=...)`` would hold them
    cache.layers = layers
    cache.layer_class_to_replicate = None
    for layer, key, value in zip(layers, dictionary["key_cache"], dictionary["value_cache"]):
        if key is not None and value is not None:
            layer.update(key, value)
    return cache


def _register_encoder_decoder_cache() -> None:
    """``EncoderDecoderCache`` (T5, Whisper, ...) as a node of its two ``DynamicCache``:
    ``[self_attention_cache, cross_attention_cache]`` (transformers registers none)."""
    from torch.utils import _pytree as pytree
    from transformers import EncoderDecoderCache

    if EncoderDecoderCache in pytree.SUPPORTED_NODES:
        return

    def children(cache: Any) -> list[Any]:
        return [cache.self_attention_cache, cache.cross_attention_cache]

    names = ("self_attention_cache", "cross_attention_cache")
    pytree.register_pytree_node(
        EncoderDecoderCache,
        lambda cache: (children(cache), None),
        lambda values, _context: EncoderDecoderCache(*values),
        serialized_type_name=f"{EncoderDecoderCache.__module__}.EncoderDecoderCache",
        flatten_with_keys_fn=lambda cache: (
            [(pytree.GetAttrKey(n), c) for n, c in zip(names, children(cache))],
            None,
        ),
    )


def make_dynamic_cache(
    config: Any,
    keys: Sequence[torch.Tensor] | None = None,
    values: Sequence[torch.Tensor] | None = None,
    full_sliding_layers: bool = False,
) -> Any:
    """A ``DynamicCache`` laid out for ``config`` (sliding layers where it says so),
    holding ``keys[i]`` / ``values[i]`` (``batch, kv_heads, past, head_dim``) for layer ``i``.

    With ``full_sliding_layers``, sliding-window layers keep the whole past instead of
    the last ``window - 1`` positions: that is what a program exported with transformers'
    sliding-window export patch reads (it traces those layers as full layers).
    yobx's form, ``make_dynamic_cache([(key, value), ...])`` (or a flat ``[k0, v0, k1, v1,
    ...]`` list) without a config, gives one full (non-sliding) layer per pair.
    """
    from transformers import DynamicCache

    if isinstance(config, (list, tuple)):
        if keys is not None or values is not None:
            raise ValueError(
                "make_dynamic_cache: pass either a list of (key, value) pairs alone, or a "
                "config with keys= and values=; got a list and keys/values."
            )
        keys, values = _split_pairs(config)
        config = None
    if keys is None or values is None:
        raise ValueError("make_dynamic_cache(config, keys, values): keys and values are needed.")
    if config is None:
        cache = DynamicCache()
        for index, (key, value) in enumerate(zip(keys, values)):
            cache.update(key, value, index)
        return cache
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


def _split_pairs(pairs: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    """Keys and values from ``[(k0, v0), ...]`` or from a flat ``[k0, v0, k1, v1, ...]``."""
    if all(isinstance(item, torch.Tensor) for item in pairs):
        if len(pairs) % 2:
            raise ValueError(
                f"make_dynamic_cache: a flat list holds key, value, key, value, ...; got "
                f"{len(pairs)} tensors, an odd count."
            )
        return list(pairs[::2]), list(pairs[1::2])
    if not all(isinstance(item, (list, tuple)) and len(item) == 2 for item in pairs):
        raise ValueError(
            "make_dynamic_cache: the list must hold (key, value) pairs, one per layer."
        )
    return [key for key, _ in pairs], [value for _, value in pairs]


def torch_deepcopy(value: Any) -> Any:
    """A deep copy of inputs, caches included (yobx's ``torch_deepcopy``): a forward fills
    a ``DynamicCache`` in place, so each call that must see the same past gets its own copy."""
    import copy

    return copy.deepcopy(value)


def _cache_classes() -> list[type]:
    """transformers' cache classes that ``register_cache_pytrees`` makes pytree nodes."""
    from transformers import DynamicCache, EncoderDecoderCache

    return [DynamicCache, EncoderDecoderCache]


@contextmanager
def register_flattening_functions(
    patch_transformers: bool = False, verbose: int = 0
) -> Iterator[list[type]]:
    """Register transformers' cache classes as pytree nodes for the ``with`` block.

    yobx's name for what :func:`register_cache_pytrees` does, as a context manager: it
    yields the classes it registered and, on exit, unregisters those (and only those) that
    were not registered before. With ``patch_transformers=False`` it registers nothing.
    """
    from torch.fx import _pytree as fx_pytree
    from torch.utils import _pytree as pytree

    added: list[type] = []
    if patch_transformers and installed_version("transformers") is not None:
        before = {cls for cls in _cache_classes() if cls in pytree.SUPPORTED_NODES}
        register_cache_pytrees()
        added = [c for c in _cache_classes() if c in pytree.SUPPORTED_NODES and c not in before]
        for cls in added:
            say(logger, verbose, "registered %s as a pytree node", cls.__name__)
    try:
        yield added
    finally:
        for cls in added:
            pytree._deregister_pytree_node(cls)
            fx_pytree.SUPPORTED_NODES.pop(cls, None)
            fx_pytree.SUPPORTED_NODES_EXACT_MATCH.pop(cls, None)
            say(logger, verbose, "unregistered %s", cls.__name__)
