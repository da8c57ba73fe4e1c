"""State-space scans in fixed chunks without a loop or a padding branch, so the sequence
length stays dynamic and the memory linear in it.

transformers' CPU path of Mamba's selective scan (``mamba_selective_scan``) runs
``for index in range(seq_len)``: torch unrolls it, and the program holds exactly the
traced number of steps. Mamba2's chunked scan (``mamba2_chunk_scan``, copied into Bamba,
Zamba2, FalconH1...) pads the sequence to a multiple of ``chunk_size`` and branches on
``pad_size > 0``, which fixes ``seq % chunk_size``. Both compute the linear recurrence
``h_t = exp(dt_t A) h_{t-1} + dt_t B_t x_t``, ``y_t = C_t h_t``, whose closed form is

    h_t = sum_{s <= t} exp(sum_{s < k <= t} dt_k A) dt_s B_s x_s

The replacements run the chunked (SSD) form of that sum: the sequence is always padded
to ``n_chunks * chunk`` positions with ``n_chunks = ceil(L / chunk) + 1`` (a symbolic
amount: no Python ``if``; the extra chunk keeps ``n_chunks >= 2``, see :func:`to_chunks`),
padded positions get ``dt = 0`` (decay 1, no input) so they change nothing, and the
result is sliced back to L. Within a chunk one (t, s) matrix of decays (chunk^2); across
chunks one (n_chunks + 1)^2 matrix of chunk decays (small) carries the chunk-final
states. The segment sums are cumulative sums of a masked matrix (not differences of one
cumulative sum, which lose precision), and the positions s > t are set to -inf before
``exp``, so nothing overflows. Memory is linear in L times the chunk (Mamba:
batch x d_inner x d_state x L x chunk; Mamba2: batch x heads x L x chunk), plus the small
n_chunks^2 term.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

MAMBA_CHUNK = 16
"""Chunk of Mamba's scan. Its chunk^2 decays are per channel and state (d, n), so it is
smaller than Mamba2's: at d=1536, n=16, L=2048 the peak is about 7 GiB (32: 13 GiB;
one chunk as long as the sequence: 768 GiB), and short sequences pad little."""


def segment_decays(log_decay: torch.Tensor) -> torch.Tensor:
    """``exp(sum_{s < k <= t} x_k)`` for ``t >= s`` and 0 above the diagonal, from ``x``
    of shape ``(..., L)``; the result has shape ``(..., L, L)`` indexed ``[t, s]``."""
    length = log_decay.shape[-1]
    expanded = log_decay[..., None].expand(*log_decay.shape, length)  # [..., k, s] = x_k
    ones = torch.ones(length, length, device=log_decay.device, dtype=torch.bool)
    below = torch.tril(ones, diagonal=-1)
    sums = torch.cumsum(expanded.masked_fill(~below, 0), dim=-2)
    # in place on the fresh cumsum: one (..., L, L) buffer less at the peak in eager
    return sums.masked_fill_(~torch.tril(ones), -torch.inf).exp_()


def to_chunks(values: torch.Tensor, dim: int, chunk: int) -> torch.Tensor:
    """``values`` zero-padded along ``dim`` to ``n_chunks * chunk`` and split there into
    (n_chunks, chunk), with ``n_chunks = ceil(L / chunk) + 1``. The padding is always
    applied (a symbolic amount), so no Python branch fixes ``L % chunk``; the one chunk of
    padding past ``ceil(L / chunk)`` keeps ``n_chunks >= 2``, so a trace on a sequence
    shorter than a chunk does not specialize ``n_chunks`` to 1 (and ``seq`` with it)."""
    dim = dim % values.dim()
    length = values.shape[dim]
    n_chunks = (length + chunk - 1) // chunk + 1
    pad = [0, 0] * (values.dim() - 1 - dim) + [0, n_chunks * chunk - length]
    padded = F.pad(values, pad)
    return padded.reshape(*values.shape[:dim], n_chunks, chunk, *values.shape[dim + 1 :])


def carry_chunk_states(
    log_totals: torch.Tensor, chunk_states: torch.Tensor, start: torch.Tensor | None = None
) -> torch.Tensor:
    """The state entering each chunk, then the final state: ``(..., c + 1, *state)``,
    entry ``k`` the state after chunk ``k - 1`` (entry 0 the initial state). From each
    chunk's total log decay ``(..., c)``, its final state from a zero start
    ``(..., c, *state)`` and the initial state ``(..., *state)`` (zeros when None), by one
    (c + 1)^2 matrix of chunk decays: the recurrence over chunks without a loop."""
    batch_dims = log_totals.dim() - 1
    state_shape = chunk_states.shape[batch_dims + 1 :]
    if start is None:
        start = torch.zeros_like(chunk_states.select(batch_dims, 0))
    decays = segment_decays(F.pad(log_totals, (1, 0)))  # (..., c + 1, c + 1)
    states = torch.cat([start.unsqueeze(batch_dims), chunk_states], dim=batch_dims)
    flat = states.reshape(*states.shape[: batch_dims + 1], -1)
    carried = torch.matmul(decays, flat)
    return carried.reshape(*carried.shape[: batch_dims + 1], *state_shape)


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
    """transformers' ``mamba_selective_scan`` (CPU path) without the loop over positions,
    in chunks of :data:`MAMBA_CHUNK`.

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
    length = hidden_states.shape[-1]
    if delta_bias is not None:
        dt = dt + delta_bias.to(dt.dtype)[..., None]
    if delta_softplus:
        dt = F.softplus(dt)
    dt = dt.float()
    # (batch, d, n, L): the log of each step's decay, and what each step adds to the state;
    # both are 0 on the padded positions (dt = 0: decay 1, no input)
    log_decay = A.float()[None, :, :, None] * dt[:, :, None, :]
    added = dt[:, :, None, :] * B.float()[:, None, :, :] * hidden_states.float()[:, :, None, :]
    log_decay = to_chunks(log_decay, -1, MAMBA_CHUNK)  # (batch, d, n, c, Q)
    added = to_chunks(added, -1, MAMBA_CHUNK)
    decays = segment_decays(log_decay)  # (batch, d, n, c, t, s)
    within = torch.matmul(decays, added[..., None])[..., 0]  # from a zero chunk start
    carried = carry_chunk_states(log_decay.sum(-1), within[..., -1])
    from_start = torch.exp(torch.cumsum(log_decay, dim=-1))  # chunk start to t, inclusive
    states = within + from_start * carried[..., :-1, None]
    states = states.flatten(-2)[..., :length]  # h_t for every t: (batch, d, n, L)
    out_dtype = torch.promote_types(input_dtype, C.dtype)
    scan_output = torch.einsum("bdnt,bnt->bdt", states, C.float()).to(out_dtype)
    if D is not None:
        scan_output = scan_output + hidden_states * D[None, :, None]
    if z is not None:
        scan_output = scan_output * F.silu(z)
    if return_last_state:
        return scan_output, carried[..., -1]
    return scan_output


def mamba2_chunk_scan_padded_symbolically(
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
    """transformers' ``mamba2_chunk_scan`` (CPU path) in chunks of ``chunk_size``, padded
    always (a symbolic, possibly zero amount), so no ``seq % chunk_size`` guard.

    Shapes as in transformers: ``hidden_states`` is (batch, L, heads, head_dim), ``dt``
    (batch, L, heads), ``A`` (heads,), ``B`` and ``C`` (batch, L, groups, n),
    ``initial_states`` (batch, heads, head_dim, n).
    """
    if kwargs.get("cu_seqlens") is not None or kwargs.get("seq_idx") is not None:
        raise ValueError(
            "mamba2_chunk_scan: packed sequences (cu_seqlens, seq_idx) need mamba-ssm; "
            "patchport's chunked scan does not keep them apart."
        )
    batch, length, num_heads, head_dim = hidden_states.shape
    num_groups = B.shape[2]
    if dt_bias is not None:
        dt = dt + dt_bias.to(dt.dtype)
    if dt_softplus:
        dt = F.softplus(dt)
    dt = torch.clamp(dt, min=dt_limit[0], max=dt_limit[1]).float()
    x = hidden_states.float()
    B = B.float().repeat_interleave(num_heads // num_groups, dim=2, output_size=num_heads)
    C = C.float().repeat_interleave(num_heads // num_groups, dim=2, output_size=num_heads)
    # chunked, (batch, c, Q, heads, ...); padded positions have dt = 0: decay 1, no input
    xdt = to_chunks(x * dt[..., None], 1, chunk_size)
    B, C = to_chunks(B, 1, chunk_size), to_chunks(C, 1, chunk_size)
    log_decay = to_chunks((A.float() * dt).transpose(1, 2), -1, chunk_size)  # (b, h, c, Q)
    decays = segment_decays(log_decay)  # (batch, heads, c, t, s)
    scores = torch.einsum("bcthn,bcshn->bhcts", C, B) * decays
    output = torch.einsum("bhcts,bcshp->bcthp", scores, xdt)  # from a zero chunk start
    to_end = decays[..., -1, :]  # (batch, heads, c, s): decay from s to the chunk's end
    chunk_states = torch.einsum("bhcs,bcshn,bcshp->bhcpn", to_end, B, xdt)
    start = None
    if initial_states is not None:
        start = initial_states.to(dtype=output.dtype, device=output.device)
    carried = carry_chunk_states(log_decay.sum(-1), chunk_states, start)  # (b, h, c+1, p, n)
    from_start = torch.exp(torch.cumsum(log_decay, dim=-1))  # chunk start to t, inclusive
    entering = torch.einsum("bcthn,bhcpn->bcthp", C, carried[:, :, :-1])
    output = output + entering * from_start.permute(0, 2, 3, 1)[..., None]
    output = output.reshape(batch, -1, num_heads, head_dim)[:, :length]
    if D is not None:
        output = output + D[..., None] * x
    if not return_final_states:
        return output
    return output, carried[:, :, -1]
