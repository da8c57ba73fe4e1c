"""CLAHE (``cv2.createCLAHE(clipLimit, tileGridSize).apply(gray)``) on traced images.

The replacement is installed on the method ``cv2.CLAHE.apply`` itself, so every CLAHE
object a pipeline creates routes traced calls here; its clip limit and grid are read
from the object. OpenCV's steps are reproduced one by one: the image is padded
(BORDER_REFLECT_101) to a multiple of the grid when needed, each tile's histogram is
clipped at ``max(int(clipLimit * tileArea / histSize), 1)`` and the clipped counts are
redistributed (an even batch, then one more every ``histSize // residual`` bins), the
LUT is the scaled cumulative sum, and each pixel blends the LUTs of its four nearest
tiles with OpenCV's float32 weights. Histograms are a scatter-add, LUT look-ups a
gather: the graph holds torch operations that export to ONNX.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ._base import as_tensor, cv2, no_dst, pad, refuse, replaces, to_numpy

_DTYPES = ("uint8", "uint16")
_INT_MAX = 2**31 - 1


def _tile_grid(clahe: Any) -> tuple[float, int, int]:
    """The object's clip limit and grid, checked (OpenCV divides by a zero grid)."""
    clip = float(clahe.getClipLimit())
    tiles_x, tiles_y = (int(v) for v in clahe.getTilesGridSize())
    if tiles_x < 1 or tiles_y < 1:
        raise refuse(
            "CLAHE.apply",
            "tileGridSize",
            (tiles_x, tiles_y),
            "at least one tile each way (cv2.createCLAHE(clipLimit, (8, 8)))",
        )
    return clip, tiles_x, tiles_y


def _clip_count(clip: float, area: int, hist_size: int) -> int:
    """OpenCV's integer clip limit per bin (0: no clipping)."""
    if clip <= 0.0:
        return 0
    limit = clip * area / hist_size
    if limit > _INT_MAX:  # OpenCV's int conversion overflows: the result is platform-defined
        raise refuse(
            "CLAHE.apply",
            "clipLimit",
            clip,
            f"clipLimit * tileArea / {hist_size} below 2**31 (here tileArea is {area})",
        )
    return max(int(limit), 1)


def _tile_luts(padded: torch.Tensor, tiles_x: int, tiles_y: int, limit: int, hist_size: int):
    """One LUT per tile, shape (tiles, hist_size), from the padded image (int64 values)."""
    height, width = padded.shape
    th, tw = height // tiles_y, width // tiles_x
    tiles = tiles_x * tiles_y
    by_tile = padded.reshape(tiles_y, th, tiles_x, tw).permute(0, 2, 1, 3).reshape(tiles, th * tw)
    offsets = torch.arange(tiles, dtype=torch.int64).unsqueeze(1) * hist_size
    bins = (by_tile + offsets).reshape(-1)
    # the zeros and ones are made from the image when the model runs, so that an exported
    # model does not store a pixel-sized or (for uint16) 65536-bins-per-tile constant
    ones = (bins >= 0).to(torch.int64)
    zeros = (ones[:1] * 0).expand(tiles * hist_size)
    hist = zeros.scatter_add(0, bins, ones).reshape(tiles, hist_size)
    if limit > 0:
        clipped = (hist - limit).clamp(min=0).sum(1, keepdim=True)
        hist = hist.clamp(max=limit)
        batch = clipped // hist_size
        residual = clipped - batch * hist_size
        whole = torch.full((tiles, 1), hist_size, dtype=torch.int64)  # a tensor numerator
        step = (whole // residual.clamp(min=1)).clamp(min=1)
        level = torch.arange(hist_size, dtype=torch.int64).unsqueeze(0)
        extra = (level % step == 0) & (level // step < residual)
        hist = hist + batch + extra.to(torch.int64)
    scale = torch.tensor(np.float32(hist_size - 1) / np.float32(th * tw))
    cumulative = torch.cumsum(hist, 1).to(torch.float32) * scale
    return torch.clamp(torch.round(cumulative), 0, hist_size - 1)


def _weights(length: int, tile: int, tiles: int) -> tuple[np.ndarray, ...]:
    """Per row (or column): first and second tile index and their float32 weights,
    computed as OpenCV does (``x * (1.0f / tile) - 0.5f``, floored)."""
    inverse = np.float32(1.0) / np.float32(tile)
    position = np.arange(length).astype(np.float32) * inverse - np.float32(0.5)
    first = np.floor(position).astype(np.int64)
    second_weight = position - first.astype(np.float32)
    first_weight = np.float32(1.0) - second_weight
    second = np.minimum(first + 1, tiles - 1)
    return np.maximum(first, 0), second, first_weight, second_weight


def _interpolate(values: torch.Tensor, luts: torch.Tensor, grid: tuple[int, int, int, int]):
    """Blend each pixel's four neighbouring tile LUTs (float32, OpenCV's operation order)."""
    th, tw, tiles_x, tiles_y = grid
    height, width = values.shape
    hist_size = luts.shape[1]
    x1, x2, xw1, xw2 = _weights(width, tw, tiles_x)
    y1, y2, yw1, yw2 = _weights(height, th, tiles_y)
    flat = luts.reshape(-1)

    def look(rows: np.ndarray, cols: np.ndarray) -> torch.Tensor:
        """LUT entries of tile (rows[y], cols[x]) at each pixel's value."""
        row_start = torch.from_numpy(rows * tiles_x * hist_size)[:, None]
        col_start = torch.from_numpy(cols * hist_size)[None, :]
        index = (values + row_start) + col_start  # no (H, W) constant in the model
        return flat.index_select(0, index.reshape(-1)).reshape(height, width)

    col1, col2 = torch.from_numpy(xw1)[None, :], torch.from_numpy(xw2)[None, :]
    row1, row2 = torch.from_numpy(yw1)[:, None], torch.from_numpy(yw2)[:, None]
    upper = look(y1, x1) * col1 + look(y1, x2) * col2
    lower = look(y2, x1) * col1 + look(y2, x2) * col2
    blended = upper * row1 + lower * row2
    return torch.clamp(torch.round(blended), 0, hist_size - 1)


@replaces(
    "CLAHE.apply",
    family="histogram",
    dtypes=_DTYPES,
    channels=(1,),
    accuracy="exact",
    arguments={
        "clipLimit": ("any (<= 0: no clipping)",),
        "tileGridSize": ("any grid of at least 1x1 tiles",),
    },
    notes="replaces the method of every `cv2.createCLAHE(...)` object; the clip limit and "
    "grid are read from the object when it is called (constants of the graph). Image sizes "
    "that are not a multiple of the grid are padded with BORDER_REFLECT_101, as in OpenCV. "
    "Refused: a grid with a 0 side (OpenCV divides by zero) and a clipLimit whose "
    "`clipLimit * tileArea / histSize` overflows OpenCV's int (platform-defined there).",
)
def apply(self: Any, src: np.ndarray, dst: Any = None) -> np.ndarray:
    """Traceable ``cv2.CLAHE.apply``: contrast-limited adaptive histogram equalization."""
    no_dst("CLAHE.apply", dst)
    clip, tiles_x, tiles_y = _tile_grid(self)
    t = as_tensor("CLAHE.apply", src, _DTYPES, (1,))
    hist_size = 256 if src.dtype == np.uint8 else 65536
    values = t.squeeze(-1).to(torch.int64)
    height, width = values.shape
    if width % tiles_x == 0 and height % tiles_y == 0:
        padded = values
    else:
        bottom, right = tiles_y - height % tiles_y, tiles_x - width % tiles_x
        padded = pad(values.unsqueeze(-1), 0, bottom, 0, right, cv2.BORDER_REFLECT_101)
        padded = padded.squeeze(-1)
    th, tw = padded.shape[0] // tiles_y, padded.shape[1] // tiles_x
    limit = _clip_count(clip, th * tw, hist_size)
    luts = _tile_luts(padded, tiles_x, tiles_y, limit, hist_size)
    out = _interpolate(values, luts, (th, tw, tiles_x, tiles_y))
    if src.dtype == np.uint8:
        return to_numpy(out.to(torch.uint8))
    return to_numpy(out.to(torch.int32), np.uint16)


@replaces(
    "equalizeHist",
    family="histogram",
    dtypes=("uint8",),
    channels=(1,),
    accuracy="exact",
    notes="OpenCV's LUT: the cumulative histogram above the darkest value, times "
    "255.f / (pixels - its count) in float32, rounded half to even; a one-valued image "
    "stays as it is.",
)
def equalizeHist(src: np.ndarray, dst: Any = None) -> np.ndarray:
    """Traceable ``cv2.equalizeHist``: histogram equalisation of a grey image (exact)."""
    no_dst("equalizeHist", dst)
    t = as_tensor("equalizeHist", src, ("uint8",), (1,))
    values = t.reshape(-1).to(torch.int64)
    ones = (values >= 0).to(torch.int64)  # made from the image: no pixel-sized constant
    hist = (ones[:1] * 0).expand(256).scatter_add(0, values, ones)
    darkest = values.min().reshape(1)
    count = hist.index_select(0, darkest)
    total = values.shape[0]
    uniform = count == total
    denominator = torch.where(uniform, torch.ones_like(count), total - count)
    divisor = denominator.to(torch.float32)  # torch's 255.0 / t is 255 * (1 / t): divide
    scale = torch.full_like(divisor, 255.0) / divisor
    levels = (torch.cumsum(hist, 0) - count).to(torch.float32) * scale
    lut = torch.clamp(torch.round(levels), 0, 255)
    lut = torch.where(uniform, darkest.to(torch.float32).expand(256), lut)
    out = lut.index_select(0, values).reshape(t.shape).to(torch.uint8)
    return to_numpy(out)
