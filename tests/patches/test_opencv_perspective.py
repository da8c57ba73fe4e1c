"""cv2.warpPerspective (constant homography) vs real cv2, and replayed in ONNX Runtime."""

from __future__ import annotations

import cv2
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from patchport.patches.opencv import geometry

from .helpers import PROPERTY, assert_matches, image, seeds


def _homography(seed: int, width: int, height: int, spread: float) -> np.ndarray:
    rng = np.random.default_rng(seed)
    corners = np.float32([[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]])
    moved = corners + rng.uniform(-spread, spread, (4, 2)).astype(np.float32)
    return cv2.getPerspectiveTransform(corners, moved)


@PROPERTY
@given(
    seed=seeds,
    height=st.integers(4, 40),
    width=st.integers(4, 40),
    cn=st.sampled_from([0, 1, 3, 4]),
    dtype=st.sampled_from(["uint8", "uint16", "float32"]),
    spread=st.floats(0.0, 8.0),
    inverse=st.booleans(),
    border=st.sampled_from([cv2.BORDER_CONSTANT, cv2.BORDER_REPLICATE]),
    size=st.tuples(st.integers(1, 50), st.integers(1, 50)),
)
def test_warp_perspective_matches_opencv(
    seed, height, width, cn, dtype, spread, inverse, border, size
):
    src = image(seed, height, width, cn, dtype)
    matrix = _homography(seed, width, height, spread)
    flags = cv2.INTER_LINEAR | (cv2.WARP_INVERSE_MAP if inverse else 0)
    expected = cv2.warpPerspective(src, matrix, size, flags=flags, borderMode=border)
    got = geometry.warpPerspective(src, matrix, size, flags=flags, borderMode=border)
    assert_matches("warpPerspective", expected, got, scale=float(np.abs(src).max()))


def test_birds_eye_view_replays_in_onnx_runtime(tmp_path):
    import onnxruntime

    import patchport
    from patchport import annotate

    matrix = _homography(5, 64, 48, 6.0)
    frame = image(1, 48, 64, 3, "uint8")
    with patchport.session("warp", str(tmp_path), patching=["opencv"], strict=True):
        bgr = annotate.input_tensors("top", {"bgr": frame})
        top = cv2.warpPerspective(bgr, matrix, (64, 48))
        annotate.output_tensors("top", {"top": top}, export_with="onnx")
    result = patchport.compile_graph(visualize=False)
    session = onnxruntime.InferenceSession(str(result.models["top"]))
    fresh = image(2, 48, 64, 3, "uint8")
    got = session.run(None, {"bgr": fresh})[0]
    want = cv2.warpPerspective(fresh, matrix, (64, 48))
    assert np.abs(got.astype(int) - want.astype(int)).max() <= 1  # declared within 1
