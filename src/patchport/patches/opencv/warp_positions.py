"""Where cv2.warpPerspective and cv2.warpAffine sample each destination pixel, as the
installed OpenCV computes it (geometry's warps sample these positions).

OpenCV 4 quantises perspective positions to 1/32 pixel per 64-column block. OpenCV 5.1 on
x86-64 hands both warps to Intel IPP when it can (wheels built with IPP,
``cv2.ipp.useIPP()``): IPP computes positions in double. IPP declines one-pixel-wide or
-high sources, and perspective warps where what it must fill reaches behind the camera
(the denominator w = m20 x + m21 y + m22 is not positive; :func:`ipp_declines_perspective`);
OpenCV's own kernel then computes everything in float32:
the matrix rounded to float32, 16-column blocks (two AVX2 vectors) whose row start is
``y*m1 + m2`` and whose position is a fused ``m0*x + start``, a scalar tail for the last
columns with ``fma(x, m0, y*m1) + m2``, a float32 division (perspective), and x86's float-to-int
conversion (out-of-range and NaN positions become INT_MIN; the tail's floor wraps a
huge negative position to INT_MAX). Measured against OpenCV 5.1.0 (opencv-python-headless,
x86-64 with AVX2/AVX-512): the kernel positions reproduce OpenCV bit for bit, for both
warps (warpAffine's kernel is the same without the division).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ._base import cv2

_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1
_TAB = 32  # OpenCV 4's INTER_TAB_SIZE
_CPU_AVX2 = 11  # cv::CPU_AVX2 (cv2 exports checkHardwareSupport but not the feature names)


def ipp_declines_perspective(
    matrix: np.ndarray, dsize: tuple[int, int], src_shape: tuple[int, ...], border: int
) -> bool:
    """Whether OpenCV 5.1 computes this warp with its own float32 kernel rather than IPP.

    IPP is off or absent, or the source is one pixel high or wide; else IPP needs the
    part of the output it fills to lie in front of the camera: with BORDER_REPLICATE the
    whole output (w, from the inverse ``matrix``, positive at its corners: w is linear),
    with BORDER_CONSTANT the output or, failing that, the source seen from the output
    (the forward map's w positive at the source's corners, half a pixel out). Measured;
    IPP's own test is not public: it also takes some replicated warps whose w dips just
    below 0 at a corner (about -0.08 at most; 43 of 3000 random warps of small images),
    and constant-border ones this predicts wrongly are as rare (32 of 3000)."""
    if not cv2.ipp.useIPP() or src_shape[0] <= 1 or src_shape[1] <= 1:
        return True
    width, height = dsize
    corners = [(x, y) for x in (0.0, width - 1.0) for y in (0.0, height - 1.0)]
    if all(matrix[2, 0] * x + matrix[2, 1] * y + matrix[2, 2] > 0 for x, y in corners):
        return False
    if border != cv2.BORDER_CONSTANT:
        return True
    forward = cv2.invert(matrix, flags=cv2.DECOMP_LU)[1]
    rows, cols = src_shape[0], src_shape[1]
    source = [(x, y) for x in (-0.5, cols - 0.5) for y in (-0.5, rows - 0.5)]
    return any(forward[2, 0] * x + forward[2, 1] * y + forward[2, 2] <= 0 for x, y in source)


def perspective_in_double(
    matrix: np.ndarray, dsize: tuple[int, int]
) -> tuple[np.ndarray, np.ndarray]:
    """Positions in double (IPP's): the inverse map divided per pixel."""
    width, height = dsize
    xs, ys = np.meshgrid(np.arange(width, dtype=np.float64), np.arange(height, dtype=np.float64))
    m = matrix
    w = m[2, 0] * xs + m[2, 1] * ys + m[2, 2]
    w = np.where(w == 0, np.inf, w)  # a position at infinity reads the border
    x, y = ((m[i, 0] * xs + m[i, 1] * ys + m[i, 2]) / w for i in range(2))
    return x, y


def _block_columns() -> int:
    """Columns per vector block of OpenCV 5's warp kernel: two float32 vectors, the kernel
    being dispatched up to AVX2 (8 lanes) on x86-64; 4-lane SIMD (SSE, NEON) otherwise."""
    return 16 if cv2.checkHardwareSupport(_CPU_AVX2) else 8


def _fma(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """float32 fused multiply-add: the product of two float32 values is exact in double,
    so one rounding of the double sum to float32 gives the fused result."""
    return (a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)).astype(np.float32)


def ipp_takes_affine(src_shape: tuple[int, ...]) -> bool:
    """Whether OpenCV 5.1 hands this warpAffine to IPP: IPP on, a source wider and higher
    than one pixel (measured: IPP's results for uint16 and float32 images, OpenCV's kernel's
    bit for bit with IPP off)."""
    return bool(cv2.ipp.useIPP()) and src_shape[0] > 1 and src_shape[1] > 1


def perspective_in_kernel(
    matrix: np.ndarray, dsize: tuple[int, int]
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Positions as OpenCV 5's own warpPerspective kernel computes them, as integer parts
    and float32 fractions (sx, sy, tx, ty) in the kernel's int32 arithmetic."""
    return _in_kernel(matrix, dsize, projective=True)


def affine_in_kernel(
    matrix: np.ndarray, dsize: tuple[int, int]
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """warpAffine's positions in OpenCV 5's own kernel (the 2x3 inverse ``matrix``)."""
    return _in_kernel(matrix, dsize, projective=False)


def _in_kernel(matrix: np.ndarray, dsize: tuple[int, int], projective: bool) -> Any:
    width, height = dsize
    m = matrix.astype(np.float32).reshape(-1)
    xs = np.arange(width, dtype=np.float32)[None, :]
    ys = np.arange(height, dtype=np.float32)[:, None]
    vector = np.arange(width)[None, :] < width // _block_columns() * _block_columns()

    def linear(i: int) -> np.ndarray:
        a, b, c = (np.full_like(xs, m[3 * i + k]) for k in range(3))
        blocks = _fma(a, xs, ys * b + c[:, :1])  # row start y*m1 + m2 in float32
        tail = _fma(xs, a, ys * b) + c  # x*m0 + y*m1 + m2, contracted by the compiler
        return np.where(vector, blocks, tail)

    with np.errstate(all="ignore"):
        if projective:
            w = linear(2)
            parts = [_split(linear(i) / w, vector) for i in range(2)]
        else:
            parts = [_split(linear(i), vector) for i in range(2)]
    (sx, tx), (sy, ty) = parts
    return sx, sy, tx, ty


def _split(position: np.ndarray, vector: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
    """Integer part and fraction of float32 positions as x86 gives them: the vector floor
    converts NaN and out-of-range values to INT_MIN; the scalar floor (round, then one
    less where the rounded value is above) wraps a huge negative position to INT_MAX."""
    p = position.astype(np.float32)
    low = np.floor(p)
    blocks = np.where((low >= _INT_MIN) & (low <= _INT_MAX), low, _INT_MIN)
    near = np.rint(p)
    near = np.where((near >= _INT_MIN) & (near <= _INT_MAX), near, _INT_MIN)
    tail = near - (p < near.astype(np.float32))
    tail = np.where(tail < _INT_MIN, _INT_MAX, tail)
    whole = np.where(vector, blocks, tail).astype(np.int64)
    fraction = (p - whole.astype(np.float32)).astype(np.float32)
    return torch.from_numpy(whole), torch.from_numpy(fraction)


def not_a_number(
    positions: tuple[torch.Tensor, ...], src_shape: tuple[int, ...], border: int
) -> np.ndarray | None:
    """Where OpenCV's kernel produces NaN (stored as the integer maximum: 255, 65535),
    or None: positions at infinity or NaN (w exactly 0 at a pixel) lerp with an infinite
    fraction. A replicated border reads equal taps there (inf * 0); a constant border fills
    such a pixel in the scalar tail and in a 16-column block whose pixels all fall
    outside, but lerps the fill in any other block."""
    sx, sy, tx, ty = (v.numpy() for v in positions)
    odd = ~np.isfinite(tx) | ~np.isfinite(ty)
    if not odd.any():
        return None
    if border == cv2.BORDER_CONSTANT:
        rows, cols = src_shape[0], src_shape[1]
        outside = (sx + 1 < 0) | (sx >= cols) | (sy + 1 < 0) | (sy >= rows)
        width = sx.shape[1]
        step = _block_columns()
        blocks = width // step
        vector = np.zeros(sx.shape, dtype=bool)
        if blocks:
            lanes = outside[:, : blocks * step].reshape(-1, blocks, step)
            filled = np.repeat(~lanes.all(axis=2), step, axis=1)  # a block not all outside
            vector[:, : blocks * step] = filled
        odd &= vector
    return odd if odd.any() else None


def perspective_fixed_point(matrix: np.ndarray, dsize: tuple[int, int]):
    """OpenCV 4's warpPerspective positions: per 64-column block, the row start at the
    block's first column in double, then (X0 + M[0]*x1) * 32 / W rounded to an integer
    1/32 pixel (sx, sy, tx, ty, as convertMaps maps give them)."""
    width, height = dsize
    m = matrix.reshape(-1)
    block = min(64, width)
    columns = np.arange(width)
    first = (columns // block * block).astype(np.float64)[None, :]
    x1 = (columns % block).astype(np.float64)[None, :]
    rows = np.arange(height, dtype=np.float64)[:, None]
    w = m[6] * first + m[7] * rows + m[8] + m[6] * x1
    with np.errstate(divide="ignore"):
        w = np.where(w != 0, _TAB / np.where(w != 0, w, 1.0), 0.0)
    low, high = float(-(2**31)), float(2**31 - 1)
    parts = []
    for i in range(2):
        start = m[3 * i] * first + m[3 * i + 1] * rows + m[3 * i + 2]
        position = np.rint(np.clip((start + m[3 * i] * x1) * w, low, high)).astype(np.int64)
        whole = np.clip(position >> 5, -(1 << 15), (1 << 15) - 1)
        parts.append(
            (torch.from_numpy(whole), torch.from_numpy((position & 31).astype(np.float32)))
        )
    (sx, tx), (sy, ty) = parts
    return sx, sy, tx, ty
