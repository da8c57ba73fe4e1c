"""Rotary embeddings that recompute their frequencies without keeping state.

transformers decorates every rotary ``forward`` with ``dynamic_rope_update``. For
``rope_type="dynamic"`` it branches in Python on ``max(position_ids) + 1`` (a value, so
``torch.export`` fails with a data-dependent guard) and stores the grown frequencies on the
module; for ``"longrope"`` it stores a tensor attribute and copies into a buffer, so an
export leaves a fake tensor on the eager model. The replacement below picks the
frequencies with ``torch.where`` from the current positions only, lends them to the
undecorated ``forward`` for the duration of the call, and changes nothing on the module.
It equals the original on a module that has not grown its cache yet (a fresh model).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

STATEFUL_ROPE_TYPES = ("dynamic", "longrope")


def needs_stateless_rope(rope_type: Any) -> bool:
    """True when a ``rope_type`` (a string, or a dict per layer type) updates state in forward."""
    kinds = rope_type.values() if isinstance(rope_type, dict) else [rope_type]
    return any(
        isinstance(kind, str) and ("dynamic" in kind or kind == "longrope") for kind in kinds
    )


def _rope_function(module: Any, rope_type: str) -> Callable[..., Any]:
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    return ROPE_INIT_FUNCTIONS[rope_type]


def frequencies_for_positions(
    module: Any, position_ids: torch.Tensor, device: Any, layer_type: str | None
) -> tuple[torch.Tensor, float | None]:
    """Inverse frequencies (and a new attention scaling, or None) for these positions.

    ``dynamic``: NTK-scaled frequencies for ``max(position_ids) + 1`` when it exceeds the
    original length, else the original ones. ``longrope``: long factors beyond the
    original pretraining length, short ones otherwise. Both choices are ``torch.where``.
    """
    prefix = "" if layer_type is None else f"{layer_type}_"
    rope_type = module.rope_type if layer_type is None else module.rope_type[layer_type]
    layer_kwargs = {} if layer_type is None else {"layer_type": layer_type}
    seq_len = torch.max(position_ids) + 1
    original = getattr(module, f"{prefix}original_inv_freq").to(device)
    if "dynamic" in rope_type:
        grown, scaling = _rope_function(module, rope_type)(
            module.config, device, seq_len=seq_len, **layer_kwargs
        )
        limit = module.original_max_seq_len
        return torch.where(seq_len > limit, grown.to(original.dtype), original), scaling
    parameters = module.config.rope_parameters
    if layer_type is not None:
        parameters = parameters[layer_type]
    limit = parameters["original_max_position_embeddings"]
    long_freq, _ = _rope_function(module, rope_type)(
        module.config, device, seq_len=limit + 1, **layer_kwargs
    )
    return torch.where(seq_len > limit, long_freq.to(original.dtype), original), None


def make_stateless_rotary_forward(undecorated: Callable[..., Any]) -> Callable[..., Any]:
    """Build the replacement of a decorated rotary ``forward`` around its undecorated body."""

    def rotary_forward_without_state(
        self: Any, x: torch.Tensor, position_ids: torch.Tensor, layer_type: str | None = None
    ) -> Any:
        kwargs = {} if layer_type is None else {"layer_type": layer_type}
        rope_type = self.rope_type if layer_type is None else self.rope_type[layer_type]
        if not needs_stateless_rope(rope_type):
            return undecorated(self, x, position_ids, **kwargs)
        name = "inv_freq" if layer_type is None else f"{layer_type}_inv_freq"
        inv_freq, scaling = frequencies_for_positions(self, position_ids, x.device, layer_type)
        saved_freq = self._buffers[name]
        saved_scaling = self.__dict__.get("attention_scaling")
        self._buffers[name] = inv_freq  # lent for this call only, put back below
        if scaling is not None and "attention_scaling" in self.__dict__:
            self.attention_scaling = scaling
        try:
            return undecorated(self, x, position_ids, **kwargs)
        finally:
            self._buffers[name] = saved_freq
            if "attention_scaling" in self.__dict__:
                self.attention_scaling = saved_scaling

    return rotary_forward_without_state


def decorated_rope_body(forward: Any) -> Callable[..., Any] | None:
    """The undecorated body of a ``dynamic_rope_update``-decorated ``forward``, else None.

    Recognized by code identity with the wrapper transformers builds, not by names, so a
    renamed class or a moved module does not fool it; a forward wrapped again on top is
    not recognized (replacing it would drop the outer wrapper).
    """
    from transformers.modeling_rope_utils import dynamic_rope_update

    reference = dynamic_rope_update(lambda self, x, position_ids: None)
    func = getattr(forward, "__func__", forward)
    if getattr(func, "__code__", None) is reference.__code__:
        return getattr(func, "__wrapped__", None)
    return None
