"""State-space scans without a loop or a chunk padding, so the sequence length stays dynamic.

transformers' CPU path of Mamba's selective scan (``mamba_selective_scan``) runs
``for index in range(seq_len)``: torch unrolls it, and the program holds exactly the
traced number of steps. Mamba2's chunked scan (``mamba2_chunk_scan``, copied into Bamba,
Zamba2, FalconH1...) pads the sequence to a multiple of ``chunk_size`` and branches on
``pad_size > 0``, which fixes ``seq % chunk_size``. Both compute the linear recurrence
``h_t = exp(dt_t A) h_{t-1} + dt_t B_t x_t``, ``y_t = C_t h_t``, whose closed form is

    h_t = sum_{s <= t} exp(sum_{s < k <= t} dt_k A) dt_s B_s x_s

The replacements compute that sum with one (t, s) matrix of decays over the whole
sequence: the segment sums are cumulative sums of a masked matrix (not differences of
one cumulative sum, which lose precision on long sequences), and the positions s > t are
set to -inf before ``exp``, so nothing overflows. Memory is quadratic in the sequence
length (one chunk as long as the sequence): right for export, not a fast kernel.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F


def segment_decays(log_decay: torch.Tensor) -> torch.Tensor:
    """``exp(sum_{s < k <= t} x_k)`` for ``t >= s`` and 0 above the diagonal, from ``x``
    of shape ``(..., L)``; the result has shape ``(..., L, L)`` indexed ``[t, s]``."""
    length = log_decay.shape[-1]
    expanded = log_decay[..., None].expand(*log_decay.shape, length)  # [..., k, s] = x_k
    ones = torch.ones(length, length, device=log_decay.device, dtype=torch.bool)
    below = torch.tril(ones, diagonal=-1)
    sums = torch.cumsum(expanded.masked_fill(~below, 0), dim=-2)
    sums = sums.masked_fill(~torch.tril(ones), -torch.inf)
    return torch.exp(sums)


def mamba_selective_scan_closed_form(
    hidden_states: torch.Tensor,
    dt: torch.Tensor,
    A: torch.Tensor,
    B: torch.Tensor,
    C: torch.Tensor,
    D: torch.Tensor | None = None,
    z: torch.Tensor | None = None,
    delta_bias: torch.Tensor | None = None,
    delta_softplus: bool = False,
    return_last_state: bool = False,
    use_mambapy: bool = False,
    use_associative_scan: bool = False,
    **kwargs: Any,
) -> Any:
    """transformers' ``mamba_selective_scan`` (CPU path) without the loop over positions.

    Shapes as in transformers: ``hidden_states``, ``dt``, ``z`` are (batch, d, L), ``A``
    is (d, n), ``B`` and ``C`` are (batch, n, L). Starts from a zero state, as the
    original does.
    """
    if kwargs.get("cu_seqlens") is not None or kwargs.get("seq_idx") is not None:
        raise ValueError(
            "mamba_selective_scan: packed sequences (cu_seqlens, seq_idx) need mamba-ssm; "
            "patchport's closed-form scan does not keep them apart."
        )
    input_dtype = hidden_states.dtype
    if delta_bias is not None:
        dt = dt + delta_bias.to(dt.dtype)[..., None]
    if delta_softplus:
        dt = F.softplus(dt)
    dt = dt.float()
    # (batch, d, n, L): the log of each step's decay, and what each step adds to the state
    log_decay = A.float()[None, :, :, None] * dt[:, :, None, :]
    added = dt[:, :, None, :] * B.float()[:, None, :, :] * hidden_states.float()[:, :, None, :]
    decays = segment_decays(log_decay)  # (batch, d, n, t, s)
    states = torch.einsum("bdnts,bdns->bdnt", decays, added)  # h_t for every t
    out_dtype = torch.promote_types(input_dtype, C.dtype)
    scan_output = torch.einsum("bdnt,bnt->bdt", states, C.float()).to(out_dtype)
    if D is not None:
        scan_output = scan_output + hidden_states * D[None, :, None]
    if z is not None:
        scan_output = scan_output * F.silu(z)
    if return_last_state:
        return scan_output, states[..., -1]
    return scan_output


def mamba2_chunk_scan_one_chunk(
    hidden_states: torch.Tensor,
    dt: torch.Tensor,
    A: torch.Tensor,
    B: torch.Tensor,
    C: torch.Tensor,
    chunk_size: int,
    D: torch.Tensor | None = None,
    dt_bias: torch.Tensor | None = None,
    initial_states: torch.Tensor | None = None,
    dt_softplus: bool = False,
    dt_limit: tuple[float, float] = (0.0, float("inf")),
    return_final_states: bool = False,
    **kwargs: Any,
) -> Any:
    """transformers' ``mamba2_chunk_scan`` (CPU path) as one chunk as long as the sequence.

    The chunked algorithm is exact for any chunk size; one chunk needs no padding, so no
    ``seq % chunk_size`` guard. Shapes as in transformers: ``hidden_states`` is
    (batch, L, heads, head_dim), ``dt`` (batch, L, heads), ``A`` (heads,), ``B`` and ``C``
    (batch, L, groups, n), ``initial_states`` (batch, heads, head_dim, n).
    """
    if kwargs.get("cu_seqlens") is not None or kwargs.get("seq_idx") is not None:
        raise ValueError(
            "mamba2_chunk_scan: packed sequences (cu_seqlens, seq_idx) need mamba-ssm; "
            "patchport's one-chunk scan does not keep them apart."
        )
    num_heads = hidden_states.shape[2]
    num_groups = B.shape[2]
    if dt_bias is not None:
        dt = dt + dt_bias.to(dt.dtype)
    if dt_softplus:
        dt = F.softplus(dt)
    dt = torch.clamp(dt, min=dt_limit[0], max=dt_limit[1]).float()
    x = hidden_states.float()
    B = B.float().repeat_interleave(num_heads // num_groups, dim=2, output_size=num_heads)
    C = C.float().repeat_interleave(num_heads // num_groups, dim=2, output_size=num_heads)
    log_decay = (A.float() * dt).transpose(1, 2)  # (batch, heads, L)
    decays = segment_decays(log_decay)  # (batch, heads, t, s)
    scores = torch.einsum("bthn,bshn->bhts", C, B) * decays
    output = torch.einsum("bhts,bshp->bthp", scores, x * dt[..., None])
    total = torch.cumsum(log_decay, dim=-1)  # decay from the start to t (inclusive)
    if initial_states is not None:
        start = initial_states.to(dtype=output.dtype, device=output.device)
        from_start = torch.einsum("bthn,bhpn->bthp", C, start)
        output = output + from_start * torch.exp(total).transpose(1, 2)[..., None]
    if D is not None:
        output = output + D[..., None] * x
    if not return_final_states:
        return output
    to_end = decays[:, :, -1, :]  # (batch, heads, s): decay from s to the last position
    final = torch.einsum("bhs,bshn,bshp->bhpn", to_end, B, x * dt[..., None])
    if initial_states is not None:
        final = final + torch.exp(total[:, :, -1])[:, :, None, None] * start
    return output, final
