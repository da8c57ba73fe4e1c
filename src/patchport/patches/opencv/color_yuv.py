"""cvtColor from camera YUV: 4:2:0 buffers (NV12, NV21, I420, YV12) and packed 4:2:2
frames (YUY2, UYVY, YVYU) to BGR/RGB(A) or gray, bit-exact for uint8.

OpenCV decodes these with BT.601 "video range" coefficients in 20-bit fixed point: the
luma term ``max(Y - 16, 0) * CY`` plus a chroma term ``2**19 + CV*V + CU*U`` (shared by
the pixels of one chroma sample), shifted right by 20 and saturated. Every sum stays
below 2**30: exact in int32. The work is done on transposed (W, H) planes, which
:func:`layout.from_planes` puts back with one transpose: there a 4:2:0 chroma row is
repeated as a whole row before the transpose, and each chroma column is added to its two
luma columns by broadcasting, never by repeating single values.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import torch

from . import layout
from ._base import cv2, refuse

# OpenCV's BT.601 video-range YUV -> RGB, 20 fractional bits
_SHIFT = 20
_CY, _CUB, _CUG, _CVG, _CVR = 1220542, 2116026, -409993, -852492, 1673527


class YuvCode(NamedTuple):
    """What one YUV camera code reads and writes."""

    subsampling: str  # "420" (a (H*3/2, W) buffer) or "422" (a (H, W, 2) frame)
    # 420: "sp" (Y plane, interleaved chroma) or "p" (Y, then two chroma planes);
    # 422: "y0" or "y1" (the channel holding Y)
    layout: str
    u_first: bool  # U before V (NV12, I420, YUY2, UYVY) or V first (NV21, YV12, YVYU)
    rgb: bool  # output R, G, B rather than B, G, R
    channels: int  # 1 (gray: the Y plane), 3 or 4 (alpha 255)


_FORMATS = {  # name in OpenCV's constants -> (subsampling, layout, u_first)
    "NV12": ("420", "sp", True),
    "NV21": ("420", "sp", False),
    "I420": ("420", "p", True),
    "IYUV": ("420", "p", True),
    "YV12": ("420", "p", False),
    "YUY2": ("422", "y0", True),
    "YUYV": ("422", "y0", True),
    "YUNV": ("422", "y0", True),
    "YVYU": ("422", "y0", False),
    "UYVY": ("422", "y1", True),
    "Y422": ("422", "y1", True),
    "UYNV": ("422", "y1", True),
}
_OUTPUTS = {"BGR": (False, 3), "RGB": (True, 3), "BGRA": (False, 4), "RGBA": (True, 4)}


@functools.cache
def codes() -> dict[int, YuvCode]:
    """Every COLOR_YUV2<out>_<format> code of the installed cv2 (aliases share a value)."""
    table: dict[int, YuvCode] = {}
    for fmt, (sub, lay, u_first) in _FORMATS.items():
        for out, (rgb, cn) in (*_OUTPUTS.items(), ("GRAY", (False, 1))):
            value = getattr(cv2, f"COLOR_YUV2{out}_{fmt}", None)
            if value is not None:
                table[value] = YuvCode(sub, lay, u_first, rgb, cn)
    return table


def _chroma_terms(u: torch.Tensor, v: torch.Tensor) -> list[torch.Tensor]:
    """OpenCV's rounded chroma terms (for B, G, R) of uint8 U and V samples, in int32,
    less the ``16 * CY`` of the luma term (see :func:`_decoded`: subtracted here, at
    half resolution, rather than from every luma sample)."""
    u = u.to(torch.int32) - 128
    v = v.to(torch.int32) - 128
    half = (1 << (_SHIFT - 1)) - 16 * _CY
    return [_CUB * u + half, _CUG * u + _CVG * v + half, _CVR * v + half]


def _shifted_uint8(total: torch.Tensor) -> torch.Tensor:
    """``saturate_cast<uchar>(total >> 20)`` of int32 sums: the low 20 bits cleared (a
    BitwiseAnd: the floor, negatives included), the multiple of 2**20 left (at most 10
    significant bits) exact in float32, and its scaling, rounding and saturation one
    QuantizeLinear once exported (int32 Div, Clip and Cast took 0.8 ms per 720p plane in
    ONNX Runtime, the And, Cast and QuantizeLinear 0.5 ms)."""
    floored = torch.bitwise_and(total, -(1 << _SHIFT)).to(torch.float32)
    return torch.clamp(torch.round(floored * 2.0**-_SHIFT), 0, 255).to(torch.uint8)


def _decoded(luma: torch.Tensor, chroma: list[torch.Tensor], code: YuvCode) -> torch.Tensor:
    """The (H, W, C) image of a (W, H) uint8 luma plane and (W/2, H) int32 chroma terms:
    each term is added to its two columns of luma by broadcasting over a middle axis of 2
    (ONNX Runtime repeats whole rows of H, where repeating single values is slow)."""
    width, height = luma.shape
    y = torch.clamp(luma, min=16).to(torch.int32) * _CY  # max(Y - 16, 0) * CY + 16 * CY
    y = y.reshape(width // 2, 2, height)
    planes = []
    for term in chroma:
        total = y + term.reshape(width // 2, 1, height)
        planes.append(_shifted_uint8(total).reshape(width, height))
    if code.rgb:
        planes.reverse()
    if code.channels == 4:
        planes.append(torch.full_like(planes[0], 255))
    return layout.from_planes(planes)


def _doubled_rows(plane: torch.Tensor) -> torch.Tensor:
    """Each row of ``plane`` twice (whole rows copied: fast in ONNX Runtime)."""
    rows, cols = plane.shape
    return plane.reshape(rows, 1, cols).expand(rows, 2, cols).reshape(rows * 2, cols)


def _check_420(t: torch.Tensor) -> None:
    rows, width = t.shape[0], t.shape[1]
    if rows % 3 or width % 2:
        raise refuse(
            "cvtColor",
            "src.shape",
            tuple(t.shape[:2]),
            "a 4:2:0 buffer of (H*3/2, W) uint8 with H*3/2 a multiple of 3 and W even "
            "(OpenCV's own condition: sz.width % 2 == 0 && sz.height % 3 == 0)",
        )


def from_420(t: torch.Tensor, code: YuvCode) -> torch.Tensor:
    """A (H*3/2, W, 1) uint8 NV12/NV21/I420/YV12 buffer decoded to (H, W, C)."""
    _check_420(t)
    rows, width = t.shape[0], t.shape[1]
    height = rows * 2 // 3
    luma = t[:height, :, 0]
    if code.channels == 1:
        return luma.unsqueeze(-1)
    half_h, half_w = height // 2, width // 2
    if code.layout == "sp":  # rows of interleaved chroma pairs
        pairs = t[height:, :, 0].reshape(half_h, half_w, 2)
        first, second = pairs[..., 0], pairs[..., 1]
    else:  # two planes of (H/2)*(W/2) values each, one after the other in the buffer
        flat = t[height:, :, 0].reshape(-1)
        size = half_h * half_w
        first = flat[:size].reshape(half_h, half_w)
        second = flat[size:].reshape(half_h, half_w)
    u, v = (first, second) if code.u_first else (second, first)
    terms = _chroma_terms(_doubled_rows(u).t(), _doubled_rows(v).t())  # (W/2, H)
    return _decoded(luma.t(), terms, code)


def from_422(t: torch.Tensor, code: YuvCode) -> torch.Tensor:
    """A (H, W, 2) uint8 packed YUY2/UYVY/YVYU frame decoded to (H, W, C)."""
    y_channel = 0 if code.layout == "y0" else 1
    luma = t[..., y_channel]
    if code.channels == 1:  # OpenCV copies Y out of any width, odd included
        return luma.unsqueeze(-1)
    height, width = t.shape[0], t.shape[1]
    if width % 2:
        raise refuse(
            "cvtColor",
            "src.shape",
            tuple(t.shape),
            "a packed 4:2:2 frame (H, W, 2) with W even (OpenCV's own condition: "
            "sz.width % 2 == 0)",
        )
    # the (W, 2, H) view (one 2-D transpose) as rows of H samples: Y at 2x + y_channel,
    # the chroma pairs at 4k + c and 4k + 2 + c; each plane a strided Slice of whole
    # rows, where splitting the interleaved (H, W, 2) frame copies value by value
    rows = layout.columns(t).reshape(width * 2, height)
    c = 1 - y_channel
    luma_t, first, second = rows[y_channel::2], rows[c::4], rows[2 + c :: 4]
    u, v = (first, second) if code.u_first else (second, first)
    return _decoded(luma_t, _chroma_terms(u, v), code)  # planes (W, H), terms (W/2, H)
