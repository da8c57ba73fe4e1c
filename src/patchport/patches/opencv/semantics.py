"""The OpenCV release whose arithmetic the replacements reproduce, read once from cv2.

OpenCV changes rounding details between releases, and the replacements must match the
installed cv2 (verification compares with it). Each version-dependent choice is one
field of :class:`Semantics`, so this table is the one place that says what differs.
Measured with probes against OpenCV 4.14, 5.0 and 5.1 (opencv-python-headless wheels,
x86-64 with AVX2 and AVX-512); other 4.x releases are taken to be 4.14, and releases
after 5.1 to be 5.1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numpy as np

from ...versions import parse_version
from ._base import cv2


@dataclass(frozen=True)
class Semantics:
    """How one OpenCV release computes the results the replacements reproduce."""

    release: tuple[int, int]
    # add/subtract/absdiff of an integer image and a Scalar with a fractional part:
    # False: the Scalar is rounded half to even first, then integer arithmetic (4.x, 5.0);
    # True: float32 arithmetic, the result rounded half to even (5.1: 41 - 40.5 -> 0)
    fractional_scalar_in_float32: bool
    # absdiff of an unsigned image and an all-integer Scalar out of the image's range:
    # True: the Scalar is saturated to the range first (5.1: absdiff(u8, 300) == |x - 255|)
    absdiff_saturates_integer_scalar: bool
    # uint8 addWeighted and multiply: elements per SIMD step of OpenCV's row loop
    lanes: int
    # the elements after the last whole SIMD step of a row: False: OpenCV's scalar loop
    # computes them (4.x); True: the vector loop covers the whole row (5.x), so only rows
    # shorter than ``lanes`` take the scalar loop
    vector_covers_row: bool
    # uint8 multiply in the scalar loop: True: (a * b) * scale (5.0); False: (a * scale) * b,
    # as the vector loop (4.x, 5.1)
    multiply_scalar_loop_scales_last: bool
    # warpAffine positions: True: the inverse map in double per pixel, its fraction rounded
    # to float32 (5.1); False: float32 row start, then a fused multiply-add (5.0)
    warp_positions_in_double: bool
    # INTER_LINEAR at float positions (remap's float maps): True: float32 fractions and
    # lerps (5.x, but for 2-channel images); False: positions rounded to 1/32 pixel and
    # OpenCV's weight table, for every image (4.x)
    float_positions: bool
    # uint8 INTER_CUBIC: True: rows blended in float32 with float32 weights (5.1, measured:
    # all but ~0.01% of channels, ties at x.5, match); False: 11-bit integer row sums, then
    # float32 columns (4.x's VResizeCubicVec_32s8u; 5.0 not measured, taken as 4.x)
    cubic_rows_in_float: bool = False


_RELEASES = {
    (4, 14): Semantics((4, 14), False, False, 16, False, False, False, False),
    (5, 0): Semantics((5, 0), False, False, 16, True, True, False, True),
    (5, 1): Semantics((5, 1), True, True, 32, True, False, True, True, True),
}


def semantics_for(version: str) -> Semantics:
    """The semantics of an OpenCV version string (``"5.1.0"``): the table's entry for its
    release, the nearest older one, or the oldest when it predates them all."""
    release = parse_version(version)[:2]
    known = sorted(r for r in _RELEASES if r <= release)
    return _RELEASES[known[-1]] if known else _RELEASES[min(_RELEASES)]


@cache
def current() -> Semantics:
    """The semantics of the installed cv2 (read once)."""
    return semantics_for(cv2.__version__)


def installed_release() -> str:
    """The installed cv2's version string (what an exported model's arithmetic follows)."""
    return str(cv2.__version__)


def scalar_loop_elements(src1: np.ndarray, src2: np.ndarray) -> np.ndarray | None:
    """Where OpenCV's scalar loop, not its SIMD loop, computes an element-wise uint8 result
    of ``src1`` and ``src2``: a boolean array broadcastable to the (H, W, C) image, or None
    when the SIMD loop computes everything. OpenCV runs its loops along rows; two
    contiguous images are one row."""
    rules = current()
    shape = src1.shape if src1.ndim == 3 else (*src1.shape, 1)
    contiguous = src1.flags.c_contiguous and src2.flags.c_contiguous
    row = math.prod(shape) if contiguous else shape[1] * shape[2]
    if rules.vector_covers_row:
        start = row if row >= rules.lanes else 0
    else:
        start = row // rules.lanes * rules.lanes
    if start == row:
        return None
    where = np.arange(row) >= start
    return where.reshape(shape if contiguous else (1, shape[1], shape[2]))
