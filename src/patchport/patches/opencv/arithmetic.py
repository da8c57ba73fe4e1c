"""threshold, inRange, addWeighted, convertScaleAbs and normalize with torch ops.

Scalars are converted the way OpenCV converts them (uint8 thresholds floored, bounds
saturated), and uint8 results are rounded half to even like OpenCV's saturate_cast.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ._base import (
    as_tensor,
    constant_name,
    cv2,
    no_dst,
    output_buffer,
    refuse,
    replaces,
    saturate,
    scalar4,
    to_numpy,
)
from .semantics import scalar_loop_elements

_DTYPES = ("uint8", "uint16", "float32")
_IMAGE_DTYPES = ("uint8", "float32")
_CHANNELS = (1, 2, 3, 4)


def _threshold_types() -> dict[int, str]:
    return {
        cv2.THRESH_BINARY: "THRESH_BINARY",
        cv2.THRESH_BINARY_INV: "THRESH_BINARY_INV",
        cv2.THRESH_TRUNC: "THRESH_TRUNC",
        cv2.THRESH_TOZERO: "THRESH_TOZERO",
        cv2.THRESH_TOZERO_INV: "THRESH_TOZERO_INV",
    }


@replaces(
    "threshold",
    family="arithmetic",
    dtypes=_DTYPES,
    channels=_CHANNELS,
    accuracy="exact",
    arguments={"type": (*_threshold_types().values(), "each | THRESH_OTSU (uint8, 1 channel)")},
    notes="returns (thresh, dst) like OpenCV; uint8 thresholds are floored, maxval rounded. "
    "With THRESH_OTSU the level is computed from the image's histogram in the graph and "
    "returned as a traced 0-d float64 array (it follows each new image); exact except "
    "where two levels have exactly equal between-class variances (a histogram symmetric "
    "about them), which OpenCV's float32 rounding decides. THRESH_TRIANGLE is refused.",
)
def threshold(src: np.ndarray, thresh: float, maxval: float, type: int, dst: Any = None) -> Any:
    """Traceable ``cv2.threshold`` for the five fixed-threshold types, and each with
    THRESH_OTSU on one-channel uint8 images (exact)."""
    no_dst("threshold", dst)
    kinds = _threshold_types()
    otsu = isinstance(type, (int, np.integer)) and (type & ~7) == cv2.THRESH_OTSU
    base = type & 7 if otsu else type
    if base not in kinds:
        supported = ", ".join(kinds.values()) + " (each optionally | THRESH_OTSU)"
        raise refuse("threshold", "type", constant_name(type, "THRESH_"), supported)
    kind = kinds[base]
    if otsu:
        t = as_tensor("threshold", src, ("uint8",), (1,))
        return _otsu_threshold(t, kind, maxval)
    t = as_tensor("threshold", src, _DTYPES, _CHANNELS)
    if src.dtype != np.float32:  # integer images: OpenCV floors thresh, rounds maxval
        peak = int(np.iinfo(src.dtype).max)
        level = int(np.floor(thresh))
        top = level if kind == "THRESH_TRUNC" else int(np.rint(maxval))
        top = min(max(top, 0), peak)
        retval = float(level)
        if level < 0 or level >= peak:
            if (
                kind in ("THRESH_BINARY", "THRESH_BINARY_INV")
                or (kind in ("THRESH_TRUNC", "THRESH_TOZERO_INV") and level < 0)
                or (kind == "THRESH_TOZERO" and level >= peak)
            ):
                if kind == "THRESH_BINARY":
                    fill = 0 if level >= peak else top
                elif kind == "THRESH_BINARY_INV":
                    fill = top if level >= peak else 0
                else:
                    fill = 0
                return retval, to_numpy(torch.full_like(t, fill), src.dtype)
            return retval, to_numpy(t.clone(), src.dtype)
        above = t > level
        high = torch.full_like(t, top)
    else:
        level, retval = float(np.float32(thresh)), float(thresh)
        above = t > level
        high = torch.full_like(t, float(np.float32(maxval)))
    zero = torch.zeros_like(t)
    if kind == "THRESH_BINARY":
        out = torch.where(above, high, zero)
    elif kind == "THRESH_BINARY_INV":
        out = torch.where(above, zero, high)
    elif kind == "THRESH_TRUNC":
        out = torch.where(above, torch.full_like(t, level), t)
    elif kind == "THRESH_TOZERO":
        out = torch.where(above, t, zero)
    else:
        out = torch.where(above, zero, t)
    return retval, to_numpy(out, src.dtype)


def _otsu_level(t: torch.Tensor) -> torch.Tensor:
    """OpenCV's Otsu level of a uint8 image as a 0-d float64 tensor: the first grey level
    that maximises the between-class variance q1 q2 (mu1 - mu2)^2, over the levels where
    both classes hold at least FLT_EPSILON of the pixels (0 when none does). Where two
    levels have exactly equal variances (a histogram symmetric about them) OpenCV's float32
    rounding picks one of them, not always the first: the trace-time check reports it."""
    values = t.reshape(-1).to(torch.int64)
    ones = (values >= 0).to(torch.float64)  # made from the image: no pixel-sized constant
    counts = (ones[:1] * 0).expand(256).scatter_add(0, values, ones)
    p = counts / float(values.shape[0])
    grey = torch.arange(256, dtype=torch.float64)
    q1 = torch.cumsum(p, 0)
    mass = torch.cumsum(grey * p, 0)
    q2 = 1.0 - q1
    eps = float(np.finfo(np.float32).eps)
    valid = ~((torch.minimum(q1, q2) < eps) | (torch.maximum(q1, q2) > 1.0 - eps))
    mu1 = mass / torch.where(valid, q1, torch.ones_like(q1))
    mu2 = (mass[-1] - mass) / torch.where(valid, q2, torch.ones_like(q2))
    sigma = torch.where(valid, q1 * q2 * (mu1 - mu2) ** 2, torch.zeros_like(q1))
    best = torch.argmax(sigma)  # the first of equal maxima, as OpenCV's strict >
    found = sigma.max() > 0
    return torch.where(found, best.to(torch.float64), torch.zeros_like(sigma[0]))


def _otsu_threshold(t: torch.Tensor, kind: str, maxval: float) -> Any:
    """``cv2.threshold(src, _, maxval, kind | THRESH_OTSU)`` on a one-channel uint8 image:
    the level and the thresholded image, both computed in the graph."""
    level = _otsu_level(t)
    top = min(max(int(np.rint(maxval)), 0), 255)
    bar = level.to(torch.int32)
    pixels = t.to(torch.int32)
    above = pixels > bar
    zero = torch.zeros_like(pixels)
    if kind == "THRESH_BINARY":
        out = torch.where(above, torch.full_like(pixels, top), zero)
    elif kind == "THRESH_BINARY_INV":
        out = torch.where(above, zero, torch.full_like(pixels, top))
    elif kind == "THRESH_TRUNC":
        out = torch.where(above, bar.expand_as(pixels), pixels)
    elif kind == "THRESH_TOZERO":
        out = torch.where(above, pixels, zero)
    else:
        out = torch.where(above, zero, pixels)
    return level.numpy(), to_numpy(out.to(torch.uint8))


def _bound(name: str, value: Any, t: torch.Tensor, src: np.ndarray) -> torch.Tensor:
    """An inRange bound as a tensor broadcastable to (H, W, C), converted like OpenCV."""
    channels = t.shape[2]
    if isinstance(value, np.ndarray) and value.shape == src.shape:
        if value.dtype != src.dtype:
            raise refuse("inRange", f"{name}.dtype", value.dtype, f"{src.dtype} like src")
        bound = torch.from_numpy(value)
        if value.dtype == np.uint16:
            bound = bound.to(torch.int32)
        return bound if src.ndim == 3 else bound.unsqueeze(-1)
    expected = "a number, a tuple of 1, C or 4 numbers (C channels), or an array shaped like src"
    if isinstance(value, np.ndarray):  # a per-channel vector, possibly traced: torch ops only
        if value.ndim > 2 or value.size not in (1, channels, 4) or value.dtype.kind not in "iuf":
            raise refuse("inRange", name, f"{value.dtype}{list(value.shape)}", expected)
        bound = torch.from_numpy(np.ascontiguousarray(value)).reshape(-1).to(torch.float64)
        if value.size < channels:
            bound = torch.cat([bound, torch.zeros(channels - value.size, dtype=torch.float64)])
        bound = bound[:channels]
    else:
        try:
            count = 1 if isinstance(value, (int, float, np.integer, np.floating)) else len(value)
            values = scalar4(value)
        except (TypeError, ValueError):
            raise refuse("inRange", name, repr(value), expected) from None
        if count not in (1, channels, 4):
            raise refuse("inRange", name, repr(value), expected)
        bound = torch.tensor(values[:channels], dtype=torch.float64)
    if not t.dtype.is_floating_point:  # rounded to integers, not clamped: 256 matches no uint8
        return torch.round(bound).to(torch.float32).reshape(1, 1, channels)
    return bound.to(t.dtype).reshape(1, 1, channels)


@replaces(
    "inRange",
    family="arithmetic",
    dtypes=_DTYPES,
    channels=_CHANNELS,
    accuracy="exact",
    arguments={"lowerb/upperb": ("number", "per-channel tuple", "array shaped like src")},
)
def inRange(src: np.ndarray, lowerb: Any, upperb: Any, dst: Any = None) -> Any:
    """Traceable ``cv2.inRange``: 255 where every channel lies in [lowerb, upperb] (exact)."""
    no_dst("inRange", dst)
    t = as_tensor("inRange", src, _DTYPES, _CHANNELS)
    low, high = _bound("lowerb", lowerb, t, src), _bound("upperb", upperb, t, src)
    values = t if t.dtype.is_floating_point else t.to(torch.float32)  # exact for integers
    inside = torch.all((values >= low) & (values <= high), dim=-1)
    return to_numpy(torch.where(inside, 255, 0).to(torch.uint8))


@replaces(
    "addWeighted",
    family="arithmetic",
    dtypes=_IMAGE_DTYPES,
    channels=_CHANNELS,
    accuracy="uint8 exact (OpenCV's float32 fused multiply-adds, SIMD and scalar loops, "
    "reproduced for the installed release); float32 within 1e-5",
    arguments={"dtype": ("-1 (same as inputs)",)},
)
def addWeighted(
    src1: np.ndarray,
    alpha: float,
    src2: np.ndarray,
    beta: float,
    gamma: float,
    dst: Any = None,
    dtype: int = -1,
) -> Any:
    """Traceable ``cv2.addWeighted``: saturate(src1*alpha + src2*beta + gamma); uint8 exact
    (OpenCV's float32 fused multiply-adds are reproduced)."""
    no_dst("addWeighted", dst)
    if dtype != -1:
        raise refuse("addWeighted", "dtype", dtype, "-1 (the inputs' type)")
    a = as_tensor("addWeighted", src1, _IMAGE_DTYPES, _CHANNELS, "src1")
    b = as_tensor("addWeighted", src2, _IMAGE_DTYPES, _CHANNELS, "src2")
    if src1.shape != src2.shape or src1.dtype != src2.dtype:
        raise refuse(
            "addWeighted",
            "src2",
            f"{src2.dtype}{list(src2.shape)}",
            f"the shape and dtype of src1 ({src1.dtype}{list(src1.shape)})",
        )
    if a.dtype == torch.uint8:
        return to_numpy(saturate(_weighted_uint8(src1, a, alpha, src2, b, beta, gamma), a.dtype))
    total = a.to(torch.float64) * float(alpha) + b.to(torch.float64) * float(beta) + float(gamma)
    return to_numpy(total.to(torch.float32))


def _weighted_uint8(
    src1: np.ndarray,
    a: torch.Tensor,
    alpha: float,
    src2: np.ndarray,
    b: torch.Tensor,
    beta: float,
    gamma: float,
) -> torch.Tensor:
    """OpenCV's float32 sums of uint8 addWeighted, before rounding: its SIMD loop computes
    fma(src1, alpha, fma(src2, beta, gamma)), its scalar loop fma(src1, alpha, src2*beta)
    + gamma; which elements each loop takes depends on the release (semantics.py). Each
    float32 product is exact in float64, so one rounding reproduces each fma."""
    f32, f64 = torch.float32, torch.float64
    weight_a, weight_b, shift = (float(np.float32(v)) for v in (alpha, beta, gamma))
    inner = (b.to(f64) * weight_b + shift).to(f32)
    vector = (a.to(f64) * weight_a + inner.to(f64)).to(f32)
    where = scalar_loop_elements(src1, src2)
    if where is None:
        return vector
    product = (b.to(f32) * weight_b).to(f64)
    scalar = (a.to(f64) * weight_a + product).to(f32) + shift
    return scalar if where.all() else torch.where(torch.from_numpy(where), scalar, vector)


@replaces(
    "convertScaleAbs",
    family="arithmetic",
    dtypes=("uint8", "uint16", "int16", "float32", "float64"),
    channels=_CHANNELS,
    accuracy="exact (OpenCV 5's float32 fused multiply-add, rounded half to even; float64 "
    "input is first rounded to float32, as OpenCV's loop loads it)",
)
def convertScaleAbs(src: np.ndarray, dst: Any = None, alpha: float = 1, beta: float = 0) -> Any:
    """Traceable ``cv2.convertScaleAbs``: uint8 saturate(|src*alpha + beta|), exact."""
    no_dst("convertScaleAbs", dst)
    kinds = ("uint8", "uint16", "int16", "float32", "float64")
    t = as_tensor("convertScaleAbs", src, kinds, _CHANNELS)
    if t.dtype == torch.float64:  # OpenCV's float64 loop works in float32 too
        t = t.to(torch.float32)
    # OpenCV 5 computes fma(src, alpha, beta) in float32: exact product, one rounding
    value = t.to(torch.float64) * float(np.float32(alpha)) + float(np.float32(beta))
    return to_numpy(saturate(torch.abs(value.to(torch.float32)), torch.uint8))


def _norm_types() -> dict[int, str]:
    return {
        cv2.NORM_MINMAX: "NORM_MINMAX",
        cv2.NORM_L2: "NORM_L2",
        cv2.NORM_L1: "NORM_L1",
        cv2.NORM_INF: "NORM_INF",
    }


@replaces(
    "normalize",
    family="arithmetic",
    dtypes=_DTYPES,
    channels=_CHANNELS,
    accuracy="exact, float32 output included (OpenCV's double scale and shift, rounded to "
    "float32, applied by one fused multiply-add), so normalize then astype(uint8) matches",
    arguments={
        "norm_type": ("NORM_MINMAX", "NORM_L2", "NORM_L1", "NORM_INF"),
        "dtype": ("-1", "CV_8U", "CV_16U", "CV_32F"),
        "mask": ("None",),
    },
)
@output_buffer
def normalize(
    src: np.ndarray,
    dst: Any,
    alpha: float = 1,
    beta: float = 0,
    norm_type: int = 4,
    dtype: int = -1,
    mask: Any = None,
) -> Any:
    """Traceable ``cv2.normalize`` (whole-array min/max or norm, computed from traced data);
    bit-exact for uint8 and float32 output, so ``normalize(...).astype(np.uint8)`` matches."""
    no_dst("normalize", dst)
    kinds = _norm_types()
    if norm_type not in kinds:
        raise refuse(
            "normalize", "norm_type", constant_name(norm_type, "NORM_"), ", ".join(kinds.values())
        )
    if mask is not None:
        raise refuse("normalize", "mask", type(mask).__name__, "None")
    t = as_tensor("normalize", src, _DTYPES, _CHANNELS)
    out_types = {
        -1: torch.uint16 if src.dtype == np.uint16 else t.dtype,
        cv2.CV_8U: torch.uint8,
        cv2.CV_16U: torch.uint16,
        cv2.CV_32F: torch.float32,
    }
    if dtype not in out_types:
        raise refuse("normalize", "dtype", dtype, "-1, CV_8U, CV_16U, CV_32F")
    out_dtype = out_types[dtype]
    values = t.to(torch.float64)
    flat = values.reshape(-1)  # reductions over one explicit dim export everywhere
    eps = float(np.finfo(np.float64).eps)
    kind = kinds[norm_type]
    if kind == "NORM_MINMAX":  # OpenCV: scale = (dmax - dmin) * (1 / (smax - smin))
        low, high = min(float(alpha), float(beta)), max(float(alpha), float(beta))
        smin, smax = torch.amin(flat, dim=0), torch.amax(flat, dim=0)
        span = smax - smin
        inverse = 1.0 / torch.where(span > eps, span, 1.0)
        scale = torch.where(span > eps, (high - low) * inverse, 0.0)
        if out_dtype == torch.float32:  # float32 output: scale and shift rounded to float32
            scale = scale.to(torch.float32).to(torch.float64)
            shift = float(np.float32(low)) - (smin * scale).to(torch.float32).to(torch.float64)
            shift = shift.to(torch.float32).to(torch.float64)
        else:
            shift = low - smin * scale
    else:
        if kind == "NORM_L2":
            norm = torch.sqrt(torch.sum(flat * flat, dim=0))
        elif kind == "NORM_L1":
            norm = torch.sum(torch.abs(flat), dim=0)
        else:
            norm = torch.amax(torch.abs(flat), dim=0)
        scale = torch.where(norm > eps, float(alpha) / torch.where(norm > eps, norm, 1.0), 0.0)
        shift = torch.zeros_like(scale)
    # convertTo: fma(src, (float)scale, (float)shift) in float32; the product of two float32
    # values is exact in float64, so one rounding to float32 reproduces it
    scale32 = scale.to(torch.float32).to(torch.float64)
    shift32 = shift.to(torch.float32).to(torch.float64)
    scaled = (values * scale32 + shift32).to(torch.float32)
    return to_numpy(saturate(scaled, out_dtype))
