"""cv2.resize as torch ops, with taps computed from the image size by torch.

Each output row and column reads source positions and weights (its taps) that OpenCV 5
computes from the scale and clips at the image's edges. Here they are computed with torch
from the sizes: plain sizes give plain tensors (constants of the graph); sizes read from a
node's dynamic axes (int subclasses the recorder turns into graph nodes) give taps computed
inside the graph, so one export serves every image size. ``fx``/``fy`` sizes are OpenCV's
``cvRound(size * f)`` in integer arithmetic. uint8 INTER_LINEAR blends with OpenCV's 11-bit
weights in int32 exactly as its SIMD rows round; an exact 2:1 shrink (OpenCV turns it into
INTER_AREA) and integer INTER_AREA factors sum strided slices.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np
import torch

from ..sizes import fixed, symbolic
from ._base import saturate
from .semantics import current

COEF_BITS = 11  # OpenCV's INTER_RESIZE_COEF_BITS
_CHECKED_SIZES = 1 << 16  # fx/fy sizes computed in the graph are proven below this size


def round_ratio(size: Any, p: int, q: int) -> Any:
    """``round_half_even(size * p / q)`` with integer operations only (for ints, graph sizes
    and integer arrays alike)."""
    whole, rest = (size * p) // q, (size * p) % q
    return whole + (2 * rest + whole % 2 + q - 1) // (2 * q)


def _ratios(factor: float) -> list[Fraction]:
    """Candidate ratios for ``factor``, small denominators first: the closest fractions,
    and dyadic ones just below and above (a double such as 0.7 lies just below 7/10, and
    OpenCV's product rounds as the double does)."""
    exact = Fraction(factor)
    found = [exact.limit_denominator(1 << j) for j in range(25)]
    for k in range(1, 41):
        low = (exact.numerator << k) // exact.denominator
        found += [Fraction(low, 1 << k), Fraction(low + 1, 1 << k)]
    return sorted(set(found), key=lambda r: r.denominator)


@lru_cache(maxsize=64)
def size_ratio(factor: float) -> tuple[int, int] | None:
    """``(p, q)`` with ``round_ratio(n, p, q) == cvRound(n * factor)`` for every size ``n``
    below 65536 (OpenCV rounds the double product), or None when no ratio tried does."""
    sizes = np.arange(1, _CHECKED_SIZES, dtype=np.int64)
    expected = np.rint(sizes * factor)
    for ratio in _ratios(factor):
        p, q = ratio.numerator, ratio.denominator
        if p > 0 and np.array_equal(round_ratio(sizes, p, q), expected):
            return p, q
    return None


def scaled_size(size: Any, factor: float) -> Any:
    """OpenCV's ``cvRound(size * factor)``: a number for a plain size, else graph arithmetic."""
    if not symbolic(size):
        return int(np.rint(size * factor))
    ratio = size_ratio(float(factor))
    if ratio is None:
        why = (
            f"cv2.resize's output size cvRound(size * {factor!r}): OpenCV rounds the double "
            f"product, which no integer arithmetic reproduces at every size (use a factor "
            f"such as 0.5, 0.25, 0.75 or 1/3)"
        )
        return int(np.rint(fixed(size, why) * factor))
    return round_ratio(size, *ratio)


def copy_possible(factor: float) -> bool:
    """Whether ``cvRound(n * factor) == n`` for some size n (OpenCV then copies the image)."""
    if factor == 1.0:
        return True
    top = int(0.5 / abs(factor - 1.0)) + 2
    sizes = np.arange(1, min(top, _CHECKED_SIZES), dtype=np.float64)
    return bool((np.rint(sizes * factor) == sizes).any())


def same_size(size: tuple[Any, Any], src: tuple[Any, Any]) -> Any:
    """1 where the output size equals the input's on both axes, else 0 (graph arithmetic
    for graph sizes; every size is >= 1, so ``(a // b) * (b // a)`` is ``a == b``)."""
    (w, h), (sw, sh) = size, src
    return (w // sw) * (sw // w) * (h // sh) * (sh // h)


def positions(like: torch.Tensor, count: Any) -> torch.Tensor:
    """``arange(count)`` in float64: a constant for a plain count, computed in the graph
    (from ``like``, a traced tensor) for a graph size."""
    if not symbolic(count):
        return torch.arange(count, dtype=torch.float64)
    return like.new_ones((count,), dtype=torch.float64).cumsum(0) - 1


def _clip_high(x: torch.Tensor, high: Any) -> torch.Tensor:
    """``min(x, high)`` with ``high`` a number or graph size (kept as tensor-scalar ops)."""
    return x - torch.relu(x - high)


def linear_taps(
    dx: torch.Tensor,
    src_len: Any,
    scale: float,
    area_like: bool,
    single: bool,
    keep_edge_fraction: bool = False,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(index0, index1, fraction of index1) per output position ``dx``, as OpenCV 5's resize
    computes them (positions in double, or rounded to float32 when ``single``; fractions
    in float32). ``keep_edge_fraction``: a position beyond the edge reads the edge pixel
    twice with its own fraction (OpenCV 5's uint8 rows) instead of once with weight 1."""
    inv = 1.0 / scale
    f32, f64 = torch.float32, torch.float64
    if area_like:  # INTER_AREA when enlarging: linear with area-style weights
        sx = torch.floor(dx * scale)
        fx = ((dx + 1) - (sx + 1) * inv).to(f32)  # float32 before the floor
        fx = torch.where(fx <= 0, torch.zeros_like(fx), fx - torch.floor(fx))
    else:
        pos = (dx + 0.5) * scale - 0.5
        if single:  # uint8: the position is rounded to float32 before the fraction
            pos = pos.to(f32).to(f64)
        sx = torch.floor(pos)
        fx = pos - sx
    fx = fx.to(f32).to(f64)
    last = src_len - 1
    if keep_edge_fraction:
        edge = (sx < 0) | (sx >= last)
        sx = _clip_high(torch.relu(sx), last)
        x1 = torch.where(edge, sx, _clip_high(sx + 1, last))
        return sx.to(torch.int64), x1.to(torch.int64), fx
    fx = torch.where(sx < 0, torch.zeros_like(fx), fx)
    sx = torch.relu(sx)
    high = sx >= last
    fx = torch.where(high, torch.zeros_like(fx), fx)
    sx = _clip_high(sx, last)
    return sx.to(torch.int64), _clip_high(sx + 1, last).to(torch.int64), fx


def _identity_where(same: Any, dx: torch.Tensor, taps: tuple) -> tuple:
    """Taps that copy the image where ``same`` is 1 (OpenCV copies when the size holds)."""
    x0, x1, fx = taps
    index = dx.to(torch.int64)
    keep = 1 - same
    return x0 * keep + index * same, x1 * keep + index * same, fx * keep


def _pick(t: torch.Tensor, dim: int, index: torch.Tensor) -> torch.Tensor:
    return t.index_select(dim, index)


def _weights(w: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Per-position weights as (n, 1, 1): per output row of an (H, W, C) image, or per
    output column of the (W, C, H) view (:func:`blend_columns`)."""
    return w.to(dtype)[:, None, None]  # no -1 to infer: no size guard in torch.export


def blend_columns(
    rows: torch.Tensor,
    taps: list[tuple[torch.Tensor, torch.Tensor]],
    work: torch.dtype,
    back: bool = True,
) -> torch.Tensor:
    """Sum of ``rows[:, index] * weight`` over the (index, weight) taps, in ``work``, for
    an (R, W, C) image: computed in its (W, C, R) view, where each picked column is one
    block of C*R values and each weight scales whole rows (ONNX Runtime picks columns of
    the (R, W, C) layout a pixel at a time, ten times slower); (R, W', C) out, or the
    (W', C, R) view itself where not ``back``."""
    cols = rows.permute(1, 2, 0)  # a 2-D transpose for ONNX Runtime
    total = None
    for index, weight in taps:
        term = _pick(cols, 0, index).to(work) * _weights(weight, work)
        total = term if total is None else total + term
    assert total is not None
    return total.permute(2, 0, 1) if back else total


def resize_linear(
    t: torch.Tensor,
    dsize: tuple[Any, Any],
    scales: tuple[float, float],
    area_like: bool,
    shrinking_rows: bool,
    same: Any = 0,
) -> torch.Tensor:
    """Two-tap resize (INTER_LINEAR, or INTER_AREA when enlarging) of an (H, W, C) tensor.

    Shrinking, the source rows of both taps are picked first and the columns blended in
    the (W', C, rows) view, where the rows blend too (their weights along its last axis)
    and only the result is transposed back; enlarging, the columns are blended first."""
    (width, height), (sx_scale, sy_scale) = dsize, scales
    uint8 = t.dtype == torch.uint8
    dx, dy = positions(t, width), positions(t, height)
    x_taps = linear_taps(dx, t.shape[1], sx_scale, area_like, uint8)
    y_taps = linear_taps(dy, t.shape[0], sy_scale, area_like, uint8, uint8)
    if symbolic(same):
        x_taps, y_taps = _identity_where(same, dx, x_taps), _identity_where(same, dy, y_taps)
    (x0, x1, ax), (y0, y1, ay) = x_taps, y_taps
    if uint8:  # OpenCV's 11-bit fixed-point weights; its int32 row sums stay below 2**19,
        # exact in float32 (one cast of the picked pixels, no int32 image)
        one, work = float(1 << COEF_BITS), torch.float32
        wx0, wx1 = torch.round((1 - ax) * one), torch.round(ax * one)
        wy0, wy1 = torch.round((1 - ay) * one), torch.round(ay * one)
    else:
        work = t.dtype if t.dtype.is_floating_point else torch.float32
        wx0, wx1, wy0, wy1 = 1 - ax, ax, 1 - ay, ay
    x_pairs = [(x0, wx0), (x1, wx1)]
    rows_both = torch.cat([y0, y1])  # both taps' rows at once: one pick, one blend
    weights = torch.cat([wy0, wy1])
    if shrinking_rows:
        both = blend_columns(_pick(t, 0, rows_both), x_pairs, work, back=False)
        dim, weights = 2, weights[None, None, :]
    else:
        both = _pick(blend_columns(t, x_pairs, work), 0, rows_both)
        dim, weights = 0, weights[:, None, None]
    count = y0.shape[0]
    if uint8:
        out = _fixed_point_rows(both, weights, dim, count)
    else:
        weights = weights.to(work)
        top, bottom = both.narrow(dim, 0, count), both.narrow(dim, count, count)
        out = top * weights.narrow(dim, 0, count) + bottom * weights.narrow(dim, count, count)
    return out.permute(2, 0, 1) if shrinking_rows else out


def _fixed_point_rows(
    both: torch.Tensor, weights: torch.Tensor, dim: int, count: Any
) -> torch.Tensor:
    """OpenCV's uint8 vertical blend of row sums (exact integers in float32), the top rows'
    and the bottom rows' sums stacked along ``dim`` (``count`` rows each) with their
    weights: ``(((top >> 4) * wy0 >> 16) + ((bottom >> 4) * wy1 >> 16) + 2) >> 2``. Each
    shift is a product by 2**-k truncated by a cast (exact: values >= 0); the products by
    the weights reach 2**26, so they are float64 (exact), the rest float32."""
    high = (both * 0.0625).to(torch.int32).to(torch.float64)  # >> 4
    shifted = (high * (weights.to(torch.float64) * 2.0**-16)).to(torch.int32)
    top, bottom = shifted.narrow(dim, 0, count), shifted.narrow(dim, count, count)
    return (((top + bottom).to(torch.float32) + 2.0) * 0.25).to(torch.uint8)


def resize_nearest(
    t: torch.Tensor, dsize: tuple[Any, Any], scales: tuple[float, float], same: Any = 0
) -> torch.Tensor:
    """INTER_NEAREST: source index ``min(floor(d * scale), size - 1)`` per output position."""
    picked = t
    for dim, count, scale in ((1, dsize[0], scales[0]), (0, dsize[1], scales[1])):
        d = positions(t, count)
        index = _clip_high(torch.floor(d * scale), t.shape[dim] - 1).to(torch.int64)
        if symbolic(same):
            index = index * (1 - same) + d.to(torch.int64) * same
        picked = _pick(picked, dim, index)
    return picked


def _round_to(values: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    """saturate_cast of float results to t's integer type (uint8; int32 holds uint16)."""
    high = 255 if t.dtype == torch.uint8 else 65535
    return torch.clamp(torch.round(values), 0, high).to(t.dtype)


def _window_counts(t: torch.Tensor, count: Any, size: Any, factor: int) -> torch.Tensor:
    """Source pixels in each window along one axis: ``min(factor, size - factor * d)``."""
    left = positions(t, count) * -factor + size  # tensor first: a graph size stays symbolic
    return _clip_high(left, factor).to(torch.float32)


def _window_sums(f: torch.Tensor, height: Any, width: Any, factors: tuple[int, int]):
    """Sums of the kx x ky windows of ``f`` (exactly height*ky rows, width*kx columns):
    rows of each window added as contiguous blocks, then the kx pixels of each window
    by one small matrix product (ONNX Runtime runs both much faster than strided
    slices; small integer sums stay exact in float32)."""
    kx, ky = factors
    channels = f.shape[2]
    rows = f.reshape(height, ky, width * kx * channels).sum(dim=1)
    picks = torch.eye(channels, dtype=torch.float32).repeat(kx, 1)  # (kx * C, C)
    sums = torch.matmul(rows.reshape(height * width, kx * channels), picks)
    return sums.reshape(height, width, channels)


def _window_sums_int16(t: torch.Tensor, height: Any, width: Any, factors: tuple[int, int]):
    """Sums of the kx x ky windows of a uint8 ``t`` (exactly height*ky rows, width*kx
    columns; kx * ky <= 128, so every sum fits int16): the rows of each window added as
    contiguous blocks, then the columns in the (W, C, H) view, where each is a block of
    C*H values (0.33 ms against 0.45 for float32 sums and a small matrix product at
    480x640x3). Each window's columns are picked by a Gather: ONNX Runtime's transpose
    optimiser would move a Slice there back before the transpose."""
    kx, ky = factors
    channels = t.shape[2]
    wide = t.to(torch.int16).reshape(height, ky, width * kx * channels)
    rows = None
    for i in range(ky):
        part = wide[:, i]
        rows = part if rows is None else rows + part
    assert rows is not None
    cols = rows.reshape(height, width * kx, channels).permute(1, 2, 0)
    cols = cols.reshape(width, kx, channels * height)
    sums = None
    for j in range(kx):
        part = cols.index_select(1, torch.tensor([j]))
        sums = part if sums is None else sums + part
    assert sums is not None
    return sums.reshape(width, channels, height).permute(2, 0, 1)


def resize_area_fast(
    t: torch.Tensor, dsize: tuple[Any, Any], factors: tuple[int, int]
) -> torch.Tensor:
    """OpenCV's integer-factor INTER_AREA: whole windows as (sum + 2) >> 2 for integer 2x2
    (1, 3 and 4 channels), else sum * (1/area) in float32; partial windows at the far
    edges (when the size is not a multiple of the factor) as sum / count."""
    (width, height), (kx, ky) = dsize, factors
    rows, cols = t.shape[0], t.shape[1]
    pad_rows, pad_cols = height * ky - rows, width * kx - cols  # < 0: rows left out
    if symbolic(pad_rows) or symbolic(pad_cols) or pad_rows or pad_cols:
        t = torch.nn.functional.pad(t, (0, 0, 0, pad_cols, 0, pad_rows))
    if t.dtype == torch.uint8 and kx * ky <= 128:
        sums = _window_sums_int16(t, height, width, factors).to(torch.float32)
    else:
        sums = _window_sums(t.to(torch.float32), height, width, factors)
    integer_2x2 = not t.dtype.is_floating_point and (kx, ky) == (2, 2) and t.shape[2] != 2
    if integer_2x2:  # the sums are small integers: exact in float32; (sum + 0.5) / 4 is
        # never half-way, so rounding it is the floor of (sum + 2) / 4 (a QuantizeLinear)
        whole = torch.round((sums + 0.5) * 0.25)
    else:
        whole = sums * float(np.float32(1.0 / (kx * ky)))
    plain = not (symbolic(pad_rows) or symbolic(pad_cols))
    if not plain or pad_rows > 0 or pad_cols > 0:  # partial windows at the far edges
        count = _window_counts(t, height, rows, ky)[:, None, None]
        count = count * _window_counts(t, width, cols, kx)[None, :, None]
        whole = torch.where(count == kx * ky, whole, sums / count)
    if t.dtype.is_floating_point:
        return saturate(whole, t.dtype)
    if integer_2x2 and plain and pad_rows <= 0 and pad_cols <= 0:
        return whole.to(t.dtype)  # (sum + 2) >> 2 of integer pixels: already in range
    return _round_to(whole, t)


def _area_matrix(dst_len: int, src_len: int, scale: float) -> np.ndarray:
    """Weights (dst_len, src_len) of OpenCV's INTER_AREA reduction along one axis."""
    weights = np.zeros((dst_len, src_len), dtype=np.float64)
    for dx in range(dst_len):
        fsx1 = dx * scale
        fsx2 = fsx1 + scale
        cell = min(scale, src_len - fsx1)
        sx1, sx2 = int(np.ceil(fsx1)), int(np.floor(fsx2))
        sx2 = min(sx2, src_len - 1)
        sx1 = min(sx1, sx2)
        if sx1 - fsx1 > 1e-3:
            weights[dx, sx1 - 1] = np.float32((sx1 - fsx1) / cell)
        for sx in range(sx1, sx2):
            weights[dx, sx] = np.float32(1.0 / cell)
        if fsx2 - sx2 > 1e-3:
            weights[dx, sx2] = np.float32(min(min(fsx2 - sx2, 1.0), cell) / cell)
    return weights


def _area_taps(dst_len: int, src_len: int, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """(source index, weight) per output and tap, in OpenCV's accumulation order; unused
    taps read index 0 with weight 0 (adding 0 leaves a float32 sum unchanged)."""
    weights = _area_matrix(dst_len, src_len, scale)
    taps = max(1, int((weights != 0).sum(axis=1).max()))
    index = np.zeros((dst_len, taps), dtype=np.int64)
    alpha = np.zeros((dst_len, taps), dtype=np.float32)
    for d in range(dst_len):
        (used,) = np.nonzero(weights[d])
        index[d, : len(used)] = used
        alpha[d, : len(used)] = weights[d, used]
    return index, alpha


_AREA_TABLE = (
    "INTER_AREA's table of taps for a non-integer factor (computed at the traced size; "
    "use an integer factor such as fx=0.5, or INTER_LINEAR)"
)


def resize_area(t: torch.Tensor, dsize: tuple[Any, Any], scales: tuple[float, float]):
    """OpenCV's ResizeArea for non-integer factors: per source row, float32 sums of
    pixel * alpha along x in tap order; then per output row, the same along y."""
    width, height = (fixed(v, _AREA_TABLE) for v in dsize)
    src_h, src_w = (fixed(v, _AREA_TABLE) for v in t.shape[:2])
    x_index, x_alpha = _area_taps(width, src_w, scales[0])
    taps = [
        (torch.from_numpy(x_index[:, k]), torch.from_numpy(x_alpha[:, k]))
        for k in range(x_index.shape[1])
    ]
    rows = blend_columns(t, taps, torch.float32)
    y_index, y_alpha = _area_taps(height, src_h, scales[1])
    out = None
    for k in range(y_index.shape[1]):
        index = torch.from_numpy(y_index[:, k])
        term = _pick(rows, 0, index) * torch.from_numpy(y_alpha[:, k]).reshape(-1, 1, 1)
        out = term if out is None else out + term
    return saturate(out, t.dtype) if t.dtype.is_floating_point else _round_to(out, t)


def area_fast_factors(scales: tuple[float, float]) -> tuple[int, int] | None:
    """The integer factors when both scales are integers (OpenCV's is_area_fast), else None."""
    factors = (int(round(scales[0])), int(round(scales[1])))
    eps = float(np.finfo(np.float64).eps)
    if abs(scales[0] - factors[0]) < eps and abs(scales[1] - factors[1]) < eps:
        return factors
    return None


def resize_image(
    t: torch.Tensor,
    size: tuple[Any, Any],
    scales: tuple[float, float],
    mode: str,
    same: Any = 0,
) -> torch.Tensor:
    """Resize an (H, W, C) tensor to ``size`` (width, height) with OpenCV's path for
    ``mode`` and ``scales`` (source pixels per output pixel): INTER_LINEAR at exactly 2:1
    and INTER_AREA at integer factors sum windows; INTER_AREA enlarging is linear."""
    fast = area_fast_factors(scales)
    if mode == "INTER_CUBIC":
        return resize_cubic(t, size, scales)
    if mode == "INTER_LANCZOS4":
        return resize_lanczos4(t, size, scales)
    if mode == "INTER_NEAREST":
        return resize_nearest(t, size, scales, same)
    if mode == "INTER_LINEAR" and fast == (2, 2):
        mode = "INTER_AREA"  # OpenCV: at exactly 2:1, INTER_AREA (fast) is INTER_LINEAR
    if mode == "INTER_AREA" and scales[0] >= 1 and scales[1] >= 1:
        if fast is not None:
            return resize_area_fast(t, size, fast)
        return resize_area(t, size, scales)
    shrinking = scales[1] > 1 if symbolic(size[1]) else size[1] < t.shape[0]
    return resize_linear(t, size, scales, mode == "INTER_AREA", shrinking, same)


_CUBIC_A = np.float32(-0.75)  # OpenCV's interpolateCubic constant
_CUBIC_TABLE = (
    "INTER_CUBIC's table of taps (computed at the traced size; resize a fixed-size image)"
)


def cubic_coefficients(fx: np.ndarray) -> np.ndarray:
    """OpenCV's ``interpolateCubic`` in float32: (n,) fractions -> (n, 4) weights."""
    a, x = _CUBIC_A, fx.astype(np.float32)
    one, two, three = np.float32(1), np.float32(2), np.float32(3)
    x1 = x + one
    c0 = ((a * x1 - np.float32(5) * a) * x1 + np.float32(8) * a) * x1 - np.float32(4) * a
    c1 = ((a + two) * x - (a + three)) * x * x + one
    y = one - x
    c2 = ((a + two) * y - (a + three)) * y * y + one
    c3 = one - c0 - c1 - c2
    return np.stack([c0, c1, c2, c3], axis=1).astype(np.float32)


def cubic_taps(dst_len: int, src_len: int, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """(source index, float32 weight) of the 4 taps per output position, as OpenCV's
    resize computes them: ``fx = (float)((d + 0.5) * scale - 0.5)``, replicated edges."""
    d = np.arange(dst_len, dtype=np.float64)
    pos = ((d + 0.5) * scale - 0.5).astype(np.float32)
    start = np.floor(pos)
    weights = cubic_coefficients(pos - start)
    index = start.astype(np.int64)[:, None] + np.arange(-1, 3)[None, :]
    return np.clip(index, 0, src_len - 1), weights


def resize_cubic(t: torch.Tensor, size: tuple[Any, Any], scales: tuple[float, float]):
    """INTER_CUBIC of an (H, W, C) tensor: 4 taps per axis, rows first then columns.

    Floats blend in the image's type with float32 weights (OpenCV's); uint8 uses its
    11-bit integer weights, integer row sums and ``(sum + 2**21) >> 22`` per pixel."""
    width, height = (fixed(v, _CUBIC_TABLE) for v in size)
    src_h, src_w = (fixed(v, _CUBIC_TABLE) for v in t.shape[:2])
    x_index, x_weight = cubic_taps(width, src_w, scales[0])
    y_index, y_weight = cubic_taps(height, src_h, scales[1])
    integer_rows = t.dtype == torch.uint8 and not current().cubic_rows_in_float
    if integer_rows:
        scale = float(1 << COEF_BITS)
        x_weight = np.rint(x_weight * scale).astype(np.float64)  # saturate_cast<short>
        y_weight = np.rint(y_weight * scale).astype(np.float64)
        work = torch.float64  # integer sums below 2**53 are exact
    else:  # OpenCV 5.1 blends uint8 rows in float32 too
        work = torch.float32 if t.dtype == torch.uint8 else t.dtype
    taps = [(torch.from_numpy(x_index[:, k]), torch.from_numpy(x_weight[:, k])) for k in range(4)]
    rows = blend_columns(t, taps, work)
    if integer_rows:  # OpenCV's SIMD rows: float32 products of the int sums
        rows, work = rows.to(torch.float32), torch.float32
    out = None
    for k in range(4):
        weight = torch.from_numpy(y_weight[:, k]).to(work).reshape(-1, 1, 1)
        term = _pick(rows, 0, torch.from_numpy(y_index[:, k])) * weight
        out = term if out is None else out + term
    if integer_rows:
        out = torch.round(out * float(np.float32(1.0 / (1 << 22))))
        return torch.clamp(out, 0, 255).to(torch.uint8)
    if t.dtype == torch.uint8:
        return torch.clamp(torch.round(out), 0, 255).to(torch.uint8)
    return out


_LANCZOS_TABLE = (
    "INTER_LANCZOS4's table of taps (computed at the traced size; resize a fixed-size image)"
)
_S45 = 0.70710678118654752440084436210485
_LANCZOS_CS = (
    (1, 0),
    (-_S45, -_S45),
    (0, 1),
    (_S45, -_S45),
    (-1, 0),
    (_S45, _S45),
    (0, -1),
    (-_S45, _S45),
)


def lanczos4_coefficients(fx: np.ndarray) -> np.ndarray:
    """OpenCV's ``interpolateLanczos4``: (n,) float32 fractions -> (n, 8) float32 weights
    (sin/cos in double, each weight rounded to float32, float32 sum, scaled by 1/sum)."""
    x = fx.astype(np.float32)
    y0 = -(x.astype(np.float64) + 3) * np.pi * 0.25
    s0, c0 = np.sin(y0), np.cos(y0)
    columns = []
    for i, (cs_s, cs_c) in enumerate(_LANCZOS_CS):
        yi = (x + np.float32(3)) - np.float32(i)  # float32, as OpenCV's y0_
        y = -yi.astype(np.float64) * np.pi * 0.25
        with np.errstate(divide="ignore", invalid="ignore"):
            value = ((cs_s * s0 + cs_c * c0) / (y * y)).astype(np.float32)
        columns.append(np.where(np.abs(yi) >= np.float32(1e-6), value, np.float32(1e30)))
    total = np.zeros_like(x)
    for column in columns:
        total = (total + column).astype(np.float32)
    inverse = (np.float32(1) / total).astype(np.float32)
    return np.stack([(c * inverse).astype(np.float32) for c in columns], axis=1)


def lanczos4_taps(dst_len: int, src_len: int, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """(source index, float32 weight) of the 8 taps per output position, replicated edges."""
    d = np.arange(dst_len, dtype=np.float64)
    pos = ((d + 0.5) * scale - 0.5).astype(np.float32)
    start = np.floor(pos)
    weights = lanczos4_coefficients(pos - start)
    index = start.astype(np.int64)[:, None] + np.arange(-3, 5)[None, :]
    return np.clip(index, 0, src_len - 1), weights


def resize_lanczos4(t: torch.Tensor, size: tuple[Any, Any], scales: tuple[float, float]):
    """INTER_LANCZOS4 of an (H, W, C) tensor: 8 taps per axis, rows first then columns.

    Floats blend in the image's type with float32 weights; uint8 takes OpenCV's 11-bit
    integer weights, integer sums (exact in float64) and ``(sum + 2**21) >> 22``."""
    width, height = (fixed(v, _LANCZOS_TABLE) for v in size)
    src_h, src_w = (fixed(v, _LANCZOS_TABLE) for v in t.shape[:2])
    x_index, x_weight = lanczos4_taps(width, src_w, scales[0])
    y_index, y_weight = lanczos4_taps(height, src_h, scales[1])
    integer = t.dtype == torch.uint8
    if integer:
        scale = float(1 << COEF_BITS)
        x_weight = np.rint(x_weight * scale).astype(np.float64)  # saturate_cast<short>
        y_weight = np.rint(y_weight * scale).astype(np.float64)
    work = torch.float64 if integer else t.dtype
    taps = [(torch.from_numpy(x_index[:, k]), torch.from_numpy(x_weight[:, k])) for k in range(8)]
    rows = blend_columns(t, taps, work)
    out = None
    for k in range(8):
        weight = torch.from_numpy(y_weight[:, k]).to(work).reshape(-1, 1, 1)
        term = _pick(rows, 0, torch.from_numpy(y_index[:, k])) * weight
        out = term if out is None else out + term
    if integer:  # FixedPtCast: arithmetic shift, then saturate
        out = torch.floor((out + float(1 << 21)) * (1.0 / (1 << 22)))
        return torch.clamp(out, 0, 255).to(torch.uint8)
    return out
