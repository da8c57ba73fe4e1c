"""cvtColor: channel reordering, alpha, grayscale and HSV conversions with torch ops.

The uint8 grayscale and HSV conversions reproduce OpenCV's fixed-point arithmetic (15-bit
gray weights since OpenCV 5, 14-bit before; 12-bit HSV division tables): bit-exact.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ._base import as_tensor, constant_name, cv2, no_dst, refuse, replaces, to_numpy

# what a conversion computes: reorder/add/drop channels, gray, gray to colour, HSV
_SWAP, _GRAY, _FROM_GRAY, _HSV = "swap", "gray", "from_gray", "hsv"


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
    }
    return table


def _code_names() -> list[str]:
    names = set()
    for value in _codes():
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


def _hsv_uint8(b: torch.Tensor, g: torch.Tensor, r: torch.Tensor, full: bool) -> torch.Tensor:
    hrange = 256 if full else 180
    b, g, r = b.to(torch.float64), g.to(torch.float64), r.to(torch.float64)
    v = torch.maximum(torch.maximum(b, g), r)
    vmin = torch.minimum(torch.minimum(b, g), r)
    diff = v - vmin
    half = float(1 << (_HSV_SHIFT - 1))
    scale = float(1 << _HSV_SHIFT)
    sdiv = _div_table(255, 1.0)[v.to(torch.int64)]
    s = torch.floor((diff * sdiv + half) / scale)
    hue = torch.where(v == r, g - b, torch.where(v == g, b - r + 2 * diff, r - g + 4 * diff))
    hdiv = _div_table(hrange, 6.0)[diff.to(torch.int64)]
    h = torch.floor((hue * hdiv + half) / scale)
    h = torch.where(h < 0, h + hrange, h)
    out = torch.stack([h, s, v], dim=-1)
    return torch.clamp(out, 0, 255).to(torch.uint8)


def _hsv_float(b: torch.Tensor, g: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
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
    return torch.stack([h, s, v], dim=-1)


def _gray_fixed_point() -> tuple[int, int, int, int]:
    """(shift, B, G, R weights) of OpenCV's uint8 gray: 15-bit since OpenCV 5, 14-bit before."""
    major = int(cv2.__version__.split(".")[0])
    return (15, 3735, 19235, 9798) if major >= 5 else (14, 1868, 9617, 4899)


def _gray(b: torch.Tensor, g: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
    if b.dtype == torch.uint8:  # fixed point, exact in float32 (every sum < 2**24)
        shift, cb, cg, cr = _gray_fixed_point()
        b, g, r = b.to(torch.float32), g.to(torch.float32), r.to(torch.float32)
        y = torch.floor((b * cb + g * cg + r * cr + float(1 << (shift - 1))) / float(1 << shift))
        return y.to(torch.uint8).unsqueeze(-1)
    return (b * 0.114 + g * 0.587 + r * 0.299).unsqueeze(-1)


@replaces(
    "cvtColor",
    family="color",
    dtypes=("uint8", "float32"),
    channels=(1, 3, 4),
    accuracy="uint8 exact (OpenCV's fixed-point gray weights and HSV tables); float32 within 1e-5",
    arguments={
        "code": tuple(_code_names()),
        "dstCn": ("0 or the code's channel count",),
        "hint": ("any (the accurate result is computed)",),
    },
    notes="float32 HSV has H in [0, 360), S and V as given; uint8 HSV has H/2 (H*256/360 "
    "for _FULL). Channel count must match the code (BGR* 3, BGRA* 4, GRAY 1).",
)
def cvtColor(src: np.ndarray, code: int, dst: Any = None, dstCn: int = 0, hint: int = 0) -> Any:
    """Traceable ``cv2.cvtColor`` for the codes listed in :data:`Support` (others refused).

    Exact for uint8 (OpenCV's fixed-point gray weights, 15-bit since OpenCV 5, and HSV
    division tables); float32 within 1e-5 relative.
    """
    codes = _codes()
    no_dst("cvtColor", dst)
    if code not in codes:
        raise refuse("cvtColor", "code", constant_name(code, "COLOR_"), ", ".join(_code_names()))
    kind, cn_in, order, cn_out, full = codes[code]
    if dstCn not in (0, cn_out):
        raise refuse("cvtColor", "dstCn", dstCn, f"0 or {cn_out} for this code")
    t = as_tensor("cvtColor", src, ("uint8", "float32"), (cn_in,))
    if kind == _FROM_GRAY:
        out = t.expand(*t.shape[:2], 3)
    else:
        b, g, r = (t[..., i] for i in order)
        if kind == _SWAP:
            out = torch.stack([b, g, r], dim=-1)
            if cn_in == 4 and cn_out == 4:
                out = torch.cat([out, t[..., 3:]], dim=-1)
        elif kind == _GRAY:
            return to_numpy(_gray(b, g, r))
        else:
            out = _hsv_uint8(b, g, r, full) if t.dtype == torch.uint8 else _hsv_float(b, g, r)
    if cn_out == 4 and not (kind == _SWAP and cn_in == 4):
        alpha = 255 if t.dtype == torch.uint8 else 1.0
        out = torch.cat([out, torch.full_like(out[..., :1], alpha)], dim=-1)
    return to_numpy(out)


def supported_codes() -> list[str]:
    """Names of the conversion codes :func:`cvtColor` supports."""
    return _code_names()
