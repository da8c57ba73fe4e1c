"""The pipeline of ``pipelines.py`` written with ``from cv2 import ...`` (captured names)."""

from __future__ import annotations

import numpy as np
import torch
from cv2 import COLOR_BGR2RGB, INTER_LINEAR, GaussianBlur, cvtColor, remap, resize

from .pipelines import MEAN, STD


def policy(bgr: np.ndarray, maps, size, model: torch.nn.Module) -> torch.Tensor:
    """Same computation as pipelines.policy, through from-imported OpenCV functions."""
    undistorted = remap(bgr, maps[0], maps[1], INTER_LINEAR)
    small = resize(undistorted, size, interpolation=INTER_LINEAR)
    smooth = GaussianBlur(cvtColor(small, COLOR_BGR2RGB), (5, 5), 1.2)
    chw = np.transpose(smooth, (2, 0, 1)).astype(np.float32) / 255.0
    x = torch.from_numpy((chw - MEAN) / STD).unsqueeze(0)
    with torch.no_grad():
        return model(x)
