"""pyrDown and pyrUp: one level of a Gaussian image pyramid with torch ops.

pyrDown correlates with the 5-tap kernel [1, 4, 6, 4, 1] along both axes (mirrored
borders) and keeps every other row and column; pyrUp doubles the size, each output pixel
a [1, 6, 1] or [4, 4] blend of its source neighbours along each axis (mirrored at the
start, replicated at the end, as OpenCV's edge code does). uint8 images use OpenCV's
integer sums and one rounding, ``(sum + 128) >> 8`` and ``(sum + 32) >> 6``: exact.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ._base import as_tensor, constant_name, cv2, no_dst, pad, refuse, replaces, to_numpy

_DTYPES = ("uint8", "float32", "float64")
_CHANNELS = (1, 2, 3, 4)
_DOWN_BORDERS = ("BORDER_REFLECT_101", "BORDER_REFLECT", "BORDER_REPLICATE")


def _border(function: str, value: int, allowed: tuple[str, ...]) -> int:
    codes = {getattr(cv2, name): name for name in allowed}
    if value not in codes:
        shown = constant_name(value, "BORDER_")
        raise refuse(function, "borderType", shown, ", ".join(allowed) + " (BORDER_DEFAULT)")
    return value


def _size(function: str, dstsize: Any, default: tuple[int, int]) -> None:
    """Only OpenCV's own output size (None or (0, 0) asks for it) is supported."""
    if dstsize is None:
        return
    try:
        size = tuple(int(v) for v in dstsize)
    except TypeError:
        raise refuse(function, "dstsize", repr(dstsize), "None or (width, height)") from None
    if size not in ((0, 0), default):
        raise refuse(function, "dstsize", size, f"None, (0, 0) or the default {default}")


def _finish(sums: torch.Tensor, src: np.ndarray, shift: int) -> np.ndarray:
    """Integer sums of uint8 images rounded like OpenCV (add half, shift); floats scaled."""
    if src.dtype == np.uint8:
        total = float(1 << shift)
        out = torch.floor((sums + total / 2) * (1.0 / total))
        return to_numpy(torch.clamp(out, 0, 255).to(torch.uint8))
    return to_numpy((sums * (1.0 / (1 << shift))).to(sums.dtype))


@replaces(
    "pyrDown",
    family="pyramids",
    dtypes=_DTYPES,
    channels=_CHANNELS,
    accuracy="uint8 exact (integer sums, (sum + 128) >> 8); float within 1e-5",
    arguments={
        "dstsize": ("None", "((w + 1) // 2, (h + 1) // 2)"),
        "borderType": _DOWN_BORDERS + ("BORDER_DEFAULT",),
    },
)
def pyrDown(src: np.ndarray, dst: Any = None, dstsize: Any = None, borderType: int = 4) -> Any:
    """Traceable ``cv2.pyrDown``: Gaussian blur then every other row and column."""
    no_dst("pyrDown", dst)
    border = _border("pyrDown", borderType, _DOWN_BORDERS)
    t = as_tensor("pyrDown", src, _DTYPES, _CHANNELS)
    height, width = t.shape[0], t.shape[1]
    out_h, out_w = (height + 1) // 2, (width + 1) // 2
    _size("pyrDown", dstsize, (out_w, out_h))
    work = torch.float64 if t.dtype == torch.float64 else torch.float32
    padded = pad(t, 2, 2, 2, 2, border).to(work)
    kernel = (1.0, 4.0, 6.0, 4.0, 1.0)
    rows = sum(padded[:, i : i + 2 * out_w : 2] * k for i, k in enumerate(kernel))
    sums = sum(rows[i : i + 2 * out_h : 2] * k for i, k in enumerate(kernel))
    return _finish(sums, src, 8)


def _upsample(t: torch.Tensor, dim: int) -> torch.Tensor:
    """Double ``dim``: even outputs ``prev + 6 x + next``, odd ``4 (x + next)``, with the
    previous sample mirrored at the start and the next one replicated at the end."""
    n = t.shape[dim]
    first, rest = t.narrow(dim, 1 if n > 1 else 0, 1), t.narrow(dim, 0, n - 1)
    before = torch.cat([first, rest], dim)
    after = torch.cat([t.narrow(dim, 1, n - 1), t.narrow(dim, n - 1, 1)], dim)
    even = before + t * 6.0 + after
    odd = (t + after) * 4.0
    shape = list(t.shape)
    shape[dim] = 2 * n
    return torch.stack([even, odd], dim + 1).reshape(shape)


@replaces(
    "pyrUp",
    family="pyramids",
    dtypes=_DTYPES,
    channels=_CHANNELS,
    accuracy="uint8 exact (integer sums, (sum + 32) >> 6); float within 1e-5",
    arguments={"dstsize": ("None", "(2 w, 2 h)"), "borderType": ("BORDER_DEFAULT",)},
)
def pyrUp(src: np.ndarray, dst: Any = None, dstsize: Any = None, borderType: int = 4) -> Any:
    """Traceable ``cv2.pyrUp``: twice the size, OpenCV's interpolation and edges."""
    no_dst("pyrUp", dst)
    _border("pyrUp", borderType, ("BORDER_REFLECT_101",))
    t = as_tensor("pyrUp", src, _DTYPES, _CHANNELS)
    _size("pyrUp", dstsize, (2 * t.shape[1], 2 * t.shape[0]))
    work = torch.float64 if t.dtype == torch.float64 else torch.float32
    sums = _upsample(_upsample(t.to(work), 1), 0)
    return _finish(sums, src, 6)
