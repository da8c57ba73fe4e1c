"""Traced ``Image.resize``, ``Image.crop`` and ``Image.transpose`` (uint8 L, RGB, RGBA).

``resize`` follows Pillow step by step: its argument checks, the copy when nothing
changes, the crop when an integer box already has the requested size, NEAREST's own
coordinate rule, the separable fixed-point filters (:mod:`.resample`) and, for RGBA with
a filter, the premultiplied-alpha round trip. The weights depend only on the sizes and the
box, so they are constants of the graph (a size read from a dynamic axis is fixed, and
reported as such).
"""

from __future__ import annotations

import operator
from typing import Any

import torch

from ..sizes import fixed
from ._base import MODES, refuse, replaces
from .color import premultiply, unpremultiply
from .image import image_state, make_image
from .resample import (
    FILTERS,
    f32,
    f32_diff,
    nearest_index,
    pick,
    resample_columns,
    resample_rows,
    rows_first,
    weight_matrix,
)

FAMILY = "geometry"
_NAMES = {0: "NEAREST", 1: "LANCZOS", 2: "BILINEAR", 3: "BICUBIC", 4: "BOX", 5: "HAMMING"}
_EXACT = "bit-exact (Pillow's 22-bit fixed-point weights; exact float64 sums)"


def _sizes(function: str, pixels: torch.Tensor) -> tuple[int, int]:
    """(width, height) of (H, W, C) pixels as plain ints (a dynamic axis is fixed here)."""
    why = f"{function} computes its weights from the image size"
    return fixed(pixels.shape[1], why), fixed(pixels.shape[0], why)


def _items(function: str, name: str, value: Any, expected: str) -> tuple[Any, ...]:
    """``value`` as a tuple of as many items as ``expected`` names, else a refusal."""
    try:
        items = tuple(value)
    except TypeError:
        raise refuse(function, name, repr(value), expected) from None
    if len(items) != expected.count(",") + 1:
        raise refuse(function, name, repr(value), expected)
    return items


def _size_argument(function: str, size: Any) -> tuple[int, int]:
    items = _items(function, "size", size, "(width, height)")
    return operator.index(items[0]), operator.index(items[1])  # TypeError for floats


def _resample_argument(function: str, resample: Any) -> int:
    if resample is None:
        return 3  # Pillow's default: BICUBIC
    if resample in (6, 7):  # MKS2013, MKS2021
        raise refuse(
            function,
            "resample",
            repr(resample),
            ", ".join(f"Image.Resampling.{n}" for n in _NAMES.values()),
        )
    if resample not in _NAMES:
        raise ValueError(f"Unknown resampling filter ({resample}).")
    return int(resample)


@replaces(
    "Image.Image.resize",
    family=FAMILY,
    dtypes=("uint8",),
    channels=(1, 3, 4),
    accuracy=_EXACT,
    arguments={
        "self.mode": MODES,
        "resample": ("NEAREST", "BOX", "BILINEAR", "HAMMING", "BICUBIC (default)", "LANCZOS"),
        "box": ("None", "4 floats inside the image"),
        "reducing_gap": ("None", "a gap that does not reduce (factor 1)"),
    },
    notes=(
        "`resize` weights are computed at trace time from the sizes and the box (a dense "
        "float64 matrix per pass: in * out * 8 bytes in the exported model); the sums are "
        "exact, so every backend gives Pillow's bytes. RGBA with a filter goes through "
        "premultiplied alpha, as in Pillow. MKS2013/MKS2021 and a `reducing_gap` that "
        "would reduce first are refused."
    ),
)
def resize(
    self: Any,
    size: Any,
    resample: Any = None,
    box: Any = None,
    reducing_gap: float | None = None,
) -> Any:
    """Traced ``Image.resize``: Pillow's resampling of the traced pixels."""
    function = "Image.Image.resize"
    pixels, mode = image_state(function, self)
    code = _resample_argument(function, resample)
    if reducing_gap is not None and reducing_gap < 1.0:
        raise ValueError("reducing_gap must be 1.0 or greater")
    width, height = _sizes(function, pixels)
    box = (0, 0, width, height) if box is None else tuple(box)
    xsize, ysize = _size_argument(function, size)
    if (width, height) == (xsize, ysize) and box == (0, 0, width, height):
        return make_image(pixels.clone(), mode)
    if reducing_gap is not None and code != 0:
        factor_x = int((box[2] - box[0]) / xsize / reducing_gap) or 1
        factor_y = int((box[3] - box[1]) / ysize / reducing_gap) or 1
        if factor_x > 1 or factor_y > 1:
            raise refuse(
                function, "reducing_gap", repr(reducing_gap), "None (or one that does not reduce)"
            )
    premultiplied = mode == "RGBA" and code != 0
    if premultiplied:
        pixels = premultiply(pixels)
    out = _resize_core(pixels, (xsize, ysize), code, box)
    if premultiplied:
        out = unpremultiply(out)
    return make_image(out, mode)


def _resize_core(pixels: torch.Tensor, size: tuple[int, int], code: int, box: tuple) -> Any:
    """Pillow's C resize (checks, crop shortcut, NEAREST or the two filter passes)."""
    height, width = pixels.shape[0], pixels.shape[1]
    xsize, ysize = size
    x0, y0, x1, y1 = (f32(float(v)) for v in box)
    if xsize < 1 or ysize < 1:
        raise ValueError("height and width must be > 0")
    if x0 < 0 or y0 < 0:
        raise ValueError("box offset can't be negative")
    if x1 > width or y1 > height:
        raise ValueError("box can't exceed original image size")
    if f32_diff(x1, x0) < 0 or f32_diff(y1, y0) < 0:
        raise ValueError("box can't be empty")
    if (
        x0 == int(x0) and f32_diff(x1, x0) == xsize and y0 == int(y0) and f32_diff(y1, y0) == ysize
    ):  # an integer box of the requested size: Pillow crops
        return pixels[int(y0) : int(y1), int(x0) : int(x1)].clone()
    if code == 0:
        rows = nearest_index(height, y0, y1, ysize)
        cols = nearest_index(width, x0, x1, xsize)
        return pick(pick(pixels, 0, rows), 1, cols).clone()
    t = pixels.to(torch.float64)
    columns = xsize != width or x0 != 0 or x1 != xsize
    rows = ysize != height or y0 != 0 or y1 != ysize
    first_rows = columns and rows and rows_first((width, height), (x0, y0, x1, y1), size, code)
    if first_rows:
        t = resample_rows(t, weight_matrix(height, y0, y1, ysize, code))
    if columns:
        t = resample_columns(t, weight_matrix(width, x0, x1, xsize, code))
    if rows and not first_rows:
        t = resample_rows(t, weight_matrix(height, y0, y1, ysize, code))
    return t.to(torch.uint8)


def _box_argument(function: str, box: Any) -> tuple[float, ...]:
    return _items(function, "box", box, "(left, upper, right, lower)")


@replaces(
    "Image.Image.crop",
    family=FAMILY,
    dtypes=("uint8",),
    channels=(1, 3, 4),
    accuracy="bit-exact",
    arguments={"self.mode": MODES, "box": ("None", "(left, upper, right, lower), may overhang")},
    notes="`crop` rounds the box as Pillow does; parts outside the image are 0.",
)
def crop(self: Any, box: Any = None) -> Any:
    """Traced ``Image.crop``: the box's pixels, zeros where it leaves the image."""
    function = "Image.Image.crop"
    pixels, mode = image_state(function, self)
    if box is None:
        return make_image(pixels.clone(), mode)
    items = _box_argument(function, box)
    if items[2] < items[0]:
        raise ValueError("Coordinate 'right' is less than 'left'")
    if items[3] < items[1]:
        raise ValueError("Coordinate 'lower' is less than 'upper'")
    left, upper, right, lower = (int(round(v)) for v in items)
    if right == left or lower == upper:
        raise refuse(function, "box", repr(box), "a box at least one pixel wide and high")
    width, height = _sizes(function, pixels)
    before_x, before_y = max(-left, 0), max(-upper, 0)
    pad = (0, 0, before_x, max(right - width, 0), before_y, max(lower - height, 0))
    if any(pad):  # Pillow fills what lies outside the image with 0
        pixels = torch.nn.functional.pad(pixels, pad)
    x, y = left + before_x, upper + before_y
    return make_image(pixels[y : y + lower - upper, x : x + right - left].clone(), mode)


# Pillow's Transpose codes -> the torch operation on (H, W, C) pixels
_TRANSPOSES = {
    0: ("FLIP_LEFT_RIGHT", lambda t: t.flip(1)),
    1: ("FLIP_TOP_BOTTOM", lambda t: t.flip(0)),
    2: ("ROTATE_90", lambda t: t.transpose(0, 1).flip(0)),
    3: ("ROTATE_180", lambda t: t.flip(0).flip(1)),
    4: ("ROTATE_270", lambda t: t.transpose(0, 1).flip(1)),
    5: ("TRANSPOSE", lambda t: t.transpose(0, 1)),
    6: ("TRANSVERSE", lambda t: t.flip(0).flip(1).transpose(0, 1)),
}


@replaces(
    "Image.Image.transpose",
    family=FAMILY,
    dtypes=("uint8",),
    channels=(1, 3, 4),
    accuracy="bit-exact",
    arguments={"self.mode": MODES, "method": tuple(name for name, _ in _TRANSPOSES.values())},
)
def transpose(self: Any, method: Any) -> Any:
    """Traced ``Image.transpose``: flips, quarter turns, transpose and transverse."""
    function = "Image.Image.transpose"
    pixels, mode = image_state(function, self)
    if method not in _TRANSPOSES:
        names = ", ".join(f"Image.Transpose.{name}" for name, _ in _TRANSPOSES.values())
        raise refuse(function, "method", repr(method), names)
    return make_image(_TRANSPOSES[int(method)][1](pixels).clone(), mode)


__all__ = ["FILTERS", "crop", "resize", "transpose"]
