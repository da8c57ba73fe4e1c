"""matchTemplate and minMaxLoc: template matching and its best position as torch ops.

matchTemplate follows OpenCV's common_matchTemplate: the cross-correlation of each window
with the template, the window sums and sums of squares (here gathered windows summed in
double, OpenCV's from a float32 DFT and integral images), then per method the centring,
the squared difference or the normalisation with OpenCV's guards (a flat window gives 0,
a ratio just beyond 1 is clamped to +-1). minMaxLoc returns its four values as 0-d
arrays, the positions as tuples of two 0-d int64 arrays (x, y), standing for OpenCV's
Python numbers, so a box built from them stays in the graph.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ._base import as_tensor, constant_name, cv2, refuse, replaces

_METHODS = (
    "TM_SQDIFF",
    "TM_SQDIFF_NORMED",
    "TM_CCORR",
    "TM_CCORR_NORMED",
    "TM_CCOEFF",
    "TM_CCOEFF_NORMED",
)
_DBL_EPSILON = float(np.finfo(np.float64).eps)
_FLT_EPSILON = float(np.finfo(np.float32).eps)


def _windows(image: torch.Tensor, h: int, w: int) -> torch.Tensor:
    """(H, W, C) -> (H-h+1, W-w+1, h, w, C): every window, gathered by index."""
    rows = torch.arange(image.shape[0] - h + 1).unsqueeze(1) + torch.arange(h).unsqueeze(0)
    cols = torch.arange(image.shape[1] - w + 1).unsqueeze(1) + torch.arange(w).unsqueeze(0)
    picked = image[rows.reshape(-1)].reshape(rows.shape[0], h, image.shape[1], -1)
    picked = picked[:, :, cols.reshape(-1)].reshape(rows.shape[0], h, cols.shape[0], w, -1)
    return picked.permute(0, 2, 1, 3, 4)


@replaces(
    "matchTemplate",
    family="features",
    dtypes=("uint8", "float32"),
    channels=(1, 3, 4),
    accuracy="within 1e-5 of the data's magnitude (sums in double, OpenCV's cross-"
    "correlation by a float32 DFT)",
    arguments={"method": _METHODS, "mask": ("None",)},
    magnitude_rtol=1e-5,  # correlation sums cancel: OpenCV's DFT noise follows the data
)
def matchTemplate(
    image: np.ndarray, templ: np.ndarray, method: int, result: Any = None, mask: Any = None
) -> np.ndarray:
    """Traceable ``cv2.matchTemplate``: a float32 map of (H-h+1, W-w+1) scores."""
    names = {getattr(cv2, n): n for n in _METHODS}
    if method not in names:
        raise refuse("matchTemplate", "method", constant_name(method, "TM_"), ", ".join(_METHODS))
    if result is not None or mask is not None:
        raise refuse("matchTemplate", "result/mask", "given", "result=None, mask=None")
    img = as_tensor("matchTemplate", image, ("uint8", "float32"), (1, 3, 4), "image")
    tpl = as_tensor("matchTemplate", templ, ("uint8", "float32"), (1, 3, 4), "templ")
    if tpl.dtype != img.dtype or tpl.shape[2] != img.shape[2]:
        raise refuse("matchTemplate", "templ", "another type", "the image's dtype and channels")
    h, w = tpl.shape[0], tpl.shape[1]
    if h > img.shape[0] or w > img.shape[1]:
        raise refuse("matchTemplate", "templ.shape", tuple(templ.shape), "within the image")
    kind = names[method]
    windows = _windows(img.to(torch.float64), h, w)
    t = tpl.to(torch.float64)
    inv_area = 1.0 / (h * w)
    num = (windows * t).sum(dim=(2, 3, 4))
    sums = windows.sum(dim=(2, 3))  # per channel
    squares = (windows * windows).sum(dim=(2, 3, 4))
    t_mean = t.mean(dim=(0, 1))
    t_sum2 = (t * t).sum()
    centred = kind.startswith("TM_CCOEFF")
    if centred:
        num = num - (sums * t_mean).sum(-1)
        t_norm = torch.sqrt(((t - t_mean) ** 2).sum())
        wnd_mean2 = (sums * sums).sum(-1) * inv_area
    else:
        t_norm = torch.sqrt(t_sum2)
        wnd_mean2 = torch.zeros_like(num)
    if kind.startswith("TM_SQDIFF"):
        num = torch.clamp(squares - 2 * num + t_sum2, min=0.0)
    if kind.endswith("_NORMED"):
        diff2 = torch.clamp(squares - wnd_mean2, min=0.0)
        flat = diff2 <= torch.clamp(10 * _FLT_EPSILON * squares, max=0.5)
        bound = torch.where(flat, 0.0, torch.sqrt(diff2) * t_norm)
        beyond = 1.0 if kind == "TM_SQDIFF_NORMED" else 0.0
        ratio = num / torch.where(torch.abs(num) < bound, bound, 1.0)
        num = torch.where(
            torch.abs(num) < bound,
            ratio,
            torch.where(torch.abs(num) < bound * 1.125, torch.where(num > 0, 1.0, -1.0), beyond),
        )
        if kind == "TM_CCOEFF_NORMED":  # a flat template: OpenCV's result is all ones
            num = torch.where(t_norm * t_norm * inv_area < _DBL_EPSILON, 1.0, num)
    return num.to(torch.float32).numpy()


@replaces(
    "minMaxLoc",
    family="features",
    dtypes=("uint8", "uint16", "int16", "float32", "float64"),
    channels=(1,),
    accuracy="exact (the first extreme in row-major order, as OpenCV's)",
    arguments={"mask": ("None",)},
)
def minMaxLoc(src: np.ndarray, mask: Any = None) -> tuple[Any, Any, Any, Any]:
    """Traceable ``cv2.minMaxLoc`` of a 2-D array: (minVal, maxVal, minLoc, maxLoc) with
    0-d arrays for OpenCV's floats and (x, y) pairs of 0-d int64 arrays for its points."""
    if mask is not None:
        raise refuse("minMaxLoc", "mask", type(mask).__name__, "None")
    if isinstance(src, np.ndarray) and src.ndim != 2:
        raise refuse("minMaxLoc", "src.ndim", src.ndim, "2 (a single-channel image)")
    t = as_tensor("minMaxLoc", src, ("uint8", "uint16", "int16", "float32", "float64"), (1,))[
        ..., 0
    ]
    width = t.shape[1]
    flat = t.reshape(-1)
    low, high = torch.argmin(flat), torch.argmax(flat)
    values = [flat[i].to(torch.float64).numpy() for i in (low, high)]
    points = [
        (torch.remainder(i, width).numpy(), torch.div(i, width, rounding_mode="floor").numpy())
        for i in (low, high)
    ]
    return values[0], values[1], points[0], points[1]
