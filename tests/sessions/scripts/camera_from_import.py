"""Run as a script: the example's stereo camera pipeline written with ``from cv2 import``.

The helpers hold their own references to OpenCV (``cvtColor``, ``resize``), bound before
the session; the shipped OpenCV patches must reach them, with no warning, and each
backend's export must replay like real OpenCV on fresh frames.

Usage: python camera_from_import.py OUTPUT_FOLDER
"""

import sys
import warnings

import numpy as np
import torch
from cv2 import COLOR_BGR2RGB, INTER_NEAREST, cvtColor, resize

import patchport
from patchport import annotate


def image_features(bgr: np.ndarray) -> torch.Tensor:
    small = resize(bgr, (32, 24), interpolation=INTER_NEAREST)
    rgb = np.transpose(cvtColor(small, COLOR_BGR2RGB), (2, 0, 1))
    image = torch.from_numpy(rgb).float() / 255.0
    return torch.nn.functional.adaptive_avg_pool2d(image.unsqueeze(0), (2, 2)).flatten()


def stereo_features(left_bgr: np.ndarray, right_bgr: np.ndarray) -> torch.Tensor:
    return torch.cat([image_features(left_bgr), image_features(right_bgr)])


def frames(rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {k: rng.integers(0, 256, (48, 64, 3), dtype=np.uint8) for k in ("left", "right")}


warnings.simplefilter("error", patchport.PatchportWarning)
sample = frames(np.random.default_rng(0))
with patchport.session("camera", sys.argv[1], patching=["opencv"]):
    for backend in ("onnx", "pt2", "jit"):
        traced = annotate.input_tensors(backend, sample)
        features = stereo_features(*traced)
        annotate.output_tensors(backend, {"features": features}, export_with=backend)
    calls = {p.target_name: p.calls for p in patchport.session_patches() if p.family != "interop"}
    calls = {name: n for name, n in calls.items() if n}
assert calls == {"__main__.cvtColor": 6, "__main__.resize": 6}, calls
result = patchport.compile_graph(visualize=False)
manager = patchport.InferenceManager(result.yaml_path)
rng = np.random.default_rng(5)
for _ in range(2):
    fresh = frames(rng)
    feeds = {f"{b}/{k}": v for b in ("onnx", "pt2", "jit") for k, v in fresh.items()}
    outputs = manager.run_policy(feeds)
    expected = stereo_features(*fresh.values()).numpy()
    for backend in ("onnx", "pt2", "jit"):
        np.testing.assert_allclose(outputs[f"{backend}/features"], expected, rtol=1e-6)
        print(f"{backend}: replays like OpenCV")
