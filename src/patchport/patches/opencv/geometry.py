"""flip, rotate, transpose, copyMakeBorder, resize, remap and warpAffine with torch ops.

Sampling positions and weights are computed as OpenCV 5 computes them (double-precision
coordinates, 11-bit uint8 resize weights, float32 remap/warp lerps, the 1/32-pixel table
with 15-bit weights for fixed-point maps), so results match OpenCV exactly or within one
uint8 unit.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ..sizes import fixed, symbolic
from . import traced_warp, warp_positions
from ._base import (
    as_tensor,
    constant_name,
    cv2,
    no_dst,
    pad,
    refuse,
    replaces,
    saturate,
    scalar4,
    to_numpy,
    tuple_of_ints,
)
from .resize_lowering import copy_possible, resize_image, same_size, scaled_size
from .semantics import current

_ANY_DTYPES = ("uint8", "int8", "uint16", "int16", "int32", "float32", "float64")
_CHANNELS = (1, 2, 3, 4)
_IMAGE_DTYPES = ("uint8", "uint16", "float32")


@replaces(
    "flip",
    family="geometry",
    dtypes=_ANY_DTYPES,
    channels=_CHANNELS,
    accuracy="exact",
    arguments={"flipCode": ("0 (rows)", ">0 (columns)", "<0 (both)")},
)
def flip(src: np.ndarray, flipCode: int, dst: Any = None) -> Any:
    """Traceable ``cv2.flip``: 0 flips rows, a positive code columns, a negative one both
    (exact)."""
    no_dst("flip", dst)
    t = as_tensor("flip", src, _ANY_DTYPES, _CHANNELS)
    dims = (0,) if flipCode == 0 else (1,) if flipCode > 0 else (0, 1)
    return to_numpy(torch.flip(t, dims), src.dtype)


def _rotate_codes() -> dict[int, int]:
    return {cv2.ROTATE_90_CLOCKWISE: -1, cv2.ROTATE_180: 2, cv2.ROTATE_90_COUNTERCLOCKWISE: 1}


@replaces(
    "rotate",
    family="geometry",
    dtypes=_ANY_DTYPES,
    channels=_CHANNELS,
    accuracy="exact",
    arguments={"rotateCode": ("ROTATE_90_CLOCKWISE", "ROTATE_180", "ROTATE_90_COUNTERCLOCKWISE")},
)
def rotate(src: np.ndarray, rotateCode: int, dst: Any = None) -> Any:
    """Traceable ``cv2.rotate`` by multiples of 90 degrees (exact)."""
    no_dst("rotate", dst)
    turns = _rotate_codes()
    if rotateCode not in turns:
        raise refuse(
            "rotate",
            "rotateCode",
            constant_name(rotateCode, "ROTATE_"),
            "ROTATE_90_CLOCKWISE, ROTATE_180, ROTATE_90_COUNTERCLOCKWISE",
        )
    t = as_tensor("rotate", src, _ANY_DTYPES, _CHANNELS)
    return to_numpy(torch.rot90(t, turns[rotateCode], dims=(0, 1)), src.dtype)


@replaces(
    "transpose",
    family="geometry",
    dtypes=_ANY_DTYPES,
    channels=_CHANNELS,
    accuracy="exact",
)
def transpose(src: np.ndarray, dst: Any = None) -> Any:
    """Traceable ``cv2.transpose``: swaps rows and columns (exact)."""
    no_dst("transpose", dst)
    t = as_tensor("transpose", src, _ANY_DTYPES, _CHANNELS)
    return to_numpy(t.transpose(0, 1), src.dtype)


_BORDER_NAMES = {
    "BORDER_CONSTANT": "constant",
    "BORDER_REPLICATE": "replicate",
    "BORDER_REFLECT": "reflect",
    "BORDER_REFLECT_101": "reflect_101",
    "BORDER_WRAP": "wrap",
}


def _border(function: str, argument: str, value: int, allowed: tuple[str, ...]) -> int:
    codes = [getattr(cv2, name) for name in allowed]
    if value not in codes:
        raise refuse(function, argument, constant_name(value, "BORDER_"), ", ".join(allowed))
    return value


_PAD_BORDERS = (
    "BORDER_CONSTANT",
    "BORDER_REPLICATE",
    "BORDER_REFLECT",
    "BORDER_REFLECT_101",
    "BORDER_WRAP",
)


@replaces(
    "copyMakeBorder",
    family="geometry",
    dtypes=_ANY_DTYPES,
    channels=_CHANNELS,
    accuracy="exact",
    arguments={"borderType": _PAD_BORDERS + ("BORDER_DEFAULT",)},
)
def copyMakeBorder(
    src: np.ndarray,
    top: int,
    bottom: int,
    left: int,
    right: int,
    borderType: int,
    dst: Any = None,
    value: Any = None,
) -> Any:
    """Traceable ``cv2.copyMakeBorder`` (exact); ``value`` fills BORDER_CONSTANT per channel."""
    no_dst("copyMakeBorder", dst)
    border = _border("copyMakeBorder", "borderType", borderType, _PAD_BORDERS)
    sizes = [int(v) for v in (top, bottom, left, right)]
    if min(sizes) < 0:
        raise refuse("copyMakeBorder", "top/bottom/left/right", sizes, "sizes >= 0")
    t = as_tensor("copyMakeBorder", src, _ANY_DTYPES, _CHANNELS)
    return to_numpy(pad(t, *sizes, border, _fill_value(value, src)), src.dtype)


# -- resize ------------------------------------------------------------------------------
def _interpolations() -> dict[int, str]:
    return {
        cv2.INTER_NEAREST: "INTER_NEAREST",
        cv2.INTER_LINEAR: "INTER_LINEAR",
        cv2.INTER_AREA: "INTER_AREA",
        cv2.INTER_CUBIC: "INTER_CUBIC",
        cv2.INTER_LANCZOS4: "INTER_LANCZOS4",
    }


_RESIZE_DTYPES = (*_IMAGE_DTYPES, "float64")  # cvtColor(...) / 255.0 makes float64


@replaces(
    "resize",
    uint8_units=1,
    uint16_units=1,
    family="geometry",
    dtypes=_RESIZE_DTYPES,
    channels=_CHANNELS,
    accuracy="uint8 exact (INTER_NEAREST, INTER_LINEAR and INTER_AREA, enlarging included: "
    "OpenCV 5's 11-bit weights, edge rows, area tables and 2x2 shifts); uint16 INTER_NEAREST "
    "and INTER_AREA exact, INTER_LINEAR within 1 (OpenCV's float32 path for 16-bit images "
    "is not reproduced); float32 within 1e-5; float64 as float32. INTER_CUBIC (uint8, "
    "float32, float64; OpenCV's float32 cubic weights, replicated edges): float64 exact, "
    "float32 within 1e-5, uint8 within 1 (OpenCV's SIMD rounding of 8-bit cubic rows is "
    "not reproduced). INTER_LANCZOS4 (uint8, float32, float64; OpenCV's 8x8 window, its "
    "coefficient formula, replicated edges): uint8 within 1, float32 and float64 within 1e-6 "
    "of the data's magnitude (measured: 5.6e-7; 3 of 600 uint8 calls had a pixel 1 off: "
    "at some "
    "fractions OpenCV's float32 weights differ from its formula evaluated in double by a "
    "few ulps)",
    arguments={
        "interpolation": (
            "INTER_NEAREST",
            "INTER_LINEAR",
            "INTER_AREA",
            "INTER_CUBIC",
            "INTER_LANCZOS4",
        ),
        "dsize/fx/fy": ("dsize", "fx and fy with dsize=None or (0, 0)"),
    },
    notes="With dynamic height/width (annotate.input_tensors(dynamic=...)), fx/fy keep "
    "them dynamic: OpenCV's cvRound(size * f) in integer graph arithmetic (sizes below "
    "65536) and taps computed in the graph, for INTER_NEAREST, INTER_LINEAR and INTER_AREA "
    "with integer factors or enlarging. A fixed dsize, INTER_AREA with a non-integer shrink "
    "factor, and factors such as 0.7 (whose double product OpenCV rounds unlike any integer "
    "ratio) fix the size: compile_graph reports it in words. INTER_CUBIC fixes the size "
    "(its taps are a table computed at the traced size); uint16 INTER_CUBIC is refused. "
    "INTER_LANCZOS4 likewise fixes the size; uint16 INTER_LANCZOS4 is refused.",
)
def resize(
    src: np.ndarray,
    dsize: Any,
    dst: Any = None,
    fx: float = 0,
    fy: float = 0,
    interpolation: int = 1,
) -> Any:
    """Traceable ``cv2.resize`` (up and down), bit-exact for uint8: OpenCV 5's 11-bit
    weights and row blending (edge rows included), its area tables summed in its order."""
    no_dst("resize", dst)
    modes = _interpolations()
    if interpolation not in modes:
        raise refuse(
            "resize",
            "interpolation",
            constant_name(interpolation, "INTER_"),
            ", ".join(modes.values()),
        )
    if interpolation in (cv2.INTER_CUBIC, cv2.INTER_LANCZOS4) and src.dtype not in (
        np.uint8,
        np.float32,
        np.float64,
    ):
        raise refuse(
            "resize",
            f"src dtype with {modes[interpolation]}",
            src.dtype,
            "uint8, float32, float64",
        )
    t = as_tensor("resize", src, _RESIZE_DTYPES, _CHANNELS)
    src_h, src_w = t.shape[0], t.shape[1]
    size = (0, 0) if dsize is None else tuple_of_ints("resize", "dsize", dsize)
    if size[0] > 0 and size[1] > 0:  # the scale follows the input size: fixed there
        why = "cv2.resize's scale dsize / size (give fx and fy instead of dsize)"
        inv_x, inv_y = size[0] / fixed(src_w, why), size[1] / fixed(src_h, why)
    elif size == (0, 0) and fx > 0 and fy > 0:
        inv_x, inv_y = float(fx), float(fy)
        size = (scaled_size(src_w, inv_x), scaled_size(src_h, inv_y))
        if not symbolic(size[0]) and not symbolic(size[1]) and min(size) <= 0:
            raise refuse("resize", "fx/fy", (fx, fy), "factors giving a non-empty image")
    else:
        raise refuse(
            "resize",
            "dsize",
            repr(dsize),
            "(width, height) > 0, or None/(0, 0) with fx > 0 and fy > 0",
        )
    same = same_size(size, (src_w, src_h))
    if not symbolic(same) and same:  # OpenCV copies the image when the size does not change
        return to_numpy(t.clone(), src.dtype)
    if symbolic(same) and not (copy_possible(inv_x) and copy_possible(inv_y)):
        same = 0
    out = resize_image(t, size, (1.0 / inv_x, 1.0 / inv_y), modes[interpolation], same)
    return to_numpy(_integer_result(out, src), src.dtype)


def _integer_result(out: torch.Tensor, src: np.ndarray) -> torch.Tensor:
    """A float result of a uint16 image (computed in its int32 carrier) rounded and clamped
    like OpenCV's saturate_cast; anything else unchanged."""
    if src.dtype == np.uint16 and out.is_floating_point():
        return torch.clamp(torch.round(out), 0, 65535).to(torch.int32)
    return out


def _fill_value(value: Any, src: np.ndarray) -> tuple[float, ...]:
    """borderValue as four floats, saturated to uint16 for uint16 images."""
    fill = scalar4(0 if value is None else value)
    if src.dtype == np.uint16:  # the int32 carrier must not hold values uint16 cannot
        fill = tuple(float(np.clip(np.rint(v), 0, 65535)) for v in fill)
    return fill


# -- remap and warpAffine ------------------------------------------------------------------
_TAB = 32  # OpenCV's INTER_TAB_SIZE: positions are quantised to 1/32 pixel
_FUSED_CHANNELS = (3, 4)  # channel counts whose float-map lerps OpenCV 5 fuses


def _bilinear(
    t: torch.Tensor,
    sx: torch.Tensor,
    sy: torch.Tensor,
    tx: torch.Tensor,
    ty: torch.Tensor,
    border: int,
    value: tuple[float, ...],
    fixed_point: bool,
    fused: tuple[int, ...] = _FUSED_CHANNELS,
) -> torch.Tensor:
    """Bilinear sampling at integer positions sx, sy plus fractions tx, ty: in 1/32 units with
    OpenCV's weight table when ``fixed_point``, else as float32 fractions (OpenCV 5), with
    fused multiply-adds for the channel counts in ``fused``."""
    if not fixed_point:
        fast = _fused_uint8(t, sx, sy, tx, ty, border, value, fused)
        if fast is not None:
            return fast
    height, width, channels = t.shape
    if border == cv2.BORDER_CONSTANT:
        # a pixel whose taps all fall outside reads the fill pixel at the padded corner with
        # weight 1, so it gets the fill value exactly (no select pass over the output)
        outside = (sx >= width) | (sx + 1 < 0) | (sy >= height) | (sy + 1 < 0)
        sx = torch.where(outside, -1, torch.clamp(sx, -1, width - 1)) + 1
        sy = torch.where(outside, -1, torch.clamp(sy, -1, height - 1)) + 1
        tx, ty = torch.where(outside, 0.0, tx), torch.where(outside, 0.0, ty)
        source = pad(t, 1, 1, 1, 1, border, value)
        pairs_x = (sx, torch.where(outside, sx, sx + 1))
        pairs_y = (sy, torch.where(outside, sy, sy + 1))
    else:
        source = t
        pairs_x = (torch.clamp(sx, 0, width - 1), torch.clamp(sx + 1, 0, width - 1))
        pairs_y = (torch.clamp(sy, 0, height - 1), torch.clamp(sy + 1, 0, height - 1))
    stride = source.shape[1]
    flat = source.reshape(-1, channels)

    def tap(yy: torch.Tensor, xx: torch.Tensor) -> torch.Tensor:
        index = (yy * stride + xx).to(torch.int64).reshape(-1)
        if type(index) is torch.Tensor:  # constant positions: one index per element, which
            # ONNX Runtime gathers (GatherElements) several times faster than pixel rows
            index = (index.unsqueeze(-1) * channels + torch.arange(channels)).reshape(-1)
            return torch.gather(source.reshape(-1), 0, index).reshape(*yy.shape, channels)
        return flat.index_select(0, index).reshape(*yy.shape, channels)

    taps = (
        tap(pairs_y[0], pairs_x[0]),
        tap(pairs_y[0], pairs_x[1]),
        tap(pairs_y[1], pairs_x[0]),
        tap(pairs_y[1], pairs_x[1]),
    )
    if fixed_point:  # OpenCV's table path: 1/32 fractions, 15-bit weights for uint8
        wx1, wy1 = (tx / _TAB).unsqueeze(-1), (ty / _TAB).unsqueeze(-1)
        wx0, wy0 = 1.0 - wx1, 1.0 - wy1
        weights = (wy0 * wx0, wy0 * wx1, wy1 * wx0, wy1 * wx1)
        if t.dtype == torch.uint8:  # every partial sum is an integer below 2**24: exact
            total = sum(
                v.to(torch.float32) * torch.round(w * 32768.0) for v, w in zip(taps, weights)
            )
            out = torch.clamp(torch.floor((total + 16384.0) / 32768.0), 0, 255).to(torch.uint8)
        else:
            out = taps[0] * weights[0] + taps[1] * weights[1] + taps[2] * weights[2]
            out = out + taps[3] * weights[3]
    else:  # float positions: two horizontal lerps, one vertical lerp, in float32
        # full-shape weights: ONNX Runtime multiplies same-shape tensors much faster
        ax = tx.unsqueeze(-1).expand(*tx.shape, channels).contiguous()
        ay = ty.unsqueeze(-1).expand(*ty.shape, channels).contiguous()
        p00, p01, p10, p11 = (v.to(torch.float32) for v in taps)
        if channels in fused:  # OpenCV 5's loop uses fused multiply-adds: the
            # float32 product is exact in float64, so one rounding reproduces each fma
            wide, f32 = torch.float64, torch.float32
            ax, ay = ax.to(wide), ay.to(wide)
            top = (ax * (p01 - p00).to(wide) + p00.to(wide)).to(f32)
            bottom = (ax * (p11 - p10).to(wide) + p10.to(wide)).to(f32)
            out = (ay * (bottom - top).to(wide) + top.to(wide)).to(f32)
        else:
            top = p00 + ax * (p01 - p00)
            out = top + ay * ((p10 + ax * (p11 - p10)) - top)
        out = saturate(out, t.dtype)
    return out


_FRACTION_BITS = 23  # float-map fractions that are multiples of 2**-23 take the fast path


def _fused_uint8(
    t: torch.Tensor,
    sx: torch.Tensor,
    sy: torch.Tensor,
    tx: torch.Tensor,
    ty: torch.Tensor,
    border: int,
    value: tuple[float, ...],
    fused: tuple[int, ...],
) -> torch.Tensor | None:
    """The fused float32 lerps of a 3- or 4-channel uint8 image, bit-identical to the general
    path below in fewer, narrower passes: each tap one GatherElements of the flat image, the
    row lerps exact in int32 (fraction * 2**23 is an integer), the vertical lerp as below.
    None when the case does not apply (traced positions, fractions finer than 2**-23)."""
    if t.dtype != torch.uint8 or t.shape[2] not in fused:
        return None
    if any(type(v) is not torch.Tensor for v in (sx, sy, tx, ty)):
        return None  # traced positions: the general path records them
    one = 1 << _FRACTION_BITS
    ax = tx.numpy().astype(np.float64) * one
    fractions = (tx.numpy(), ty.numpy())
    if not all(((f >= 0) & (f <= 1)).all() for f in fractions):
        return None  # positions beyond int32 (OpenCV's INT_MIN/INT_MAX): general path
    if not (ax == np.floor(ax)).all():
        return None
    height, width, channels = t.shape
    x0, y0, ay = sx.numpy(), sy.numpy(), ty.numpy().astype(np.float64)
    constant = border == cv2.BORDER_CONSTANT
    # outside pixels read the fill with weight 0, as the general path does
    outside = (x0 >= width) | (x0 + 1 < 0) | (y0 >= height) | (y0 + 1 < 0)
    if constant:
        ax, ay = np.where(outside, 0.0, ax), np.where(outside, 0.0, ay)
    flat = t.reshape(-1)
    if constant:  # the fill pixel follows the image's data (joined in uint8: 4x less)
        fill = saturate(torch.tensor(value[:channels], dtype=torch.float64), torch.uint8)
        flat = torch.cat([flat, fill])
    flat = flat.to(torch.int32)  # one cast here instead of one per tap
    shape = (*x0.shape, channels)

    def tap(yy: np.ndarray, xx: np.ndarray) -> torch.Tensor:
        if constant:
            inside = (yy >= 0) & (yy < height) & (xx >= 0) & (xx < width) & ~outside
            start = np.where(inside, (yy * width + xx) * channels, height * width * channels)
        else:
            start = (np.clip(yy, 0, height - 1) * width + np.clip(xx, 0, width - 1)) * channels
        index = (start[..., None] + np.arange(channels)).reshape(-1)
        return torch.gather(flat, 0, torch.from_numpy(index)).reshape(shape)

    right = np.broadcast_to(ax[..., None], shape)
    w_left = torch.from_numpy((one - right).astype(np.int32))
    w_right = torch.from_numpy(right.astype(np.int32))

    def row(yy: np.ndarray) -> torch.Tensor:
        # left * (2**23 - ax) + right * ax is exact in int32 (< 2**31): rounded to float32
        # it is OpenCV's fused lerp along the row, scaled by 2**23
        return (tap(yy, x0) * w_left + tap(yy, x0 + 1) * w_right).to(torch.float32)

    top, bottom = row(y0), row(y0 + 1)
    wide = torch.float64
    ay_full = torch.from_numpy(np.array(np.broadcast_to(ay[..., None], shape)))  # a copy
    out = (ay_full * (bottom - top).to(wide) + top.to(wide)).to(torch.float32)
    # a lerp of values in [0, 255] rounds into [0, 255]: no clamp needed
    return torch.round(out * (1.0 / one)).to(torch.uint8)


_REMAP_BORDERS = ("BORDER_CONSTANT", "BORDER_REPLICATE")


def _remap_positions(function: str, map1: Any, map2: Any):
    """(sx, sy, tx, ty) tensors from float maps or OpenCV's fixed-point (CV_16SC2) maps."""
    if not isinstance(map1, np.ndarray):
        raise refuse(function, "map1", type(map1).__name__, "a NumPy array")
    empty2 = map2 is None or (isinstance(map2, np.ndarray) and map2.size == 0)
    if map1.dtype == np.float32 and map1.ndim == 3 and map1.shape[2] == 2 and empty2:
        m = torch.from_numpy(map1)
        xs, ys = m[..., 0], m[..., 1]
    elif (
        map1.dtype == np.float32
        and map1.ndim == 2
        and isinstance(map2, np.ndarray)
        and map2.dtype == np.float32
        and map2.shape == map1.shape
    ):
        xs, ys = torch.from_numpy(map1), torch.from_numpy(map2)
    elif (
        map1.dtype == np.int16
        and map1.ndim == 3
        and map1.shape[2] == 2
        and isinstance(map2, np.ndarray)
        and map2.dtype == np.uint16
        and map2.shape == map1.shape[:2]
    ):
        m = torch.from_numpy(map1).to(torch.int64)
        frac = torch.from_numpy(map2.astype(np.int64)) % (_TAB * _TAB)
        ty = torch.div(frac, _TAB, rounding_mode="floor")
        tx = (frac - ty * _TAB).to(torch.float32)
        return m[..., 0], m[..., 1], tx, ty.to(torch.float32)
    else:
        raise refuse(
            function,
            "map1/map2",
            f"{map1.dtype}{list(map1.shape)} with "
            f"{'None' if map2 is None else getattr(map2, 'dtype', type(map2).__name__)}",
            "float32 (H, W) x and y maps, a float32 (H, W, 2) map with map2=None, or "
            "int16 (H, W, 2) + uint16 (H, W) maps from cv2.convertMaps",
        )
    return xs, ys


def _sample(
    t: torch.Tensor, positions: tuple[torch.Tensor, ...], border: int, value: tuple[float, ...]
) -> torch.Tensor:
    """Bilinear sampling as OpenCV 5 does it: float positions of 1-, 3- and 4-channel images
    with float32 lerps; fixed-point maps, and float positions of 2-channel images (OpenCV's
    older path), with positions rounded to 1/32 pixel and the weight table."""
    if len(positions) == 4:
        return _bilinear(t, *positions, border, value, True)
    xs, ys = positions
    if t.shape[2] != 2 and current().float_positions:
        sx, sy = torch.floor(xs), torch.floor(ys)
        fx, fy = xs - sx, ys - sy
        return _bilinear(t, sx.to(torch.int64), sy.to(torch.int64), fx, fy, border, value, False)
    limit = float(2**31 - 1)
    x = torch.clamp(torch.round(xs * float(_TAB)), -limit, limit)
    y = torch.clamp(torch.round(ys * float(_TAB)), -limit, limit)
    qx, qy = torch.floor(x / _TAB), torch.floor(y / _TAB)
    fx, fy = x - qx * _TAB, y - qy * _TAB
    return _bilinear(t, qx.to(torch.int64), qy.to(torch.int64), fx, fy, border, value, True)


@replaces(
    "remap",
    uint8_units=1,
    family="geometry",
    dtypes=_IMAGE_DTYPES,
    channels=_CHANNELS,
    accuracy="uint8 and uint16 within 1, nearly always exact (OpenCV 5 fuses the float32 "
    "lerps of 3- and 4-channel images, reproduced; its SIMD and scalar loops may still round "
    "a value within an ulp of .5 differently); float32 within 1e-5; OpenCV 4: exact (its "
    "1/32-pixel table for every map and image)",
    arguments={
        "interpolation": ("INTER_LINEAR",),
        "borderMode": _REMAP_BORDERS,
        "maps": ("float32 x/y", "float32 xy + None", "int16 xy + uint16 (convertMaps)"),
        "hint": ("any (the accurate result is computed)",),
    },
    notes="float maps are sampled at float32 positions like OpenCV 5 (1-, 3-, 4-channel "
    "images); convertMaps maps and 2-channel images use OpenCV's 1/32-pixel table with 15-bit "
    "uint8 weights.",
)
def remap(
    src: np.ndarray,
    map1: Any,
    map2: Any,
    interpolation: int,
    dst: Any = None,
    borderMode: int = 0,
    borderValue: Any = None,
    hint: int = 0,
) -> Any:
    """Traceable ``cv2.remap`` with INTER_LINEAR (e.g. undistortion with precomputed maps).

    uint8 results within 1 of OpenCV (nearly always exact): float maps are sampled with
    float32 lerps like OpenCV 5, cv2.convertMaps maps with its 1/32-pixel weight table.
    """
    no_dst("remap", dst)
    if interpolation != cv2.INTER_LINEAR:
        raise refuse(
            "remap", "interpolation", constant_name(interpolation, "INTER_"), "INTER_LINEAR"
        )
    border = _border("remap", "borderMode", borderMode, _REMAP_BORDERS)
    t = as_tensor("remap", src, _IMAGE_DTYPES, _CHANNELS)
    positions = _remap_positions("remap", map1, map2)
    value = _fill_value(borderValue, src)
    return to_numpy(_integer_result(_sample(t, positions, border, value), src), src.dtype)


def _warp_positions(matrix: np.ndarray, dsize: tuple[int, int]):
    """Source positions of warpAffine as OpenCV 5 computes them: the matrix in float32, a
    row start M[i,1]*y + M[i,2] in float32, then fma(M[i,0], x, start) rounded once."""
    width, height = dsize
    m = matrix.astype(np.float32)
    xs = np.arange(width, dtype=np.float32).astype(np.float64)[None, :]
    ys = np.arange(height, dtype=np.float32)[:, None]
    maps = []
    for i in range(2):
        start = (m[i, 1] * ys + m[i, 2]).astype(np.float64)  # float32 multiply, then add
        maps.append((float(m[i, 0]) * xs + start).astype(np.float32))  # exact product
    return _remap_positions("warpAffine", maps[0], maps[1])


def _warp_arguments(
    name: str, src: Any, M: Any, dsize: Any, dst: Any, flags: int, borderMode: int
) -> tuple[Any, Any, tuple[int, ...], np.ndarray]:
    """The checks warpAffine and warpPerspective share, each refusal naming the argument:
    (border, image tensor, output size, the matrix as float64)."""
    shape = (2, 3) if name == "warpAffine" else (3, 3)
    no_dst(name, dst)
    if flags not in (cv2.INTER_LINEAR, cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP):
        raise refuse(
            name,
            "flags",
            constant_name(flags, "INTER_"),
            "INTER_LINEAR, INTER_LINEAR | WARP_INVERSE_MAP",
        )
    traced = name == "warpAffine" and traced_warp.check_matrix(M)
    if (type(M) is not np.ndarray and not traced) or np.shape(M) != shape:
        raise refuse(
            name,
            "M",
            f"{type(M).__name__}{list(np.shape(M))}",
            f"a plain (untraced) {shape[0]}x{shape[1]} NumPy array",
        )
    border = _border(name, "borderMode", borderMode, _REMAP_BORDERS)
    t = as_tensor(name, src, _IMAGE_DTYPES, (1, 3, 4))
    size = tuple_of_ints(name, "dsize", dsize)
    if min(size) <= 0:
        raise refuse(name, "dsize", size, "(width, height) > 0")
    return border, t, size, M if traced else M.astype(np.float64)


@replaces(
    "warpAffine",
    uint8_units=1,
    family="geometry",
    dtypes=_IMAGE_DTYPES,
    channels=(1, 3, 4),
    accuracy="uint8 and uint16 within 1 (as remap; OpenCV 5.0's last columns after its "
    "16-wide blocks round positions differently, about 1 call in 200 differs by 1; OpenCV "
    "5.1 through Intel IPP, positions in double, about 1 pixel in 2000 differs by 1); "
    "float32 within 1e-5; OpenCV 5.1 with IPP off or a one-pixel-high or -wide source: "
    "exact (OpenCV's own float32 kernel); OpenCV 4: exact (its 1/1024-pixel positions and "
    "1/32-pixel table)",
    arguments={
        "flags": ("INTER_LINEAR", "INTER_LINEAR | WARP_INVERSE_MAP"),
        "borderMode": _REMAP_BORDERS,
        "M": ("a constant 2x3 matrix", "a 2x3 matrix computed from traced data (OpenCV 5.1)"),
        "hint": ("any (the accurate result is computed)",),
    },
)
def warpAffine(
    src: np.ndarray,
    M: Any,
    dsize: Any,
    dst: Any = None,
    flags: int = 1,
    borderMode: int = 0,
    borderValue: Any = None,
    hint: int = 0,
) -> Any:
    """Traceable ``cv2.warpAffine`` with INTER_LINEAR and a constant matrix ``M``.

    uint8 results within 1 of OpenCV (nearly always exact): positions are OpenCV 5's
    float32 fused multiply-adds, then float32 lerps.
    """
    border, t, size, matrix = _warp_arguments("warpAffine", src, M, dsize, dst, flags, borderMode)
    if type(matrix) is not np.ndarray:  # computed from traced data: kept in the graph
        px, py = traced_warp.positions(matrix, size, flags)
        out = _sample_double_tensors(t, px, py, border, _fill_value(borderValue, src))
        return to_numpy(_integer_result(out, src), src.dtype)
    if not flags & cv2.WARP_INVERSE_MAP:
        matrix = cv2.invertAffineTransform(matrix)
    value = _fill_value(borderValue, src)
    rules = current()
    if not rules.float_positions:
        out = _sample(t, _warp_positions_fixed(matrix, size), border, value)
    elif rules.warp_positions_in_double and not warp_positions.ipp_takes_affine(tuple(t.shape)):
        positions = warp_positions.affine_in_kernel(matrix, size)  # OpenCV's own kernel
        out = _bilinear(t, *positions, border, value, False, fused=(1, 3, 4))
    elif rules.warp_positions_in_double:
        width, height = size
        xs, ys = np.meshgrid(
            np.arange(width, dtype=np.float64), np.arange(height, dtype=np.float64)
        )
        maps = [matrix[i, 0] * xs + matrix[i, 1] * ys + matrix[i, 2] for i in range(2)]
        out = _sample_double(t, maps[0], maps[1], border, value)
    else:
        out = _sample(t, _warp_positions(matrix, size), border, value)
    return to_numpy(_integer_result(out, src), src.dtype)


def _warp_positions_fixed(matrix: np.ndarray, dsize: tuple[int, int]):
    """Source positions of warpAffine as OpenCV 4 computes them, in 1/1024 pixel integers:
    rounded per column (M[i,0]*x) and per row (M[i,1]*y + M[i,2]) plus half a 1/32 step,
    summed, shifted to 1/32 pixel (sx, sy, tx, ty, as convertMaps maps give them)."""
    width, height = dsize
    scale, limit = 1024.0, float(2**31 - 1)
    xs, ys = np.arange(width, dtype=np.float64), np.arange(height, dtype=np.float64)
    parts = []
    for i in range(2):
        column = np.clip(np.rint(matrix[i, 0] * xs * scale), -limit, limit).astype(np.int64)
        row = np.clip(np.rint((matrix[i, 1] * ys + matrix[i, 2]) * scale), -limit, limit)
        position = (row.astype(np.int64)[:, None] + 16 + column[None, :]) >> 5
        whole = np.clip(position >> 5, -(1 << 15), (1 << 15) - 1)
        parts.append(
            (torch.from_numpy(whole), torch.from_numpy((position & 31).astype(np.float32)))
        )
    (sx, tx), (sy, ty) = parts
    return sx, sy, tx, ty


def _sample_double(
    t: torch.Tensor, xs: np.ndarray, ys: np.ndarray, border: int, value: tuple[float, ...]
) -> torch.Tensor:
    """Sample at positions computed in double, as OpenCV 5.1's warps do: uint16 and float32
    images take integer part and fraction from the double position (the fraction rounded
    to float32), uint8 images sample the positions rounded to float32, as remap's maps."""
    if t.dtype == torch.uint8:
        maps = (np.nan_to_num(p).astype(np.float32) for p in (xs, ys))
        return _sample(t, _remap_positions("warp", *maps), border, value)
    limit = float(2**31 - 1)
    parts = []
    for position in (xs, ys):
        whole = np.floor(np.clip(position, -limit, limit))
        fraction = np.nan_to_num(position - whole).astype(np.float32)
        parts.append((torch.from_numpy(whole.astype(np.int64)), torch.from_numpy(fraction)))
    (sx, tx), (sy, ty) = parts
    return _bilinear(t, sx, sy, tx, ty, border, value, False)


def _sample_double_tensors(
    t: torch.Tensor, px: torch.Tensor, py: torch.Tensor, border: int, value: tuple[float, ...]
) -> torch.Tensor:
    """_sample_double for positions that are graph tensors (a matrix from traced data)."""
    if t.dtype == torch.uint8:
        return _sample(t, (px.to(torch.float32), py.to(torch.float32)), border, value)
    limit = float(2**31 - 1)
    parts = []
    for position in (px, py):
        whole = torch.floor(torch.clamp(position, -limit, limit))
        parts.append((whole.to(torch.int64), (position - whole).to(torch.float32)))
    (sx, tx), (sy, ty) = parts
    return _bilinear(t, sx, sy, tx, ty, border, value, False)


@replaces(
    "warpPerspective",
    uint8_units=1,
    family="geometry",
    dtypes=_IMAGE_DTYPES,
    channels=(1, 3, 4),
    accuracy="OpenCV 5.1: exact where OpenCV's own float32 kernel computes the warp (the "
    "horizon inside the output with BORDER_REPLICATE, or inside the source's view with "
    "BORDER_CONSTANT; one-pixel sources; IPP off: its float32 positions in 16-column "
    "blocks, fused lerps, NaN stored as the integer maximum); where Intel IPP computes it "
    "(positions in double): uint8 and uint16 within 1 (IPP's interpolation is not reproduced "
    "bit for bit: about 1 uint16 call in 3 has a pixel 1 off), float32 within 5e-6 of the "
    "image's magnitude. IPP's own test is not public: with BORDER_REPLICATE and w at an "
    "output corner in (-0.1, 0] it sometimes takes a warp predicted for the kernel, then "
    "up to 14 uint16 units, 1 uint8 unit, 4e-4 of a float32 image's magnitude (measured, "
    "bench/opencv_warp_accuracy.py; the session's check warns). With BORDER_CONSTANT "
    "IPP also fills a few pixels whose position lies within a pixel past the source's edge "
    "with the border value where the replacement lerps (seen with 4x4 sources, about 1 "
    "property example in 3000). OpenCV 5.0: the float32 "
    "kernel (not re-measured on 5.0). OpenCV 4: exact (its per-block double positions and "
    "1/32-pixel table)",
    arguments={
        "flags": ("INTER_LINEAR", "INTER_LINEAR | WARP_INVERSE_MAP"),
        "borderMode": _REMAP_BORDERS,
        "M": ("a constant 3x3 matrix",),
        "hint": ("any (the accurate result is computed)",),
    },
    notes="The homography must be plain data (e.g. from cv2.getPerspectiveTransform on "
    "fixed points): the sampling positions are a table computed at trace time.",
)
def warpPerspective(
    src: np.ndarray,
    M: Any,
    dsize: Any,
    dst: Any = None,
    flags: int = 1,
    borderMode: int = 0,
    borderValue: Any = None,
    hint: int = 0,
) -> Any:
    """Traceable ``cv2.warpPerspective`` with INTER_LINEAR and a constant 3x3 matrix ``M``
    (bird's-eye views, rectification): positions per pixel, sampled as remap does."""
    border, t, size, matrix = _warp_arguments(
        "warpPerspective", src, M, dsize, dst, flags, borderMode
    )
    if not flags & cv2.WARP_INVERSE_MAP:  # OpenCV inverts by LU decomposition in double
        matrix = cv2.invert(matrix, flags=cv2.DECOMP_LU)[1]
    value = _fill_value(borderValue, src)
    rules = current()
    if not rules.float_positions:
        out = _bilinear(
            t, *warp_positions.perspective_fixed_point(matrix, size), border, value, True
        )
    elif rules.warp_positions_in_double and not warp_positions.ipp_declines_perspective(
        matrix, size, tuple(t.shape), border
    ):
        out = _sample_double(t, *warp_positions.perspective_in_double(matrix, size), border, value)
    else:  # OpenCV's own kernel: float32 positions, fused lerps for every channel count
        positions = warp_positions.perspective_in_kernel(matrix, size)
        out = _bilinear(t, *positions, border, value, False, fused=(1, 3, 4))
        odd = warp_positions.not_a_number(positions, tuple(t.shape), border)
        if odd is not None:  # OpenCV stores NaN as the integer type's maximum
            top = float("nan") if src.dtype == np.float32 else np.iinfo(src.dtype).max
            out = torch.where(torch.from_numpy(odd).unsqueeze(-1), top, out).to(out.dtype)
    return to_numpy(_integer_result(out, src), src.dtype)
