"""Real-code patterns of issue 21 x backends: right, loud, silent or crash?

Four pipelines in the style of public projects: a legged-robot policy deployed as a
TorchScript file (``torch.jit.load``), MiDaS-style depth preprocessing (``/ 255.0`` makes
float64, then an INTER_CUBIC resize to a multiple of 32), albumentations-style CLAHE
(``cv2.createCLAHE(...).apply``) and a bird's-eye ``cv2.warpPerspective``. Each is traced
with the shipped OpenCV patches, exported with every backend and replayed on fresh inputs
by ``bench/real_pipelines.py``'s classifier (same classes, same rules).

Run: python bench/real_code_patterns.py [pipeline-name ...]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import cv2
import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import real_pipelines as rp  # noqa: E402

rp.HERE = str(Path(__file__).resolve())  # warnings at this file's lines are the user's


class Actor(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = torch.nn.Sequential(
            torch.nn.Linear(12, 64), torch.nn.ELU(), torch.nn.Linear(64, 4)
        )

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.net(obs)


def _load_policy() -> torch.jit.ScriptModule:
    torch.manual_seed(0)
    path = Path(tempfile.mkdtemp(prefix="patchport-policy-")) / "policy.pt"
    torch.jit.save(torch.jit.script(Actor()), str(path))
    return torch.jit.load(str(path))


POLICY = _load_policy()


def jit_policy(obs: np.ndarray) -> dict[str, np.ndarray]:
    scaled = np.clip(obs * 0.5, -5, 5).astype(np.float32)
    actions = POLICY(torch.from_numpy(scaled)).detach().numpy()
    return {"actions": actions * 0.25}


def midas_cubic(bgr: np.ndarray) -> dict[str, np.ndarray]:
    rgb = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB) / 255.0
    height, width = rgb.shape[:2]
    scale = 96 / min(height, width)
    size = (int(np.ceil(width * scale / 32) * 32), int(np.ceil(height * scale / 32) * 32))
    resized = cv2.resize(rgb, size, interpolation=cv2.INTER_CUBIC)
    x = (resized - np.array([0.485, 0.456, 0.406])) / np.array([0.229, 0.224, 0.225])
    return {"x": np.ascontiguousarray(x.transpose(2, 0, 1)).astype(np.float32)}


def clahe(bgr: np.ndarray) -> dict[str, np.ndarray]:
    gray = cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY)
    equalised = cv2.createCLAHE(clipLimit=2.0, tileGridSize=(8, 8)).apply(gray)
    return {"gray": equalised}


_SRC = np.float32([[8, 30], [56, 30], [63, 47], [0, 47]])
_DST = np.float32([[0, 0], [63, 0], [63, 47], [0, 47]])
_H = cv2.getPerspectiveTransform(_SRC, _DST)


def birds_eye(bgr: np.ndarray) -> dict[str, np.ndarray]:
    return {"top": cv2.warpPerspective(bgr, _H, (64, 48), flags=cv2.INTER_LINEAR)}


PIPELINES = [
    rp.Pipeline(
        "jit_policy", jit_policy, lambda r: {"obs": r.normal(size=(1, 12)).astype(np.float32)}
    ),
    rp.Pipeline("midas_cubic", midas_cubic, lambda r: {"bgr": rp._image(r, 48, 64)}),
    rp.Pipeline("clahe", clahe, lambda r: {"bgr": rp._image(r, 48, 64)}),
    rp.Pipeline("birds_eye", birds_eye, lambda r: {"bgr": rp._image(r, 48, 64)}),
]


if __name__ == "__main__":
    rp.PIPELINES[:] = PIPELINES
    rp.main(sys.argv[1:])
