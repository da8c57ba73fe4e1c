"""Camera ISP and classic image-enhancement pipelines x backends.

New pipelines in the idioms of public code for a domain nobody tuned patchport to: a RAW
camera pipeline (black level subtracted and clipped, Bayer demosaic by
``cv2.cvtColor(COLOR_BayerBG2BGR)`` and by NumPy slicing of the four phases, gray-world
and white-patch white balance from per-channel means and percentiles, a 3x3
colour-correction matrix, sRGB gamma by an ``np.where`` piecewise curve and by a 256-entry
table through ``cv2.LUT`` and through ``table[img]``, Reinhard's global tone mapping with
the log-average luminance); dark-channel-prior dehazing (per-pixel channel minimum eroded
by ``cv2.erode``, the atmospheric light from the brightest dark-channel pixels by
``argsort``, the transmission, a guided filter by ``cv2.boxFilter``); single- and
multi-scale Retinex by ``np.log1p`` of ``cv2.GaussianBlur``; unsharp masking with
``cv2.addWeighted``; brightness / contrast / gamma / hue / saturation jitter as
augmentation libraries write it (HSV by ``cv2.cvtColor``, the hue wrapped with ``%``,
``np.clip`` and ``astype(np.uint8)``); skimage-style grey weights, ``img_as_float``,
``rescale_intensity`` and ``equalize_hist``; image metrics (PSNR, SSIM with a Gaussian
window); and a lane-detection front end (Sobel x threshold, HLS S-channel threshold, a
bird's-eye ``cv2.warpPerspective``, the lane bases as column-histogram peaks by
``np.argmax``). Each is traced once, exported and replayed on fresh inputs against the
plain code, classified as ``bench/real_pipelines.py`` classifies (its harness is reused).

Run: python bench/real_pipelines_isp.py [--variants] [--all-backends] [pipeline-name ...]
(onnx and pt2 by default; ``--all-backends`` adds jit; ``--variants`` runs one-line
changes of the data-dependent idioms instead, each of which must be right or loud.)
"""

from __future__ import annotations

import sys
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import real_pipelines as harness  # noqa: E402

harness.HERE = str(Path(__file__).resolve())  # the user's lines are in this file
P = harness.Pipeline

BLACK_LEVEL, WHITE_LEVEL = 64, 4095
CCM = np.array([[1.72, -0.55, -0.17], [-0.21, 1.49, -0.28], [0.03, -0.48, 1.45]], dtype=np.float32)


# ------------------------------------------------------------------ RAW pipeline
def raw_to_bgr(raw):
    """Black level out and clipped, scaled to 16 bits, demosaiced by OpenCV, to [0, 1]."""
    linear = np.clip(raw.astype(np.int32) - BLACK_LEVEL, 0, WHITE_LEVEL - BLACK_LEVEL)
    scaled = (linear * (65535.0 / (WHITE_LEVEL - BLACK_LEVEL))).astype(np.uint16)
    bgr = cv2.cvtColor(scaled, cv2.COLOR_BayerBG2BGR)
    return {"bgr": bgr.astype(np.float32) / 65535.0}


def raw_half_size(raw):
    """Half-size demosaic by slicing the RGGB phases, the two greens averaged."""
    img = (raw.astype(np.float32) - BLACK_LEVEL) / (WHITE_LEVEL - BLACK_LEVEL)
    img = np.clip(img, 0.0, 1.0)
    r = img[0::2, 0::2]
    g = (img[0::2, 1::2] + img[1::2, 0::2]) / 2
    b = img[1::2, 1::2]
    return {"rgb": np.stack([r, g, b], axis=-1)}


def gray_world(rgb):
    """Gray-world white balance: each channel scaled so its mean is the mean of means."""
    img = rgb.astype(np.float32)
    means = img.reshape(-1, 3).mean(axis=0)
    gains = means.mean() / means
    return {"out": np.clip(img * gains, 0, 255).astype(np.uint8), "gains": gains}


def white_patch(rgb):
    """White-patch balance: each channel divided by its 99th percentile."""
    img = rgb.astype(np.float32) / 255.0
    white = np.percentile(img, 99, axis=(0, 1))
    return {"out": np.clip(img / white, 0.0, 1.0)}


def ccm_srgb(linear):
    """Colour correction by a 3x3 matrix on the pixel rows, then the sRGB curve by np.where."""
    h, w, _ = linear.shape
    corrected = (linear.reshape(-1, 3) @ CCM.T).reshape(h, w, 3)
    corrected = np.clip(corrected, 0.0, 1.0)
    srgb = np.where(
        corrected <= 0.0031308,
        12.92 * corrected,
        1.055 * np.power(corrected, 1 / 2.4) - 0.055,
    )
    return {"srgb": (srgb * 255.0 + 0.5).astype(np.uint8)}


_GAMMA_TABLE = np.array([((i / 255.0) ** (1 / 2.2)) * 255 for i in range(256)]).astype(np.uint8)


def gamma_cv2_lut(bgr):
    """Display gamma through a 256-entry table by cv2.LUT."""
    return {"out": cv2.LUT(bgr, _GAMMA_TABLE)}


def gamma_table_index(bgr):
    """The same table applied by indexing it with the image."""
    return {"out": _GAMMA_TABLE[bgr]}


def reinhard(hdr):
    """Reinhard's global operator: key / log-average luminance, L / (1 + L), colour ratio."""
    lum = 0.2126 * hdr[..., 0] + 0.7152 * hdr[..., 1] + 0.0722 * hdr[..., 2]
    log_avg = np.exp(np.mean(np.log(1e-6 + lum)))
    scaled = 0.18 / log_avg * lum
    mapped = scaled / (1.0 + scaled)
    out = hdr * (mapped / (lum + 1e-6))[..., None]
    return {"ldr": np.clip(out, 0, 1).astype(np.float32)}


# ------------------------------------------------------------------ dehazing
def dark_channel(img, size=7):
    return cv2.erode(np.min(img, axis=2), cv2.getStructuringElement(cv2.MORPH_RECT, (size, size)))


def atmospheric_light(img, dark):
    """Mean colour of the brightest 0.1 % (at least one) dark-channel pixels."""
    h, w = dark.shape
    n = max(int(h * w * 0.001), 1)
    flat_dark = dark.reshape(h * w)
    flat_img = img.reshape(h * w, 3)
    indices = flat_dark.argsort()[h * w - n :]
    return flat_img[indices].mean(axis=0)


def guided_filter(guide, src, r, eps):
    mean_i = cv2.boxFilter(guide, cv2.CV_64F, (r, r))
    mean_p = cv2.boxFilter(src, cv2.CV_64F, (r, r))
    mean_ip = cv2.boxFilter(guide * src, cv2.CV_64F, (r, r))
    cov_ip = mean_ip - mean_i * mean_p
    var_i = cv2.boxFilter(guide * guide, cv2.CV_64F, (r, r)) - mean_i * mean_i
    a = cov_ip / (var_i + eps)
    b = mean_p - a * mean_i
    return cv2.boxFilter(a, cv2.CV_64F, (r, r)) * guide + cv2.boxFilter(b, cv2.CV_64F, (r, r))


def dehaze(hazy):
    """He et al.'s dark channel prior with the guided-filter refinement."""
    img = hazy.astype("float64") / 255
    dark = dark_channel(img)
    atmo = atmospheric_light(img, dark)
    transmission = 1 - 0.95 * dark_channel(img / atmo)
    gray = cv2.cvtColor(hazy, cv2.COLOR_BGR2GRAY).astype("float64") / 255
    refined = guided_filter(gray, transmission, 9, 1e-4)
    t = cv2.max(refined, 0.1)
    out = np.empty(img.shape, img.dtype)
    for c in range(3):
        out[:, :, c] = (img[:, :, c] - atmo[c]) / t + atmo[c]
    return {"out": np.clip(out, 0, 1), "t": t}


# ------------------------------------------------------------------ enhancement
def retinex(bgr):
    """Single- and multi-scale Retinex on log1p, the MSR stretched to uint8 by its min/max."""
    img = bgr.astype(np.float64) + 1.0
    ssr = np.log1p(img) - np.log1p(cv2.GaussianBlur(img, (0, 0), 15))
    msr = np.zeros_like(img)
    for sigma in (5, 15, 30):
        msr += np.log1p(img) - np.log1p(cv2.GaussianBlur(img, (0, 0), sigma))
    msr = msr / 3
    stretched = (msr - np.min(msr)) / (np.max(msr) - np.min(msr)) * 255
    return {"ssr": ssr, "msr": np.uint8(np.clip(stretched, 0, 255))}


def unsharp(bgr):
    """Unsharp masking: 1.5 x image - 0.5 x blur by cv2.addWeighted, uint8 saturating."""
    blurred = cv2.GaussianBlur(bgr, (0, 0), 2.0)
    sharp = cv2.addWeighted(bgr, 1.5, blurred, -0.5, 0)
    return {"sharp": sharp}


def brightness_contrast(rgb):
    """Augmentation-library brightness / contrast: alpha * img + beta * max, clipped."""
    alpha, beta = 1.3, 0.1
    img = rgb.astype(np.float32) * alpha
    img += beta * np.mean(img)  # beta_by_max=False: relative to the image mean
    return {"out": np.clip(img, 0, 255).astype(np.uint8)}


def gamma_jitter(rgb):
    """Gamma on uint8 through a power-of-a-ramp table, on floats by np.power."""
    gamma = 0.8
    table = (np.arange(0, 256.0 / 255, 1.0 / 255) ** gamma) * 255
    as_float = np.power(rgb.astype(np.float32) / 255.0, gamma)
    return {"u8": cv2.LUT(rgb, table.astype(np.uint8)), "f": as_float}


def hue_saturation(rgb):
    """Hue shift wrapped at 180 with %, saturation and value scaled, clipped, back to RGB."""
    hsv = cv2.cvtColor(rgb, cv2.COLOR_RGB2HSV)
    hue, sat, val = cv2.split(hsv)
    hue = ((hue.astype(np.int16) + 25) % 180).astype(np.uint8)
    sat = np.clip(sat.astype(np.float32) * 1.2, 0, 255).astype(np.uint8)
    val = np.clip(val.astype(np.float32) + 10, 0, 255).astype(np.uint8)
    return {"rgb": cv2.cvtColor(cv2.merge([hue, sat, val]), cv2.COLOR_HSV2RGB)}


def rgb2gray(rgb):
    """skimage's weights by a matrix product with the last axis."""
    return rgb @ np.array([0.2125, 0.7154, 0.0721], dtype=rgb.dtype)


def img_as_float(image):
    return image.astype(np.float64) / 255.0 if image.dtype == np.uint8 else image


def rescale_intensity(image, in_range, out_range=(0.0, 1.0)):
    imin, imax = in_range
    omin, omax = out_range
    image = np.clip(image, imin, imax)
    image = (image - imin) / (imax - imin)
    return image * (omax - omin) + omin


def equalize_hist(image, nbins=256):
    """skimage's equalize_hist: histogram, normalised CDF, np.interp at the image."""
    hist, bin_edges = np.histogram(image.ravel(), bins=nbins, range=(0.0, 1.0))
    centers = (bin_edges[:-1] + bin_edges[1:]) / 2
    cdf = hist.cumsum()
    cdf = cdf / float(cdf[-1])
    return np.interp(image.flat, centers, cdf).reshape(image.shape)


def skimage_exposure(rgb):
    """Grey, float, 2-98 % contrast stretch, histogram equalisation."""
    gray = rgb2gray(img_as_float(rgb))
    p2, p98 = np.percentile(gray, (2, 98))
    stretched = rescale_intensity(gray, in_range=(p2, p98))
    return {"stretched": stretched, "equalized": equalize_hist(stretched)}


# ------------------------------------------------------------------ metrics
def psnr(reference, distorted):
    """PSNR in dB from the mean squared error of the uint8 images."""
    mse = np.mean((reference.astype(np.float64) - distorted.astype(np.float64)) ** 2)
    return {"psnr": np.array([20 * np.log10(255.0 / np.sqrt(mse))], dtype=np.float32)}


def _gaussian_window(size=11, sigma=1.5):
    coords = np.arange(size, dtype=np.float64) - size // 2
    g = np.exp(-(coords**2) / (2 * sigma**2))
    g /= g.sum()
    return np.outer(g, g)


def ssim(reference, distorted):
    """SSIM of two grey images with an 11x11 Gaussian window (valid region), its mean."""
    c1, c2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2
    x = reference.astype(np.float64)
    y = distorted.astype(np.float64)
    window = _gaussian_window()
    mu_x = cv2.filter2D(x, -1, window)[5:-5, 5:-5]
    mu_y = cv2.filter2D(y, -1, window)[5:-5, 5:-5]
    sxx = cv2.filter2D(x**2, -1, window)[5:-5, 5:-5] - mu_x**2
    syy = cv2.filter2D(y**2, -1, window)[5:-5, 5:-5] - mu_y**2
    sxy = cv2.filter2D(x * y, -1, window)[5:-5, 5:-5] - mu_x * mu_y
    ssim_map = ((2 * mu_x * mu_y + c1) * (2 * sxy + c2)) / (
        (mu_x**2 + mu_y**2 + c1) * (sxx + syy + c2)
    )
    return {"map": ssim_map, "ssim": np.array([ssim_map.mean()])}


# ------------------------------------------------------------------ lane front end
_SRC = np.float32([[12, 47], [26, 28], [38, 28], [52, 47]])
_DST = np.float32([[16, 47], [16, 0], [48, 0], [48, 47]])
_M = cv2.getPerspectiveTransform(_SRC, _DST)


def lane_binary(rgb):
    """Sobel-x magnitude scaled by its max and thresholded, OR an HLS S-channel threshold."""
    gray = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
    sobelx = cv2.Sobel(gray, cv2.CV_64F, 1, 0, ksize=3)
    abs_sobel = np.absolute(sobelx)
    scaled = np.uint8(255 * abs_sobel / np.max(abs_sobel))
    sx_binary = np.zeros_like(scaled)
    sx_binary[(scaled >= 40) & (scaled <= 255)] = 1
    s_channel = cv2.cvtColor(rgb, cv2.COLOR_RGB2HLS)[:, :, 2]
    s_binary = np.zeros_like(s_channel)
    s_binary[(s_channel >= 120) & (s_channel <= 255)] = 1
    combined = np.zeros_like(sx_binary)
    combined[(s_binary == 1) | (sx_binary == 1)] = 1
    return combined


def lane_frontend(rgb):
    """Binary, bird's-eye warp, column histogram of the lower half, the two lane bases."""
    binary = lane_binary(rgb)
    warped = cv2.warpPerspective(binary, _M, (64, 48), flags=cv2.INTER_LINEAR)
    histogram = np.sum(warped[warped.shape[0] // 2 :, :], axis=0)
    midpoint = np.int32(histogram.shape[0] // 2)
    leftx_base = np.argmax(histogram[:midpoint])
    rightx_base = np.argmax(histogram[midpoint:]) + midpoint
    return {"warped": warped, "bases": np.array([leftx_base, rightx_base])}


# ------------------------------------------------------------------ inputs
def _image(r, h=48, w=64):
    return harness._image(r, h, w)


def _raw(r, h=48, w=64):
    """12-bit RGGB mosaic of a smooth scene with a black level of 64 and noise below it."""
    scene = _image(r, h, w).astype(np.float32) / 255.0
    raw = np.empty((h, w), np.float32)
    raw[0::2, 0::2] = scene[0::2, 0::2, 2]
    raw[0::2, 1::2] = scene[0::2, 1::2, 1]
    raw[1::2, 0::2] = scene[1::2, 0::2, 1]
    raw[1::2, 1::2] = scene[1::2, 1::2, 0]
    raw = BLACK_LEVEL + raw * 3900 + r.normal(0, 20, size=(h, w))
    return np.clip(raw, 0, WHITE_LEVEL).astype(np.uint16)


def _linear(r):
    return (_image(r).astype(np.float32) / 255.0) ** 2.2


def _hdr(r):
    return (np.exp(r.normal(0, 1.2, size=(48, 64, 1))) * _linear(r)).astype(np.float32)


def _hazy(r):
    img = _image(r).astype(np.float32)
    airlight = r.uniform(180, 240, size=3)
    t = r.uniform(0.3, 0.8)
    return np.clip(img * t + airlight * (1 - t), 0, 255).astype(np.uint8)


def _pair(r):
    ref = _image(r)
    noisy = ref.astype(np.int16) + r.integers(-20, 21, size=ref.shape)
    return {"reference": ref, "distorted": np.clip(noisy, 0, 255).astype(np.uint8)}


def _gray_pair(r):
    pair = _pair(r)
    return {k: cv2.cvtColor(v, cv2.COLOR_BGR2GRAY) for k, v in pair.items()}


def _road(r):
    """A dark road with two bright lane stripes at random offsets, noise on top."""
    img = np.full((48, 64, 3), 60, np.float32) + r.normal(0, 8, size=(48, 64, 3))
    for x0 in (r.integers(14, 24), r.integers(40, 50)):
        img[:, x0 : x0 + 3] = (220, 200, 40)
    return np.clip(img, 0, 255).astype(np.uint8)


_RGB = lambda r: {"rgb": _image(r)}  # noqa: E731
_BGR = lambda r: {"bgr": _image(r)}  # noqa: E731

PIPELINES = [
    P("raw_to_bgr", raw_to_bgr, lambda r: {"raw": _raw(r)}),
    P("raw_half_size", raw_half_size, lambda r: {"raw": _raw(r)}),
    P("gray_world", gray_world, _RGB),
    P("white_patch", white_patch, _RGB),
    P("ccm_srgb", ccm_srgb, lambda r: {"linear": _linear(r)}),
    P("gamma_cv2_lut", gamma_cv2_lut, _BGR),
    P("gamma_table_index", gamma_table_index, _BGR),
    P("reinhard", reinhard, lambda r: {"hdr": _hdr(r)}),
    P("dehaze", dehaze, lambda r: {"hazy": _hazy(r)}),
    P("retinex", retinex, _BGR),
    P("unsharp", unsharp, _BGR),
    P("brightness_contrast", brightness_contrast, _RGB),
    P("gamma_jitter", gamma_jitter, _RGB),
    P("hue_saturation", hue_saturation, _RGB),
    P("skimage_exposure", skimage_exposure, _RGB),
    P("psnr", psnr, _pair),
    P("ssim", ssim, _gray_pair),
    P("lane_frontend", lane_frontend, lambda r: {"rgb": _road(r)}),
]


# ------------------------------------------------------------------ one-line variants
def gray_world_axis_tuple(rgb):
    """Channel means by mean(axis=(0, 1)) and the gains from np.mean of them."""
    img = rgb.astype(np.float32)
    avg = img.mean(axis=(0, 1))
    return {"out": np.clip(img * (np.mean(avg) / avg), 0, 255).astype(np.uint8)}


def gray_world_split(rgb):
    """Channel means by cv2.split and Python floats of np.mean each (the loop variant)."""
    b, g, r = cv2.split(rgb.astype(np.float32))
    k = (np.mean(b) + np.mean(g) + np.mean(r)) / 3
    return {"out": cv2.merge([b * (k / np.mean(b)), g * (k / np.mean(g)), r * (k / np.mean(r))])}


def white_patch_max(rgb):
    """White patch as the per-channel maximum, by np.max over the pixel rows."""
    img = rgb.astype(np.float32)
    return {"out": img / img.reshape(-1, 3).max(axis=0)}


def white_patch_quantile(rgb):
    """White patch by np.quantile of each channel in a list comprehension."""
    img = rgb.astype(np.float32) / 255.0
    white = np.array([np.quantile(img[..., c], 0.98) for c in range(3)])
    return {"out": np.minimum(img / white, 1.0)}


def ccm_einsum(linear):
    """Colour correction by np.einsum over the channel axis."""
    return {"out": np.einsum("ij,hwj->hwi", CCM, linear)}


def ccm_dot(linear):
    """Colour correction by np.dot of the image with the transposed matrix."""
    return {"out": np.clip(np.dot(linear, CCM.T), 0, 1)}


def srgb_lut_float(linear):
    """sRGB by quantising to 0..255 and indexing a float table (a traced index)."""
    x = np.linspace(0, 1, 256)
    table = np.where(x <= 0.0031308, 12.92 * x, 1.055 * x ** (1 / 2.4) - 0.055)
    return {"out": table[np.round(linear * 255).astype(np.int64)]}


def atmo_argpartition(hazy):
    """Atmospheric light from the top dark-channel pixels found by np.argpartition."""
    img = hazy.astype(np.float64) / 255
    dark = dark_channel(img).ravel()
    top = np.argpartition(dark, -4)[-4:]
    return {"atmo": img.reshape(-1, 3)[top].max(axis=0)}


def atmo_brightest_by_sum(hazy):
    """Atmospheric light as the brightest (sum of channels) pixel among the top dark ones."""
    img = hazy.astype(np.float64) / 255
    dark = dark_channel(img).ravel()
    candidates = img.reshape(-1, 3)[np.argsort(-dark)[:8]]
    return {"atmo": candidates[np.argmax(candidates.sum(axis=1))]}


def equalize_bincount(gray):
    """Histogram equalisation by np.bincount, cumsum and the CDF as a uint8 table."""
    hist = np.bincount(gray.ravel(), minlength=256)
    cdf = hist.cumsum()
    cdf_min = cdf[cdf > 0].min()
    table = np.round((cdf - cdf_min) / (gray.size - cdf_min) * 255).astype(np.uint8)
    return {"eq": table[gray]}


def rescale_image_range(rgb):
    """rescale_intensity's in_range='image': the image's own min and max."""
    img = img_as_float(rgb)
    return {"out": rescale_intensity(img, in_range=(img.min(), img.max()))}


def retinex_per_channel_stretch(bgr):
    """Retinex stretched channel by channel with min/max over axis (0, 1)."""
    img = bgr.astype(np.float32) + 1.0
    r = np.log(img) - np.log(cv2.GaussianBlur(img, (0, 0), 10))
    lo, hi = r.min(axis=(0, 1)), r.max(axis=(0, 1))
    return {"out": ((r - lo) / (hi - lo) * 255).astype(np.uint8)}


def contrast_convert_scale_abs(rgb):
    """Contrast and brightness by cv2.convertScaleAbs with the mean as beta."""
    return {"out": cv2.convertScaleAbs(rgb, alpha=1.2, beta=-0.2 * float(rgb.mean()))}


def hue_np_mod(rgb):
    """Hue wrapped with np.mod on the float HSV image, written back into channel 0."""
    hsv = cv2.cvtColor(rgb, cv2.COLOR_RGB2HSV).astype(np.float32)
    hsv[..., 0] = np.mod(hsv[..., 0] + 100, 180)
    hsv[..., 1] = np.clip(hsv[..., 1] * 0.7, 0, 255)
    return {"rgb": cv2.cvtColor(hsv.astype(np.uint8), cv2.COLOR_HSV2RGB)}


def psnr_mse_guard(reference, distorted):
    """PSNR with an `if mse == 0` guard and 10 * log10(255**2 / mse)."""
    mse = np.mean((reference / 1.0 - distorted / 1.0) ** 2)
    if mse == 0:
        return {"psnr": np.array([100.0])}
    return {"psnr": np.array([10 * np.log10(255.0**2 / mse)])}


def ssim_gaussian_blur(reference, distorted):
    """SSIM with cv2.GaussianBlur as the window, full map averaged."""
    x, y = reference.astype(np.float32), distorted.astype(np.float32)
    mx, my = cv2.GaussianBlur(x, (11, 11), 1.5), cv2.GaussianBlur(y, (11, 11), 1.5)
    vx = cv2.GaussianBlur(x * x, (11, 11), 1.5) - mx * mx
    vy = cv2.GaussianBlur(y * y, (11, 11), 1.5) - my * my
    cxy = cv2.GaussianBlur(x * y, (11, 11), 1.5) - mx * my
    c1, c2 = 6.5025, 58.5225
    s = ((2 * mx * my + c1) * (2 * cxy + c2)) / ((mx * mx + my * my + c1) * (vx + vy + c2))
    return {"ssim": np.array([s.mean()], np.float32)}


def lane_midpoint_int(rgb):
    """Lane bases with a Python int midpoint and the peaks as Python ints in a list."""
    warped = cv2.warpPerspective(lane_binary(rgb), _M, (64, 48))
    histogram = warped[24:, :].sum(axis=0)
    midpoint = int(histogram.shape[0] / 2)
    return {"bases": np.array([histogram[:midpoint].argmax(), histogram[midpoint:].argmax()])}


def lane_nonzero_pixels(rgb):
    """Lane pixels of the warped binary by .nonzero() (as many as there are)."""
    warped = cv2.warpPerspective(lane_binary(rgb), _M, (64, 48))
    nonzeroy, nonzerox = warped.nonzero()
    return {"x": np.array(nonzerox), "y": np.array(nonzeroy)}


def demosaic_dstack(raw):
    """Half-size demosaic stacked by np.dstack with the greens as np.mean of a list."""
    img = np.clip(raw.astype(np.float32) - BLACK_LEVEL, 0, None) / (WHITE_LEVEL - BLACK_LEVEL)
    g = np.mean([img[::2, 1::2], img[1::2, ::2]], axis=0)
    return {"rgb": np.dstack((img[::2, ::2], g, img[1::2, 1::2]))}


def black_level_inplace(raw):
    """Black level subtracted in place on a float copy, negatives zeroed by a masked write."""
    img = raw.astype(np.float32)
    img -= BLACK_LEVEL
    img[img < 0] = 0
    img /= img.max()
    return {"img": img}


def reinhard_extended(hdr):
    """Reinhard's extended operator with the white point as the image's max luminance."""
    lum = np.dot(hdr, [0.2126, 0.7152, 0.0722])
    l_white = lum.max()
    mapped = lum * (1 + lum / l_white**2) / (1 + lum)
    return {"out": hdr * (mapped / np.maximum(lum, 1e-6))[:, :, np.newaxis]}


_GRAY = lambda r: {"gray": cv2.cvtColor(_image(r), cv2.COLOR_BGR2GRAY)}  # noqa: E731
_HAZY = lambda r: {"hazy": _hazy(r)}  # noqa: E731
_LIN = lambda r: {"linear": _linear(r)}  # noqa: E731

VARIANTS = [
    P("gray_world_axis_tuple", gray_world_axis_tuple, _RGB),
    P("gray_world_split", gray_world_split, _RGB),
    P("white_patch_max", white_patch_max, _RGB),
    P("white_patch_quantile", white_patch_quantile, _RGB),
    P("ccm_einsum", ccm_einsum, _LIN),
    P("ccm_dot", ccm_dot, _LIN),
    P("srgb_lut_float", srgb_lut_float, _LIN),
    P("atmo_argpartition", atmo_argpartition, _HAZY),
    P("atmo_brightest_by_sum", atmo_brightest_by_sum, _HAZY),
    P("equalize_bincount", equalize_bincount, _GRAY),
    P("rescale_image_range", rescale_image_range, _RGB),
    P("retinex_per_channel_stretch", retinex_per_channel_stretch, _BGR),
    P("contrast_convert_scale_abs", contrast_convert_scale_abs, _RGB),
    P("hue_np_mod", hue_np_mod, _RGB),
    P("psnr_mse_guard", psnr_mse_guard, _pair),
    P("ssim_gaussian_blur", ssim_gaussian_blur, _gray_pair),
    P("lane_midpoint_int", lane_midpoint_int, lambda r: {"rgb": _road(r)}),
    P("lane_nonzero_pixels", lane_nonzero_pixels, lambda r: {"rgb": _road(r)}),
    P("demosaic_dstack", demosaic_dstack, lambda r: {"raw": _raw(r)}),
    P("black_level_inplace", black_level_inplace, lambda r: {"raw": _raw(r)}),
    P("reinhard_extended", reinhard_extended, lambda r: {"hdr": _hdr(r)}),
]


def main(names: list[str]) -> dict[str, dict[str, int]]:
    return harness.run_probe(names, PIPELINES, VARIANTS, "isp")


if __name__ == "__main__":
    main(sys.argv[1:])
