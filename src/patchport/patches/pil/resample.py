"""Pillow's 8-bit resampling as torch operations: weights as trace-time constants.

Pillow resizes in two separable passes (columns, then rows; each only where its size or
box changes). A pass's weights depend on the sizes and the box only: for each output
position, the filter is evaluated in double around the source centre, normalised, and
turned into 22-bit fixed point (rounded half away from zero); each output is then
``(2**21 + sum(pixel * weight)) >> 22`` clipped to 0..255. Here each pass's fixed-point
weights form a dense (out, in) matrix of integers, and the pass is one float64 matmul:
every product and partial sum is an integer below 2**53, so the sum is exact in any order
and ONNX Runtime, torch.export and TorchScript all give Pillow's bytes. NEAREST uses
Pillow's own coordinate rule (a double stepped by the scale from the first centre).

Which pass runs first when both run depends on the Pillow release (13 runs the rows first
when the height shrinks much more than the width, by a rule of its own): it is read from
the installed Pillow, once per sizes, box and filter, by resizing a random probe image of
those sizes and keeping the order that gives its bytes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache

import numpy as np
import torch

from ._base import refuse

PRECISION_BITS = 22  # Pillow's fixed point for 8-bit images: 32 - 8 - 2
_ONE = float(1 << PRECISION_BITS)
_HALF = float(1 << (PRECISION_BITS - 1))
_HAMMING_A = float(np.float32(0.54))  # Pillow writes these as C float literals
_HAMMING_B = float(np.float32(0.46))


def _box(x: float) -> float:
    return 1.0 if -0.5 < x <= 0.5 else 0.0


def _bilinear(x: float) -> float:
    x = -x if x < 0.0 else x
    return 1.0 - x if x < 1.0 else 0.0


def _hamming(x: float) -> float:
    x = -x if x < 0.0 else x
    if x == 0.0:
        return 1.0
    if x >= 1.0:
        return 0.0
    x = x * math.pi
    return math.sin(x) / x * (_HAMMING_A + _HAMMING_B * math.cos(x))


def _bicubic(x: float) -> float:
    a = -0.5
    x = -x if x < 0.0 else x
    if x < 1.0:
        return ((a + 2.0) * x - (a + 3.0)) * x * x + 1
    if x < 2.0:
        return (((x - 5) * x + 8) * x - 4) * a
    return 0.0


def _sinc(x: float) -> float:
    if x == 0.0:
        return 1.0
    x = x * math.pi
    return math.sin(x) / x


def _lanczos(x: float) -> float:
    return _sinc(x) * _sinc(x / 3) if -3.0 <= x < 3.0 else 0.0


# Pillow's resample codes -> (filter, support)
FILTERS: dict[int, tuple[Callable[[float], float], float]] = {
    4: (_box, 0.5),  # BOX
    2: (_bilinear, 1.0),  # BILINEAR
    5: (_hamming, 1.0),  # HAMMING
    3: (_bicubic, 2.0),  # BICUBIC
    1: (_lanczos, 3.0),  # LANCZOS
}


def f32(value: float) -> float:
    """``value`` rounded to a C float (Pillow parses the box as four floats)."""
    return float(np.float32(value))


def f32_diff(high: float, low: float) -> float:
    """``high - low`` computed in C float arithmetic, as a double."""
    return float(np.float32(high) - np.float32(low))


@lru_cache(maxsize=64)
def weight_matrix(in_size: int, in0: float, in1: float, out_size: int, code: int) -> np.ndarray:
    """The (out_size, in_size) fixed-point weights of one pass over source span
    ``[in0, in1)`` (floats), as Pillow computes them, stored as float64 integers."""
    filter_at, filter_support = FILTERS[code]
    scale = f32_diff(in1, in0) / out_size
    filterscale = max(scale, 1.0)
    support = filter_support * filterscale
    inverse = 1.0 / filterscale
    matrix = np.zeros((out_size, in_size), dtype=np.float64)
    for xx in range(out_size):
        center = in0 + (xx + 0.5) * scale
        xmin = max(int(center - support + 0.5), 0)  # C's (int) truncates toward zero
        count = min(int(center + support + 0.5), in_size) - xmin
        weights = [filter_at((x + xmin - center + 0.5) * inverse) for x in range(count)]
        total = 0.0
        for w in weights:  # summed in order, as Pillow sums
            total += w
        if total != 0.0:
            weights = [w / total for w in weights]
        for x, w in enumerate(weights):
            matrix[xx, xmin + x] = int(w * _ONE - 0.5) if w < 0 else int(w * _ONE + 0.5)
    matrix.setflags(write=False)
    return matrix


def nearest_index(in_size: int, in0: float, in1: float, out_size: int) -> np.ndarray:
    """Source index of each output position for NEAREST (-1: outside, filled with 0):
    Pillow steps a double from the first centre by the scale and truncates."""
    step = f32_diff(in1, in0) / out_size
    position = in0 + step * 0.5
    index = np.empty(out_size, dtype=np.int64)
    for x in range(out_size):
        source = -1 if position < 0.0 else int(position)
        index[x] = source if 0 <= source < in_size else -1
        position += step
    return index


def _passes_np(image: np.ndarray, matrices: tuple, rows_first: bool) -> np.ndarray:
    """Both passes on an (H, W, C) uint8 array with NumPy, in the given order."""
    t = image.astype(np.float64)
    columns, rows = matrices

    def clip(acc: np.ndarray) -> np.ndarray:
        return np.clip(np.floor((acc + _HALF) * (1.0 / _ONE)), 0.0, 255.0)

    def by_rows(t: np.ndarray) -> np.ndarray:
        return clip(np.einsum("oh,hwc->owc", rows, t))

    def by_columns(t: np.ndarray) -> np.ndarray:
        return clip(np.einsum("ow,hwc->hoc", columns, t))

    t = by_columns(by_rows(t)) if rows_first else by_rows(by_columns(t))
    return t.astype(np.uint8)


@lru_cache(maxsize=256)
def rows_first(size: tuple, box: tuple, out: tuple, code: int) -> bool:
    """Whether the installed Pillow runs the row pass first for these sizes, box and filter
    (both passes needed): the order whose bytes match Pillow's on a random probe image."""
    from PIL import Image  # the family's own dependency; imported here, where it is used

    width, height = size
    matrices = (
        weight_matrix(width, box[0], box[2], out[0], code),
        weight_matrix(height, box[1], box[3], out[1], code),
    )
    rng = np.random.default_rng(width * 7919 + height)
    candidates = [False, True]  # Pillow's historical order first
    for _ in range(16):  # random probes until one order is left (tiny outputs may tie)
        probe = rng.integers(0, 256, (height, width, 3), dtype=np.uint8)
        want = np.asarray(Image.fromarray(probe).resize(out, code, box))
        candidates = [o for o in candidates if np.array_equal(_passes_np(probe, matrices, o), want)]
        if len(candidates) < 2:
            break
    if candidates:
        return candidates[0]
    raise refuse(  # pragma: no cover - a Pillow whose resampling differs
        "Image.Image.resize",
        "size",
        f"{width}x{height} -> {out[0]}x{out[1]} (filter {code}, box {box})",
        "sizes the installed Pillow resamples in one of the two known pass orders (this "
        "Pillow differs: resize with NumPy/torch or report the Pillow version)",
    )


def _clip8(acc: torch.Tensor) -> torch.Tensor:
    """``(2**21 + acc) >> 22`` clipped to 0..255, on exact float64 integers."""
    return torch.clamp(torch.floor((acc + _HALF) * (1.0 / _ONE)), 0.0, 255.0)


def resample_columns(t: torch.Tensor, matrix: np.ndarray) -> torch.Tensor:
    """One horizontal pass of (H, W, C) float64 integer pixels: (H, out, C), as one 2-D
    matmul (a broadcast 3-D MatMul after a channel flip crashes ONNX Runtime 1.2x)."""
    height, width, channels = t.shape
    flat = t.permute(0, 2, 1).reshape(height * channels, width)
    summed = torch.matmul(flat, torch.from_numpy(np.array(matrix.T, order="C")))
    return _clip8(summed).reshape(height, channels, matrix.shape[0]).permute(0, 2, 1)


def resample_rows(t: torch.Tensor, matrix: np.ndarray) -> torch.Tensor:
    """One vertical pass of (H, W, C) float64 integer pixels: (out, W, C)."""
    height, width, channels = t.shape
    flat = torch.matmul(torch.from_numpy(matrix.copy()), t.reshape(height, width * channels))
    return _clip8(flat).reshape(matrix.shape[0], width, channels)


def pick(t: torch.Tensor, dim: int, index: np.ndarray) -> torch.Tensor:
    """``t`` at ``index`` along ``dim``; positions marked -1 are 0 (Pillow's fill)."""
    if (index < 0).any():
        keep = torch.from_numpy((index >= 0).astype(np.uint8))
        shape = [1] * t.ndim
        shape[dim] = len(index)
        picked = t.index_select(dim, torch.from_numpy(np.maximum(index, 0)))
        return picked * keep.reshape(shape).to(t.dtype)
    if len(index) == t.shape[dim] and (index == np.arange(len(index))).all():
        return t
    return t.index_select(dim, torch.from_numpy(index))
