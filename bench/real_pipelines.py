"""Realistic preprocessing pipelines x backends: right, loud, silent or crash?

Each pipeline below is ordinary code in the style of a well-known kind of project
(detection letterbox, SLAM front end, depth camera, IMU window, robot-learning
observation, point cloud, normalisation helpers), written with plain OpenCV/NumPy/torch
and no knowledge of tracing. Each is traced once with the shipped OpenCV patches,
exported with every backend, and replayed on fresh inputs against the plain pipeline:

- right: the export reproduces the plain pipeline on fresh inputs;
- loud: a patchport warning or error points at this file (the user's line) and the
  export is wrong or refused;
- silent: exports, no warning, wrong on fresh inputs;
- crash: an exception that is not a clear patchport refusal.

Run: python bench/real_pipelines.py [pipeline-name ...]
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import torch
from cv2 import COLOR_BGR2GRAY, COLOR_BGR2RGB, cvtColor, dilate, erode, remap, resize

import patchport
from patchport import annotate

BACKENDS = ("onnx", "pt2", "jit")
HERE = str(Path(__file__).resolve())
PATCHING: list = ["opencv"]  # the shipped patch sets every pipeline is traced with


# --------------------------------------------------------------------------- pipelines
def letterbox(bgr: np.ndarray) -> dict[str, np.ndarray]:
    """Detection input: keep aspect, pad to 64x64 with grey 114, RGB, CHW, [0, 1]."""
    height, width = bgr.shape[:2]
    scale = min(64 / height, 64 / width)
    new_w, new_h = int(round(width * scale)), int(round(height * scale))
    image = cv2.resize(bgr, (new_w, new_h), interpolation=cv2.INTER_LINEAR)
    dw, dh = (64 - new_w) / 2, (64 - new_h) / 2
    top, bottom = int(round(dh - 0.1)), int(round(dh + 0.1))
    left, right = int(round(dw - 0.1)), int(round(dw + 0.1))
    image = cv2.copyMakeBorder(
        image, top, bottom, left, right, cv2.BORDER_CONSTANT, value=(114, 114, 114)
    )
    image = image[:, :, ::-1].transpose(2, 0, 1)
    image = np.ascontiguousarray(image).astype(np.float32) / 255.0
    return {"images": image[None]}


_K = np.array([[40.0, 0, 31.5], [0, 40.0, 23.5], [0, 0, 1]])
_DIST = np.array([-0.2, 0.05, 0.001, -0.001, 0.0])
_MAP_X, _MAP_Y = cv2.initUndistortRectifyMap(_K, _DIST, None, _K, (64, 48), cv2.CV_32FC1)


def slam_frontend(bgr: np.ndarray) -> dict[str, np.ndarray]:
    """SLAM: grey, undistort with precomputed maps, a two-level pyramid, gradients."""
    gray = cvtColor(bgr, COLOR_BGR2GRAY)
    rectified = remap(gray, _MAP_X, _MAP_Y, cv2.INTER_LINEAR)
    level1 = resize(rectified, (32, 24), interpolation=cv2.INTER_AREA)
    smooth = cv2.GaussianBlur(rectified, (5, 5), 1.0).astype(np.float32)
    gx = smooth[:, 2:] - smooth[:, :-2]
    gy = smooth[2:, :] - smooth[:-2, :]
    magnitude = np.sqrt(gx[1:-1, :] ** 2 + gy[:, 1:-1] ** 2)
    return {"level0": rectified, "level1": level1, "gradient": magnitude}


_FX, _FY, _CX, _CY, _DEPTH_SCALE = 38.0, 38.5, 31.7, 23.9, 0.001


def depth_camera(depth: np.ndarray) -> dict[str, np.ndarray]:
    """Depth camera: uint16 millimetres to metres, range clip, colour preview, 3-D points."""
    meters = depth.astype(np.float32) * _DEPTH_SCALE
    valid = (meters > 0.2) & (meters < 4.0)
    meters = np.where(valid, meters, 0.0).astype(np.float32)
    preview = cv2.convertScaleAbs(meters, alpha=255 / 4.0)
    v, u = np.indices(meters.shape, dtype=np.float32)
    x = (u - _CX) * meters / _FX
    y = (v - _CY) * meters / _FY
    points = np.stack([x, y, meters], axis=-1).reshape(-1, 3)
    return {"preview": preview, "points": points}


_ACC_BIAS = np.array([0.02, -0.01, 0.05], dtype=np.float32)
_GYRO_BIAS = np.array([0.001, 0.002, -0.001], dtype=np.float32)


def imu_window(imu: np.ndarray) -> dict[str, np.ndarray]:
    """IMU: bias removal, moving average, gravity-normalised acceleration, integrated yaw."""
    acc = imu[:, :3] - _ACC_BIAS
    gyro = imu[:, 3:] - _GYRO_BIAS
    kernel = np.ones(5, dtype=np.float32) / 5
    smooth = np.stack([np.convolve(acc[:, i], kernel, mode="same") for i in range(3)], axis=1)
    norm = np.linalg.norm(smooth, axis=1, keepdims=True)
    unit = smooth / np.maximum(norm, 1e-6)
    yaw = np.cumsum(gyro[:, 2]) * 0.005
    return {"gravity": unit.astype(np.float32), "yaw": yaw.astype(np.float32)}


_STATE_MEAN = np.array([0.1, -0.2, 0.3, 0.0, 0.5, -0.5, 0.2], dtype=np.float32)
_STATE_STD = np.array([1.0, 0.5, 0.8, 1.2, 0.3, 0.9, 1.1], dtype=np.float32)
torch.manual_seed(0)
_POLICY = torch.nn.Sequential(torch.nn.Linear(3 * 84 * 84 // 36 + 7, 32), torch.nn.Tanh())


def robot_policy(image: np.ndarray, state: np.ndarray) -> dict[str, np.ndarray]:
    """Robot learning: centre crop, resize to 84, [0,1], state normalised, policy head."""
    h, w = image.shape[:2]
    side = min(h, w)
    top, left = (h - side) // 2, (w - side) // 2
    crop = image[top : top + side, left : left + side]
    small = resize(crop, (84, 84), interpolation=cv2.INTER_AREA)
    pixels = torch.from_numpy(small).permute(2, 0, 1).float().div(255.0)
    pooled = torch.nn.functional.avg_pool2d(pixels.unsqueeze(0), 6).flatten(1)
    normalized = (state - _STATE_MEAN) / _STATE_STD
    features = torch.cat([pooled, torch.from_numpy(normalized).unsqueeze(0)], dim=1)
    with torch.no_grad():
        action = _POLICY(features)
    return {"action": action.numpy(), "state": normalized}


def point_cloud(points: np.ndarray) -> dict[str, np.ndarray]:
    """Point cloud: centre, scale into the unit sphere, box crop as a mask, BEV height map."""
    centered = points - points.mean(axis=0, keepdims=True)
    scale = np.max(np.linalg.norm(centered, axis=1))
    unit = centered / scale
    inside = np.all(np.abs(unit) < 0.8, axis=1)
    kept = np.where(inside[:, None], unit, 0.0)
    cells = np.clip(((kept[:, :2] + 1.0) * 4).astype(np.int64), 0, 7)
    height = np.zeros((8, 8), dtype=np.float32)
    np.maximum.at(height, (cells[:, 0], cells[:, 1]), kept[:, 2].astype(np.float32))
    return {"unit": unit.astype(np.float32), "height": height}


_NORM_MEAN = np.array([[123.675, 116.28, 103.53]])
_NORM_STD_INV = 1 / np.array([[58.395, 57.12, 57.375]])


def imnormalize(bgr: np.ndarray) -> dict[str, np.ndarray]:
    """The widely used in-place normaliser: float copy, BGR->RGB, subtract, multiply in place."""
    img = bgr.astype(np.float32)
    cv2.cvtColor(img, cv2.COLOR_BGR2RGB, img)
    cv2.subtract(img, _NORM_MEAN, img)
    cv2.multiply(img, _NORM_STD_INV, img)
    return {"img": img.transpose(2, 0, 1).copy()}


def classification(bgr: np.ndarray) -> dict[str, np.ndarray]:
    """Classification: resize the short side to 40, centre crop 32, RGB, mean/std."""
    h, w = bgr.shape[:2]
    scale = 40 / min(h, w)
    image = resize(bgr, (round(w * scale), round(h * scale)), interpolation=cv2.INTER_LINEAR)
    top, left = (image.shape[0] - 32) // 2, (image.shape[1] - 32) // 2
    image = cvtColor(image[top : top + 32, left : left + 32], COLOR_BGR2RGB)
    x = image.astype(np.float32) / 255.0
    x = (x - np.array([0.485, 0.456, 0.406], np.float32)) / np.array(
        [0.229, 0.224, 0.225], np.float32
    )
    return {"x": np.transpose(x, (2, 0, 1))[None].copy()}


def hsv_mask(bgr: np.ndarray) -> dict[str, np.ndarray]:
    """Colour tracking: blur, HSV, in-range mask, the mask's share of the image."""
    hsv = cv2.cvtColor(cv2.GaussianBlur(bgr, (5, 5), 0), cv2.COLOR_BGR2HSV)
    mask = cv2.inRange(hsv, (20, 60, 60), (90, 255, 255))
    share = np.count_nonzero(mask) / mask.size
    return {"mask": mask, "share": np.array([share], dtype=np.float32)}


def morphology(bgr: np.ndarray) -> dict[str, np.ndarray]:
    """Segmentation clean-up: grey, Otsu-free fixed threshold, open with from-imported ops."""
    gray = cvtColor(bgr, COLOR_BGR2GRAY)
    _, binary = cv2.threshold(gray, 127, 255, cv2.THRESH_BINARY)
    kernel = np.ones((3, 3), np.uint8)
    opened = dilate(erode(binary, kernel), kernel)
    return {"mask": opened}


def depth_colormap(depth: np.ndarray) -> dict[str, np.ndarray]:
    """Depth preview: metres, min-max to 0..255 as float, then uint8 and a colour map."""
    meters = depth.astype(np.float32) / 1000.0
    scaled = cv2.normalize(meters, None, 0, 255, cv2.NORM_MINMAX)
    return {"preview": cv2.applyColorMap(scaled.astype(np.uint8), cv2.COLORMAP_JET)}


def upscale_detector(bgr: np.ndarray) -> dict[str, np.ndarray]:
    """Small-camera detector input: enlarge 2x (INTER_LINEAR), RGB, NCHW float."""
    big = cv2.resize(bgr, None, fx=2.0, fy=2.0, interpolation=cv2.INTER_LINEAR)
    rgb = cv2.cvtColor(big, cv2.COLOR_BGR2RGB)
    return {"images": torch.from_numpy(rgb).permute(2, 0, 1)[None].float().div(255).numpy()}


def observation_dict(obs: np.ndarray, goal: np.ndarray) -> dict[str, np.ndarray]:
    """Goal-conditioned observation: relative goal, clipped, the observation updated."""
    relative = np.clip(goal - obs[:3], -1.0, 1.0)
    obs = obs.copy()
    obs[:3] = obs[:3] / np.maximum(np.abs(obs[:3]).max(), 1e-3)
    return {"obs": obs, "goal": relative}


# --------------------------------------------------------------------------- harness
def _image(rng: np.random.Generator, h: int = 48, w: int = 64) -> np.ndarray:
    base = rng.integers(0, 256, size=(h // 8, w // 8, 3), dtype=np.uint8)
    smooth = cv2.resize(base, (w, h), interpolation=cv2.INTER_CUBIC)
    noise = rng.integers(-12, 13, size=(h, w, 3))
    return np.clip(smooth.astype(np.int16) + noise, 0, 255).astype(np.uint8)


@dataclass
class Pipeline:
    name: str
    run: Callable[..., dict[str, np.ndarray]]
    make_inputs: Callable[[np.random.Generator], dict[str, np.ndarray]]


PIPELINES = [
    Pipeline("letterbox", letterbox, lambda r: {"bgr": _image(r, 48, 80)}),
    Pipeline("slam_frontend", slam_frontend, lambda r: {"bgr": _image(r)}),
    Pipeline(
        "depth_camera",
        depth_camera,
        lambda r: {"depth": r.integers(0, 5000, size=(48, 64)).astype(np.uint16)},
    ),
    Pipeline(
        "imu_window",
        imu_window,
        lambda r: {"imu": r.normal(0, 1, size=(50, 6)).astype(np.float32)},
    ),
    Pipeline(
        "robot_policy",
        robot_policy,
        lambda r: {"image": _image(r, 96, 128), "state": r.normal(size=7).astype(np.float32)},
    ),
    Pipeline(
        "point_cloud",
        point_cloud,
        lambda r: {"points": r.normal(0, 2, size=(256, 3)).astype(np.float32)},
    ),
    Pipeline("imnormalize", imnormalize, lambda r: {"bgr": _image(r)}),
    Pipeline("classification", classification, lambda r: {"bgr": _image(r, 60, 80)}),
    Pipeline("hsv_mask", hsv_mask, lambda r: {"bgr": _image(r)}),
    Pipeline("morphology", morphology, lambda r: {"bgr": _image(r)}),
    Pipeline(
        "depth_colormap",
        depth_colormap,
        lambda r: {"depth": r.integers(300, 5000, size=(48, 64)).astype(np.uint16)},
    ),
    Pipeline("upscale_detector", upscale_detector, lambda r: {"bgr": _image(r, 24, 32)}),
    Pipeline(
        "observation_dict",
        observation_dict,
        lambda r: {
            "obs": r.normal(size=10).astype(np.float32),
            "goal": r.normal(size=3).astype(np.float32),
        },
    ),
]


def _copy(value: np.ndarray | torch.Tensor) -> np.ndarray | torch.Tensor:
    """A copy of the same kind (a pipeline may write into its inputs, in NumPy or torch)."""
    return value.clone() if isinstance(value, torch.Tensor) else np.copy(value)


def _close(got: np.ndarray | None, want: np.ndarray) -> bool:
    if got is None:  # run_policy dropped the output
        return False
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return False
    if want.dtype.kind in "iub":
        return bool(np.array_equal(got.astype(np.int64), want.astype(np.int64)))
    return bool(np.allclose(got, want, rtol=1e-4, atol=1e-4, equal_nan=True))


def _at_user_line(caught: list[warnings.WarningMessage]) -> list[str]:
    return [
        f"{w.category.__name__}: {str(w.message)[:150]}"
        for w in caught
        if issubclass(w.category, patchport.PatchportWarning) and w.filename == HERE
    ]


def classify(pipeline: Pipeline, backend: str, folder: str) -> tuple[str, str]:
    """Trace, export with ``backend``, replay on fresh inputs; return (class, detail)."""
    rng = np.random.default_rng(0)
    sample = pipeline.make_inputs(rng)
    node = f"{pipeline.name}_{backend}"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            patchport.start(node, folder, patching=list(PATCHING))
        except Exception as exc:  # start() itself failing is never the user's line
            return "crash", f"start(): {type(exc).__name__}: {str(exc)[:140]}"
        try:
            with contextlib.ExitStack() as stack:
                stack.callback(patchport.stop)
                traced = annotate.input_tensors(node, sample)
                traced = traced if isinstance(traced, tuple) else (traced,)
                outputs = pipeline.run(*traced)
                annotate.output_tensors(node, outputs, export_with=backend)
            result = patchport.compile_graph(visualize=False, strict=False)
        except patchport.PatchportError as exc:
            where = "".join(traceback.format_tb(exc.__traceback__))
            loud = HERE in where or HERE in str(exc)
            kind = "loud" if loud else "crash"
            return kind, f"{type(exc).__name__}: {str(exc)[:160]}"
        except Exception as exc:
            return "crash", f"{type(exc).__name__}: {str(exc)[:160]}"
    warned = _at_user_line(caught)
    manager = patchport.InferenceManager(result.yaml_path)
    wrong = []
    for _ in range(3):
        fresh = pipeline.make_inputs(rng)
        want = pipeline.run(*[_copy(v) for v in fresh.values()])  # some write their inputs
        try:
            got = manager.run_policy({f"{node}/{k}": v for k, v in fresh.items()})
        except Exception as exc:
            return ("loud" if warned else "crash"), f"replay failed: {exc}"[:160]
        wrong += [k for k in want if not _close(got.get(f"{node}/{k}"), want[k])]
    if not wrong:
        return "right", (f"(warned: {warned[0]})" if warned else "")
    detail = f"wrong outputs {sorted(set(wrong))}"
    return ("loud", f"{detail}; {warned[0]}") if warned else ("silent", detail)


def run_table(
    chosen: list[Pipeline], prefix: str, *, details: bool = False, heading: str = ""
) -> dict[str, dict[str, int]]:
    """Classify each pipeline on each backend and print a markdown table and the counts
    (the probe scripts beside this one share it): a line for each result that is not
    right, or each result with a detail when ``details``; ``heading`` above the table."""
    counts = {b: dict.fromkeys(("right", "loud", "silent", "crash"), 0) for b in BACKENDS}
    folder = tempfile.mkdtemp(prefix=f"patchport-{prefix}-pipelines-")
    rows = []
    for pipeline in chosen:
        row = []
        for backend in BACKENDS:
            kind, detail = classify(pipeline, backend, folder)
            counts[backend][kind] += 1
            row.append(kind)
            if kind != "right" or (details and detail):
                print(f"  {pipeline.name} {backend}: {kind} {detail}", flush=True)
        rows.append((pipeline.name, row))
    print()
    if heading:
        print(heading)
    print(f"| pipeline | {' | '.join(BACKENDS)} |")
    print("|---|" + "---|" * len(BACKENDS))
    for name, row in rows:
        print(f"| {name} | {' | '.join(row)} |")
    for backend, c in counts.items():
        print(f"{backend:5}: " + ", ".join(f"{k} {v}" for k, v in c.items()))
    return counts


def run_probe(
    names: list[str],
    pipelines: list[Pipeline],
    variants: list[Pipeline],
    prefix: str,
    every_backend: bool = False,
) -> dict[str, dict[str, int]]:
    """A probe script's command line: ``--variants`` runs its one-line variants instead,
    ``--all-backends`` adds jit to onnx and pt2 (``every_backend``: always), other words
    pick pipelines by name."""
    global BACKENDS
    if not every_backend and "--all-backends" not in names:
        BACKENDS = ("onnx", "pt2")
    pool = variants if "--variants" in names else pipelines
    names = [n for n in names if n not in ("--all-backends", "--variants")]
    chosen = [p for p in pool if not names or p.name in names]
    return run_table(chosen, prefix, details=True)


def main(names: list[str]) -> dict[str, dict[str, int]]:
    chosen = [p for p in PIPELINES if not names or p.name in names]
    counts = {b: dict.fromkeys(("right", "loud", "silent", "crash"), 0) for b in BACKENDS}
    folder = tempfile.mkdtemp(prefix="patchport-real-pipelines-")
    print(f"{'pipeline':16} {'backend':7} result  detail")
    for pipeline in chosen:
        for backend in BACKENDS:
            kind, detail = classify(pipeline, backend, folder)
            counts[backend][kind] += 1
            print(f"{pipeline.name:16} {backend:7} {kind:7} {detail}", flush=True)
    total = {k: sum(c[k] for c in counts.values()) for k in counts[BACKENDS[0]]}
    for backend, c in [*counts.items(), ("all", total)]:
        print(f"{backend:5}: " + ", ".join(f"{k} {v}" for k, v in c.items()))
    return counts


if __name__ == "__main__":
    main(sys.argv[1:])
