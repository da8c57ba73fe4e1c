"""The preprocessing pipeline of the end-to-end test and the benchmark, written with
``cv2.`` calls; ``pipeline_from_import.py`` is the same written with from-imports."""

from __future__ import annotations

import cv2
import numpy as np
import torch

MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32).reshape(3, 1, 1)
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32).reshape(3, 1, 1)


def camera(height: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    """A plausible pinhole camera with barrel distortion: (K, distortion coefficients)."""
    f = 0.9 * width
    K = np.array([[f, 0, width / 2 - 3.5], [0, f, height / 2 + 2.25], [0, 0, 1]])
    return K, np.array([-0.28, 0.09, 0.0008, -0.0005, -0.012])


def undistort_maps(height: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    """float32 x/y maps from cv2.initUndistortRectifyMap (computed once, before tracing)."""
    K, dist = camera(height, width)
    return cv2.initUndistortRectifyMap(K, dist, None, K, (width, height), cv2.CV_32FC1)


class TinyCNN(torch.nn.Module):
    """A small policy backbone with random weights (seeded)."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 5, stride=2),
            torch.nn.ReLU(),
            torch.nn.Conv2d(8, 16, 3, stride=2),
            torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(1),
            torch.nn.Flatten(),
        )
        self.head = torch.nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


def preprocess(bgr: np.ndarray, maps: tuple[np.ndarray, np.ndarray], size: tuple[int, int]):
    """Undistort, resize, BGR->RGB, blur, then normalise to a CHW float32 array."""
    undistorted = cv2.remap(bgr, maps[0], maps[1], cv2.INTER_LINEAR)
    small = cv2.resize(undistorted, size, interpolation=cv2.INTER_LINEAR)
    rgb = cv2.cvtColor(small, cv2.COLOR_BGR2RGB)
    smooth = cv2.GaussianBlur(rgb, (5, 5), 1.2)
    chw = np.transpose(smooth, (2, 0, 1)).astype(np.float32) / 255.0
    return (chw - MEAN) / STD


def policy(bgr: np.ndarray, maps, size, model: torch.nn.Module) -> torch.Tensor:
    """The whole step: OpenCV preprocessing, then the CNN on a batch of one."""
    x = torch.from_numpy(preprocess(bgr, maps, size)).unsqueeze(0)
    with torch.no_grad():
        return model(x)
