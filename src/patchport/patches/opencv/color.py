"""cvtColor: channel reordering, alpha, grayscale, HSV and HLS conversions with torch ops, and
the dispatch to the camera formats (:mod:`.color_yuv`, :mod:`.color_bayer`).

The uint8 grayscale and HSV conversions reproduce OpenCV's fixed-point arithmetic (15-bit
gray weights since OpenCV 5, 14-bit before; 12-bit HSV division tables): bit-exact.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from ..sizes import symbolic
from . import color_bayer, color_xyz, color_yuv, layout
from ._base import (
    as_tensor,
    constant_name,
    cv2,
    no_dst,
    refuse,
    replaces,
    to_numpy,
    vector_pixels,
)
from .color_hls import to_hls
from .fixed_point import descale_uint8 as _descale_uint8

# what a conversion computes: reorder/add/drop channels, gray, gray to colour, HSV
_SWAP, _GRAY, _FROM_GRAY, _HSV = "swap", "gray", "from_gray", "hsv"
_TO_YCC, _FROM_YCC = "to_ycc", "from_ycc"  # YCrCb, or YUV when the last field is True
_FROM_HSV, _HLS = "from_hsv", "hls"
_TO_XYZ, _FROM_XYZ = "to_xyz", "from_xyz"


def _codes() -> dict[int, tuple[str, int, tuple[int, ...], int, bool]]:
    """code -> (kind, source channels, source channel order (b,g,r), output channels, full)."""
    c = cv2
    bgr, rgb = (0, 1, 2), (2, 1, 0)
    table = {
        c.COLOR_BGR2RGB: (_SWAP, 3, rgb, 3, False),
        c.COLOR_BGRA2RGBA: (_SWAP, 4, rgb, 4, False),
        c.COLOR_BGRA2BGR: (_SWAP, 4, bgr, 3, False),
        c.COLOR_BGRA2RGB: (_SWAP, 4, rgb, 3, False),
        c.COLOR_BGR2BGRA: (_SWAP, 3, bgr, 4, False),
        c.COLOR_BGR2RGBA: (_SWAP, 3, rgb, 4, False),
        c.COLOR_BGR2GRAY: (_GRAY, 3, bgr, 1, False),
        c.COLOR_RGB2GRAY: (_GRAY, 3, rgb, 1, False),
        c.COLOR_BGRA2GRAY: (_GRAY, 4, bgr, 1, False),
        c.COLOR_RGBA2GRAY: (_GRAY, 4, rgb, 1, False),
        c.COLOR_GRAY2BGR: (_FROM_GRAY, 1, bgr, 3, False),
        c.COLOR_GRAY2BGRA: (_FROM_GRAY, 1, bgr, 4, False),
        c.COLOR_BGR2HSV: (_HSV, 3, bgr, 3, False),
        c.COLOR_RGB2HSV: (_HSV, 3, rgb, 3, False),
        c.COLOR_BGR2HSV_FULL: (_HSV, 3, bgr, 3, True),
        c.COLOR_RGB2HSV_FULL: (_HSV, 3, rgb, 3, True),
        c.COLOR_HSV2BGR: (_FROM_HSV, 3, bgr, 3, False),
        c.COLOR_HSV2RGB: (_FROM_HSV, 3, rgb, 3, False),
        c.COLOR_HSV2BGR_FULL: (_FROM_HSV, 3, bgr, 3, True),
        c.COLOR_HSV2RGB_FULL: (_FROM_HSV, 3, rgb, 3, True),
        c.COLOR_BGR2HLS: (_HLS, 3, bgr, 3, False),
        c.COLOR_RGB2HLS: (_HLS, 3, rgb, 3, False),
        c.COLOR_BGR2HLS_FULL: (_HLS, 3, bgr, 3, True),
        c.COLOR_RGB2HLS_FULL: (_HLS, 3, rgb, 3, True),
        c.COLOR_BGR2YCrCb: (_TO_YCC, 3, bgr, 3, False),
        c.COLOR_RGB2YCrCb: (_TO_YCC, 3, rgb, 3, False),
        c.COLOR_YCrCb2BGR: (_FROM_YCC, 3, bgr, 3, False),
        c.COLOR_YCrCb2RGB: (_FROM_YCC, 3, rgb, 3, False),
        c.COLOR_BGR2YUV: (_TO_YCC, 3, bgr, 3, True),
        c.COLOR_RGB2YUV: (_TO_YCC, 3, rgb, 3, True),
        c.COLOR_YUV2BGR: (_FROM_YCC, 3, bgr, 3, True),
        c.COLOR_YUV2RGB: (_FROM_YCC, 3, rgb, 3, True),
        c.COLOR_BGR2XYZ: (_TO_XYZ, 3, bgr, 3, False),
        c.COLOR_RGB2XYZ: (_TO_XYZ, 3, rgb, 3, False),
        c.COLOR_XYZ2BGR: (_FROM_XYZ, 3, bgr, 3, False),
        c.COLOR_XYZ2RGB: (_FROM_XYZ, 3, rgb, 3, False),
    }
    return table


def _code_names() -> list[str]:
    names = set()
    for value in [*_codes(), *color_yuv.codes(), *color_bayer.codes()]:
        names.update(n for n in dir(cv2) if n.startswith("COLOR_") and getattr(cv2, n) == value)
    return sorted(names)


_HSV_SHIFT = 12


def _div_table(numerator: int, divisor: float) -> torch.Tensor:
    """OpenCV's HSV division table: round(numerator << 12 / (divisor * i)), 0 at i = 0."""
    i = np.arange(256, dtype=np.float64)
    with np.errstate(divide="ignore"):
        scaled = (numerator << _HSV_SHIFT) / (divisor * np.maximum(i, 1))
        values = np.where(i > 0, np.rint(scaled), 0)
    return torch.from_numpy(values)


def _split_table(numerator: int, divisor: float) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`_div_table` as float32 whole and fractional parts: ``table = whole * 4096 +
    part`` with ``0 <= part < 4096``."""
    table = _div_table(numerator, divisor).to(torch.int64)
    return (table >> _HSV_SHIFT).to(torch.float32), (table & 4095).to(torch.float32)


@functools.cache
def _saturation_table() -> torch.Tensor:
    """OpenCV's uint8 saturation ``(diff * sdiv[v] + 2**11) >> 12`` for every (v, diff)
    at ``v * 256 + diff`` (int16: ONNX Runtime gathers 2-byte values faster; cast after)."""
    sdiv = _div_table(255, 1.0).to(torch.int64).numpy()
    v, diff = np.divmod(np.arange(256 * 256), 256)
    values = (diff * sdiv[v] + (1 << (_HSV_SHIFT - 1))) >> _HSV_SHIFT
    return torch.from_numpy(np.clip(values, 0, 255).astype(np.int16))


def _looked_up(table: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """``table[index]`` for an integer ``index``, as one GatherElements once exported;
    an int16 table's values come back as uint8."""
    flat = index.reshape(-1).to(torch.int64)
    out = torch.gather(table, 0, flat).reshape_as(index)
    return out.to(torch.uint8) if table.dtype == torch.int16 else out


def _descale_product(x: torch.Tensor, whole: torch.Tensor, part: torch.Tensor) -> torch.Tensor:
    """OpenCV's ``(x * table + 2**11) >> 12`` for float32 integers ``x`` and a table split
    by :func:`_split_table`: ``x * whole + (x * part + 2**11) * 2**-12``, floored. The
    product itself reaches 2**28, but the sum is below 2**9 with 12 fractional bits (the
    result is a hue or a saturation), so every step is exact in float32."""
    half = float(1 << (_HSV_SHIFT - 1))
    return torch.floor(x * whole + (x * part + half) * 2.0**-_HSV_SHIFT)


def _hsv_uint8(b: torch.Tensor, g: torch.Tensor, r: torch.Tensor, full: bool) -> list[torch.Tensor]:
    """OpenCV's RGB2HSV_b: 12-bit division tables, all in float32 (exact, see
    :func:`_descale_product`), the hue's three cases as arithmetic on 0/1 flags (ONNX
    Runtime's Where branches per element) and each table a GatherElements."""
    hrange = 256 if full else 180
    f32 = torch.float32
    high = torch.maximum(torch.maximum(b, g), r)
    spread = high - torch.minimum(torch.minimum(b, g), r)  # uint8, never below 0
    b, g, r, v, diff = (x.to(f32) for x in (b, g, r, high, spread))
    pair = high.to(torch.int32) * 256 + spread.to(torch.int32)  # S depends on (V, V - min)
    s = _looked_up(_saturation_table(), pair)
    at_r, at_g = (v == r).to(f32), (v == g).to(f32)
    hue = r - g + 4 * diff
    hue = hue + ((b - r + 2 * diff) - hue) * at_g
    hue = hue + ((g - b) - hue) * at_r
    h = _descale_product(hue, *(_looked_up(t, spread) for t in _split_table(hrange, 6.0)))
    h = h + (h < 0).to(f32) * hrange
    return [h.to(torch.uint8), s, high]


def _hsv_float(b: torch.Tensor, g: torch.Tensor, r: torch.Tensor) -> list[torch.Tensor]:
    eps = float(np.finfo(np.float32).eps)
    v = torch.maximum(torch.maximum(b, g), r)
    vmin = torch.minimum(torch.minimum(b, g), r)
    diff = v - vmin
    s = diff / (torch.abs(v) + eps)
    k = 60.0 / (diff + eps)
    h = torch.where(
        v == r, (g - b) * k, torch.where(v == g, (b - r) * k + 120.0, (r - g) * k + 240.0)
    )
    h = torch.where(h < 0, h + 360.0, h)
    return [h, s, v]


# which of (v, v(1-s), v(1-s*f), v(1-s(1-f))) is b, g, r in each 60-degree hue sector
_SECTORS = ((1, 3, 0), (1, 0, 2), (3, 0, 1), (0, 2, 1), (0, 1, 3), (2, 1, 0))


def _from_hsv(t: torch.Tensor, full: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(b, g, r) from HSV as OpenCV's float HSV2RGB computes it, in float32; uint8 input
    is scaled to [0, 1] first (H by 6/180, or 6/255 for _FULL) and rounded back."""
    f32 = torch.float32
    h, s, v = (t[..., i].to(f32) for i in range(3))
    if t.dtype == torch.uint8:
        hscale = float(np.float32(6.0 / (255.0 if full else 180.0)))
        s, v = s * float(np.float32(1 / 255)), v * float(np.float32(1 / 255))
    else:
        hscale = float(np.float32(6.0 / 360.0))
    h = h * hscale
    h = h - torch.floor(h / 6.0) * 6.0  # into [0, 6)
    sector = torch.floor(h)
    h = h - sector
    sector = torch.where((sector < 0) | (sector >= 6), torch.zeros_like(sector), sector)
    tab = (v, v * (1.0 - s), v * (1.0 - s * h), v * (1.0 - s * (1.0 - h)))
    channels = []
    for c in range(3):
        out = tab[_SECTORS[5][c]]
        for k in range(4, -1, -1):
            out = torch.where(sector == k, tab[_SECTORS[k][c]], out)
        out = torch.where(s == 0, v, out)
        channels.append(out)
    if t.dtype == torch.uint8:
        return tuple(  # type: ignore[return-value]
            torch.clamp(torch.round(c * 255.0), 0, 255).to(torch.uint8) for c in channels
        )
    return channels[0], channels[1], channels[2]


def _from_uint8_hue(t: torch.Tensor, full: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(b, g, r) of a uint8 HSV image (H/2 hues, or 0..255 for _FULL) as OpenCV 5's own
    kernel computes it: float32 with ``1 - s*h`` and ``1 - s*(1-h)`` fused (one rounding,
    taken in float64 here), times 255, truncated in its vector blocks and rounded half to
    even for a row's remaining pixels."""
    f32, f64 = torch.float32, torch.float64
    hues = np.float32(255.0 if full else 180.0)
    h = t[..., 0].to(f32) * float(np.float32(6.0) / hues)
    s = t[..., 1].to(f32) * float(np.float32(1.0 / 255.0))
    v = t[..., 2].to(f32) * float(np.float32(1.0 / 255.0))
    sector = torch.floor(h)
    h = h - sector
    sector = sector - torch.floor(sector / 6.0) * 6.0
    down = (1.0 - s.to(f64) * h.to(f64)).to(f32)
    up = (1.0 - s.to(f64) * (1.0 - h).to(f64)).to(f32)
    tab = (v, v * (1.0 - s), v * down, v * up)
    width = t.shape[1]
    block = vector_pixels()
    vectorised = (torch.arange(width) < width // block * block).reshape(1, -1)
    channels = []
    for c in range(3):
        out = tab[_SECTORS[5][c]]
        for k in range(4, -1, -1):
            out = torch.where(sector == k, tab[_SECTORS[k][c]], out)
        scaled = out * 255.0
        rounded = torch.where(vectorised, torch.trunc(scaled), torch.round(scaled))
        channels.append(torch.clamp(rounded, 0, 255).to(torch.uint8))
    return channels[0], channels[1], channels[2]


# OpenCV's uint8 gray: 15 fractional bits, (shift, B, G, R) (measured alike in 4.14, 5.0, 5.1)
_GRAY_FIXED_POINT = (15, 3735, 19235, 9798)


def _gray(b: torch.Tensor, g: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
    if b.dtype == torch.uint8:  # fixed point, exact in float32 (every sum < 2**23)
        shift, cb, cg, cr = _GRAY_FIXED_POINT
        b, g, r = b.to(torch.float32), g.to(torch.float32), r.to(torch.float32)
        return _descale_uint8(b * cb + g * cg + r * cr, 0.0, shift)
    return b * 0.114 + g * 0.587 + r * 0.299


def _gray_uint8(t: torch.Tensor, order: tuple[int, ...]) -> torch.Tensor:
    """OpenCV's fixed-point gray of a uint8 (H, W, C) image (B, G, R at ``order``) as
    one Conv over the (1, H, 1, W*C) view: a channel per image row, a kernel of C taps
    with stride C (the weighted sum is below 2**23: exact in float32 in any order, its
    bias the rounding's 0.5), then one QuantizeLinear. No per-channel planes and no
    transposes: ONNX Runtime's blocked depthwise kernel takes hundreds of channels."""
    height, width, channels = t.shape
    shift, *weights = _GRAY_FIXED_POINT
    taps = np.zeros(channels, np.float32)
    taps[list(order)] = weights
    kernel = torch.from_numpy(np.tile(taps.reshape(1, 1, 1, -1), (height, 1, 1, 1)))
    flat = t.reshape(1, height, 1, width * channels).to(torch.float32)
    total = F.conv2d(flat, kernel, torch.full((height,), 0.5), stride=(1, channels), groups=height)
    total = total.reshape(height, width)
    return torch.clamp(torch.round(total * 2.0**-shift), 0, 255).to(torch.uint8)


_YCC_SHIFT = 14  # OpenCV's fixed-point YCrCb/YUV: 14 fractional bits
# (R-Y, B-Y) factors of the chroma pair, and the inverse (Cr/V->R, Cb/U->G, Cr/V->G, Cb/U->B)
_CHROMA = {False: (0.713, 0.564), True: (0.877, 0.492)}
_CHROMA_FIXED = {False: (11682, 9241), True: (14369, 8061)}
_INVERSE = {False: (1.403, -0.344, -0.714, 1.773), True: (1.140, -0.395, -0.581, 2.032)}
_INVERSE_FIXED = {False: (22987, -5636, -11698, 29049), True: (18678, -6472, -9519, 33292)}


def _descale(x: torch.Tensor, shift: int) -> torch.Tensor:
    """OpenCV's CV_DESCALE: (x + 2**(shift-1)) >> shift, as floor division (exact)."""
    return torch.floor((x + float(1 << (shift - 1))) / float(1 << shift))


def _to_ycc(b: torch.Tensor, g: torch.Tensor, r: torch.Tensor, yuv: bool) -> list[torch.Tensor]:
    """(Y, Cr, Cb) or (Y, U, V) like OpenCV: 14-bit fixed point for uint8."""
    if b.dtype == torch.uint8:  # every sum stays below 2**23: exact in float32
        b, g, r = b.to(torch.float32), g.to(torch.float32), r.to(torch.float32)
        y = _descale_uint8(b * 1868 + g * 9617 + r * 4899, 0.0, _YCC_SHIFT)  # always within 0..255
        luma = y.to(torch.float32)
        cr_k, cb_k = _CHROMA_FIXED[yuv]
        delta = float(128 << _YCC_SHIFT)
        cr = _descale_uint8((r - luma) * cr_k, delta, _YCC_SHIFT)
        cb = _descale_uint8((b - luma) * cb_k, delta, _YCC_SHIFT)
        return [y, cb, cr] if yuv else [y, cr, cb]
    y = b * 0.114 + g * 0.587 + r * 0.299
    cr_k, cb_k = _CHROMA[yuv]
    cr, cb = (r - y) * cr_k + 0.5, (b - y) * cb_k + 0.5
    return [y, cb, cr] if yuv else [y, cr, cb]


def _from_ycc(t: torch.Tensor, yuv: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(b, g, r) from (Y, Cr, Cb) or (Y, U, V) like OpenCV."""
    y, first, second = t[..., 0], t[..., 1], t[..., 2]
    cr, cb = (second, first) if yuv else (first, second)
    if t.dtype == torch.uint8:
        y, cr, cb = y.to(torch.float32), cr.to(torch.float32) - 128, cb.to(torch.float32) - 128
        k_r, k_gb, k_gr, k_b = _INVERSE_FIXED[yuv]
        b = y + _descale(cb * k_b, _YCC_SHIFT)
        g = y + _descale(cb * k_gb + cr * k_gr, _YCC_SHIFT)
        r = y + _descale(cr * k_r, _YCC_SHIFT)
        return tuple(torch.clamp(v, 0, 255).to(torch.uint8) for v in (b, g, r))  # type: ignore[return-value]
    k_r, k_gb, k_gr, k_b = _INVERSE[yuv]
    cr, cb = cr - 0.5, cb - 0.5
    return y + cb * k_b, y + cb * k_gb + cr * k_gr, y + cr * k_r


@replaces(
    "cvtColor",
    family="color",
    dtypes=("uint8", "uint16", "float32"),
    channels=(1, 2, 3, 4),
    accuracy="uint8 exact (OpenCV's fixed-point gray, YCrCb/YUV/XYZ weights, HSV tables, "
    "20-bit BT.601 video-range YUV 4:2:0/4:2:2 decoding and bilinear Bayer rounding; "
    "uint16 Bayer exact), but HSV2BGR/HSV2RGB _FULL with Intel IPP on (OpenCV 5.1 x86-64 "
    "wheels hand those to IPP, whose rounding is not reproduced): within 1, about 1 call in "
    "800 has a pixel 1 off (with cv2.ipp.setUseIPP(False) OpenCV's own kernel: exact); "
    "BGR/RGB to HLS exact on every uint8 colour (OpenCV's float kernel, its vector and "
    "scalar roundings); float32 within 1e-5",
    arguments={
        "code": tuple(_code_names()),
        "dstCn": ("0 or the code's channel count",),
        "hint": ("any (the accurate result is computed)",),
    },
    notes="float32 HSV has H in [0, 360), S and V as given; uint8 HSV has H/2 (H*256/360 "
    "for _FULL). HSV to BGR/RGB: float32 (OpenCV's float sectors), uint8 _FULL codes with "
    "IPP (float32 sectors rounded), and uint8 H/2 and _FULL without IPP (OpenCV 5's fused "
    "float32 products, truncated in its vector blocks of 64 pixels with AVX-512, 32 with "
    "AVX2, rounded for the rest of a row; exact where measured, x86-64 AVX-512). "
    "HLS: float32 colours in [0, 1] give H in [0, 360), L and S in [0, 1] (outside it a "
    "row's last pixels' S may differ by 3e-4 relative); uint8 H/2 (H*256/360 for _FULL, "
    "refused while cv2.ipp.useIPP(): IPP computes it). "
    "Channel count must match the code (BGR* 3, BGRA* 4, GRAY 1). Camera formats, uint8: "
    "YUV 4:2:0 (NV12, NV21, I420/IYUV, YV12 and the YUV420sp/YUV420p names) read a "
    "(H*3/2, W) buffer with W even and H*3/2 a multiple of 3; packed 4:2:2 (YUY2/YUYV/YUNV, "
    "UYVY/Y422/UYNV, YVYU) an (H, W, 2) frame with W even (any W for _GRAY); their _GRAY "
    "codes copy the Y samples. Bayer (BG, GB, RG, GR and the RGGB-style names; uint8 or "
    "uint16) to BGR/RGB/BGRA/RGBA/GRAY: bilinear only (_VNG and _EA refused), OpenCV's "
    "borders (outer rows and columns repeat their neighbours; under 3 rows or columns: "
    "zeros).",
)
def cvtColor(src: np.ndarray, code: int, dst: Any = None, dstCn: int = 0, hint: int = 0) -> Any:
    """Traceable ``cv2.cvtColor`` for the codes listed in :data:`Support` (others refused).

    Exact for uint8 (OpenCV's fixed-point gray weights, 15-bit since OpenCV 5, and HSV
    division tables); float32 within 1e-5 relative.
    """
    codes = _codes()
    no_dst("cvtColor", dst)
    if code in color_yuv.codes() or code in color_bayer.codes():
        return to_numpy(*_camera_format(src, code, dstCn))
    if code in color_bayer.other_codes():
        raise refuse(
            "cvtColor",
            "code",
            constant_name(code, "COLOR_Bayer"),
            "bilinear demosaicing only (COLOR_Bayer<pattern>2<BGR|RGB|BGRA|RGBA|GRAY>, "
            "without _VNG or _EA)",
        )
    if code not in codes:
        raise refuse("cvtColor", "code", constant_name(code, "COLOR_"), ", ".join(_code_names()))
    kind, cn_in, order, cn_out, full = codes[code]
    if dstCn not in (0, cn_out):
        raise refuse("cvtColor", "dstCn", dstCn, f"0 or {cn_out} for this code")
    t = as_tensor("cvtColor", src, ("uint8", "float32"), (cn_in,))
    alpha = (255 if t.dtype == torch.uint8 else 1.0) if cn_out == 4 and cn_in != 4 else None
    if kind in (_FROM_GRAY, _SWAP):  # values copied: channel moves of whole rows
        picked = (0, 0, 0) if kind == _FROM_GRAY else order + ((3,) if cn_out == cn_in == 4 else ())
        return to_numpy(layout.reorder(t, picked, alpha))
    if kind in (_FROM_YCC, _FROM_HSV):
        if kind == _FROM_YCC:
            b, g, r = _from_ycc(t, full)
        elif t.dtype == torch.uint8 and not (full and cv2.ipp.useIPP()):
            b, g, r = _from_uint8_hue(t, full)  # _FULL with IPP on: IPP rounds (below)
        else:
            b, g, r = _from_hsv(t, full)
        out = torch.stack([b, g, r] if order == (0, 1, 2) else [r, g, b], dim=-1)
        return to_numpy(out)
    if kind == _GRAY and t.dtype == torch.uint8 and not symbolic(t.shape[0]):
        return to_numpy(_gray_uint8(t, order))  # (a channel per row: a fixed height)
    planes = layout.planes(t)  # (W, H) each: computed on, then put back by one transpose
    if kind == _FROM_XYZ:
        b, g, r = color_xyz.from_xyz(*planes)
        return to_numpy(layout.from_planes([b, g, r] if order == (0, 1, 2) else [r, g, b]))
    b, g, r = (planes[i] for i in order)
    if kind == _TO_XYZ:
        return to_numpy(layout.from_planes(color_xyz.to_xyz(b, g, r)))
    if kind == _GRAY:
        return to_numpy(_gray(b, g, r).t())
    if kind == _TO_YCC:
        return to_numpy(layout.from_planes(_to_ycc(b, g, r, full)))
    if kind == _HLS:
        if full and t.dtype == torch.uint8 and cv2.ipp.useIPP():
            raise refuse(
                "cvtColor",
                "code",
                constant_name(code, "COLOR_"),
                "uint8 BGR/RGB2HLS_FULL only with cv2.ipp.setUseIPP(False): OpenCV hands it "
                "to Intel IPP, whose rounding is not reproduced (OpenCV's own kernel is); "
                "or BGR/RGB2HLS, or float32 images",
            )
        return to_numpy(layout.from_planes(to_hls(b, g, r, full, t.dtype == torch.uint8)))
    out = _hsv_uint8(b, g, r, full) if t.dtype == torch.uint8 else _hsv_float(b, g, r)
    return to_numpy(layout.from_planes(out))


def _camera_format(src: Any, code: int, dst_cn: int) -> tuple[torch.Tensor, Any]:
    """(result, numpy dtype) of a YUV 4:2:0 / 4:2:2 or Bayer code (checked like OpenCV)."""
    yuv = color_yuv.codes().get(code)
    spec = yuv or color_bayer.codes()[code]
    if spec.channels > 1 and dst_cn in (3, 4):  # like OpenCV: dstCn picks BGR or BGRA
        spec = spec._replace(channels=dst_cn)
    elif spec.channels > 1 or yuv is None:  # (a YUV code's gray ignores dstCn, like OpenCV)
        if dst_cn not in (0, spec.channels):
            supported = "0, 3 or 4" if spec.channels > 1 else "0 or 1"
            raise refuse("cvtColor", "dstCn", dst_cn, f"{supported} for this code")
    if yuv is not None:
        cn = 1 if yuv.subsampling == "420" else 2
        t = as_tensor("cvtColor", src, ("uint8",), (cn,))
        return (color_yuv.from_420 if cn == 1 else color_yuv.from_422)(t, spec), None
    t = as_tensor("cvtColor", src, ("uint8", "uint16"), (1,))
    return color_bayer.demosaic(t, spec), src.dtype


def supported_codes() -> list[str]:
    """Names of the conversion codes :func:`cvtColor` supports."""
    return _code_names()


def _colormaps() -> dict[int, str]:
    return {getattr(cv2, n): n for n in sorted(dir(cv2)) if n.startswith("COLORMAP_")}


def _colormap_table(colormap: int) -> torch.Tensor:
    """The (256, 3) BGR table of a built-in colormap, read from OpenCV itself (constant)."""
    ramp = np.arange(256, dtype=np.uint8).reshape(1, 256)
    return torch.from_numpy(cv2.applyColorMap(ramp, colormap).reshape(256, 3).copy())


@replaces(
    "applyColorMap",
    family="color",
    dtypes=("uint8",),
    channels=(1, 3),
    accuracy="exact (OpenCV's own 256-entry table; BGR input goes through the exact gray)",
    arguments={"colormap": ("every built-in COLORMAP_*",)},
    notes="a user colormap (a 256-entry array as the second argument) is refused.",
)
def applyColorMap(src: np.ndarray, colormap: Any, dst: Any = None) -> Any:
    """Traceable ``cv2.applyColorMap`` for the built-in colormaps: gray (BGR input is
    converted like COLOR_BGR2GRAY) looked up in the colormap's BGR table (exact)."""
    no_dst("applyColorMap", dst)
    maps = _colormaps()
    if isinstance(colormap, np.ndarray) or colormap not in maps:
        shown = (
            "an array" if isinstance(colormap, np.ndarray) else constant_name(colormap, "COLORMAP_")
        )
        raise refuse("applyColorMap", "colormap", shown, "a built-in cv2.COLORMAP_* constant")
    t = as_tensor("applyColorMap", src, ("uint8",), (1, 3))
    planes = layout.planes(t)  # (W, H) each
    gray = planes[0] if len(planes) == 1 else _gray(*planes)
    index = gray.to(torch.int32)  # one index plane, one GatherElements per colour channel
    table = _colormap_table(int(colormap)).to(torch.int16)
    return to_numpy(layout.from_planes([_looked_up(table[:, c], index) for c in range(3)]))
