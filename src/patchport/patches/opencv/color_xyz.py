"""cvtColor between BGR/RGB and CIE XYZ (D65): OpenCV's 12-bit fixed point for uint8
(bit-exact), its float32 matrices for float32."""

from __future__ import annotations

import numpy as np
import torch

from .fixed_point import descale_uint8

_SHIFT = 12  # OpenCV's uint8 XYZ: coefficients rounded to 12 fractional bits
# rows X, Y, Z of (R, G, B); and rows R, G, B of (X, Y, Z)
_TO_XYZ = np.array(
    [[0.412453, 0.357580, 0.180423], [0.212671, 0.715160, 0.072169], [0.019334, 0.119193, 0.950227]]
)
_FROM_XYZ = np.array(
    [
        [3.240479, -1.53715, -0.498535],
        [-0.969256, 1.875991, 0.041556],
        [0.055648, -0.204043, 1.057311],
    ]
)


def _apply(
    matrix: np.ndarray, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor
) -> list[torch.Tensor]:
    """``matrix @ (a, b, c)`` per pixel: uint8 in 12-bit fixed point (every sum below
    2**23: exact in float32), float32 with the float32 coefficients."""
    if a.dtype == torch.uint8:
        fixed = np.rint(matrix * (1 << _SHIFT))
        a, b, c = (x.to(torch.float32) for x in (a, b, c))
        return [
            descale_uint8(a * float(k0) + b * float(k1) + c * float(k2), 0.0, _SHIFT)
            for k0, k1, k2 in fixed
        ]
    weights = matrix.astype(np.float32)
    return [a * float(k0) + b * float(k1) + c * float(k2) for k0, k1, k2 in weights]


def to_xyz(b: torch.Tensor, g: torch.Tensor, r: torch.Tensor) -> list[torch.Tensor]:
    """(X, Y, Z) planes of (B, G, R) planes."""
    return _apply(_TO_XYZ, r, g, b)


def from_xyz(x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """(B, G, R) planes of (X, Y, Z) planes."""
    r, g, b = _apply(_FROM_XYZ, x, y, z)
    return b, g, r
