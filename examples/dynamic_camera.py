"""A camera pipeline exported once, replayed at two resolutions and two batch sizes.

Node ``camera`` turns one BGR frame of any size into a normalised half-size RGB tensor
with ordinary OpenCV calls (flip, cvtColor, GaussianBlur, resize by ``fx``/``fy``, routed
to patchport's shipped replacements, which compute sizes and taps in the graph); node
``policy`` maps a batch of such features to actions. Both are declared with dynamic axes,
exported to ONNX once, and replayed through ONNX Runtime at sizes the trace never saw,
against the plain pipeline. A resize to a fixed ``dsize`` scales by ``dsize / size``,
which the trace fixes: declaring that size dynamic is refused in words, shown first.

Run: python examples/dynamic_camera.py [output folder]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import cv2
import numpy as np
import onnxruntime
import torch

import patchport
from patchport import annotate

MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32).reshape(3, 1, 1)
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32).reshape(3, 1, 1)
TRACED_SIZE = (96, 128)  # height, width of the frames seen while tracing


def preprocess(bgr: np.ndarray) -> np.ndarray:
    """Mirror, convert to RGB, denoise, halve the size, normalise: CHW float32."""
    image = cv2.flip(bgr, 1)
    image = cv2.cvtColor(image, cv2.COLOR_BGR2RGB)
    image = cv2.GaussianBlur(image, (5, 5), 0)
    half = cv2.resize(image, None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA)
    chw = half.transpose(2, 0, 1).astype(np.float32) / np.float32(255)
    return ((chw - MEAN) / STD).astype(np.float32)


class Policy(torch.nn.Module):
    """Pools each image's features and maps them to two actions (random weights)."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.head = torch.nn.Linear(8, 2)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        pooled = self.conv(images).relu().mean(dim=(2, 3))
        return self.head(pooled).tanh()


def frames(count: int, height: int, width: int, seed: int) -> np.ndarray:
    """Synthetic camera frames: a gradient with noise and a bright square."""
    rng = np.random.default_rng(seed)
    base = np.linspace(0, 200, width, dtype=np.float32)[None, :, None]
    out = np.broadcast_to(base, (count, height, width, 3)) + rng.normal(
        0, 12, (count, height, width, 3)
    )
    out[:, height // 4 : height // 2, width // 4 : width // 2] = 250
    return np.clip(out, 0, 255).astype(np.uint8)


def show_refused_resize(folder: Path) -> None:
    """A fixed dsize scales by dsize / size, fixed at the traced size: refused in words."""
    with patchport.session("refused", save_path=folder, patching=["opencv"]):
        bgr = annotate.input_tensors(
            "camera",
            {"bgr": frames(1, *TRACED_SIZE, 0)[0]},
            dynamic={"bgr": {0: "height", 1: "width"}},
        )
        annotate.output_tensors("camera", {"small": cv2.resize(bgr, (64, 48))})
    try:
        patchport.compile_graph(visualize=False)
    except patchport.PatchportError as refusal:
        print("cv2.resize to a fixed dsize with a dynamic size is refused:")
        print("\n".join(str(refusal).splitlines()[:3]))


def export(folder: Path, policy: Policy) -> Path:
    """Trace both nodes once at TRACED_SIZE with a batch of 4; write and validate the bundle."""
    with (
        torch.no_grad(),
        patchport.session("dynamic_camera", save_path=folder, patching=["opencv"]),
    ):
        bgr = annotate.input_tensors(
            "camera",
            {"bgr": frames(1, *TRACED_SIZE, 0)[0]},
            dynamic={"bgr": {0: "height", 1: "width"}},
        )
        annotate.output_tensors("camera", {"features": preprocess(bgr)})
        batch = torch.from_numpy(np.stack([preprocess(f) for f in frames(4, *TRACED_SIZE, 1)]))
        images = annotate.input_tensors(
            "policy", {"images": batch}, dynamic={"images": {0: "batch", 2: "height", 3: "width"}}
        )
        annotate.output_tensors("policy", {"actions": policy(images)})
    result = patchport.compile_graph(visualize=False)
    print(result.summary())
    return result.directory


def replay(directory: Path, policy: Policy) -> None:
    """ONNX Runtime at two resolutions and two batch sizes, against the plain pipeline."""
    camera = onnxruntime.InferenceSession(
        str(directory / "camera.onnx"), providers=["CPUExecutionProvider"]
    )
    actor = onnxruntime.InferenceSession(
        str(directory / "policy.onnx"), providers=["CPUExecutionProvider"]
    )
    for height, width in [(480, 640), (120, 200)]:
        for count in (1, 3):
            batch = frames(count, height, width, seed=height + count)
            features = np.stack([camera.run(None, {"bgr": frame})[0] for frame in batch])
            actions = actor.run(None, {"images": features})[0]
            expected_features = np.stack([preprocess(frame) for frame in batch])
            with torch.no_grad():
                expected = policy(torch.from_numpy(expected_features)).numpy()
            feature_diff = float(np.abs(features - expected_features).max())
            action_diff = float(np.abs(actions - expected).max())
            print(
                f"{count} frame(s) of {height}x{width}: features {list(features.shape)} "
                f"max |diff| {feature_diff:.2e}, actions {list(actions.shape)} "
                f"max |diff| {action_diff:.2e}"
            )
            assert feature_diff < 1e-4 and action_diff < 1e-4


def main() -> None:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp())
    policy = Policy().eval()
    show_refused_resize(folder)
    directory = export(folder, policy)
    replay(directory, policy)
    manager = patchport.InferenceManager(directory / "dynamic_camera.yaml")
    try:
        manager.run_policy(
            {
                "camera/bgr": torch.zeros(96, 128, 4, dtype=torch.uint8),
                "policy/images": torch.zeros(1, 3, 48, 64),
            }
        )
    except ValueError as refusal:
        print(f"refused: {refusal}")


if __name__ == "__main__":
    main()
