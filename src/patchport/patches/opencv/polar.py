"""magnitude, phase, cartToPolar and polarToCart of traced (x, y) fields (optical flow,
gradients) with torch ops.

Angles follow OpenCV's ``fastAtan2``: a degree-7 polynomial of the smaller ratio in
float32, folded into [0, 360) degrees (about 1e-4 radians from the true atan2, which a
plain ``atan2`` would not reproduce); radians are its degrees times ``(float)(pi / 180)``.
Magnitudes are ``sqrt(x*x + y*y)``; float64 inputs keep double magnitudes and, as in
OpenCV, float32 angles converted to double.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from ._base import no_dst, refuse, replaces

_FLOATS = ("float32", "float64")
_DEGREES = 180.0 / math.pi
# fastAtan2's coefficients, scaled to degrees in float32 as OpenCV stores them
_P1, _P3, _P5, _P7 = (
    float(np.float32(c * np.float32(_DEGREES)))
    for c in (0.9997878412794807, -0.3258083974640975, 0.1555786518463281, -0.04432655554792128)
)
_EPS = float(np.float32(np.finfo(np.float64).eps))  # (float)DBL_EPSILON
_TO_RADIANS = float(np.float32(math.pi / 180.0))
_ACCURACY = "float32 within 1e-5 of the data's magnitude (one ulp: OpenCV's SIMD rounding)"


def _pair(function: str, x: Any, y: Any, names: tuple[str, str] = ("x", "y")) -> tuple:
    """Two float arrays of one shape and dtype (any layout; OpenCV reads them as images)."""
    for name, value in zip(names, (x, y)):
        if not isinstance(value, np.ndarray):
            raise refuse(function, name, f"a {type(value).__name__}", "a NumPy array")
        if value.dtype.name not in _FLOATS:
            raise refuse(function, f"{name}.dtype", value.dtype.name, "float32, float64")
    if x.shape != y.shape or x.dtype != y.dtype:
        raise refuse(
            function,
            names[1],
            f"{y.dtype}{list(y.shape)}",
            f"the shape and dtype of {names[0]} ({x.dtype}{list(x.shape)})",
        )
    return torch.from_numpy(np.ascontiguousarray(x)), torch.from_numpy(np.ascontiguousarray(y))


def _magnitude(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.sqrt(x * x + y * y)


def _degrees(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """OpenCV's fastAtan2(y, x) in float32 degrees, in [0, 360)."""
    x, y = x.to(torch.float32), y.to(torch.float32)
    ax, ay = torch.abs(x), torch.abs(y)
    wide = ax >= ay
    c = torch.where(wide, ay / (ax + _EPS), ax / (ay + _EPS))
    c2 = c * c
    a = (((c2 * _P7 + _P5) * c2 + _P3) * c2 + _P1) * c
    a = torch.where(wide, a, 90.0 - a)
    a = torch.where(x < 0, 180.0 - a, a)
    return torch.where(y < 0, 360.0 - a, a)


def _angle(x: torch.Tensor, y: torch.Tensor, degrees: bool) -> torch.Tensor:
    a = _degrees(x, y)
    if not degrees:
        a = a * _TO_RADIANS
    return a.to(x.dtype)


@replaces(
    "magnitude",
    family="polar",
    dtypes=_FLOATS,
    channels=(1,),
    accuracy=_ACCURACY + "; float64 exact",
)
def magnitude(x: np.ndarray, y: np.ndarray, magnitude: Any = None) -> Any:
    """Traceable ``cv2.magnitude``: ``sqrt(x**2 + y**2)`` per element."""
    no_dst("magnitude", magnitude, "magnitude")
    tx, ty = _pair("magnitude", x, y)
    return _magnitude(tx, ty).numpy()


@replaces(
    "phase",
    family="polar",
    dtypes=_FLOATS,
    channels=(1,),
    accuracy=_ACCURACY,
    arguments={"angleInDegrees": ("False (radians)", "True")},
    notes="OpenCV's fastAtan2 polynomial, not atan2 (they differ by up to 1.7e-4 radians).",
)
def phase(x: np.ndarray, y: np.ndarray, angle: Any = None, angleInDegrees: bool = False) -> Any:
    """Traceable ``cv2.phase``: the angle of (x, y) in [0, 2 pi) (or degrees)."""
    no_dst("phase", angle, "angle")
    tx, ty = _pair("phase", x, y)
    return _angle(tx, ty, bool(angleInDegrees)).numpy()


@replaces(
    "cartToPolar",
    family="polar",
    dtypes=_FLOATS,
    channels=(1,),
    accuracy=_ACCURACY + "; float64 magnitudes exact",
    arguments={"angleInDegrees": ("False (radians)", "True")},
    notes="the angle is OpenCV's fastAtan2 polynomial, as in cv2.phase.",
)
def cartToPolar(
    x: np.ndarray,
    y: np.ndarray,
    magnitude: Any = None,
    angle: Any = None,
    angleInDegrees: bool = False,
) -> Any:
    """Traceable ``cv2.cartToPolar``: (magnitude, angle) of each (x, y)."""
    no_dst("cartToPolar", magnitude, "magnitude")
    no_dst("cartToPolar", angle, "angle")
    tx, ty = _pair("cartToPolar", x, y)
    return _magnitude(tx, ty).numpy(), _angle(tx, ty, bool(angleInDegrees)).numpy()


@replaces(
    "polarToCart",
    family="polar",
    dtypes=_FLOATS,
    channels=(1,),
    accuracy="within 1e-5 of the magnitude (OpenCV's sine table is not reproduced)",
    arguments={"angleInDegrees": ("False (radians)", "True")},
)
def polarToCart(
    magnitude: np.ndarray,
    angle: np.ndarray,
    x: Any = None,
    y: Any = None,
    angleInDegrees: bool = False,
) -> Any:
    """Traceable ``cv2.polarToCart``: (magnitude * cos(angle), magnitude * sin(angle))."""
    no_dst("polarToCart", x, "x")
    no_dst("polarToCart", y, "y")
    tm, ta = _pair("polarToCart", magnitude, angle, ("magnitude", "angle"))
    if angleInDegrees:
        ta = ta * (math.pi / 180.0)
    return (tm * torch.cos(ta)).numpy(), (tm * torch.sin(ta)).numpy()
