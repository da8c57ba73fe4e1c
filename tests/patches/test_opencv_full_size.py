"""Camera-sized frames (480x640): positions and weights must stay right at large
coordinates, where float32 rounding differs from the small images of the property tests."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from patchport.patches import opencv
from patchport.patches.opencv.semantics import current

from .helpers import assert_matches

rng = np.random.default_rng(2024)
FRAME = rng.integers(0, 256, (480, 640, 3), dtype=np.uint8)
K = np.array([[500.0, 0, 319.5], [0, 500, 239.5], [0, 0, 1]])
MAPS = cv2.initUndistortRectifyMap(K, np.array([-0.3, 0.1, 1e-3, 2e-3, 0]), None, K, (640, 480), 5)
ROTATION = cv2.getRotationMatrix2D((320, 240), 13, 0.9)

CASES = {
    "cvtColor": ((cv2.COLOR_BGR2HSV,), {}),
    "resize": (((237, 177),), {}),
    "remap": ((*MAPS, cv2.INTER_LINEAR), {}),
    "warpAffine": ((ROTATION, (640, 480)), {"borderMode": cv2.BORDER_REPLICATE}),
    "GaussianBlur": (((0, 0), 3.0), {}),
    "blur": (((5, 5),), {}),
    "addWeighted": ((0.3, "flipped", 0.6, 3.3), {}),
    "normalize": ((None, 0, 255, cv2.NORM_MINMAX), {}),
}


@pytest.mark.parametrize("dtype", ["uint8", "float32"])
@pytest.mark.parametrize("function", sorted(CASES))
def test_full_size_frame_matches_opencv(function, dtype):
    args, kwargs = CASES[function]
    src = FRAME if dtype == "uint8" else (FRAME / 255.0).astype(np.float32)
    if function == "addWeighted":  # the second image: the frame upside down
        args = (args[0], np.ascontiguousarray(src[::-1]), *args[2:])
    expected = getattr(cv2, function)(src, *args, **kwargs)
    got = opencv.REGISTRY[function].replacement(src, *args, **kwargs)
    assert_matches(function, expected, got, scale=float(np.abs(expected).max()))


def test_full_size_enlarging_is_bit_exact():
    """OpenCV 5 blends the clamped first and last rows with their own fractions."""
    for size in ((1000, 700), (1280, 960), (701, 481)):
        np.testing.assert_array_equal(opencv.geometry.resize(FRAME, size), cv2.resize(FRAME, size))


@pytest.mark.skipif(current().float_positions, reason="OpenCV 5 samples float positions")
@pytest.mark.parametrize("dtype", ["uint8", "uint16", "float32"])
def test_opencv4_warps_and_remap_are_bit_exact(dtype):
    """OpenCV 4 rounds every position to 1/32 pixel (warpAffine in 1/1024 steps first,
    warpPerspective per 64-column block in double) and samples through its weight table."""
    src = {"uint8": FRAME, "uint16": FRAME.astype(np.uint16) * 200}.get(dtype)
    src = (FRAME / 255.0).astype(np.float32) if src is None else src
    homography = cv2.getPerspectiveTransform(
        np.float32([[100, 300], [540, 300], [640, 480], [0, 480]]),
        np.float32([[10, 20], [600, 5], [630, 470], [30, 400]]),
    )
    for border in (cv2.BORDER_CONSTANT, cv2.BORDER_REPLICATE):
        calls = [
            ("remap", (*MAPS, cv2.INTER_LINEAR)),
            ("warpAffine", (ROTATION, (640, 480))),
            ("warpPerspective", (homography, (300, 200))),
        ]
        for name, args in calls:
            expected = getattr(cv2, name)(src, *args, borderMode=border)
            got = opencv.REGISTRY[name].replacement(src, *args, borderMode=border)
            np.testing.assert_array_equal(got, expected, err_msg=f"{name} {border}")
