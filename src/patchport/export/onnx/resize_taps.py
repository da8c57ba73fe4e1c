"""Source indices and float32 weights of torch's bicubic and antialiased resizes, per
output index of one dimension, computed at export time as torch's CPU kernels compute
them (aten/src/ATen/native/cpu/UpSampleKernel.cpp, UpSample.h), so that
:mod:`.exact_resize` can replay the sums bit for bit.

torch evaluates these in float32 with the compiler's fused multiply-adds (x86-64 builds
contract ``a * b + c``); :func:`fma` rounds once, exactly. Mixed float/double expressions
(``scale * (i + 0.5)``, ``(j + xmin - center + 0.5) * invscale``) are evaluated in double
and rounded to float32 where torch stores them, as C++ promotion does.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

_F32, _F64 = np.float32, np.float64


def fma(a, b, c) -> np.ndarray:
    """float32 ``a * b + c`` rounded once. The float64 sum of the exact float64 product is
    rounded again to float32; that double rounding errs only where the float64 sum lands on
    a float32 midpoint, and those few are redone exactly with fractions."""
    a, b, c = np.broadcast_arrays(*(np.asarray(v, _F32) for v in (a, b, c)))
    wide = a.astype(_F64) * b.astype(_F64) + c.astype(_F64)
    out = np.array(wide, dtype=_F32)
    for i in map(tuple, np.argwhere(_on_midpoint(wide, out))):
        exact = Fraction(float(a[i])) * Fraction(float(b[i])) + Fraction(float(c[i]))
        out[i] = _round_f32(exact, out[i])
    return out


def _on_midpoint(wide: np.ndarray, near: np.ndarray) -> np.ndarray:
    """Whether each float64 value lies halfway between two adjacent float32 values."""
    away = np.nextafter(near, np.where(wide > near, np.inf, -np.inf).astype(_F32))
    with np.errstate(invalid="ignore", over="ignore"):
        return (wide != near) & ((near.astype(_F64) + away.astype(_F64)) / 2 == wide)


def _round_f32(exact: Fraction, guess: np.float32) -> np.float32:
    """The float32 nearest ``exact`` (ties to even), among ``guess`` and its neighbours."""
    candidates = [guess, np.nextafter(guess, _F32(np.inf)), np.nextafter(guess, _F32(-np.inf))]
    candidates = [c for c in candidates if np.isfinite(c)]

    def key(c: np.float32) -> tuple[Fraction, int]:
        return abs(Fraction(float(c)) - exact), int(np.array(c).view(np.uint32)) & 1

    return min(candidates, key=key)


def compute_scale(size: int, out: int, corners: bool, scale: float | None) -> np.float32:
    """torch's area_pixel_compute_scale in float32: the source step per output index."""
    if corners:
        return _F32(size - 1) / _F32(out - 1) if out > 1 else _F32(0)
    if scale is not None and scale > 0:
        return _F32(1.0 / scale)
    return _F32(size) / _F32(out)


def cubic_coefficients(t: np.ndarray) -> list[np.ndarray]:
    """The four weights (A = -0.75) at fraction ``t`` (float32) of the source step, as
    get_cubic_upsample_coefficients: taps at -1, 0, 1, 2."""
    t = np.asarray(t, _F32)
    x2 = (_F32(1) - t).astype(_F32)
    one = _F32(1)
    return [
        _cubic_far((t + one).astype(_F32), -0.75, fused_last=False),
        _cubic_near(t, -0.75, fused_last=False),
        _cubic_near(x2, -0.75, fused_last=False),
        _cubic_far((x2 + one).astype(_F32), -0.75, fused_last=False),
    ]


def _cubic_near(x: np.ndarray, a: float, fused_last: bool) -> np.ndarray:
    """((a + 2) x - (a + 3)) x x + 1 for |x| < 1, the first multiply-add fused; the last
    one fused in the antialias filter, rounded op by op in the plain bicubic weights (as
    torch's x86-64 build compiles each; measured)."""
    a = _F32(a)
    inner = fma(a + _F32(2), x, -(a + _F32(3)))
    square = (inner * x).astype(_F32)
    if fused_last:
        return fma(square, x, _F32(1))
    return ((square * x).astype(_F32) + _F32(1)).astype(_F32)


def _cubic_far(x: np.ndarray, a: float, fused_last: bool) -> np.ndarray:
    """((a x - 5a) x + 8a) x - 4a for 1 <= |x| < 2, the first two multiply-adds fused,
    the last as in :func:`_cubic_near`."""
    a = _F32(a)
    second = fma(fma(a, x, -(_F32(5) * a)), x, _F32(8) * a)
    if fused_last:
        return fma(second, x, -(_F32(4) * a))
    return ((second * x).astype(_F32) - _F32(4) * a).astype(_F32)


def cubic_taps(
    size: int, out: int, scale: float | None, corners: bool
) -> tuple[np.ndarray, np.ndarray]:
    """(indices, weights), each (out, 4): torch's bicubic (A = -0.75) taps, the source
    index clamped to the border as upsample_bicubic2d reads it."""
    step = compute_scale(size, out, corners, scale)
    index = np.arange(out)
    if corners:
        real = (step * index.astype(_F32)).astype(_F32)
    else:
        real = fma(step, (index.astype(_F32) + _F32(0.5)).astype(_F32), _F32(-0.5))
    first = np.minimum(np.floor(real).astype(np.int64), size - 1)
    fraction = np.clip((real - first.astype(_F32)).astype(_F32), _F32(0), _F32(1))
    weights = np.stack(cubic_coefficients(fraction), axis=1)
    taps = np.clip(first[:, None] + np.arange(-1, 3)[None, :], 0, size - 1)
    return taps, weights.astype(_F32)


def antialias_taps(
    size: int, out: int, scale: float | None, corners: bool, cubic: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(indices, weights, fused), each (out, taps): torch's antialiased taps
    (_compute_indices_min_size_weights_aa): the triangle or the Keys cubic (a = -0.5)
    filter widened by the downscale factor, normalised by its float32 sum. Taps past an
    output's support get weight 0 and repeat its first index. ``fused`` says which taps
    torch adds with a fused multiply-add: its loop over taps 1.. is vectorised by the
    compiler in groups of 4 (products rounded, then added in order); the remainder, up to
    3 taps, runs scalar with fused multiply-adds (measured on x86-64, AVX2 and AVX-512)."""
    step = compute_scale(size, out, corners, scale)
    reach = 2.0 if cubic else 1.0
    support = _F32(reach * float(step)) if step >= 1 else _F32(reach)
    width = int(math.ceil(float(support))) * 2 + 1
    invscale = _F32(1.0 / float(step)) if step >= 1 else _F32(1)
    indices = np.zeros((out, width), np.int64)
    weights = np.zeros((out, width), _F32)
    fused = np.zeros((out, width), bool)
    for i in range(out):
        center = _F32(float(step) * (i + 0.5))
        start = max(int(float(center - support) + 0.5), 0)
        count = min(int(float(center + support) + 0.5), size) - start
        count = min(max(count, 0), width)
        offsets = (np.arange(start, start + count).astype(_F32) - center).astype(_F32)
        x = np.abs(((offsets.astype(_F64) + 0.5) * float(invscale)).astype(_F32))
        w = _cubic_filter(x) if cubic else _triangle_filter(x)
        total = _F32(0)
        for value in w:
            total = _F32(total + value)
        if total != 0:
            w = (w / total).astype(_F32)
        indices[i, :count] = np.arange(start, start + count)
        indices[i, count:] = min(start, size - 1)
        weights[i, :count] = w
        fused[i, 1 + (count - 1) // 4 * 4 : count] = True
    return indices, weights, fused


def _triangle_filter(x: np.ndarray) -> np.ndarray:
    return np.where(x < 1, (_F32(1) - x).astype(_F32), _F32(0)).astype(_F32)


def _cubic_filter(x: np.ndarray) -> np.ndarray:
    near = _cubic_near(x, -0.5, fused_last=True)
    far = _cubic_far(x, -0.5, fused_last=True)
    return np.where(x < 1, near, np.where(x < 2, far, _F32(0))).astype(_F32)


def fma64(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """float64 ``a * b + c`` rounded once (exact, with fractions)."""
    a, b, c = np.broadcast_arrays(*(np.asarray(v, _F64) for v in (a, b, c)))
    out = np.empty(a.shape, _F64)
    for i in np.ndindex(a.shape):
        exact = Fraction(float(a[i])) * Fraction(float(b[i])) + Fraction(float(c[i]))
        out[i] = float(exact)  # Fraction -> float rounds once, to nearest
    return out


def _cubic_filter64(x: np.ndarray) -> np.ndarray:
    """The Keys cubic (a = -0.5) of the antialias filter in float64, contracted as
    :func:`_cubic_filter`."""
    a = -0.5
    near = fma64(fma64(a + 2, x, -(a + 3)) * x, x, 1.0)
    far = fma64(fma64(fma64(a, x, -5 * a), x, 8 * a), x, -4 * a)
    return np.where(x < 1, near, np.where(x < 2, far, 0.0))


def antialias_taps_int16(
    size: int, out: int, scale: float | None, corners: bool, cubic: bool
) -> tuple[np.ndarray, np.ndarray, int]:
    """(indices, integer weights, precision) of torch's uint8 antialiased pass: the
    weights of :func:`antialias_taps` computed in float64, scaled by 2**precision (the
    largest that keeps the largest weight under 2**15) and rounded half away from zero
    (_compute_index_ranges_int16_weights). A pass sums ``x * weight`` in integers from
    2**(precision - 1), shifts right by precision and saturates to 0..255."""
    if corners:
        step = (size - 1) / (out - 1) if out > 1 else 0.0
    else:
        step = 1.0 / scale if scale is not None and scale > 0 else size / out
    reach = 2.0 if cubic else 1.0
    support = reach * step if step >= 1 else reach
    width = int(math.ceil(support)) * 2 + 1
    invscale = 1.0 / step if step >= 1 else 1.0
    indices = np.zeros((out, width), np.int64)
    weights = np.zeros((out, width), _F64)
    for i in range(out):
        center = step * (i + 0.5)
        start = max(int(center - support + 0.5), 0)
        count = min(max(min(int(center + support + 0.5), size) - start, 0), width)
        x = np.abs((np.arange(start, start + count) - center + 0.5) * invscale)
        w = _cubic_filter64(x) if cubic else np.where(x < 1, 1.0 - x, 0.0)
        total = 0.0
        for value in w:
            total += float(value)
        if total != 0:
            w = w / total
        indices[i, :count] = np.arange(start, start + count)
        indices[i, count:] = min(start, size - 1)
        weights[i, :count] = w
    largest = float(weights.max(initial=0.0))
    precision = 0
    while precision < 22 and int(0.5 + largest * (1 << (precision + 1))) < (1 << 15):
        precision += 1
    scaled = weights * (1 << precision)
    rounded = np.where(scaled < 0, np.trunc(-0.5 + scaled), np.trunc(0.5 + scaled))
    return indices, rounded, precision
