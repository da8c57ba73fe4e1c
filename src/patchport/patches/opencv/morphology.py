"""erode, dilate and morphologyEx as minima/maxima of shifted copies with torch ops.

Min and max select input values, so every result is exact. Kernels follow OpenCV: None
is a 3x3 rectangle, a full rectangle with iterations > 1 grows into one larger rectangle,
any other shape is applied ``iterations`` times; the default constant border never wins.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ._base import (
    as_tensor,
    constant_name,
    cv2,
    integer_limits,
    no_dst,
    pad,
    refuse,
    replaces,
    scalar4,
    to_numpy,
    tuple_of_ints,
)
from .window import Shifts, extremum, extremum_nodes

_DTYPES = ("uint8", "uint16", "int16", "float32", "float64")
_CHANNELS = (1, 2, 3, 4)
_BORDERS = ("BORDER_CONSTANT", "BORDER_REPLICATE", "BORDER_REFLECT", "BORDER_REFLECT_101")
_DEFAULT_BORDER_VALUE = float(np.finfo(np.float64).max)  # morphologyDefaultBorderValue()


def _kernel(function: str, kernel: Any) -> np.ndarray:
    """The structuring element as a boolean array (None or empty: a 3x3 rectangle)."""
    if kernel is None or (isinstance(kernel, np.ndarray) and kernel.size == 0):
        return np.ones((3, 3), dtype=bool)
    if type(kernel) is not np.ndarray or kernel.ndim != 2 or kernel.dtype.kind not in "iufb":
        shown = f"{type(kernel).__name__}{list(np.shape(kernel))}"
        raise refuse(
            function,
            "kernel",
            shown,
            "None or a plain (untraced) 2-D NumPy array, e.g. from cv2.getStructuringElement",
        )
    return kernel != 0


def _border(function: str, value: int) -> int:
    codes = {getattr(cv2, name): name for name in _BORDERS}
    if value not in codes:
        raise refuse(
            function,
            "borderType",
            constant_name(value, "BORDER_"),
            ", ".join(_BORDERS) + " (BORDER_DEFAULT is BORDER_REFLECT_101)",
        )
    return value


def _extremum(
    t: torch.Tensor,
    kernel: np.ndarray,
    anchor: tuple[int, int],
    border: int,
    fill: tuple,
    neutral: float,
    low: bool,
) -> torch.Tensor:
    """Min (``low``) or max of t over the kernel's true cells, OpenCV's anchor and border,
    as shifted copies of the (H, W*C) view (see :mod:`.window`). A constant border of one
    value enters with the shifts of the image; so does a replicated one around a full
    rectangle (the edge pixel lies in every window that reaches past it, so it never
    changes a min or max: the ``neutral`` value stands for it). Other borders, and windows
    long enough that doubling them wins (it shifts partial windows, so the border must be
    there), are padded first and cropped after."""
    rows, cols = kernel.shape
    ax, ay = anchor
    height, width, channels = t.shape
    pick = torch.minimum if low else torch.maximum
    if border == cv2.BORDER_REPLICATE and kernel.all():
        border, fill = cv2.BORDER_CONSTANT, (neutral,) * 4
    simple = extremum_nodes(kernel, (ay, ax), doubling=False)
    if (
        border == cv2.BORDER_CONSTANT
        and len(set(fill[:channels])) == 1
        and simple <= extremum_nodes(kernel, (ay, ax), doubling=True) + 2  # pad, crop
    ):
        flat = t.reshape(height, width * channels)
        out = extremum(Shifts(channels, fill[0]), flat, kernel, (ay, ax), pick, False)
        return out.reshape(height, width, channels)
    padded = pad(t, ay, rows - 1 - ay, ax, cols - 1 - ax, border, fill)
    flat = padded.reshape(padded.shape[0], -1)
    out = extremum(Shifts(channels, neutral), flat, kernel, (ay, ax), pick, True)
    out = out.reshape(padded.shape)  # cropped as (H, W, C): one Slice writes the result
    return out[ay : ay + height, ax : ax + width]


def _morph(
    function: str,
    src: np.ndarray,
    kernel: Any,
    anchor: Any,
    iterations: int,
    borderType: int,
    borderValue: Any,
    low: bool,
    t: torch.Tensor | None = None,
) -> torch.Tensor:
    """One erosion (``low``) or dilation as OpenCV's morphOp runs it, on an (H, W, C) tensor."""
    border = _border(function, borderType)
    cells = _kernel(function, kernel)
    x, y = tuple_of_ints(function, "anchor", anchor)
    rows, cols = cells.shape
    x, y = (cols // 2 if x < 0 else x), (rows // 2 if y < 0 else y)
    if not (0 <= x < cols and 0 <= y < rows):
        raise refuse(function, "anchor", (x, y), "(-1, -1) or a point inside the kernel")
    if t is None:
        t = as_tensor(function, src, _DTYPES, _CHANNELS)
    iterations = int(iterations)
    if iterations <= 0 or cells.size == 1:
        return t.clone()
    if iterations > 1 and cells.all():  # OpenCV grows a full rectangle instead of repeating
        cells = np.ones(
            (rows + (iterations - 1) * (rows - 1), cols + (iterations - 1) * (cols - 1)), bool
        )
        x, y, iterations = x * iterations, y * iterations, 1
    limits = integer_limits(src.dtype)
    extreme = float((float("inf") if low else float("-inf")) if limits is None else limits[low])
    if borderValue is None or scalar4(borderValue)[0] == _DEFAULT_BORDER_VALUE:
        fill = (extreme,) * 4
    else:
        fill = scalar4(borderValue)
        if limits is not None:
            fill = tuple(float(np.clip(np.rint(v), *limits)) for v in fill)
    for _ in range(iterations):
        t = _extremum(t, cells, (x, y), border, fill, extreme, low)
    return t


_ARGUMENTS = {
    "kernel": ("None (3x3)", "any 2-D array (rect, cross, ellipse, custom)"),
    "anchor": ("(-1, -1)", "any point in the kernel"),
    "iterations": ("any",),
    "borderType": _BORDERS + ("BORDER_DEFAULT",),
    "borderValue": ("default (never wins)", "any Scalar"),
}


@replaces(
    "erode",
    family="morphology",
    dtypes=_DTYPES,
    channels=_CHANNELS,
    accuracy="exact",
    arguments=_ARGUMENTS,
)
def erode(
    src: np.ndarray,
    kernel: Any,
    dst: Any = None,
    anchor: Any = (-1, -1),
    iterations: int = 1,
    borderType: int = cv2.BORDER_CONSTANT,
    borderValue: Any = None,
) -> Any:
    """Traceable ``cv2.erode``: the minimum over the structuring element (exact)."""
    no_dst("erode", dst)
    out = _morph("erode", src, kernel, anchor, iterations, borderType, borderValue, True)
    return to_numpy(out, src.dtype)


@replaces(
    "dilate",
    family="morphology",
    dtypes=_DTYPES,
    channels=_CHANNELS,
    accuracy="exact",
    arguments=_ARGUMENTS,
)
def dilate(
    src: np.ndarray,
    kernel: Any,
    dst: Any = None,
    anchor: Any = (-1, -1),
    iterations: int = 1,
    borderType: int = cv2.BORDER_CONSTANT,
    borderValue: Any = None,
) -> Any:
    """Traceable ``cv2.dilate``: the maximum over the structuring element (exact)."""
    no_dst("dilate", dst)
    out = _morph("dilate", src, kernel, anchor, iterations, borderType, borderValue, False)
    return to_numpy(out, src.dtype)


def _operations() -> dict[int, str]:
    names = (
        "MORPH_ERODE",
        "MORPH_DILATE",
        "MORPH_OPEN",
        "MORPH_CLOSE",
        "MORPH_GRADIENT",
        "MORPH_TOPHAT",
        "MORPH_BLACKHAT",
    )
    return {getattr(cv2, name): name for name in names}


@replaces(
    "morphologyEx",
    family="morphology",
    dtypes=_DTYPES,
    channels=_CHANNELS,
    accuracy="exact",
    arguments={"op": tuple(_operations().values()), **_ARGUMENTS},
    notes="MORPH_HITMISS is refused. Differences (gradient, top-hat, black-hat) saturate "
    "like OpenCV's subtract.",
)
def morphologyEx(
    src: np.ndarray,
    op: int,
    kernel: Any,
    dst: Any = None,
    anchor: Any = (-1, -1),
    iterations: int = 1,
    borderType: int = cv2.BORDER_CONSTANT,
    borderValue: Any = None,
) -> Any:
    """Traceable ``cv2.morphologyEx``: open, close, gradient, top-hat, black-hat (exact)."""
    no_dst("morphologyEx", dst)
    kinds = _operations()
    if op not in kinds:
        raise refuse("morphologyEx", "op", constant_name(op, "MORPH_"), ", ".join(kinds.values()))
    kind = kinds[op]
    args = (src, kernel, anchor, iterations, borderType, borderValue)

    def erode_(t: torch.Tensor | None = None) -> torch.Tensor:
        return _morph("morphologyEx", *args, True, t)

    def dilate_(t: torch.Tensor | None = None) -> torch.Tensor:
        return _morph("morphologyEx", *args, False, t)

    if kind == "MORPH_ERODE":
        out = erode_()
    elif kind == "MORPH_DILATE":
        out = dilate_()
    elif kind == "MORPH_OPEN":
        out = dilate_(erode_())
    elif kind == "MORPH_CLOSE":
        out = erode_(dilate_())
    else:
        t = as_tensor("morphologyEx", src, _DTYPES, _CHANNELS)
        if kind == "MORPH_GRADIENT":
            high, low = dilate_(), erode_()
        elif kind == "MORPH_TOPHAT":
            high, low = t, dilate_(erode_())
        else:
            high, low = erode_(dilate_()), t
        limits = integer_limits(src.dtype)
        if limits is None:
            out = high - low
        elif t.dtype == torch.uint8:  # saturated in uint8: no widening, no casts
            out = high - torch.minimum(high, low)
        else:
            difference = high.to(torch.int32) - low.to(torch.int32)
            out = torch.clamp(difference, *limits).to(t.dtype)
    return to_numpy(out, src.dtype)
