"""SDPA attention without Python branches on the query length, while exporting.

transformers' ``sdpa_attention_forward`` tests ``q_length == 1`` (to pack grouped heads
for a single token) and ``q_length > 1`` (to decide ``is_causal``) in Python. Under
``torch.export`` with ``backed_size_oblivious=True`` each test becomes a guard, and the
program rejects ``seq == 1``: the decode step. When an explicit mask is given, which is
what transformers builds while exporting, both branches compute the same attention, so
the replacement takes the single path that does not depend on the query length (and
repeats grouped key/value heads without a reshape that guards on the length).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from ...patching import original_of


def _repeat_heads(states: torch.Tensor, groups: int) -> torch.Tensor:
    """``(b, kv_heads, s, d) -> (b, kv_heads * groups, s, d)``, each head repeated in place.

    transformers reshapes an expanded view, which makes torch guard ``s != 1`` while it
    decides strides; ``repeat_interleave`` builds the same tensor without that guard.
    """
    if groups == 1:
        return states
    return torch.repeat_interleave(states, groups, dim=1)


def repeat_kv_without_reshape(hidden_states: torch.Tensor, n_rep: int) -> torch.Tensor:
    """transformers' ``repeat_kv`` (``(b, kv, s, d) -> (b, kv * n_rep, s, d)``) without the
    reshape of an expanded view that makes torch guard ``s != 1``."""
    return _repeat_heads(hidden_states, n_rep)


def _dense(tensor: torch.Tensor) -> torch.Tensor:
    """A contiguous copy made without asking whether the tensor is contiguous already:
    that question (and ``matmul``'s reshapes of strided views) makes torch guard on
    sizes being != 1."""
    return tensor.clone(memory_format=torch.contiguous_format)


def fused_qkv_split_dense(
    self: Any, fused_qkv: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Bloom's ``_reshape`` (the fused projection ``(b, s, heads * 3 * d)`` split into
    query, key and value ``(b, heads, s, d)``) giving contiguous tensors instead of strided
    views: Bloom then reshapes the query to ``(b * heads, -1, d)``, and on the view torch
    guards ``s != 1`` (under ``backed_size_oblivious``) or traces the mask length as at
    least 4 (without), so the program rejects the decode step from a one-token past."""
    batch_size, seq_length, _ = fused_qkv.shape
    fused_qkv = fused_qkv.view(batch_size, seq_length, self.num_heads, 3, self.head_dim)
    return tuple(_dense(fused_qkv[..., part, :].transpose(1, 2)) for part in range(3))


def merged_heads_dense(self: Any, x: torch.Tensor) -> torch.Tensor:
    """Bloom's ``_merge_heads`` (``(b * heads, s, d) -> (b, s, heads * d)``) reshaping a
    contiguous copy of the permuted heads, not the permuted view, whose reshape made
    torch guard ``s != 1``."""
    batch_size_and_num_heads, seq_length, _ = x.shape
    batch_size = batch_size_and_num_heads // self.num_heads
    x = x.view(batch_size, self.num_heads, seq_length, self.head_dim)
    x = _dense(x.permute(0, 2, 1, 3))
    return x.view(batch_size, seq_length, self.num_heads * self.head_dim)


def latent_keys_concatenated(
    self: Any, kv_nope: torch.Tensor, k_rot: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """DeepSeek's ``expand_kv`` (multi-head latent attention: the compressed keys
    ``(b, 1, s, kv_lora_rank)`` expanded to per-head keys and values) with the keys made by
    ``torch.cat`` of their two parts instead of ``copy_`` into slices of an empty tensor:
    the same values, but the in-place copies made torch guard ``past + seq != 1`` and
    ``batch >= 2`` (the decode step from a one-token past and batch 1 were refused)."""
    batch_size, _, seq_length, _ = kv_nope.shape
    key_shape = (batch_size, seq_length, -1, self.qk_nope_head_dim + self.v_head_dim)
    kv_nope = self.kv_b_proj(kv_nope).view(key_shape).transpose(1, 2)
    k_nope, value_states = torch.split(kv_nope, [self.qk_nope_head_dim, self.v_head_dim], dim=-1)
    k_rot = k_rot.expand(-1, k_nope.shape[1], -1, -1)
    return torch.cat((k_nope, k_rot), dim=-1), value_states


def eager_attention_dense(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    scaling: float,
    dropout: float = 0.0,
    **kwargs: Any,
) -> tuple[torch.Tensor, torch.Tensor]:
    """transformers' eager attention (LLaMA form) on contiguous operands, so that no
    matmul reshape guards ``seq != 1``; the same arithmetic in the same order."""
    return _dense_attention(module, query, key, value, attention_mask, scaling, dropout, None)


def eager_attention_softcap_dense(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    dropout: float = 0.0,
    scaling: float | None = None,
    softcap: float | None = None,
    **kwargs: Any,
) -> tuple[torch.Tensor, torch.Tensor]:
    """transformers' eager attention with logit soft-capping (Gemma-2 form) on contiguous
    operands; the same arithmetic in the same order."""
    if scaling is None:
        scaling = module.head_dim**-0.5
    return _dense_attention(module, query, key, value, attention_mask, scaling, dropout, softcap)


def _dense_attention(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    scaling: float,
    dropout: float,
    softcap: float | None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The eager attention both replacements share; soft-capping when ``softcap`` is set."""
    keys = _dense(_repeat_heads(key, module.num_key_value_groups).transpose(2, 3))
    values = _dense(_repeat_heads(value, module.num_key_value_groups))
    weights = torch.matmul(_dense(query), keys) * scaling
    if softcap is not None:
        weights = weights / softcap
        weights = torch.tanh(weights)
        weights = weights * softcap
    if attention_mask is not None:
        weights = weights + attention_mask
    weights = torch.nn.functional.softmax(weights, dim=-1, dtype=torch.float32).to(query.dtype)
    weights = torch.nn.functional.dropout(weights, p=dropout, training=module.training)
    output = torch.matmul(_dense(weights), values)
    return _dense(output.transpose(1, 2)), weights


def sdpa_attention_one_path(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    dropout: float = 0.0,
    scaling: float | None = None,
    is_causal: bool | None = None,
    position_bias: torch.Tensor | None = None,
    **kwargs: Any,
) -> tuple[torch.Tensor, None]:
    """SDPA attention with an explicit mask, the same for every query length."""
    from transformers.integrations import sdpa_attention

    unusual = (
        attention_mask is None
        or position_bias is not None
        or kwargs.get("softcap") is not None
        or kwargs.get("output_attentions", False)
    )
    if unusual:  # transformers' own function handles (or refuses) these cases
        return sdpa_attention.sdpa_attention_forward(
            module,
            query,
            key,
            value,
            attention_mask,
            dropout=dropout,
            scaling=scaling,
            is_causal=is_causal,
            position_bias=position_bias,
            **kwargs,
        )
    extra: dict[str, Any] = {}
    groups = getattr(module, "num_key_value_groups", 1)
    if groups > 1:
        if sdpa_attention.use_gqa_in_sdpa(attention_mask, key, value):
            extra["enable_gqa"] = True
        else:
            key = _repeat_heads(key, groups)
            value = _repeat_heads(value, groups)
    query, key, value, scaling, width = _same_head_dims(query, key, value, scaling)
    output = torch.nn.functional.scaled_dot_product_attention(
        query, key, value, attn_mask=attention_mask, dropout_p=dropout, scale=scaling, **extra
    )
    if width is not None:
        output = output[..., :width]
    return _dense(output.transpose(1, 2)), None


def _same_head_dims(
    query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, scaling: float | None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, float | None, int | None]:
    """Query/key and value heads of one width, zero-padded, and the value width to slice
    the output back to (None when they were equal already).

    SDPA with values of another head width than the queries (multi-head latent attention:
    DeepSeek's 192 against 128) has no fused kernel on CPU: torch decomposes it into
    matmuls whose reshapes guard the key length != 1, and the program refuses the decode
    step from a one-token past. Zero columns change no dot product and no weighted sum,
    so the padded attention is the same; the scale is fixed first from the query width."""
    qk_dim, v_dim = query.shape[-1], value.shape[-1]
    if not isinstance(qk_dim, int) or not isinstance(v_dim, int) or qk_dim == v_dim:
        return query, key, value, scaling, None
    if scaling is None:
        scaling = qk_dim**-0.5
    if v_dim < qk_dim:
        return query, key, torch.nn.functional.pad(value, (0, qk_dim - v_dim)), scaling, v_dim
    pad = (0, v_dim - qk_dim)
    query = torch.nn.functional.pad(query, pad)
    return query, torch.nn.functional.pad(key, pad), value, scaling, None


def attention_interface_for_export(self: Any, attn_implementation: str, default: Callable) -> Any:
    """``AttentionInterface.get_interface`` that hands out :func:`sdpa_attention_one_path`
    instead of transformers' SDPA function; every other implementation is unchanged."""
    from transformers.integrations import sdpa_attention
    from transformers.modeling_utils import AttentionInterface

    chosen = original_of(AttentionInterface, "get_interface")(self, attn_implementation, default)
    if chosen is sdpa_attention.sdpa_attention_forward:
        return sdpa_attention_one_path
    return chosen


def _causal_rows(bias: torch.Tensor, query_length: Any, key_length: Any) -> torch.Tensor:
    """``bias[:, :, k - q : k, :k]`` of a ``(1, 1, n, n)`` causal buffer, read by index
    (``(q, k)``, broadcasting alike): the slice clamps its bounds to ``n``, which made
    torch bound the lengths and guard ``past + seq != 1`` on them."""
    rows = torch.arange(key_length - query_length, key_length, device=bias.device)
    columns = torch.arange(key_length, device=bias.device)
    return bias[0, 0][rows[:, None], columns[None, :]]


def _future_masked(
    bias: torch.Tensor, weights: torch.Tensor, query: torch.Tensor, key: torch.Tensor
) -> torch.Tensor:
    """``weights`` with the positions after each query set to the dtype's lowest value,
    as GPT-Neo's and ImageGPT's ``_attn`` do (``torch.where`` on the causal rows)."""
    causal_mask = _causal_rows(bias, query.size(-2), key.size(-2))
    lowest = torch.finfo(weights.dtype).min
    mask_value = torch.tensor(lowest, dtype=weights.dtype, device=weights.device)
    return torch.where(causal_mask, weights, mask_value)


def causal_buffer_read_by_index(
    self: Any,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """GPT-Neo's ``_attn`` reading its causal buffer at rows ``k - q .. k`` and columns
    ``.. k`` by index instead of by slicing, on contiguous copies of the query, the
    transposed key and the value (permuted views): the slice's clamping made torch bound
    and guard the lengths, and ``matmul``'s reshapes of the views guarded ``seq != 1`` and
    ``past + seq != 1``, so the program refused the decode step from a one-token past.
    Same values."""
    query = _dense(query.to(torch.float32))
    key = key.to(torch.float32)
    attn_weights = torch.matmul(query, _dense(key.transpose(-1, -2)))
    attn_weights = _future_masked(self.bias, attn_weights, query, key)
    if attention_mask is not None:
        attn_weights = attn_weights + attention_mask
    attn_weights = torch.nn.functional.softmax(attn_weights, dim=-1).to(value.dtype)
    attn_weights = self.attn_dropout(attn_weights)
    return torch.matmul(attn_weights, _dense(value)), attn_weights


def heads_merged_dense(
    self: Any, tensor: torch.Tensor, num_heads: int, attn_head_size: int
) -> torch.Tensor:
    """GPT-Neo's, ImageGPT's and Bark's ``_merge_heads`` (``(b, heads, s, d) -> (b, s,
    heads * d)``) viewing a contiguous copy of the permuted heads: ``.contiguous()`` asked
    whether the permuted view already was, which made torch guard ``seq != 1``."""
    batch_size, _, seq_length, _ = tensor.shape
    tensor = _dense(tensor.permute(0, 2, 1, 3))
    return tensor.view(batch_size, seq_length, num_heads * attn_head_size)


def imagegpt_causal_buffer_read_by_index(
    self: Any,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """ImageGPT's ``_attn`` as :func:`causal_buffer_read_by_index` does GPT-Neo's: the
    causal buffer read by index, the matrix products on contiguous copies. Same values."""
    from transformers.utils import torch_float

    attn_weights = torch.matmul(_dense(query), _dense(key.transpose(-1, -2)))
    if self.scale_attn_weights:
        attn_weights = attn_weights / torch_float(value.size(-1) ** 0.5)
    if self.scale_attn_by_inverse_layer_idx:
        attn_weights = attn_weights / float(self.layer_idx + 1)
    if not self.is_cross_attention:
        attn_weights = _future_masked(self.bias, attn_weights, query, key)
    if attention_mask is not None:
        attn_weights = attn_weights + attention_mask
    attn_weights = torch.nn.functional.softmax(attn_weights, dim=-1).type(value.dtype)
    attn_weights = self.attn_dropout(attn_weights)
    return torch.matmul(attn_weights, _dense(value)), attn_weights


def bark_causal_buffer_read_by_index(
    self: Any,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Bark's ``_attn`` as :func:`causal_buffer_read_by_index` does GPT-Neo's: the
    causal buffer read by index, the matrix products on contiguous copies. Same values."""
    import math

    scale = 1.0 / math.sqrt(self.head_dim)
    attn_weights = torch.matmul(_dense(query), _dense(key.transpose(-1, -2))) * scale
    if self.is_causal:
        causal_mask = _causal_rows(self.bias, query.size(-2), key.size(-2))
        lowest = torch.finfo(attn_weights.dtype).min
        attn_weights = attn_weights.masked_fill(causal_mask == 0, lowest)
    if attention_mask is not None:
        attn_weights = attn_weights + attention_mask
    attn_weights = torch.nn.functional.softmax(attn_weights, dim=-1).to(value.dtype)
    attn_weights = self.attn_dropout(attn_weights)
    return torch.matmul(attn_weights, _dense(value)), attn_weights


def relative_shift_by_flat_reshapes(x: torch.Tensor, klen: Any = -1) -> torch.Tensor:
    """XLNet's ``rel_shift_bnij`` (scores ``(b, n, i, j)`` shifted by one relative
    position per row) with each reshape between ``(i, j)`` and ``(j, i)`` made through the
    flat ``i * j`` axis: reshaping one to the other directly made torch guard
    ``(2 * seq - 1) % seq != 0``, which refused a one-token sequence. Same values."""
    batch, heads, rows, columns = x.shape
    x = x.reshape(batch, heads, rows * columns).reshape(batch, heads, columns, rows)
    x = x[:, :, 1:, :]
    x = x.reshape(batch, heads, (columns - 1) * rows).reshape(batch, heads, rows, columns - 1)
    return torch.index_select(x, 3, torch.arange(klen, device=x.device, dtype=torch.long))
