"""calcHist with uniform ranges and compareHist: colour-histogram descriptors as torch ops.

calcHist bins each selected channel by OpenCV's uniform rule ``floor(v * a + b)`` with
``a = bins / (high - low)`` and ``b = -a * low`` in double (values outside dropped),
counts the joint bins with a scatter-add (a mask keeps its non-zero pixels) and returns
float32 counts. compareHist returns its distance as a 0-d float64 array, standing for the
Python float OpenCV returns, with OpenCV's formulas and guards.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import torch

from ._base import as_tensor, constant_name, cv2, refuse, replaces

_DBL_EPSILON = float(np.finfo(np.float64).eps)
_FLT_EPSILON = float(np.finfo(np.float32).eps)


@cache
def _result_shape(dims: int, size: tuple[int, ...]) -> tuple[int, ...]:
    """The shape the installed OpenCV gives a histogram (4.x: (n, 1) for one dimension)."""
    probe = np.zeros((1, 1, dims), np.uint8)
    ranges = [0, 256] * dims
    return cv2.calcHist([probe], list(range(dims)), None, list(size), ranges).shape


def _channels(images: Any) -> list[torch.Tensor]:
    """Every channel of the image list, in OpenCV's numbering, each (H, W) float64."""
    if not isinstance(images, (list, tuple)) or not images:
        raise refuse("calcHist", "images", type(images).__name__, "a list of images")
    planes, shape = [], None
    for image in images:
        t = as_tensor("calcHist", image, ("uint8", "uint16", "float32"), (1, 2, 3, 4), "images")
        if shape is not None and t.shape[:2] != shape:
            raise refuse("calcHist", "images", "images of different sizes", "one size")
        shape = t.shape[:2]
        planes += [t[..., c].to(torch.float64) for c in range(t.shape[2])]
    return planes


@replaces(
    "calcHist",
    family="histogram",
    dtypes=("uint8", "uint16", "float32"),
    channels=(1, 2, 3, 4),
    accuracy="exact (OpenCV's bin rule in double, integer counts)",
    arguments={
        "ranges": ("uniform: [low, high] per dimension",),
        "mask": ("None", "a uint8 mask"),
        "accumulate": ("False",),
    },
)
def calcHist(
    images: Any,
    channels: Any,
    mask: Any,
    histSize: Any,
    ranges: Any,
    hist: Any = None,
    accumulate: bool = False,
) -> np.ndarray:
    """Traceable ``cv2.calcHist`` with uniform ranges: a joint histogram of the selected
    channels, float32 counts shaped as the installed OpenCV shapes them."""
    if hist is not None or accumulate:
        raise refuse("calcHist", "hist/accumulate", "given", "no hist buffer, accumulate=False")
    planes = _channels(images)
    chosen = [int(c) for c in channels]
    sizes = tuple(int(n) for n in histSize)
    bounds = [float(v) for v in ranges]
    if len(sizes) != len(chosen) or len(bounds) != 2 * len(chosen):
        raise refuse("calcHist", "ranges", ranges, "[low, high] for each channel (uniform)")
    if any(c < 0 or c >= len(planes) for c in chosen) or any(n < 1 for n in sizes):
        raise refuse("calcHist", "channels", chosen, f"indices below {len(planes)}")
    keep = torch.ones_like(planes[0], dtype=torch.bool)
    if mask is not None:
        m = as_tensor("calcHist", mask, ("uint8",), (1,), "mask")
        keep = m[..., 0] != 0
    flat = torch.zeros_like(planes[0], dtype=torch.int64)
    for c, n, (low, high) in zip(chosen, sizes, zip(bounds[0::2], bounds[1::2])):
        scale = n / (high - low)
        index = torch.floor(planes[c] * scale + (-scale * low)).to(torch.int64)
        keep = keep & (index >= 0) & (index < n)
        flat = flat * n + torch.clamp(index, 0, n - 1)
    total = int(np.prod(sizes))
    counts = torch.zeros(total, dtype=torch.float64)
    counts = counts.scatter_add(0, flat.reshape(-1), keep.reshape(-1).to(torch.float64))
    return counts.to(torch.float32).reshape(_result_shape(len(sizes), sizes)).numpy()


_METHODS = {
    "HISTCMP_CORREL",
    "HISTCMP_CHISQR",
    "HISTCMP_INTERSECT",
    "HISTCMP_BHATTACHARYYA",
    "HISTCMP_CHISQR_ALT",
    "HISTCMP_KL_DIV",
}


@replaces(
    "compareHist",
    family="histogram",
    dtypes=("float32",),
    channels=(1,),
    accuracy="within 1e-12 relative (sums in double, OpenCV's in another order)",
    arguments={"method": tuple(sorted(_METHODS))},
)
def compareHist(H1: np.ndarray, H2: np.ndarray, method: int) -> np.ndarray:
    """Traceable ``cv2.compareHist`` of two dense histograms: OpenCV's formula for
    ``method`` in double, a 0-d float64 array for the float OpenCV returns."""
    names = {getattr(cv2, n): n for n in _METHODS}
    if method not in names:
        raise refuse(
            "compareHist", "method", constant_name(method, "HISTCMP_"), ", ".join(sorted(_METHODS))
        )
    for name, h in (("H1", H1), ("H2", H2)):
        if not isinstance(h, np.ndarray) or h.dtype != np.float32:
            raise refuse("compareHist", name, getattr(h, "dtype", type(h).__name__), "float32")
    if H1.shape != H2.shape:
        raise refuse("compareHist", "H2.shape", H2.shape, f"H1's shape {H1.shape}")
    kind = names[method]
    if kind == "HISTCMP_CORREL" and H1.ndim > 2:
        raise refuse(
            "compareHist",
            "method",
            "HISTCMP_CORREL of a histogram of more than 2 dimensions",
            "HISTCMP_CORREL of 1-D or 2-D histograms (OpenCV's mean of a 3-D one is not "
            "over its bins), or another method",
        )
    a = torch.from_numpy(H1).reshape(-1).to(torch.float64)
    b = torch.from_numpy(H2).reshape(-1).to(torch.float64)
    zero = torch.zeros((), dtype=torch.float64)
    if kind in ("HISTCMP_CHISQR", "HISTCMP_CHISQR_ALT"):
        denom = a if kind == "HISTCMP_CHISQR" else a + b
        used = torch.abs(denom) > _DBL_EPSILON
        terms = torch.where(used, (a - b) ** 2 / torch.where(used, denom, 1.0), zero)
        result = terms.sum() * (2.0 if kind == "HISTCMP_CHISQR_ALT" else 1.0)
    elif kind == "HISTCMP_CORREL":
        scale = 1.0 / a.shape[0]
        s1, s2 = a.sum(), b.sum()
        num = (a * b).sum() - s1 * s2 * scale
        denom2 = ((a * a).sum() - s1 * s1 * scale) * ((b * b).sum() - s2 * s2 * scale)
        used = torch.abs(denom2) > _DBL_EPSILON
        result = torch.where(used, num / torch.sqrt(torch.where(used, denom2, 1.0)), 1.0)
    elif kind == "HISTCMP_INTERSECT":
        result = torch.minimum(a, b).sum()
    elif kind == "HISTCMP_BHATTACHARYYA":
        s = a.sum() * b.sum()
        used = torch.abs(s) > _FLT_EPSILON
        inv = torch.where(used, 1.0 / torch.sqrt(torch.where(used, s, 1.0)), 1.0)
        result = torch.sqrt(torch.clamp(1.0 - torch.sqrt(a * b).sum() * inv, min=0.0))
    else:  # HISTCMP_KL_DIV
        used = torch.abs(a) > _DBL_EPSILON
        q = torch.where(torch.abs(b) > _DBL_EPSILON, b, 1e-10)
        p = torch.where(used, a, 1.0)
        result = torch.where(used, p * torch.log(p / q), zero).sum()
    return result.to(torch.float64).numpy()
