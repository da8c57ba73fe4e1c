"""warpAffine with a matrix computed from traced data (a face aligned to its detected
landmarks, a person box cropped for a pose network): the matrix stays in the graph.

OpenCV 5.1 computes each destination pixel's source position in double from the inverse
matrix; the positions are built here the same way with graph operations, and geometry's
warpAffine samples them as it samples a constant matrix's (uint8 through float32
positions, other types with the integer part and fraction taken from the double).
Releases that quantise positions (OpenCV 4's 1/1024 steps, 5.0's float32 products) keep
the constant-matrix requirement.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from . import transforms
from ._base import cv2, refuse
from .semantics import current, installed_release


def supported() -> bool:
    """Whether the installed OpenCV computes warp positions in double (5.1 and later)."""
    return current().warp_positions_in_double


def positions(M: np.ndarray, size: tuple[int, int], flags: int) -> tuple[torch.Tensor, ...]:
    """The float64 source position (x, y) of every destination pixel for the traced 2x3
    ``M`` (inverted unless ``flags`` has WARP_INVERSE_MAP), as OpenCV 5.1 computes them."""
    if not supported():
        raise refuse(
            "warpAffine",
            "M",
            "traced data",
            "a plain (untraced) 2x3 array with OpenCV "
            f"{installed_release()} (a matrix computed from traced data needs OpenCV 5.1's "
            "warp positions in double)",
        )
    if M.dtype not in (np.float32, np.float64):
        raise refuse("warpAffine", "M.dtype", M.dtype, "float32 or float64")
    matrix = M.astype(np.float64)
    if not flags & cv2.WARP_INVERSE_MAP:
        matrix = transforms.invertAffineTransform(matrix)
    m = torch.from_numpy(matrix).to(torch.float64)
    width, height = size
    xs = torch.arange(width, dtype=torch.float64).reshape(1, -1)
    ys = torch.arange(height, dtype=torch.float64).reshape(-1, 1)
    return tuple(m[i, 0] * xs + m[i, 1] * ys + m[i, 2] for i in range(2))


def check_matrix(M: Any) -> bool:
    """Whether ``M`` is a traced 2x3 array (the case this module takes)."""
    return isinstance(M, np.ndarray) and type(M) is not np.ndarray and M.shape == (2, 3)
