"""filter2D, Laplacian and Scharr: general 2-D correlation and the derivative filters
built on it, with torch ops.

filter2D sums ``kernel[i, j] * shifted image`` over the kernel's non-zero entries in row
order, starting from ``delta``, in float32 (float64 for a CV_64F result or source), as
OpenCV's direct filter does (kernels of fewer than 50 entries; larger ones OpenCV runs
through a DFT, which the direct sum matches to rounding for float64 results only).
Laplacian is filter2D with OpenCV's 3x3 kernels (ksize 1 or 3, the kernel multiplied by
``scale``) or the sum of two second-order Sobel filters (ksize 5, 7) with integer sums for
uint8 images. Scharr is Sobel's ksize=-1.
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
    pad,
    refuse,
    replaces,
    to_numpy,
    tuple_of_ints,
)
from .filters import Sobel, _separable

_DTYPES = ("uint8", "float32", "float64")
_CHANNELS = (1, 2, 3, 4)
_BORDERS = ("BORDER_CONSTANT", "BORDER_REPLICATE", "BORDER_REFLECT", "BORDER_REFLECT_101")
_DIRECT_LIMIT = 50  # OpenCV filters kernels of this many entries and more through a DFT
_LAPLACE_3 = {
    1: np.array([[0, 1, 0], [1, -4, 1], [0, 1, 0]], np.float32),
    3: np.array([[2, 0, 2], [0, -8, 0], [2, 0, 2]], np.float32),
}


def _border(function: str, value: int) -> int:
    codes = {getattr(cv2, name): name for name in _BORDERS}
    if value not in codes:
        shown = constant_name(value, "BORDER_")
        raise refuse(function, "borderType", shown, ", ".join(_BORDERS) + " (BORDER_DEFAULT)")
    return value


def _result_dtype(function: str, src: np.ndarray, ddepth: int) -> torch.dtype:
    """The output type of ``ddepth`` (-1: the source's), for the pairs OpenCV's filters
    take: uint8 to uint8, int16, float32, float64; a float source to its own type."""
    depths = {cv2.CV_16S: torch.int16, cv2.CV_32F: torch.float32, cv2.CV_64F: torch.float64}
    own = {"uint8": torch.uint8, "float32": torch.float32, "float64": torch.float64}
    if ddepth == -1:
        return own[src.dtype.name]
    if ddepth in depths and (src.dtype == np.uint8 or depths[ddepth] == own[src.dtype.name]):
        return depths[ddepth]
    raise refuse(
        function,
        "ddepth",
        ddepth,
        "-1; CV_16S, CV_32F or CV_64F for uint8 sources; the source's own depth for floats",
    )


def _saturated(values: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """OpenCV's saturate_cast of float sums: rounded half to even, clamped (or a float cast)."""
    if dtype.is_floating_point:
        return values.to(dtype)
    info = torch.iinfo(dtype)
    return torch.clamp(torch.round(values), info.min, info.max).to(dtype)


def correlate2d(
    t: torch.Tensor,
    kernel: np.ndarray,
    anchor: tuple[int, int],
    delta: float,
    border: int,
    work: torch.dtype,
) -> torch.Tensor:
    """``delta`` plus kernel-weighted shifted copies of an (H, W, C) tensor, in ``work``,
    accumulated over the non-zero entries in row order (OpenCV's direct filter order).

    In float32, OpenCV's vector loops accumulate with fused multiply-adds and the last
    ``(W * C) % 4`` values of each row in its scalar loop with a product then a sum (as
    measured on x86-64 with AVX2); both are reproduced (a fused step is exact in float64,
    then rounded once to float32)."""
    kh, kw = kernel.shape
    ax, ay = anchor
    padded = pad(t, ay, kh - 1 - ay, ax, kw - 1 - ax, border)
    height, width, channels = t.shape[0], t.shape[1], t.shape[2]
    taps = [
        (i, j, float(c))
        for (i, j), c in np.ndenumerate(
            kernel.astype(np.float32 if work == torch.float32 else np.float64)
        )
        if c != 0.0
    ]
    start = torch.full((), float(delta), dtype=work)
    if not taps:  # no non-zero entry: delta everywhere
        return padded.narrow(0, 0, height).narrow(1, 0, width).to(work) * 0.0 + start
    shifted = [padded.narrow(0, i, height).narrow(1, j, width) for i, j, _ in taps]
    if work == torch.float64:
        acc = start if float(delta) != 0.0 else None
        for x, (_, _, c) in zip(shifted, taps):
            term = x.to(work) * c
            acc = term if acc is None else acc + term
        return acc
    fused = plain = start.expand(t.shape)
    for x, (_, _, c) in zip(shifted, taps):
        fused = (fused.to(torch.float64) + x.to(torch.float64) * c).to(torch.float32)
        plain = plain + x.to(torch.float32) * c
    row = torch.arange(width * channels).reshape(width, channels)
    scalar_loop = row >= (width * channels) // 4 * 4
    return torch.where(scalar_loop, plain, fused)


def _kernel(function: str, kernel: Any, double: bool = False) -> np.ndarray:
    """The kernel, checked: plain, 2-D, numeric; 1 to 49 entries, or any size into a
    ``double`` (float64) result, where OpenCV's DFT rounds within ~1e-15 of the magnitude
    of the direct sum (float32 and uint8 DFTs would not be within the declared accuracy)."""
    if not isinstance(kernel, np.ndarray) or kernel.ndim != 2 or kernel.dtype.kind not in "iuf":
        shown = f"{kernel.dtype}{list(kernel.shape)}" if isinstance(kernel, np.ndarray) else kernel
        raise refuse(function, "kernel", shown, "a plain 2-D numeric NumPy array")
    if type(kernel) is not np.ndarray:
        raise refuse(function, "kernel", "traced data", "a plain (untraced) kernel")
    if kernel.size == 0 or kernel.size >= _DIRECT_LIMIT and not double:
        raise refuse(
            function,
            "kernel",
            f"{kernel.shape[0]}x{kernel.shape[1]}",
            f"1 to {_DIRECT_LIMIT - 1} entries, or any size into a float64 result (OpenCV "
            "filters larger kernels through a DFT)",
        )
    return kernel


@replaces(
    "filter2D",
    family="convolution",
    dtypes=_DTYPES,
    channels=_CHANNELS,
    accuracy="uint8 exact for integer-valued kernels; with fractional kernels exact on "
    "x86-64 with AVX2 (OpenCV's fused vector sums and scalar row ends, measured), within 1 "
    "elsewhere; float results within 1e-5",
    uint8_units=1,
    arguments={
        "ddepth": ("-1", "CV_16S, CV_32F, CV_64F (uint8 src)", "the source's depth"),
        "kernel": (
            f"a plain array of fewer than {_DIRECT_LIMIT} entries",
            "any size for a float64 result (OpenCV's DFT, matched to rounding)",
        ),
        "anchor": ("(-1, -1)", "any point in the kernel"),
        "borderType": _BORDERS + ("BORDER_DEFAULT",),
    },
)
def filter2D(
    src: np.ndarray,
    ddepth: int,
    kernel: np.ndarray,
    dst: Any = None,
    anchor: Any = (-1, -1),
    delta: float = 0,
    borderType: int = 4,
) -> Any:
    """Traceable ``cv2.filter2D``: correlation with ``kernel`` (OpenCV's direct filter)."""
    no_dst("filter2D", dst)
    border = _border("filter2D", borderType)
    t = as_tensor("filter2D", src, _DTYPES, _CHANNELS)
    out_dtype = _result_dtype("filter2D", src, ddepth)
    kernel = _kernel("filter2D", kernel, double=out_dtype == torch.float64)
    kh, kw = kernel.shape
    ax, ay = tuple_of_ints("filter2D", "anchor", anchor)
    ax, ay = (kw // 2 if ax < 0 else ax), (kh // 2 if ay < 0 else ay)
    if not (0 <= ax < kw and 0 <= ay < kh):
        raise refuse("filter2D", "anchor", (ax, ay), "(-1, -1) or a point inside the kernel")
    wide = out_dtype == torch.float64 or t.dtype == torch.float64
    work = torch.float64 if wide else torch.float32
    sums = correlate2d(t, kernel, (ax, ay), delta, border, work)
    return to_numpy(_saturated(sums, out_dtype))


@replaces(
    "Laplacian",
    family="convolution",
    dtypes=_DTYPES,
    channels=_CHANNELS,
    accuracy="uint8 sources exact for integer results (integer sums); float results within 1e-5",
    arguments={
        "ddepth": ("-1", "CV_16S, CV_32F, CV_64F (uint8 src)", "the source's depth"),
        "ksize": ("1", "3", "5", "7"),
        "borderType": _BORDERS + ("BORDER_DEFAULT",),
    },
)
def Laplacian(
    src: np.ndarray,
    ddepth: int,
    dst: Any = None,
    ksize: int = 1,
    scale: float = 1,
    delta: float = 0,
    borderType: int = 4,
) -> Any:
    """Traceable ``cv2.Laplacian``: d2/dx2 + d2/dy2 with OpenCV's kernels, then scale, delta."""
    no_dst("Laplacian", dst)
    border = _border("Laplacian", borderType)
    t = as_tensor("Laplacian", src, _DTYPES, _CHANNELS)
    out_dtype = _result_dtype("Laplacian", src, ddepth)
    wide = out_dtype == torch.float64 or t.dtype == torch.float64
    work = torch.float64 if wide else torch.float32
    if ksize in _LAPLACE_3:
        kernel = _LAPLACE_3[ksize] * np.float32(scale) if float(scale) != 1.0 else _LAPLACE_3[ksize]
        sums = correlate2d(t, kernel, (1, 1), delta, border, work)
        return to_numpy(_saturated(sums, out_dtype))
    if ksize not in (5, 7):
        raise refuse("Laplacian", "ksize", ksize, "1, 3, 5 or 7")
    kd, ks = (k.reshape(-1) for k in cv2.getDerivKernels(2, 0, ksize, normalize=False))
    anchor = (ksize // 2, ksize // 2)
    source = t.to(torch.float64 if wide else torch.float32)
    # integer kernels: sums of uint8 images are integers below 2**24, exact in float32
    d2 = _separable(source, kd, ks, anchor, border) + _separable(source, ks, kd, anchor, border)
    if float(scale) != 1.0 or float(delta) != 0.0:
        d2 = d2.to(torch.float64) * float(scale) + float(delta)
    return to_numpy(_saturated(d2, out_dtype))


@replaces(
    "Scharr",
    family="convolution",
    dtypes=("uint8", "float32"),
    channels=_CHANNELS,
    accuracy="as Sobel with ksize=-1 (uint8 to CV_16S exact)",
    arguments={
        "ddepth": ("-1 (float32 src)", "CV_16S", "CV_32F", "CV_64F"),
        "dx/dy": ("(1, 0)", "(0, 1)"),
        "borderType": _BORDERS + ("BORDER_DEFAULT",),
    },
)
def Scharr(
    src: np.ndarray,
    ddepth: int,
    dx: int,
    dy: int,
    dst: Any = None,
    scale: float = 1,
    delta: float = 0,
    borderType: int = 4,
) -> Any:
    """Traceable ``cv2.Scharr``: the 3x3 Scharr derivative, as ``cv2.Sobel(ksize=-1)``."""
    no_dst("Scharr", dst)
    if (dx, dy) not in ((1, 0), (0, 1)):
        raise refuse("Scharr", "dx/dy", (dx, dy), "(1, 0) or (0, 1)")
    return Sobel(src, ddepth, dx, dy, None, -1, scale, delta, borderType)
