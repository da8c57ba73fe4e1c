"""Imaging pipelines from medical, remote-sensing, OCR and microscopy code x backends.

New pipelines in the idioms of public projects in domains the other probes do not cover
(nobody tuned patchport to them): MONAI-style intensity transforms (a fixed window with
``ScaleIntensityRange``, ``NormalizeIntensity`` over the non-zero voxels channel by
channel, percentile clipping, ``ResizeWithPadOrCrop``, an orientation flip, sliding-window
patches through a small 3-D network), nnU-Net's CT normalisation (clip to dataset
percentiles, z-score) and per-case z-score, a torchio-style ``RescaleIntensity`` with
percentile cut-offs; remote sensing (band stacking, NDVI / NDWI under ``np.errstate``
with ``np.divide(where=...)``, a cloud mask, a 2%-98% stretch to uint8, tiling with
reshape / swapaxes into a tile classifier); OCR (a recogniser's resize to a fixed height
keeping the ratio plus right padding and ``(x / 255 - 0.5) / 0.5``, a CRNN head and CTC
greedy decoding with argmax and a shifted comparison, a DB detector's resize to a multiple
of 32 and its probability-map binarisation, document binarisation with Otsu and adaptive
thresholds); microscopy (background subtraction with a wide Gaussian blur, flat-field
correction, per-channel min-max after ``np.log1p``, histogram equalisation with
``np.histogram`` / ``cumsum`` / ``np.interp``). Each is traced once, exported with every
backend and replayed on fresh inputs against the plain code, classified as
``bench/real_pipelines.py`` classifies (its harness is reused).

Run: python bench/real_pipelines_imaging.py [pipeline-name ...]; with ``--variants``, the
one-line variants of the data-dependent idioms (each must be right or loud, never silent).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import cv2
import numpy as np
import torch
import torch.nn.functional as F
from numpy.lib.stride_tricks import sliding_window_view

sys.path.insert(0, str(Path(__file__).resolve().parent))
import real_pipelines as harness  # noqa: E402

harness.HERE = str(Path(__file__).resolve())  # the user's lines are in this file
torch.manual_seed(0)
P = harness.Pipeline


# ------------------------------------------------------------- medical: MONAI transforms
class ScaleIntensityRange:
    """Map [a_min, a_max] linearly onto [b_min, b_max], optionally clipped (a CT window)."""

    def __init__(self, a_min, a_max, b_min=0.0, b_max=1.0, clip=False, dtype=np.float32):
        self.a_min, self.a_max, self.b_min, self.b_max = a_min, a_max, b_min, b_max
        self.clip, self.dtype = clip, dtype

    def __call__(self, img):
        if self.a_max - self.a_min == 0.0:
            return img - self.a_min if self.b_min is None else img - self.a_min + self.b_min
        img = (img - self.a_min) / (self.a_max - self.a_min)
        if self.b_min is not None and self.b_max is not None:
            img = img * (self.b_max - self.b_min) + self.b_min
        if self.clip:
            img = np.clip(img, self.b_min, self.b_max)
        return img.astype(self.dtype)


class NormalizeIntensity:
    """Z-score each channel over its non-zero voxels only (brain MRI: the background stays 0)."""

    def __init__(self, nonzero=True, channel_wise=True):
        self.nonzero, self.channel_wise = nonzero, channel_wise

    def _normalize(self, img):
        img = img.astype(np.float32)
        slices = img != 0 if self.nonzero else np.ones(img.shape, dtype=bool)
        masked = np.where(slices, img, 0.0)
        count = np.maximum(slices.sum(), 1)
        mean = masked.sum() / count
        var = (np.where(slices, img - mean, 0.0) ** 2).sum() / count
        std = np.sqrt(var)
        std = np.where(std == 0.0, 1.0, std)
        return np.where(slices, (img - mean) / std, img).astype(np.float32)

    def __call__(self, img):
        if self.channel_wise:
            return np.stack([self._normalize(img[c]) for c in range(img.shape[0])])
        return self._normalize(img)


def resize_with_pad_or_crop(img, spatial_size):
    """Symmetric centre crop or constant pad of each spatial axis to ``spatial_size``."""
    for axis, target in enumerate(spatial_size, start=1):
        size = img.shape[axis]
        if size > target:
            start = (size - target) // 2
            img = np.take(img, np.arange(start, start + target), axis=axis)
        elif size < target:
            before = (target - size) // 2
            widths = [(0, 0)] * img.ndim
            widths[axis] = (before, target - size - before)
            img = np.pad(img, widths, mode="constant")
    return img


_SEG_NET = torch.nn.Sequential(
    torch.nn.Conv3d(1, 4, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv3d(4, 2, 1)
).eval()


def monai_ct_window(ct):
    """CT preprocessing: HU window to [0, 1], orientation flip, pad/crop, a tiny 3-D U-Net."""
    img = ScaleIntensityRange(a_min=-1000, a_max=400, b_min=0.0, b_max=1.0, clip=True)(ct)
    img = img[None]  # EnsureChannelFirst
    img = np.flip(img, axis=1)  # Orientation: reverse the first spatial axis
    img = resize_with_pad_or_crop(img, (12, 20, 20))
    with torch.no_grad():
        logits = _SEG_NET(torch.as_tensor(np.ascontiguousarray(img))[None])
    probs = torch.softmax(logits, dim=1)
    return {"image": img, "mask": probs.argmax(1).to(torch.uint8).numpy()}


def monai_mri_nonzero(mri):
    """Brain MRI: z-score each modality over its foreground voxels, background kept at 0."""
    return {"image": NormalizeIntensity(nonzero=True, channel_wise=True)(mri)}


def percentile_clip_resize(volume):
    """ScaleIntensityRangePercentiles(1, 99) then a trilinear resize to a fixed grid."""
    lower, upper = np.percentile(volume, [1, 99])
    scaled = (volume - lower) / (upper - lower)
    scaled = np.clip(scaled, 0.0, 1.0).astype(np.float32)
    t = torch.from_numpy(scaled)[None, None]
    resized = F.interpolate(t, size=(8, 16, 16), mode="trilinear", align_corners=False)
    return {"image": resized[0].numpy()}


def sliding_window_patches(volume):
    """Sliding-window inference: non-overlapping 8^3 patches, a network, stitched back."""
    d, h, w = volume.shape
    p = 8
    patches = volume.reshape(d // p, p, h // p, p, w // p, p).transpose(0, 2, 4, 1, 3, 5)
    batch = patches.reshape(-1, 1, p, p, p).astype(np.float32)
    with torch.no_grad():
        out = _SEG_NET(torch.from_numpy(batch))[:, 1:]
    out = out.numpy().reshape(d // p, h // p, w // p, p, p, p).transpose(0, 3, 1, 4, 2, 5)
    return {"prob": out.reshape(d, h, w)}


# nnU-Net's dataset fingerprint for one CT channel (computed offline over the training set)
_CT_PROPS = {"percentile_00_5": -958.0, "percentile_99_5": 1200.0, "mean": 85.3, "std": 310.7}


def nnunet_ct_normalization(image):
    """CTNormalization: clip to the dataset percentiles, z-score with the dataset stats."""
    lower, upper = _CT_PROPS["percentile_00_5"], _CT_PROPS["percentile_99_5"]
    image = image.astype(np.float32, copy=False)
    np.clip(image, lower, upper, out=image)
    image -= _CT_PROPS["mean"]
    image /= max(_CT_PROPS["std"], 1e-8)
    return {"image": image}


def nnunet_zscore(image):
    """ZScoreNormalization without a mask: per-case mean and std (a floor on the std)."""
    image = image.astype(np.float32, copy=False)
    mean = image.mean()
    std = image.std()
    image -= mean
    image /= max(std, 1e-8)
    return {"image": image}


def torchio_rescale(volume):
    """RescaleIntensity(out_min_max=(-1, 1), percentiles=(0.5, 99.5)) of a 4-D tensor."""
    tensor = torch.as_tensor(volume, dtype=torch.float32)
    array = tensor.numpy()
    cutoff = np.percentile(array, (0.5, 99.5))
    np.clip(array, *cutoff, out=array)
    in_min, in_max = array.min(), array.max()
    in_range = in_max - in_min
    array -= in_min
    array /= in_range
    out_range = 1.0 - (-1.0)
    array *= out_range
    array += -1.0
    return {"image": torch.as_tensor(array).numpy()}


# -------------------------------------------------------------------- remote sensing
def spectral_indices(blue, green, red, nir):
    """Band stack, NDVI / NDWI with a safe division, a brightness cloud mask."""
    stack = np.stack([blue, green, red, nir], axis=0).astype(np.float32) / 10000.0
    b, g, r, n = stack
    with np.errstate(divide="ignore", invalid="ignore"):
        ndvi = np.divide(n - r, n + r, out=np.zeros_like(n), where=(n + r) != 0)
        ndwi = np.divide(g - n, g + n, out=np.zeros_like(g), where=(g + n) != 0)
    cloud = (b > 0.25) & (g > 0.25) & (r > 0.25)
    ndvi = np.where(cloud, np.nan, ndvi)
    return {"ndvi": ndvi, "ndwi": ndwi, "cloud": cloud.astype(np.uint8)}


def percentile_stretch(rgb16):
    """Display stretch of a uint16 scene: per band 2%-98% percentiles to 0..255 uint8."""
    out = np.zeros(rgb16.shape, dtype=np.uint8)
    for i in range(rgb16.shape[2]):
        band = rgb16[:, :, i].astype(np.float32)
        p2, p98 = np.percentile(band, (2, 98))
        stretched = (band - p2) / (p98 - p2) * 255.0
        out[:, :, i] = np.clip(stretched, 0, 255).astype(np.uint8)
    return {"rgb": out}


_TILE_NET = torch.nn.Sequential(
    torch.nn.Conv2d(4, 8, 3, padding=1),
    torch.nn.ReLU(),
    torch.nn.AdaptiveAvgPool2d(1),
    torch.nn.Flatten(),
    torch.nn.Linear(8, 3),
).eval()


def scene_tiles(scene):
    """Cut a (H, W, C) scene into 16x16 tiles with reshape/swapaxes, classify each tile."""
    tile = 16
    h, w, c = scene.shape
    tiles = scene.reshape(h // tile, tile, w // tile, tile, c).swapaxes(1, 2)
    tiles = tiles.reshape(-1, tile, tile, c)
    x = torch.from_numpy(np.ascontiguousarray(tiles.transpose(0, 3, 1, 2))).float()
    x = (x - x.mean(dim=(2, 3), keepdim=True)) / (x.std(dim=(2, 3), keepdim=True) + 1e-6)
    with torch.no_grad():
        scores = _TILE_NET(x).softmax(-1)
    return {"scores": scores.numpy().reshape(h // tile, w // tile, 3)}


# ---------------------------------------------------------------------------- OCR
_CRNN = torch.nn.Sequential(
    torch.nn.Conv2d(3, 8, 3, padding=1),
    torch.nn.ReLU(),
    torch.nn.MaxPool2d((32, 4)),
).eval()
_CRNN_HEAD = torch.nn.Linear(8, 11).eval()  # 10 characters and the CTC blank (0)


def rec_resize_norm(img, image_shape=(3, 32, 100)):
    """Recogniser input: resize to height 32 keeping the ratio, [-1, 1], pad on the right."""
    img_c, img_h, img_w = image_shape
    h, w = img.shape[:2]
    ratio = w / float(h)
    resized_w = img_w if math.ceil(img_h * ratio) > img_w else int(math.ceil(img_h * ratio))
    resized = cv2.resize(img, (resized_w, img_h)).astype("float32")
    resized = resized.transpose((2, 0, 1)) / 255
    resized -= 0.5
    resized /= 0.5
    padding_im = np.zeros((img_c, img_h, img_w), dtype=np.float32)
    padding_im[:, :, 0:resized_w] = resized
    return padding_im


def ctc_greedy(preds):
    """CTC greedy decoding: argmax per step, drop repeats and blanks (a kept-mask)."""
    preds_idx = preds.argmax(axis=2)
    preds_prob = preds.max(axis=2)
    selection = np.ones(preds_idx.shape, dtype=bool)
    selection[:, 1:] = preds_idx[:, 1:] != preds_idx[:, :-1]
    selection &= preds_idx != 0
    return preds_idx, preds_prob, selection


def ocr_recognition(crop):
    """Text-line recognition: normalise, CRNN, CTC greedy decode, mean confidence."""
    x = rec_resize_norm(crop)[None]
    with torch.no_grad():
        feats = _CRNN(torch.from_numpy(x)).squeeze(2).permute(0, 2, 1)
        preds = _CRNN_HEAD(feats).softmax(-1).numpy()
    idx, prob, keep = ctc_greedy(preds)
    conf = np.where(keep, prob, 0.0).sum(axis=1) / np.maximum(keep.sum(axis=1), 1)
    return {"index": idx, "keep": keep, "conf": conf.astype(np.float32)}


_DB_NET = torch.nn.Sequential(torch.nn.Conv2d(3, 1, 3, padding=1), torch.nn.Sigmoid()).eval()


def db_detector(img, limit_side_len=64):
    """DB text detector: limit the long side, round each side to a multiple of 32,
    normalise with ImageNet stats, a probability map and its binarisation."""
    h, w = img.shape[:2]
    ratio = float(limit_side_len) / max(h, w) if max(h, w) > limit_side_len else 1.0
    resize_h = max(int(round(int(h * ratio) / 32) * 32), 32)
    resize_w = max(int(round(int(w * ratio) / 32) * 32), 32)
    img = cv2.resize(img, (int(resize_w), int(resize_h)))
    mean = np.array([0.485, 0.456, 0.406]).reshape((1, 1, 3)).astype("float32")
    std = np.array([0.229, 0.224, 0.225]).reshape((1, 1, 3)).astype("float32")
    img = (img.astype("float32") * (1.0 / 255.0) - mean) / std
    x = torch.from_numpy(img.transpose((2, 0, 1)).copy())[None]
    with torch.no_grad():
        prob = _DB_NET(x)[0, 0].numpy()
    segmentation = prob > 0.3
    return {"prob": prob, "bitmap": (segmentation * 255).astype(np.uint8)}


def document_binarize(page):
    """Scanned page clean-up: grey, global Otsu, local adaptive threshold, their AND."""
    gray = cv2.cvtColor(page, cv2.COLOR_BGR2GRAY)
    blur = cv2.GaussianBlur(gray, (3, 3), 0)
    _, otsu = cv2.threshold(blur, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    local = cv2.adaptiveThreshold(
        gray, 255, cv2.ADAPTIVE_THRESH_GAUSSIAN_C, cv2.THRESH_BINARY, 11, 2
    )
    return {"otsu": otsu, "local": local, "both": cv2.bitwise_and(otsu, local)}


# ---------------------------------------------------------------- microscopy / science
def background_flatfield(raw, flat, dark):
    """Flat-field correction, then rolling-background removal with a wide Gaussian blur."""
    raw, flat, dark = (a.astype(np.float32) / 65535.0 for a in (raw, flat, dark))  # as float
    gain = flat - dark
    corrected = (raw - dark) / np.maximum(gain, 1e-6) * gain.mean()
    background = cv2.GaussianBlur(corrected, (0, 0), sigmaX=6)
    return {"signal": np.clip(corrected - background, 0, None)}


def log_minmax_channels(stack):
    """Fluorescence channels: log1p, then min-max per channel to [0, 1] (channels last)."""
    logged = np.log1p(stack.astype(np.float32))
    lo = logged.min(axis=(0, 1), keepdims=True)
    hi = logged.max(axis=(0, 1), keepdims=True)
    return {"image": (logged - lo) / (hi - lo + 1e-8)}


def histogram_equalize(img):
    """Histogram equalisation with NumPy: histogram, normalised CDF, np.interp lookup."""
    hist, bins = np.histogram(img.flatten(), 256, [0, 256])
    cdf = hist.cumsum()
    cdf_normalized = cdf * 255.0 / cdf[-1]
    equalized = np.interp(img.flatten(), bins[:-1], cdf_normalized)
    return {"image": equalized.reshape(img.shape).astype(np.uint8)}


# --------------------------------------------------------------------------- inputs
def _volume(r, shape=(10, 24, 18), lo=-1200, hi=1600):
    if len(shape) == 4:  # channels first
        return np.stack([_volume(r, shape[1:], lo, hi) for _ in range(shape[0])])
    base = r.uniform(lo, hi, size=tuple(max(s // 4, 1) for s in shape))
    t = torch.from_numpy(base)[None, None]
    big = F.interpolate(t, size=shape, mode="trilinear", align_corners=False)[0, 0].numpy()
    return (big + r.normal(0, 30, size=shape)).astype(np.float32)


def _mri(r):
    vol = np.abs(_volume(r, (2, 8, 16, 16), 0, 800))
    vol[:, :, :3] = 0.0  # background outside the head
    vol[:, :, :, -4:] = 0.0
    return vol


def _body(r):
    """A CT volume whose body (above 0 HU) fills a box of random extent in air (-1000)."""
    vol = np.full((10, 24, 18), -1000.0, dtype=np.float32)
    lo = r.integers(0, 4, size=3)
    hi = np.array(vol.shape) - r.integers(0, 4, size=3)
    vol[lo[0] : hi[0], lo[1] : hi[1], lo[2] : hi[2]] = r.uniform(10, 400)
    return vol


def _nodata_band(r):
    """A band with a nodata (0) margin of random width, as a scene's edge."""
    band = _band(r)
    band[:, : r.integers(1, 12)] = 0
    return band


def _band(r, shape=(32, 48)):
    return r.integers(0, 4000, size=shape).astype(np.uint16)


def _image(r, h=48, w=64):
    return harness._image(r, h, w)


PIPELINES = [
    P("monai_ct_window", monai_ct_window, lambda r: {"ct": _volume(r)}),
    P("monai_mri_nonzero", monai_mri_nonzero, lambda r: {"mri": _mri(r)}),
    P("percentile_clip_resize", percentile_clip_resize, lambda r: {"v": _volume(r)}),
    P("sliding_window_patches", sliding_window_patches, lambda r: {"v": _volume(r, (8, 16, 24))}),
    P("nnunet_ct_normalization", nnunet_ct_normalization, lambda r: {"ct": _volume(r)}),
    P("nnunet_zscore", nnunet_zscore, lambda r: {"mr": _volume(r, lo=0, hi=900)}),
    P("torchio_rescale", torchio_rescale, lambda r: {"v": _volume(r, (1, 8, 12, 12))}),
    P(
        "spectral_indices",
        spectral_indices,
        lambda r: {"blue": _band(r), "green": _band(r), "red": _band(r), "nir": _band(r)},
    ),
    P("percentile_stretch", percentile_stretch, lambda r: {"rgb16": _band(r, (32, 40, 3))}),
    P(
        "scene_tiles",
        scene_tiles,
        lambda r: {"scene": r.uniform(0, 1, size=(32, 48, 4)).astype(np.float32)},
    ),
    P("ocr_recognition", ocr_recognition, lambda r: {"crop": _image(r, 24, 60)}),
    P("db_detector", db_detector, lambda r: {"img": _image(r, 72, 100)}),
    P("document_binarize", document_binarize, lambda r: {"page": _image(r, 48, 64)}),
    P(
        "background_flatfield",
        background_flatfield,
        lambda r: {
            "raw": r.integers(100, 4000, size=(40, 48)).astype(np.uint16),
            "flat": r.integers(2000, 3000, size=(40, 48)).astype(np.uint16),
            "dark": r.integers(90, 110, size=(40, 48)).astype(np.uint16),
        },
    ),
    P(
        "log_minmax_channels",
        log_minmax_channels,
        lambda r: {"stack": r.integers(0, 60000, size=(32, 40, 3)).astype(np.uint16)},
    ),
    P(
        "histogram_equalize",
        histogram_equalize,
        lambda r: {"img": cv2.cvtColor(_image(r), cv2.COLOR_BGR2GRAY)},
    ),
]


# ----------------------------------------- one-line variants of the data-dependent idioms
# Each changes one line of a pipeline above where the result depends on the data; the
# promise is that every variant is right or loud, never silent.
def mri_boolean_mask_mean(mri):
    """MONAI's own form: statistics of ``img[slices]`` (a data-dependent count)."""
    out = []
    for c in range(mri.shape[0]):
        img = mri[c].astype(np.float32)
        slices = img != 0
        mean, std = img[slices].mean(), img[slices].std()
        out.append(np.where(slices, (img - mean) / std, img))
    return {"image": np.stack(out).astype(np.float32)}


def mri_if_std_zero(mri):
    """The std guard as a Python ``if`` on a traced value instead of np.where."""
    img = mri.astype(np.float32)
    std = img.std()
    if std == 0:
        std = 1.0
    return {"image": (img - img.mean()) / std}


def ct_foreground_crop(ct):
    """CropForeground: the bounding box of voxels above a threshold (a data-dependent shape)."""
    coords = np.nonzero(ct > 0)
    lo = [int(c.min()) for c in coords]
    hi = [int(c.max()) + 1 for c in coords]
    return {"image": ct[lo[0] : hi[0], lo[1] : hi[1], lo[2] : hi[2]]}


def ndvi_where_divide(red, nir):
    """NDVI as np.where(denominator == 0, 0, ratio) under np.errstate (both sides run)."""
    r, n = red.astype(np.float32), nir.astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        ndvi = np.where((n + r) == 0, 0.0, (n - r) / (n + r))
    return {"ndvi": ndvi.astype(np.float32)}


def stretch_python_floats(band16):
    """The stretch with its percentiles turned into Python floats (each a lost trace)."""
    band = band16.astype(np.float32)
    p2, p98 = (float(v) for v in np.percentile(band, (2, 98)))
    return {"band": np.clip((band - p2) / (p98 - p2) * 255, 0, 255).astype(np.uint8)}


def stretch_quantile_nan(band16):
    """np.nanquantile over a band with nodata marked NaN."""
    band = band16.astype(np.float32)
    band = np.where(band == 0, np.nan, band)
    lo, hi = np.nanquantile(band, [0.02, 0.98])
    return {"band": np.nan_to_num(np.clip((band - lo) / (hi - lo), 0, 1))}


def ctc_text_indices(preds):
    """The decode's real end: the kept character indices (a data-dependent count)."""
    idx, _, keep = ctc_greedy(preds)
    return {"text": idx[0][keep[0]]}


def ctc_diff_dedup(preds):
    """Repeat removal with np.diff on the argmax path instead of a shifted comparison."""
    idx = preds.argmax(axis=2)
    keep = np.concatenate([np.ones((idx.shape[0], 1), bool), np.diff(idx, axis=1) != 0], 1)
    return {"keep": keep & (idx != 0)}


def otsu_value_reused(page):
    """Otsu's threshold value reused as a number (a second, softer threshold)."""
    gray = cv2.cvtColor(page, cv2.COLOR_BGR2GRAY)
    thr, _ = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)
    return {"soft": (gray.astype(np.float32) > thr * 0.8).astype(np.uint8)}


def adaptive_mean(page):
    """The adaptive threshold with the mean of the block instead of a Gaussian."""
    gray = cv2.cvtColor(page, cv2.COLOR_BGR2GRAY)
    return {
        "bin": cv2.adaptiveThreshold(
            gray, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY, 15, 5
        )
    }


def equalize_with_cv2(img):
    """The equalisation done by OpenCV instead of NumPy."""
    return {"image": cv2.equalizeHist(img)}


def equalize_lut_index(img):
    """The equalisation as a lookup table read with the pixels (cdf[img])."""
    hist, _ = np.histogram(img.flatten(), 256, [0, 256])
    cdf = hist.cumsum()
    lut = np.clip(np.round((cdf - cdf.min()) * 255.0 / (cdf.max() - cdf.min())), 0, 255)
    return {"image": lut.astype(np.uint8)[img]}


def minmax_python_max(stack):
    """Min-max with the global extremes read as Python numbers (.max().item())."""
    logged = np.log1p(stack.astype(np.float32))
    lo, hi = logged.min().item(), logged.max().item()
    return {"image": (logged - lo) / (hi - lo)}


def mri_masked_inplace(mri):
    """MONAI's in-place form: ``img[slices] = (img[slices] - mean) / std`` per channel."""
    img = mri.astype(np.float32)
    for c in range(img.shape[0]):
        slices = img[c] != 0
        img[c][slices] = (img[c][slices] - img[c][slices].mean()) / img[c][slices].std()
    return {"image": img}


def stretch_nodata_mask(band16):
    """The stretch's percentiles over valid pixels only (nodata 0 left out by a mask)."""
    band = band16.astype(np.float32)
    lo, hi = np.percentile(band[band > 0], (2, 98))
    return {"band": np.clip((band - lo) / (hi - lo), 0.0, 1.0)}


def patches_sliding_view(volume):
    """Patch extraction with sliding_window_view and a stride slice instead of reshape."""
    p = 8
    windows = sliding_window_view(volume, (p, p, p))[::p, ::p, ::p]
    return {"patches": windows.reshape(-1, p, p, p).mean(axis=(1, 2, 3))}


def ctc_python_loop(preds):
    """The decode written as a Python loop over time steps (a branch per step)."""
    idx = preds.argmax(axis=2)[0]
    keep = np.zeros(idx.shape, dtype=bool)
    for t in range(len(idx)):
        if idx[t] != 0 and (t == 0 or idx[t] != idx[t - 1]):
            keep[t] = True
    return {"keep": keep}


_PRED = lambda r: {"preds": r.dirichlet(np.ones(11) * 0.3, size=(1, 25)).astype(np.float32)}  # noqa: E731
_GRAY = lambda r: {"img": cv2.cvtColor(_image(r), cv2.COLOR_BGR2GRAY)}  # noqa: E731

VARIANTS = [
    P("mri_boolean_mask_mean", mri_boolean_mask_mean, lambda r: {"mri": _mri(r)}),
    P("mri_if_std_zero", mri_if_std_zero, lambda r: {"mri": _mri(r)}),
    P("ct_foreground_crop", ct_foreground_crop, lambda r: {"ct": _body(r)}),
    P("ndvi_where_divide", ndvi_where_divide, lambda r: {"red": _band(r), "nir": _band(r)}),
    P("stretch_python_floats", stretch_python_floats, lambda r: {"b": _band(r)}),
    P("stretch_quantile_nan", stretch_quantile_nan, lambda r: {"b": _band(r)}),
    P("ctc_text_indices", ctc_text_indices, _PRED),
    P("ctc_diff_dedup", ctc_diff_dedup, _PRED),
    P("otsu_value_reused", otsu_value_reused, lambda r: {"page": _image(r)}),
    P("adaptive_mean", adaptive_mean, lambda r: {"page": _image(r)}),
    P("equalize_with_cv2", equalize_with_cv2, _GRAY),
    P("equalize_lut_index", equalize_lut_index, _GRAY),
    P("minmax_python_max", minmax_python_max, lambda r: {"s": _band(r, (16, 20, 3))}),
    P("mri_masked_inplace", mri_masked_inplace, lambda r: {"mri": _mri(r)}),
    P("stretch_nodata_mask", stretch_nodata_mask, lambda r: {"b": _nodata_band(r)}),
    P("patches_sliding_view", patches_sliding_view, lambda r: {"v": _volume(r, (8, 16, 24))}),
    P("ctc_python_loop", ctc_python_loop, _PRED),
]


def main(names: list[str]) -> dict[str, dict[str, int]]:
    return harness.run_probe(names, PIPELINES, VARIANTS, "imaging", every_backend=True)


if __name__ == "__main__":
    main(sys.argv[1:])
