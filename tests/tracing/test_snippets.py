"""Realistic multi-op preprocessing snippets, traced once and replayed on fresh inputs."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import cv2
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from patchport.tracing import (
    Recorder,
    contains_traced,
    finish,
    interop_patches,
    trace_input,
    watch_natives,
)

from .helpers import assert_same, conform, fresh_like, make

MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)


def normalize_image(img: np.ndarray) -> np.ndarray:
    x = img.astype(np.float32) / 255.0
    x = (x - MEAN) / STD
    return np.ascontiguousarray(x.transpose(2, 0, 1))[None]


def test_image_normalization() -> None:
    with interop_patches():
        conform(normalize_image, make((6, 8, 3), np.uint8, 1, low=0, high=255))


def letterbox(img: np.ndarray) -> np.ndarray:
    h, w = img.shape[:2]
    side = max(h, w)
    out = np.pad(img, ((0, side - h), (0, side - w), (0, 0)), constant_values=114)
    out = out[:, ::-1]  # mirror
    gamma = np.power(out / 255.0, 0.8)
    return (gamma * 255).clip(0, 255).astype(np.uint8)


def test_letterbox_mirror_gamma() -> None:
    conform(letterbox, make((5, 8, 3), np.uint8, 2, low=0, high=255))


def calibrate(raw: np.ndarray, valid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    table_in = np.array([0.0, 100.0, 200.0, 400.0])
    table_out = np.array([0.0, 1.0, 1.5, 1.75])
    depth = np.interp(raw, table_in, table_out)
    depth = np.where(valid, depth, np.nan)
    depth = np.nan_to_num(depth, nan=-1.0)
    hist = np.bincount(np.digitize(depth.ravel(), [0.0, 0.5, 1.0, 1.5]), minlength=5)
    return depth.astype(np.float32), hist


def test_sensor_calibration() -> None:
    raw = make((4, 6), np.float64, 3, low=0, high=400)
    valid = make((4, 6), np.bool_, 4)
    conform(calibrate, raw, valid)


def keypoints(heat: np.ndarray) -> np.ndarray:
    k, h, w = heat.shape
    flat = heat.reshape(k, -1)
    idx = np.argmax(flat, axis=1)
    ys, xs = idx // w, idx % w
    score = np.max(flat, axis=1)
    pts = np.stack([xs, ys], axis=-1).astype(np.float32)
    pts -= pts.mean(axis=0, keepdims=True)
    scale = np.linalg.norm(pts, axis=1).max() + 1e-6
    return np.concatenate([pts / scale, score[:, None].astype(np.float32)], axis=1)


def test_keypoint_decoding() -> None:
    conform(keypoints, make((5, 6, 7), np.float32, 5, low=0, high=1))


def numpy_torch_round_trip(img: np.ndarray) -> np.ndarray:
    t = torch.from_numpy(img).permute(2, 0, 1).float()[None]
    t = F.interpolate(t, size=(8, 10), mode="bilinear", align_corners=False)
    t = torch.clamp(t * 1.2 - 10, 0, 255)
    out = t[0].permute(1, 2, 0).numpy()
    return np.round(out).astype(np.uint8)


def test_numpy_torch_round_trip() -> None:
    with interop_patches():
        conform(numpy_torch_round_trip, make((4, 5, 3), np.uint8, 6, low=0, high=255))


def traced_cvt_color(src, code, dst=None, dstCn=0):  # noqa: ANN001, ANN201, N803
    """BGR->RGB for HWC images with torch (the seed's replacement)."""
    if code != cv2.COLOR_BGR2RGB or dst is not None or dstCn not in (0, 3):
        raise ValueError("only BGR2RGB without dst")
    return torch.from_numpy(src).flip((-1,)).numpy()


@contextlib.contextmanager
def cvt_color_patched() -> Iterator[None]:
    """Test-local stand-in for a FunctionPatch: traced calls go to the replacement."""
    original = cv2.cvtColor

    def dispatch(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        if contains_traced(args, kwargs):
            return traced_cvt_color(*args, **kwargs)
        return original(*args, **kwargs)

    cv2.cvtColor = dispatch
    try:
        yield
    finally:
        cv2.cvtColor = original


def prepare_image(bgr: np.ndarray) -> np.ndarray:
    rgb = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)
    return np.transpose(rgb, (2, 0, 1))


def stereo(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    feats = [prepare_image(im).astype(np.float32) / 255.0 for im in (left, right)]
    return np.concatenate(feats, axis=0).mean(axis=(1, 2))


def test_stereo_workflow_with_cvtcolor_replacement() -> None:
    frames = [make((48, 64, 3), np.uint8, s, low=0, high=255) for s in (7, 8)]
    with watch_natives(), interop_patches(), cvt_color_patched():
        gm = conform(stereo, *frames)
    assert "flip" in gm.code


@pytest.mark.parametrize(
    ("fn", "inputs"),
    [
        (normalize_image, [make((6, 8, 3), np.uint8, 1, low=0, high=255)]),
        (letterbox, [make((5, 8, 3), np.uint8, 2, low=0, high=255)]),
        (calibrate, [make((4, 6), np.float64, 3, low=0, high=400), make((4, 6), np.bool_, 4)]),
        (keypoints, [make((5, 6, 7), np.float32, 5, low=0, high=1)]),
    ],
    ids=["normalize", "letterbox", "calibrate", "keypoints"],
)
def test_recorded_graphs_pass_torch_export(fn, inputs) -> None:  # noqa: ANN001
    """The engine's graphs are plain torch: torch.export accepts them and replays them."""
    rec = Recorder("export")
    with interop_patches():
        out = fn(*[trace_input(rec, f"x{i}", a) for i, a in enumerate(inputs)])
    gm = finish(rec, out)
    example = tuple(torch.from_numpy(a.copy()) for a in inputs)
    exported = torch.export.export(gm, example)
    fresh = [fresh_like(a, i) for i, a in enumerate(inputs)]
    got = exported.module()(*[torch.from_numpy(f.copy()) for f in fresh])
    assert_same(got, fn(*[f.copy() for f in fresh]))
