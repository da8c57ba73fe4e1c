"""warpAffine with a matrix computed from traced data (face alignment from landmarks):
the matrix stays in the graph, each backend replays it against real cv2 on fresh data."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

import patchport
from patchport import annotate
from patchport.patches.opencv import traced_warp

pytestmark = [
    pytest.mark.skipif(
        not traced_warp.supported(), reason="needs OpenCV 5.1's warp positions in double"
    ),
    pytest.mark.filterwarnings("error:export_with='jit-script'"),  # no trace fallback
]

EYES = np.array([[38.3, 51.7], [73.5, 51.5]], np.float32)  # where the eyes should land


def align(image, eyes, flags=cv2.INTER_LINEAR):
    """The similarity mapping two detected eye points onto EYES (rotation and scale as one
    complex ratio, no Python branch on traced data)."""
    d = eyes[1] - eyes[0]
    t = EYES[1] - EYES[0]
    norm = (d**2).sum()
    a = (t[0] * d[0] + t[1] * d[1]) / norm
    b = (t[1] * d[0] - t[0] * d[1]) / norm
    centre, goal = eyes.mean(axis=0), EYES.mean(axis=0)
    M = np.stack(
        [
            np.stack([a, -b, goal[0] - a * centre[0] + b * centre[1]]),
            np.stack([b, a, goal[1] - b * centre[0] - a * centre[1]]),
        ]
    ).astype(np.float64)
    if flags & cv2.WARP_INVERSE_MAP:
        M = cv2.invertAffineTransform(M)
    return cv2.warpAffine(image, M, (112, 112), flags=flags, borderValue=(0.0, 0.0, 0.0))


def _sample(rng, dtype):
    image = rng.integers(0, 256, (96, 128, 3)).astype(dtype)
    eyes = (np.array([[40.0, 45.0], [80.0, 50.0]]) + rng.normal(0, 4, (2, 2))).astype(np.float32)
    return {"image": image, "eyes": eyes}


@pytest.mark.parametrize("backend", ["onnx", "pt2", "jit"])
@pytest.mark.parametrize(
    ("dtype", "flags"),
    [("uint8", cv2.INTER_LINEAR), ("float32", cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP)],
)
def test_a_matrix_from_traced_landmarks_replays_against_opencv(tmp_path, backend, dtype, flags):
    rng = np.random.default_rng(3)
    with patchport.session("face", str(tmp_path), patching=["opencv"], strict=True):
        for _ in range(2):
            image, eyes = annotate.input_tensors("n", _sample(rng, dtype))
            annotate.output_tensors("n", {"face": align(image, eyes, flags)}, export_with=backend)
    manager = patchport.InferenceManager(patchport.compile_graph(visualize=False).yaml_path)
    for _ in range(2):
        fresh = _sample(rng, dtype)
        got = manager.run_policy({f"n/{k}": v for k, v in fresh.items()})["n/face"].numpy()
        expected = align(fresh["image"], fresh["eyes"], flags)
        assert got.dtype == expected.dtype
        if dtype == "uint8":  # warpAffine's declared accuracy: within 1, nearly always exact
            diff = np.abs(got.astype(int) - expected.astype(int))
            assert diff.max() <= 1 and np.count_nonzero(diff) <= expected.size // 1000
        else:
            np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-3)
