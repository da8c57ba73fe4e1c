"""cvtColor BGR/RGB to HLS as OpenCV's RGB2HLS_f computes it, in float32 with torch ops.

uint8 images are scaled by ``1/255`` (a float32 product), converted, and rounded half to
even (H as is, L and S times 255). OpenCV computes the hue two ways along a row: its
vector loop as one fused ``(c1 - c2) * (60 / diff) + sector`` (360 added inside the sum
for red maxima below zero) and a separate ``l < 0.5 ? diff / sum : diff / (2 - sum)``;
its scalar remainder as a fused ``(c1 - c2) * (60 / diff) + sector`` with 360 added after
and ``diff / (2 - max - min)`` in two steps. Both are reproduced (a fused step is exact in
float64, then rounded once); measured exact on every uint8 colour with AVX-512.
"""

from __future__ import annotations

import numpy as np
import torch

from ._base import vector_pixels

_F32, _F64 = torch.float32, torch.float64
_EPSILON = float(np.finfo(np.float32).eps)


def _fused(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, fused: bool) -> torch.Tensor:
    """``a * b + c`` in float32, rounded once (FMA) when ``fused``, else twice."""
    if fused:
        return (a.to(_F64) * b.to(_F64) + c.to(_F64)).to(_F32)
    return a * b + c


def to_hls(
    b: torch.Tensor, g: torch.Tensor, r: torch.Tensor, full: bool, uint8: bool
) -> list[torch.Tensor]:
    """(H, L, S) planes of (W, H) float32 or uint8 planes ``b``, ``g``, ``r`` (a row of the
    image along dim 0): H in degrees for floats, H/2 (H*256/360 for _FULL) for uint8."""
    if uint8:
        scale = float(np.float32(1.0) / np.float32(255.0))
        b, g, r = (c.to(_F32) * scale for c in (b, g, r))
    hscale = float(np.float32((256.0 if full else 180.0) if uint8 else 360.0) / np.float32(360))
    lanes = vector_pixels() // 4  # float32 lanes of OpenCV's vector loop
    fused = lanes >= 8  # AVX2 / AVX-512 builds: fused multiply-adds
    width = b.shape[0]
    vectorised = (torch.arange(width) < width // lanes * lanes).reshape(-1, 1)
    vmax = torch.maximum(torch.maximum(r, g), b)
    vmin = torch.minimum(torch.minimum(r, g), b)
    diff = vmax - vmin
    total = vmax + vmin
    light = total * 0.5
    dark = light < 0.5
    sat_vector = diff / torch.where(dark, total, 2.0 - total)
    sat_scalar = diff / torch.where(dark, total, (2.0 - vmax) - vmin)
    inverse = torch.full_like(diff, 60.0) / diff  # a true division (60.0 / x is a reciprocal)
    red, green = vmax == r, vmax == g
    delta = torch.where(red, g - b, torch.where(green, b - r, r - g))
    sector = torch.where(red, 0.0, torch.where(green, 120.0, 240.0))
    wrapped = torch.where(red & (g < b), 360.0, sector)
    hue_vector = _fused(delta, inverse, wrapped, fused)
    hue_scalar = _fused(delta, inverse, sector, fused)
    hue_scalar = torch.where(hue_scalar < 0.0, hue_scalar + 360.0, hue_scalar)
    hue = torch.where(vectorised, hue_vector, hue_scalar) * hscale
    sat = torch.where(vectorised, sat_vector, sat_scalar)
    coloured = diff > _EPSILON
    hue = torch.where(coloured, hue, 0.0)
    sat = torch.where(coloured, sat, 0.0)
    if not uint8:
        return [hue, light, sat]
    return [
        torch.clamp(torch.round(plane), 0, 255).to(torch.uint8)
        for plane in (hue, light * 255.0, sat * 255.0)
    ]
