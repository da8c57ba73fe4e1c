"""The opt-in "fast" level: lowerings ONNX Runtime runs in fewer, narrower passes than the
reference replacements, with a declared accuracy instead of OpenCV's exact arithmetic.

``opencv.all(level="fast")`` (``patching=["opencv:fast"]``) uses these; every traced call
is still checked against OpenCV, and the largest difference seen is in the compile
summary. Cases a fast lowering does not cover run the reference replacement.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from . import geometry
from ._base import REGISTRY, as_tensor, cv2, replaces, saturate, to_numpy

_FAST_REMAP_CHANNELS = (1, 3, 4)  # float-map channel counts OpenCV samples at float positions


@replaces(
    "remap",
    level="fast",
    uint8_units=1,
    family="geometry",
    dtypes=REGISTRY["remap"].dtypes,
    channels=REGISTRY["remap"].channels,
    accuracy="uint8 images of 1, 3 or 4 channels with constant float maps: within 1 (the four "
    "bilinear weights in float32, one weighted sum, one rounding, instead of OpenCV's fused "
    "lerps); every other case as the reference remap",
    arguments=dict(REGISTRY["remap"].arguments),
)
def remap_fast(
    src: np.ndarray,
    map1: Any,
    map2: Any,
    interpolation: int,
    dst: Any = None,
    borderMode: int = 0,
    borderValue: Any = None,
    hint: int = 0,
) -> Any:
    """``cv2.remap`` at the fast level: for uint8 images and constant float maps, four
    gathers and a float32 weighted sum (no float64, no integer lerps); within 1 of OpenCV.
    Anything else (traced maps, convertMaps maps, other dtypes) is the reference remap."""
    args = (src, map1, map2, interpolation, dst, borderMode, borderValue, hint)
    positions = _constant_float_positions(map1, map2)
    if (
        positions is None
        or interpolation != cv2.INTER_LINEAR
        or borderMode not in (cv2.BORDER_CONSTANT, cv2.BORDER_REPLICATE)
        or dst is not None
        or not isinstance(src, np.ndarray)
        or src.dtype != np.uint8
        or (1 if src.ndim == 2 else src.shape[-1]) not in _FAST_REMAP_CHANNELS
    ):
        return geometry.remap(*args)
    t = as_tensor("remap", src, ("uint8",), _FAST_REMAP_CHANNELS)
    fill = geometry._fill_value(borderValue, src)
    return to_numpy(_weighted_taps(t, *positions, borderMode, fill), src.dtype)


def _constant_float_positions(map1: Any, map2: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """x and y maps as float32 arrays when they are plain (untraced) finite float maps."""
    if type(map1) is not np.ndarray or map1.dtype != np.float32:
        return None
    if map1.ndim == 3 and map1.shape[2] == 2 and (map2 is None or np.size(map2) == 0):
        xs, ys = map1[..., 0], map1[..., 1]
    elif map1.ndim == 2 and type(map2) is np.ndarray and map2.dtype == np.float32:
        if map2.shape != map1.shape:
            return None
        xs, ys = map1, map2
    else:
        return None
    if not (np.isfinite(xs).all() and np.isfinite(ys).all()):
        return None
    return xs, ys


def _weighted_taps(
    t: torch.Tensor,
    xs: np.ndarray,
    ys: np.ndarray,
    border: int,
    fill: tuple[float, ...],
) -> torch.Tensor:
    """Bilinear samples of an (H, W, C) uint8 image at float positions: each tap one gather
    of the flat image (cast to float32 once) by constant indices, weights as float32
    constants of the output's shape (ONNX Runtime multiplies same-shape tensors fastest)."""
    height, width, channels = t.shape
    x0, y0 = np.floor(xs), np.floor(ys)
    fx, fy = xs - x0, ys - y0  # float32, exact
    limit = float(max(height, width) + 2)  # beyond, every position is alike: no overflow
    x0 = np.clip(x0, -limit, limit).astype(np.int64)
    y0 = np.clip(y0, -limit, limit).astype(np.int64)
    constant = border == cv2.BORDER_CONSTANT
    flat = t.reshape(-1)
    if constant:  # taps outside the image read the fill pixel appended to the data
        fill_pixel = saturate(torch.tensor(fill[:channels], dtype=torch.float64), torch.uint8)
        flat = torch.cat([flat, fill_pixel])  # joined in uint8: a quarter of the bytes
    flat = flat.to(torch.float32)  # one cast, not one per tap (13% faster in ORT)
    shape = (*xs.shape, channels)

    def tap(yy: np.ndarray, xx: np.ndarray) -> torch.Tensor:
        if constant:
            inside = (yy >= 0) & (yy < height) & (xx >= 0) & (xx < width)
            start = np.where(inside, (yy * width + xx) * channels, height * width * channels)
        else:
            start = (np.clip(yy, 0, height - 1) * width + np.clip(xx, 0, width - 1)) * channels
        index = (start[..., None] + np.arange(channels)).reshape(-1)
        return torch.gather(flat, 0, torch.from_numpy(index)).reshape(shape)

    one = np.float32(1.0)
    weights = ((one - fy) * (one - fx), (one - fy) * fx, fy * (one - fx), fy * fx)
    taps = (tap(y0, x0), tap(y0, x0 + 1), tap(y0 + 1, x0), tap(y0 + 1, x0 + 1))
    out = None
    for value, weight in zip(taps, weights):
        full = torch.from_numpy(np.broadcast_to(weight[..., None], shape).copy())
        term = value * full
        out = term if out is None else out + term
    # non-negative weights summing to 1 within float32 rounding: the sum rounds into 0..255
    return torch.round(out).to(torch.uint8)
