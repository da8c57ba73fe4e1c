"""cornerHarris and cornerMinEigenVal: OpenCV's corner responses from the gradients'
products summed over a block, as torch ops.

OpenCV scales both Sobel derivatives by ``1 / (2**(aperture-1) * block * 255)`` (without
the 255 for float32 sources; twice for Scharr), forms dx*dx, dx*dy, dy*dy in float32, sums
each over the block with an unnormalised box filter and combines them per pixel.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ._base import as_tensor, cv2, no_dst, refuse, replaces, to_numpy
from .filters import _FILTER_BORDERS, _border, _separable

_APERTURES = (-1, 1, 3, 5, 7)  # -1: Scharr


def _products(function: str, src: Any, blockSize: Any, ksize: Any, borderType: int) -> Any:
    """The block sums of dx*dx, dx*dy and dy*dy, each (H, W, 1) float32."""
    border = _border(function, borderType)
    t = as_tensor(function, src, ("uint8", "float32"), (1,))
    block, aperture = int(blockSize), int(ksize)
    if block < 1:
        raise refuse(function, "blockSize", block, "a positive size")
    if block % 2 == 0 and border in (cv2.BORDER_CONSTANT, cv2.BORDER_REPLICATE):
        raise refuse(
            function,
            "blockSize",
            block,
            "odd sizes with every border; even sizes with BORDER_REFLECT or "
            "BORDER_REFLECT_101 (OpenCV's own even blocks at constant or replicated borders "
            "are not reproduced)",
        )
    if aperture not in _APERTURES:
        raise refuse(function, "ksize", aperture, "-1 (Scharr), 1, 3, 5 or 7")
    scale = float(1 << ((aperture if aperture > 0 else 3) - 1)) * block
    scale *= 2.0 if aperture < 0 else 1.0
    scale *= 255.0 if t.dtype == torch.uint8 else 1.0
    image = t.to(torch.float32)
    derivatives = []
    for dx, dy in ((1, 0), (0, 1)):
        if aperture < 0:
            kx, ky = cv2.getDerivKernels(dx, dy, -1, normalize=False, ktype=cv2.CV_64F)
        else:
            kx, ky = cv2.getDerivKernels(dx, dy, aperture, normalize=False, ktype=cv2.CV_64F)
        kx, ky = kx.reshape(-1), ky.reshape(-1)
        anchor = (len(kx) // 2, len(ky) // 2)
        sums = _separable(image, kx.astype(np.float32), ky.astype(np.float32), anchor, border)
        derivatives.append((sums.to(torch.float64) / scale).to(torch.float32))
    gx, gy = derivatives
    ones, centre = np.ones(block), (block // 2, block // 2)
    return [_separable(p, ones, ones, centre, border) for p in (gx * gx, gx * gy, gy * gy)]


@replaces(
    "cornerHarris",
    family="filters",
    dtypes=("uint8", "float32"),
    channels=(1,),
    accuracy="float32 within 1e-5 of the data's magnitude (OpenCV's float32 sums in another order)",
    arguments={
        "blockSize": ("odd", "even with BORDER_REFLECT / BORDER_REFLECT_101"),
        "ksize": ("-1 (Scharr)", "1", "3", "5", "7"),
        "k": ("any",),
        "borderType": _FILTER_BORDERS + ("BORDER_DEFAULT",),
    },
)
def cornerHarris(
    src: np.ndarray,
    blockSize: int,
    ksize: int,
    k: float,
    dst: Any = None,
    borderType: int = 4,
) -> Any:
    """Traceable ``cv2.cornerHarris``: det - k * trace**2 of the block's gradient matrix."""
    no_dst("cornerHarris", dst)
    a, b, c = _products("cornerHarris", src, blockSize, ksize, borderType)
    wide = [x.to(torch.float64) for x in (a, b, c)]
    response = wide[0] * wide[2] - wide[1] * wide[1] - float(k) * (wide[0] + wide[2]) ** 2
    return to_numpy(response.to(torch.float32))


@replaces(
    "cornerMinEigenVal",
    family="filters",
    dtypes=("uint8", "float32"),
    channels=(1,),
    accuracy="float32 within 1e-5 of the data's magnitude (OpenCV's float32 sums in another order)",
    arguments={
        "blockSize": ("odd", "even with BORDER_REFLECT / BORDER_REFLECT_101"),
        "ksize": ("-1 (Scharr)", "1", "3", "5", "7"),
        "borderType": _FILTER_BORDERS + ("BORDER_DEFAULT",),
    },
)
def cornerMinEigenVal(
    src: np.ndarray,
    blockSize: int,
    dst: Any = None,
    ksize: int = 3,
    borderType: int = 4,
) -> Any:
    """Traceable ``cv2.cornerMinEigenVal``: the Shi-Tomasi response, the smaller
    eigenvalue of the block's gradient matrix."""
    no_dst("cornerMinEigenVal", dst)
    a, b, c = _products("cornerMinEigenVal", src, blockSize, ksize, borderType)
    a, c = a * 0.5, c * 0.5
    return to_numpy((a + c) - torch.sqrt((a - c) * (a - c) + b * b))
