"""cvtColor from raw Bayer mosaics: OpenCV's bilinear demosaicing, bit-exact.

OpenCV fills each inner pixel from its 3x3 neighbourhood: the own sample, the mean of the
two horizontal or vertical samples (``(a + b + 1) >> 1``), of the four edge neighbours or
of the four corners (``(a + b + c + d + 2) >> 2``); the outer columns, then the outer
rows, repeat their inner neighbours; an image of fewer than 3 rows or columns has zero
colours (and zero alpha under 3 rows). Its gray output weighs the same unrounded
neighbour sums with 14-bit BT.601 weights.
Here every inner pixel gets ``4 * value`` for all its channels (whole sums, below 2**11:
exact in float32), picked by its row and column parity with 0/1 products (no per-pixel
gather or Where), then one rounding. The work is done on the transposed (W, H) planes.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import torch

from . import layout
from ._base import cv2

_GRAY_WEIGHTS = (1868, 9617, 4899)  # OpenCV's Bayer gray: B, G, R with 14 fractional bits


class BayerCode(NamedTuple):
    """What one Bayer code reads and writes."""

    red: tuple[int, int]  # (row, column) parity of the red samples
    rgb: bool  # output R, G, B rather than B, G, R
    channels: int  # 1 (gray), 3, or 4 (alpha: the dtype's maximum)


# OpenCV's pattern names give the colours of the second row's second and third pixels
_RED_AT = {"BG": (0, 0), "GB": (0, 1), "RG": (1, 1), "GR": (1, 0)}
_ALIASES = {"BG": "RGGB", "GB": "GRBG", "RG": "BGGR", "GR": "GBRG"}  # OpenCV 5's 4-letter names
_OUTPUTS = {"BGR": (False, 3), "RGB": (True, 3), "BGRA": (False, 4), "RGBA": (True, 4)}


@functools.cache
def codes() -> dict[int, BayerCode]:
    """Every bilinear COLOR_Bayer<pattern>2<out> code of the installed cv2."""
    table: dict[int, BayerCode] = {}
    for pattern, red in _RED_AT.items():
        for name in (pattern, _ALIASES[pattern]):
            for out, (rgb, cn) in (*_OUTPUTS.items(), ("GRAY", (False, 1))):
                value = getattr(cv2, f"COLOR_Bayer{name}2{out}", None)
                if value is not None:
                    table[value] = BayerCode(red, rgb, cn)
    return table


@functools.cache
def other_codes() -> dict[int, str]:
    """The Bayer codes of OpenCV's other demosaicing methods (VNG, edge-aware): refused."""
    return {
        getattr(cv2, n): n
        for n in sorted(dir(cv2))
        if n.startswith("COLOR_Bayer") and n.endswith(("_VNG", "_EA"))
    }


def _parity(n: int, phase: int, dtype: torch.dtype) -> torch.Tensor:
    """1 where ``index % 2 == phase`` for the inner indices 1 .. n-2, else 0."""
    return ((torch.arange(1, n - 1) % 2) == phase).to(dtype)


def _lerp(flag: torch.Tensor, one: torch.Tensor, zero: torch.Tensor) -> torch.Tensor:
    """``one`` where ``flag`` is 1, ``zero`` where it is 0 (exact for whole numbers)."""
    return zero + flag * (one - zero)


def _quadrupled(s: torch.Tensor, red: tuple[int, int], scale: int = 1) -> list[torch.Tensor]:
    """``scale`` * 4 * (B, G, R) of the inner pixels of a mosaic ``s`` (whole numbers of
    its dtype), unrounded."""
    across = s[1:-1, :-2] + s[1:-1, 2:]  # the two neighbours along a row (the second axis)
    along = s[:-2, 1:-1] + s[2:, 1:-1]  # the two along a column (the first axis)
    centre = s[1:-1, 1:-1] * (4 * scale)
    edges = (across + along) * scale if scale != 1 else across + along
    corners = s[:-2, :-2] + s[:-2, 2:] + s[2:, :-2] + s[2:, 2:]
    corners = corners * scale if scale != 1 else corners
    across, along = across * (2 * scale), along * (2 * scale)
    rows, cols = s.shape
    red_row = _parity(rows, red[0], s.dtype).reshape(-1, 1)
    red_col = _parity(cols, red[1], s.dtype).reshape(1, -1)
    blue_row, blue_col = 1 - red_row, 1 - red_col
    r = _lerp(red_row, _lerp(red_col, centre, across), _lerp(red_col, along, corners))
    b = _lerp(blue_row, _lerp(blue_col, centre, across), _lerp(blue_col, along, corners))
    green_site = red_row + red_col - 2 * red_row * red_col  # one parity matches, not both
    g = _lerp(green_site, centre, edges)
    return [b, g, r]


def _rounded_uint8(doubled: torch.Tensor) -> torch.Tensor:
    """OpenCV's ``(4v + 2) >> 2`` of int16 ``2 * 4v`` (below 2**11): ``(2 * 4v + 1) / 8``
    is never half-way, and rounding it (one QuantizeLinear once exported, after the exact
    cast to float32) gives that shift."""
    odd = (doubled + 1).to(torch.float32)
    return torch.clamp(torch.round(odd * 0.125), 0, 255).to(torch.uint8)


def _bordered(inner: torch.Tensor) -> torch.Tensor:
    """The inner pixels with the outer columns, then rows, repeating their neighbours."""
    inner = torch.cat([inner[:, :1], inner, inner[:, -1:]], dim=1)
    return torch.cat([inner[:1], inner, inner[-1:]], dim=0)


def demosaic(t: torch.Tensor, code: BayerCode) -> torch.Tensor:
    """An (H, W, 1) uint8 or uint16-as-int32 mosaic demosaiced to (H, W, C) like OpenCV
    (uint16 results come back as int32, for the caller's cast)."""
    height, width = t.shape[0], t.shape[1]
    out_dtype = torch.uint8 if t.dtype == torch.uint8 else torch.int32
    top = 255 if t.dtype == torch.uint8 else 65535
    if height < 3 or width < 3:  # OpenCV writes zero colours; alpha too under 3 rows
        out = torch.zeros(height, width, code.channels, dtype=out_dtype)
        if code.channels == 4 and height >= 3:
            out[..., 3] = top
        return out
    mosaic = t[..., 0].t()  # (W, H): rows here are columns of the image
    red = (code.red[1], code.red[0])
    if t.dtype == torch.uint8:  # int16 (every sum below 2**11: half a float32's bytes)
        if code.channels > 1:
            planes = [_rounded_uint8(x) for x in _quadrupled(mosaic.to(torch.int16), red, 2)]
            return _assembled(planes, code, top)
        b, g, r = (x.to(torch.float32) for x in _quadrupled(mosaic.to(torch.int16), red))
    else:
        b, g, r = _quadrupled(mosaic.to(torch.float64), red)
    if code.channels == 1:
        wb, wg, wr = _GRAY_WEIGHTS
        total = b * wb + g * wg + r * wr  # < 2**24 for uint8 (float32), < 2**32 for uint16
        gray = torch.floor((total + float(1 << 15)) * 2.0**-16)
        return _bordered(gray.to(out_dtype)).t().unsqueeze(-1)
    planes = [torch.floor((x + 2.0) * 0.25).to(out_dtype) for x in (b, g, r)]
    return _assembled(planes, code, top)


def _assembled(planes: list[torch.Tensor], code: BayerCode, top: int) -> torch.Tensor:
    """The (H, W, C) image of the inner (W-2, H-2) B, G, R planes: borders repeated, the
    code's channel order and alpha."""
    if code.rgb:
        planes.reverse()
    planes = [_bordered(p) for p in planes]
    if code.channels == 4:
        planes.append(torch.full_like(planes[0], top))
    return layout.from_planes(planes)
