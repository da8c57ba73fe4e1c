"""cornerHarris and cornerMinEigenVal vs real cv2 (within 1e-5 of the data's magnitude, as
declared), their refusals, and the OpenCV tutorial's Harris corners replayed in ONNX Runtime."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from patchport.patches.opencv import corners

from .helpers import PROPERTY, assert_matches, image, seeds

BORDERS = [cv2.BORDER_CONSTANT, cv2.BORDER_REPLICATE, cv2.BORDER_REFLECT, cv2.BORDER_REFLECT_101]


@PROPERTY
@given(
    seed=seeds,
    height=st.integers(1, 30),
    width=st.integers(1, 30),
    dtype=st.sampled_from(["uint8", "float32"]),
    block=st.integers(1, 6),
    ksize=st.sampled_from([-1, 1, 3, 5, 7]),
    border=st.sampled_from(BORDERS),
    k=st.floats(0.0, 0.2),
)
def test_corner_responses_match_opencv(seed, height, width, dtype, block, ksize, border, k):
    assume(block % 2 or border in (cv2.BORDER_REFLECT, cv2.BORDER_REFLECT_101))
    src = image(seed, height, width, 0, dtype)
    # the data's magnitude: the block's gradient matrix trace (the responses cancel below it)
    trace = cv2.cornerEigenValsAndVecs(src, block, ksize, borderType=border)[..., :2].sum(-1)
    magnitude = float(np.abs(trace).max())
    floor = 1e-12  # a flat image: its responses are rounding noise
    harris = cv2.cornerHarris(src, block, ksize, k, borderType=border)
    got = corners.cornerHarris(src, block, ksize, k, borderType=border)
    assert_matches("cornerHarris", harris, got, scale=max(magnitude**2 * (1 + k), floor))
    eigen = cv2.cornerMinEigenVal(src, block, ksize=ksize, borderType=border)
    got = corners.cornerMinEigenVal(src, block, ksize=ksize, borderType=border)
    assert_matches("cornerMinEigenVal", eigen, got, scale=max(magnitude, floor))


def test_unreproduced_cases_are_refused_naming_the_argument():
    gray = np.zeros((8, 8), np.uint8)
    with pytest.raises(ValueError, match="blockSize=2.*BORDER_REFLECT"):
        corners.cornerHarris(gray, 2, 3, 0.04, borderType=cv2.BORDER_CONSTANT)
    with pytest.raises(ValueError, match="ksize=4"):
        corners.cornerMinEigenVal(gray, 3, ksize=4)
    with pytest.raises(ValueError, match="src"):
        corners.cornerHarris(np.zeros((8, 8, 3), np.uint8), 3, 3, 0.04)


def test_harris_tutorial_replays_in_onnx_runtime(tmp_path, recwarn):
    """The OpenCV tutorial: cornerHarris of float32 grey, dilate, corners painted red."""
    import onnxruntime

    import patchport
    from patchport import annotate

    def mark(bgr):
        gray = np.float32(cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY))
        response = cv2.dilate(cv2.cornerHarris(gray, 2, 3, 0.04), None)
        out = bgr.copy()
        out[response > 0.01 * response.max()] = [0, 0, 255]
        return {"marked": out, "eigen": cv2.cornerMinEigenVal(gray, 3)}

    rng = np.random.default_rng(0)
    frame = cv2.resize(rng.integers(0, 256, (6, 8, 3), np.uint8), (64, 48))
    with patchport.session("harris", str(tmp_path), patching=["opencv"], strict=True):
        bgr = annotate.input_tensors("corners", {"bgr": frame})
        annotate.output_tensors("corners", mark(bgr), export_with="onnx")
    result = patchport.compile_graph(visualize=False)
    assert not [w for w in recwarn if issubclass(w.category, patchport.PatchportWarning)]
    session = onnxruntime.InferenceSession(str(result.models["corners"]))
    fresh = cv2.resize(rng.integers(0, 256, (6, 8, 3), np.uint8), (64, 48))
    got = dict(zip(["marked", "eigen"], session.run(None, {"bgr": fresh})))
    want = mark(fresh)
    np.testing.assert_array_equal(got["marked"], want["marked"])
    np.testing.assert_allclose(got["eigen"], want["eigen"], rtol=1e-5, atol=1e-3)
