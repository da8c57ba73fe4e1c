"""GaussianBlur, blur and boxFilter as separable convolutions with torch ops.

uint8 GaussianBlur reproduces OpenCV's bit-exact path: kernels rounded to 8 fractional
bits with error diffusion, integer row and column sums, one final rounding. Double images
are filtered in double with double kernels, as OpenCV does.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from ..sizes import symbolic
from ._base import (
    as_tensor,
    constant_name,
    cv2,
    no_dst,
    pad,
    refuse,
    replaces,
    saturate,
    to_numpy,
    tuple_of_ints,
)
from .selection import median_of_window

_SMALL_KERNELS = {
    1: [1.0],
    3: [0.25, 0.5, 0.25],
    5: [0.0625, 0.25, 0.375, 0.25, 0.0625],
    7: [0.03125, 0.109375, 0.21875, 0.28125, 0.21875, 0.109375, 0.03125],
}
_FILTER_BORDERS = ("BORDER_CONSTANT", "BORDER_REPLICATE", "BORDER_REFLECT", "BORDER_REFLECT_101")
_DTYPES = ("uint8", "float32", "float64")
_CHANNELS = (1, 2, 3, 4)


def gaussian_kernel(n: int, sigma: float) -> np.ndarray:
    """getGaussianKernel's 1-D Gaussian in double: OpenCV's fixed tables for sigma <= 0 and
    n <= 7 (n = 9 since OpenCV 5), else exp(-(i - (n-1)/2)**2 / (2 sigma**2)) summing to 1."""
    if sigma <= 0 and n in _SMALL_KERNELS:
        return np.asarray(_SMALL_KERNELS[n], dtype=np.float64)
    if sigma <= 0 and n == 9 and int(cv2.__version__.split(".")[0]) >= 5:
        return np.asarray([4, 13, 30, 51, 60, 51, 30, 13, 4], dtype=np.float64) / 256.0
    sigma = sigma if sigma > 0 else ((n - 1) * 0.5 - 1) * 0.3 + 0.8
    x = np.arange(n, dtype=np.float64) - (n - 1) * 0.5
    values = np.exp(-(x * x) / (2 * sigma * sigma))
    return values / values.sum()


def fixed_point_kernel(kernel: np.ndarray, bits: int = 8) -> np.ndarray:
    """Kernel in units of 2**-bits, rounded with error diffusion from the tails so the
    symmetric halves match and the sum is exactly 2**bits (OpenCV's bit-exact kernels)."""
    n = len(kernel)
    one = float(1 << bits)
    out = np.zeros(n, dtype=np.float64)
    error = 0.0
    for i in range(n // 2):
        value = kernel[i] * one + error
        rounded = float(np.rint(value))
        error = value - rounded
        out[i] = out[n - 1 - i] = rounded
    out[n // 2] = one - 2 * out[: n // 2].sum()
    return out


def _border(function: str, value: int) -> int:
    codes = {getattr(cv2, name): name for name in _FILTER_BORDERS}
    if value not in codes:
        raise refuse(
            function,
            "borderType",
            constant_name(value, "BORDER_"),
            ", ".join(_FILTER_BORDERS) + " (BORDER_DEFAULT is BORDER_REFLECT_101)",
        )
    return value


_SHIFTED_SUMS_UP_TO = 9  # longer kernels run as convolutions


def _correlate(x: torch.Tensor, kernel: np.ndarray, dim: int) -> torch.Tensor:
    """Correlate an (H, W, C) tensor with ``kernel`` along ``dim`` (0 or 1), valid part only:
    short kernels as sums of shifted slices (no layout change, cheap in ONNX Runtime)."""
    n = x.shape[dim] - len(kernel) + 1
    double = x.dtype == torch.float64  # ONNX Runtime has no double Conv
    if len(kernel) <= _SHIFTED_SUMS_UP_TO or double and symbolic(x.shape[dim]):
        out = x.narrow(dim, 0, n) * float(kernel[0])
        for i in range(1, len(kernel)):
            out = out + x.narrow(dim, i, n) * float(kernel[i])
        return out
    if double:
        return _banded(x, kernel, dim)
    shape = (1, 1, 1, -1) if dim == 1 else (1, 1, -1, 1)
    weight = torch.from_numpy(kernel.astype(np.float32)).reshape(shape)
    planes = x.permute(2, 0, 1).unsqueeze(1)  # (C, 1, H, W)
    return F.conv2d(planes, weight).squeeze(1).permute(1, 2, 0)


def _banded(x: torch.Tensor, kernel: np.ndarray, dim: int) -> torch.Tensor:
    """:func:`_correlate` of a double (H, W, C) tensor with a long kernel along a static
    ``dim`` as one product with a band matrix (double MatMul runs everywhere; a double Conv
    does not in ONNX Runtime)."""
    length = x.shape[dim]
    n = length - len(kernel) + 1
    band = np.zeros((length, n), dtype=np.float64)
    for i, weight in enumerate(kernel.astype(np.float64)):
        band[np.arange(n) + i, np.arange(n)] = weight
    band_t = torch.from_numpy(band)
    if dim == 1:  # (H, C, W) @ (W, n) -> (H, C, n)
        return torch.matmul(x.permute(0, 2, 1), band_t).permute(0, 2, 1)
    rows = torch.matmul(band_t.t(), x.reshape(length, -1))  # (n, H) @ (H, W*C)
    return rows.reshape(n, x.shape[1], x.shape[2])


def _separable(
    t: torch.Tensor, kx: np.ndarray, ky: np.ndarray, anchor: tuple[int, int], border: int
) -> torch.Tensor:
    """Correlate an (H, W, C) float tensor with kx along W and ky along H, OpenCV borders."""
    ax, ay = anchor
    padded = pad(t, ay, len(ky) - 1 - ay, ax, len(kx) - 1 - ax, border)
    return _correlate(_correlate(padded, kx, 1), ky, 0)


def integer_separable(
    t: torch.Tensor, kx: np.ndarray, ky: np.ndarray, anchor: tuple[int, int], border: int
) -> torch.Tensor:
    """A uint8 (H, W, C) image correlated with integer kernels kx (along W) and ky (along
    H), OpenCV borders, in int16: the caller guarantees every partial sum fits (255 times
    the kernels' absolute sums below 2**15). Sums of shifted slices of the padded
    (H, W*C) view (a pixel is C values along a row): no layout change, no float, each
    pass a quarter of a float32 one's bytes in ONNX Runtime."""
    ax, ay = anchor
    height, width, channels = t.shape
    padded = pad(t, ay, len(ky) - 1 - ay, ax, len(kx) - 1 - ax, border)
    flat = padded.reshape(padded.shape[0], -1).to(torch.int16)
    rows = _weighted_slices(flat, kx, 1, channels, width * channels)
    return _weighted_slices(rows, ky, 0, 1, height).reshape(height, width, channels)


def _weighted_slices(
    x: torch.Tensor, kernel: np.ndarray, dim: int, step: int, length: Any
) -> torch.Tensor:
    """``sum(kernel[k] * x.narrow(dim, k * step, length))``, zero weights skipped and
    weights of +-1 added or subtracted without a product."""
    total = None
    terms = sorted((int(w) < 0, k, int(w)) for k, w in enumerate(kernel) if w != 0)
    for _, k, weight in terms:  # a positive weight first: no product by -1
        part = x.narrow(dim, k * step, length)
        if total is None:
            total = part * weight if weight != 1 else part
        elif abs(weight) == 1:
            total = total + part if weight > 0 else total - part
        else:
            total = total + part * weight
    return total if total is not None else torch.zeros_like(x.narrow(dim, 0, length))


def _fixed_point_blur(
    t: torch.Tensor, fx: np.ndarray, fy: np.ndarray, anchor: tuple[int, int], border: int
) -> torch.Tensor:
    """A uint8 (H, W, C) image blurred with integer kernels in units of 2**-8, rounded like
    OpenCV's bit-exact path: ``(sum + 2**15) >> 16``. The row sums are integers below
    2**16; the column kernel carries the 2**-16 and its bias the 0.5, so every partial
    column sum is a multiple of 2**-16 below 256 (24 significant bits): float32
    convolutions are exact in any summation order, and the shift is the truncating cast
    to uint8 (no Mul, Floor or Clip: 0.4 ms less at 480x640x3).
    Each pass convolves along the last axis of a (1, rows, 1, length) view, one channel
    per row: the row pass on the (H, W*C) image itself (taps C apart), the column pass on
    its 2-D transpose, which the cast back to (H, W*C) uint8 undoes. With hundreds of
    channels ONNX Runtime runs its blocked depthwise kernels (0.35 ms a pass at 484x644x3,
    against 0.7 ms for three (H, W) planes), and no pass moves single values."""
    ax, ay = anchor
    padded = pad(t, ay, len(fy) - 1 - ay, ax, len(fx) - 1 - ax, border)
    if symbolic(t.shape[0]) or symbolic(t.shape[1]):  # dynamic axes: no per-row weights
        return _fixed_point_blur_planes(padded, fx, fy)
    height, channels = t.shape[0], t.shape[2]
    rows_in, length = padded.shape[0], padded.shape[1] * channels
    flat = padded.reshape(1, rows_in, 1, length).to(torch.float32)
    weight_x = torch.from_numpy(np.tile(fx.astype(np.float32), (rows_in, 1, 1, 1)))
    rows = F.conv2d(flat, weight_x, groups=rows_in, dilation=(1, channels))
    width_c = rows.shape[3]  # W * C
    columns = rows.reshape(rows_in, width_c).t().reshape(1, width_c, 1, rows_in)
    column = (fy / 65536.0).astype(np.float32)  # exact: a power of two
    weight_y = torch.from_numpy(np.tile(column, (width_c, 1, 1, 1)))
    half = torch.full((width_c,), 0.5)
    scaled = F.conv2d(columns, weight_y, bias=half, groups=width_c)
    out = scaled.to(torch.uint8).reshape(width_c, height).t()
    return out.reshape(height, width_c // channels, channels)


def _fixed_point_blur_planes(padded: torch.Tensor, fx: np.ndarray, fy: np.ndarray) -> torch.Tensor:
    """:func:`_fixed_point_blur` of a padded image through (1, C, H, W) planes: the same
    sums and rounding, with weights that do not depend on the image size (for dynamic
    axes), at the cost of transposes that move single values."""
    channels = padded.shape[2]
    planes = padded.permute(2, 0, 1).unsqueeze(0).to(torch.float32)  # (1, C, H, W)
    weight_x = torch.from_numpy(np.tile(fx.astype(np.float32), (channels, 1, 1, 1)))
    column = (fy / 65536.0).astype(np.float32).reshape(-1, 1)  # exact: a power of two
    weight_y = torch.from_numpy(np.tile(column, (channels, 1, 1, 1)))
    half = torch.full((channels,), 0.5)
    rows = F.conv2d(planes, weight_x, groups=channels)
    scaled = F.conv2d(rows, weight_y, bias=half, groups=channels)
    return scaled.to(torch.uint8).squeeze(0).permute(1, 2, 0)


def _ksize_for(sigma: float, uint8: bool) -> int:
    return int(np.rint(sigma * (3 if uint8 else 4) * 2 + 1)) | 1


@replaces(
    "GaussianBlur",
    family="filters",
    dtypes=_DTYPES,
    channels=_CHANNELS,
    accuracy="uint8 exact (OpenCV's fixed-point kernels and integer sums); float32 and "
    "float64 within 1e-5",
    arguments={
        "ksize": ("odd (w, h)", "(0, 0) with sigmaX > 0"),
        "borderType": _FILTER_BORDERS + ("BORDER_DEFAULT",),
        "hint": ("any (the accurate result is computed)",),
    },
)
def GaussianBlur(
    src: np.ndarray,
    ksize: Any,
    sigmaX: float,
    dst: Any = None,
    sigmaY: float = 0,
    borderType: int = 4,
    hint: int = 0,
) -> Any:
    """Traceable ``cv2.GaussianBlur``. uint8: OpenCV's bit-exact fixed-point kernels (8
    fractional bits, error diffusion) and integer sums, so exact."""
    no_dst("GaussianBlur", dst)
    border = _border("GaussianBlur", borderType)
    t = as_tensor("GaussianBlur", src, _DTYPES, _CHANNELS)
    width, height = tuple_of_ints("GaussianBlur", "ksize", ksize)
    uint8 = t.dtype == torch.uint8
    sigma_x = max(float(sigmaX), 0.0)
    sigma_y = float(sigmaY) if sigmaY > 0 else sigma_x
    if width <= 0 and sigma_x > 0:
        width = _ksize_for(sigma_x, uint8)
    if height <= 0 and sigma_y > 0:
        height = _ksize_for(sigma_y, uint8)
    if width <= 0 or height <= 0 or width % 2 == 0 or height % 2 == 0:
        raise refuse(
            "GaussianBlur",
            "ksize",
            (width, height),
            "odd positive sizes, or (0, 0) with sigmaX > 0",
        )
    kx, ky = gaussian_kernel(width, sigma_x), gaussian_kernel(height, sigma_y)
    anchor = (width // 2, height // 2)
    if uint8:
        fx, fy = fixed_point_kernel(kx), fixed_point_kernel(ky)
        return to_numpy(_fixed_point_blur(t, fx, fy, anchor, border))
    kind = np.float64 if t.dtype == torch.float64 else np.float32  # OpenCV's kernel type
    out = _separable(t, kx.astype(kind), ky.astype(kind), anchor, border)
    return to_numpy(out)


def _box(
    function: str,
    src: np.ndarray,
    ddepth: int,
    ksize: Any,
    anchor: Any,
    normalize: bool,
    borderType: int,
) -> Any:
    border = _border(function, borderType)
    t = as_tensor(function, src, _DTYPES, _CHANNELS)
    width, height = tuple_of_ints(function, "ksize", ksize)
    if width <= 0 or height <= 0:
        raise refuse(function, "ksize", (width, height), "positive sizes")
    ax, ay = tuple_of_ints(function, "anchor", anchor)
    ax, ay = (width // 2 if ax < 0 else ax), (height // 2 if ay < 0 else ay)
    if not (0 <= ax < width and 0 <= ay < height):
        raise refuse(function, "anchor", (ax, ay), "(-1, -1) or a point inside the kernel")
    allowed = {-1: t.dtype, cv2.CV_32F: torch.float32, cv2.CV_64F: torch.float64}
    if ddepth not in allowed:
        raise refuse(function, "ddepth", ddepth, "-1 (same as src), cv2.CV_32F or cv2.CV_64F")
    out_dtype = allowed[ddepth]
    ones_x, ones_y = np.ones(width), np.ones(height)
    double = torch.float64 in (t.dtype, out_dtype)  # OpenCV sums double sources in double
    work = torch.float64 if double else torch.float32
    sums = _separable(t.to(work), ones_x, ones_y, (ax, ay), border)
    area = width * height
    if normalize and out_dtype == torch.uint8 and area == 2:
        raise refuse(
            function,
            "ksize",
            (width, height),
            "windows of 1 or at least 3 pixels for uint8 means (OpenCV 5.0 returns mean + 1 "
            "for 2-pixel windows and, depending on its SIMD lane, 255 or 0 for 255 + 255; "
            "not reproducible)",
        )
    if normalize and out_dtype == torch.uint8 and area >= 4 and area & (area - 1) == 0:
        # OpenCV 5 shifts uint8 sums over power-of-two windows: (sum + area/2 + 1) >> log2
        # (exact in float32)
        mean = torch.floor((sums + float(area // 2 + 1)) / float(area))
        return to_numpy(torch.clamp(mean, 0, 255).to(torch.uint8))
    if normalize and out_dtype == torch.uint8:  # the mean rounded half up, exactly
        wide = sums.to(torch.float64)
        mean = torch.floor((wide * 2.0 + float(area)) / float(2 * area))
        return to_numpy(torch.clamp(mean, 0, 255).to(torch.uint8))
    if normalize:
        sums = sums * (1.0 / area if double else np.float32(1.0 / area))
    if out_dtype == torch.uint8:
        sums = torch.clamp(torch.floor(sums + 0.5), 0, 255).to(torch.uint8)
    return to_numpy(sums.to(out_dtype))


@replaces(
    "boxFilter",
    family="filters",
    dtypes=_DTYPES,
    channels=_CHANNELS,
    accuracy="uint8 exact (means rounded half up; power-of-two windows shifted like OpenCV 5: "
    "(sum + area/2 + 1) >> log2 area); float32 and float64 within 1e-5",
    arguments={
        "ksize": ("positive (w, h); not 2 pixels for uint8 means",),
        "ddepth": ("-1", "CV_32F", "CV_64F"),
        "normalize": ("True", "False"),
        "anchor": ("(-1, -1)", "any point in the kernel"),
        "borderType": _FILTER_BORDERS + ("BORDER_DEFAULT",),
    },
)
def boxFilter(
    src: np.ndarray,
    ddepth: int,
    ksize: Any,
    dst: Any = None,
    anchor: Any = (-1, -1),
    normalize: bool = True,
    borderType: int = 4,
) -> Any:
    """Traceable ``cv2.boxFilter`` (window sums, optionally divided by the window area);
    uint8 means reproduce OpenCV 5's rounding exactly."""
    no_dst("boxFilter", dst)
    return _box("boxFilter", src, ddepth, ksize, anchor, bool(normalize), borderType)


@replaces(
    "blur",
    family="filters",
    dtypes=_DTYPES,
    channels=_CHANNELS,
    accuracy="uint8 exact (as boxFilter); float32 and float64 within 1e-5",
    notes="uint8 windows of exactly 2 pixels are refused: OpenCV 5.0 returns mean + 1 there "
    "and 255 or 0 for two 255s depending on its SIMD lane.",
    arguments={
        "ksize": ("positive (w, h); not 2 pixels for uint8 means",),
        "anchor": ("(-1, -1)", "any point in the kernel"),
        "borderType": _FILTER_BORDERS + ("BORDER_DEFAULT",),
    },
)
def blur(
    src: np.ndarray,
    ksize: Any,
    dst: Any = None,
    anchor: Any = (-1, -1),
    borderType: int = 4,
) -> Any:
    """Traceable ``cv2.blur``: the normalised box filter, uint8 rounding as OpenCV 5 (exact)."""
    no_dst("blur", dst)
    return _box("blur", src, -1, ksize, anchor, True, borderType)


def _adaptive_methods() -> dict[int, str]:
    return {
        cv2.ADAPTIVE_THRESH_MEAN_C: "ADAPTIVE_THRESH_MEAN_C",
        cv2.ADAPTIVE_THRESH_GAUSSIAN_C: "ADAPTIVE_THRESH_GAUSSIAN_C",
    }


@replaces(
    "adaptiveThreshold",
    family="filters",
    dtypes=("uint8",),
    channels=(1,),
    accuracy="exact (the block means are those of boxFilter and GaussianBlur)",
    arguments={
        "adaptiveMethod": tuple(_adaptive_methods().values()),
        "thresholdType": ("THRESH_BINARY", "THRESH_BINARY_INV"),
        "blockSize": ("odd, at least 3",),
    },
    notes="OpenCV's steps: the block mean (a uint8 box filter, or a float32 Gaussian of "
    "sigma 0 rounded to uint8) with replicated borders, then src - mean compared with "
    "-ceil(C) (-floor(C) for THRESH_BINARY_INV).",
)
def adaptiveThreshold(
    src: np.ndarray,
    maxValue: float,
    adaptiveMethod: int,
    thresholdType: int,
    blockSize: int,
    C: float,
    dst: Any = None,
) -> Any:
    """Traceable ``cv2.adaptiveThreshold``: each pixel against the mean of its block."""
    no_dst("adaptiveThreshold", dst)
    t = as_tensor("adaptiveThreshold", src, ("uint8",), (1,))
    methods = _adaptive_methods()
    if adaptiveMethod not in methods:
        raise refuse(
            "adaptiveThreshold",
            "adaptiveMethod",
            constant_name(adaptiveMethod, "ADAPTIVE_"),
            ", ".join(methods.values()),
        )
    if thresholdType not in (cv2.THRESH_BINARY, cv2.THRESH_BINARY_INV):
        raise refuse(
            "adaptiveThreshold",
            "thresholdType",
            constant_name(thresholdType, "THRESH_"),
            "THRESH_BINARY, THRESH_BINARY_INV",
        )
    block = int(blockSize)
    if block % 2 != 1 or block <= 1:
        raise refuse("adaptiveThreshold", "blockSize", blockSize, "an odd size of at least 3")
    if maxValue < 0:  # OpenCV sets the whole result to 0
        return to_numpy(torch.zeros_like(t))
    replicate = cv2.BORDER_REPLICATE
    if adaptiveMethod == cv2.ADAPTIVE_THRESH_MEAN_C:
        mean = _box("adaptiveThreshold", src, -1, (block, block), (-1, -1), True, replicate)
        means = torch.from_numpy(mean).to(torch.int32)
    else:  # a float32 blur of the image, rounded back to uint8
        blurred = GaussianBlur(src.astype(np.float32), (block, block), 0, borderType=replicate)
        means = saturate(torch.from_numpy(blurred), torch.uint8).to(torch.int32)
    top = min(max(int(np.rint(maxValue)), 0), 255)
    binary = thresholdType == cv2.THRESH_BINARY
    bar = -int(np.ceil(C)) if binary else -int(np.floor(C))
    difference = t.to(torch.int32).reshape(means.shape) - means
    passed = difference > bar if binary else difference <= bar
    out = torch.where(passed, torch.full_like(means, top), torch.zeros_like(means))
    return to_numpy(out.to(torch.uint8))


@replaces(
    "medianBlur",
    family="filters",
    dtypes=("uint8", "uint16", "float32"),
    channels=(1, 2, 3, 4),
    accuracy="exact (a median selects an input value)",
    arguments={"ksize": ("3", "5")},
    notes="borders replicate the edge pixels, like OpenCV; larger apertures are refused.",
)
def medianBlur(src: np.ndarray, ksize: int, dst: Any = None) -> Any:
    """Traceable ``cv2.medianBlur`` for 3x3 and 5x5 apertures: the median of each window
    (edges replicated) by minima and maxima shared between neighbouring windows (exact)."""
    no_dst("medianBlur", dst)
    if ksize not in (3, 5):
        raise refuse("medianBlur", "ksize", ksize, "3 or 5")
    t = as_tensor("medianBlur", src, ("uint8", "uint16", "float32"), (1, 2, 3, 4))
    half = ksize // 2
    padded = pad(t, half, half, half, half, cv2.BORDER_REPLICATE)
    return to_numpy(median_of_window(padded, ksize, t.shape[0], t.shape[1]), src.dtype)


def _sobel_depths() -> dict[int, torch.dtype]:
    return {cv2.CV_16S: torch.int16, cv2.CV_32F: torch.float32, cv2.CV_64F: torch.float64}


@replaces(
    "Sobel",
    family="filters",
    dtypes=("uint8", "float32", "float64"),
    channels=(1, 2, 3, 4),
    accuracy="uint8 source to CV_16S: exact (integer sums, scale and delta in double); float "
    "outputs within 1e-5 of the data's magnitude (sums in double, OpenCV's in float32)",
    arguments={
        "ddepth": ("-1 (float src)", "CV_16S", "CV_32F", "CV_64F"),
        "ksize": ("1", "3", "5", "7", "-1 (Scharr)"),
        "borderType": _FILTER_BORDERS + ("BORDER_DEFAULT",),
    },
)
def Sobel(
    src: np.ndarray,
    ddepth: int,
    dx: int,
    dy: int,
    dst: Any = None,
    ksize: int = 3,
    scale: float = 1,
    delta: float = 0,
    borderType: int = 4,
) -> Any:
    """Traceable ``cv2.Sobel``: OpenCV's separable derivative kernels (cv2.getDerivKernels),
    OpenCV borders, then ``scale`` and ``delta``; exact for uint8 sources."""
    no_dst("Sobel", dst)
    border = _border("Sobel", borderType)
    t = as_tensor("Sobel", src, ("uint8", "float32", "float64"), (1, 2, 3, 4))
    depths = _sobel_depths()
    floating = t.dtype in (torch.float32, torch.float64)
    out_dtype = t.dtype if ddepth == -1 and floating else depths.get(ddepth)
    if t.dtype == torch.float64 and out_dtype != torch.float64:
        out_dtype = None  # OpenCV refuses a narrower result for double sources
    if out_dtype is None:
        raise refuse("Sobel", "ddepth", ddepth, "CV_16S, CV_32F, CV_64F (or -1 for float sources)")
    if ksize not in (-1, 1, 3, 5, 7):
        raise refuse("Sobel", "ksize", ksize, "-1 (Scharr), 1, 3, 5 or 7")
    if dx < 0 or dy < 0 or dx + dy == 0 or (ksize == -1 and (dx + dy != 1)):
        raise refuse("Sobel", "dx/dy", (dx, dy), "orders >= 0, not both 0 (Scharr: one 1)")
    if ksize > 1 and (dx >= ksize or dy >= ksize) or ksize == 1 and max(dx, dy) > 2:
        raise refuse("Sobel", "dx/dy", (dx, dy), "orders below ksize")
    kx, ky = cv2.getDerivKernels(dx, dy, ksize, normalize=False, ktype=cv2.CV_64F)
    kx, ky = kx.reshape(-1), ky.reshape(-1)
    anchor = (len(kx) // 2, len(ky) // 2)
    if t.dtype == torch.uint8 and 255 * np.abs(kx).sum() * np.abs(ky).sum() < 2**15:
        sums = integer_separable(t, kx.astype(np.int64), ky.astype(np.int64), anchor, border)
    elif t.dtype == torch.float64:  # double sources: double sums, as OpenCV's
        sums = _separable(t, kx, ky, anchor, border)
    else:  # integer kernels: uint8 sums stay below 2**24, exact in float32 (OpenCV's own
        # type for float32 sources)
        sums = _separable(
            t.to(torch.float32), kx.astype(np.float32), ky.astype(np.float32), anchor, border
        )
    if float(scale) != 1.0 or float(delta) != 0.0:
        sums = sums.to(torch.float64) * float(scale) + float(delta)
    if out_dtype == torch.int16 and sums.dtype != torch.int16:
        sums = torch.clamp(torch.round(sums), -32768, 32767)
    return to_numpy(sums.to(out_dtype))
