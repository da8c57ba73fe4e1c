"""Seed 000: a stereo camera workflow exported unchanged, with one OpenCV function patch.

The helpers below are ordinary pipeline code: they call cv2.cvtColor and know nothing
about tracing. One FunctionPatch routes the traced calls to a torch replacement; the
exported model is then replayed on fresh frames and compared with real OpenCV.

Run: python examples/function_patch.py [onnx|pt2|jit, or several: onnx,pt2,jit] [output folder]
"""

from __future__ import annotations

import sys
import tempfile

import cv2
import numpy as np
import torch

import patchport
from patchport import annotate


def traced_cvt_color(src, code, dst=None, dstCn=0):
    """Trace BGR-to-RGB conversion for three-channel HWC images."""
    if code != cv2.COLOR_BGR2RGB or dst is not None or dstCn not in (0, 3):
        raise ValueError("This adapter supports only BGR2RGB without a destination buffer")
    if src.ndim != 3 or src.shape[-1] != 3:
        raise ValueError("This adapter expects an HWC image with three channels")
    return torch.from_numpy(src).flip((-1,)).numpy()


def prepare_image(bgr: np.ndarray) -> np.ndarray:
    """Convert a camera frame to RGB and arrange channels for a torch model."""
    rgb = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)
    return np.transpose(rgb, (2, 0, 1))


def image_features(bgr: np.ndarray) -> torch.Tensor:
    """A 2x2 average colour per channel: a tiny spatial descriptor of one camera."""
    image = torch.from_numpy(prepare_image(bgr)).float() / 255.0
    pooled = torch.nn.functional.adaptive_avg_pool2d(image.unsqueeze(0), (2, 2))
    return pooled.flatten()


def stereo_features(left_bgr: np.ndarray, right_bgr: np.ndarray) -> torch.Tensor:
    """The existing workflow: OpenCV preprocessing of both cameras, then torch fusion."""
    return torch.cat([image_features(left_bgr), image_features(right_bgr)])


def frames(rng: np.random.Generator, height: int = 48, width: int = 64) -> dict[str, np.ndarray]:
    return {
        name: rng.integers(0, 256, size=(height, width, 3), dtype=np.uint8)
        for name in ("left_bgr", "right_bgr")
    }


def main(export_with: str = "onnx", save_path: str | None = None) -> float:
    """Trace, export, check the patch is gone, replay on fresh frames; return max |diff|."""
    save_path = save_path or tempfile.mkdtemp(prefix="patchport-example-")
    sample = frames(np.random.default_rng(0))
    ordinary = stereo_features(*sample.values())
    original_cvt_color = cv2.cvtColor

    patchport.start(
        name="function_patch_example",
        save_path=save_path,
        patching=[patchport.FunctionPatch(cv2, "cvtColor", traced_cvt_color)],
    )
    try:
        traced = annotate.input_tensors("camera_preprocess", sample)
        features = stereo_features(*traced)
        annotate.output_tensors(
            "camera_preprocess", {"stereo_features": features}, export_with=export_with
        )
        # ordinary arrays still take the original OpenCV path during the session
        torch.testing.assert_close(stereo_features(*sample.values()), ordinary)
    finally:
        patchport.stop()
    assert cv2.cvtColor is original_cvt_color, "the patch was not restored"

    result = patchport.compile_graph(visualize=True, validate=True)
    print(result.summary())

    manager = patchport.InferenceManager(result.yaml_path)
    worst = 0.0
    rng = np.random.default_rng(123)
    for _ in range(3):
        fresh = frames(rng)
        outputs = manager.run_policy({f"camera_preprocess/{k}": v for k, v in fresh.items()})
        expected = stereo_features(*fresh.values()).numpy()
        got = outputs["camera_preprocess/stereo_features"].numpy()  # torch, as in LEAPP
        worst = max(worst, float(np.abs(got - expected).max()))
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    patch = patchport.session_patches().find("cv2.cvtColor")
    print(f"{patch.name} replaced cv2.cvtColor on {patch.calls} traced call(s)")
    print(f"replay on 3 fresh frame pairs matches OpenCV: max |diff| = {worst:.2e}")
    return worst


if __name__ == "__main__":
    backends, *folder = sys.argv[1:] or ["onnx"]
    for backend in backends.split(","):
        main(backend, *folder)
