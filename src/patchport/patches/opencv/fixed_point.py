"""OpenCV's fixed-point rounding of colour conversions, exact in float32."""

from __future__ import annotations

import torch


def descale_uint8(x: torch.Tensor, offset: float, shift: int) -> torch.Tensor:
    """``saturate_cast<uchar>(CV_DESCALE(x + offset, shift))`` of float32 integers with
    |x + offset| < 2**23: ``(x + offset + 0.5) * 2**-shift`` is exact and never half-way,
    so rounding it half to even is the floor of ``(x + offset + 2**(shift-1)) >> shift``;
    clamped and cast, one QuantizeLinear once exported (one pass where Div, Floor, Clip
    and Cast were four)."""
    scaled = (x + (offset + 0.5)) * 2.0**-shift
    return torch.clamp(torch.round(scaled), 0, 255).to(torch.uint8)
