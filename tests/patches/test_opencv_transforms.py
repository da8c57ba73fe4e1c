"""perspectiveTransform / invertAffineTransform vs real cv2, traced and replayed in ONNX
Runtime with the matrix itself traced."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchport.patches.opencv import transforms

from .helpers import PROPERTY, assert_matches, seeds


@PROPERTY
@given(
    seed=seeds,
    count=st.integers(1, 40),
    cn=st.sampled_from([2, 3]),
    dtype=st.sampled_from(["float32", "float64"]),
    layout=st.sampled_from(["n1c", "1nc"]),
)
def test_perspective_transform_matches_opencv(seed, count, cn, dtype, layout):
    rng = np.random.default_rng(seed)
    shape = (count, 1, cn) if layout == "n1c" else (1, count, cn)
    points = (rng.normal(size=shape) * 50).astype(dtype)
    matrix = np.eye(cn + 1) + rng.normal(size=(cn + 1, cn + 1)) * 0.1
    if seed % 5 == 0:
        matrix[-1] = 0.0  # every w is 0: OpenCV writes zeros
    expected = cv2.perspectiveTransform(points, matrix)
    got = transforms.perspectiveTransform(points, matrix)
    assert_matches("perspectiveTransform", expected, got)
    if dtype == "float32":
        np.testing.assert_array_equal(got, expected)  # declared exact


@PROPERTY
@given(seed=seeds, dtype=st.sampled_from(["float32", "float64"]))
def test_invert_affine_transform_matches_opencv(seed, dtype):
    matrix = np.random.default_rng(seed).normal(size=(2, 3)).astype(dtype)
    if seed % 7 == 0:
        matrix[1, :2] = 0.0  # singular: OpenCV returns 0 for the linear part
    expected = cv2.invertAffineTransform(matrix)
    got = transforms.invertAffineTransform(matrix)
    assert_matches("invertAffineTransform", expected, got)
    if dtype == "float64":
        np.testing.assert_array_equal(got, expected)


def test_a_matrix_of_the_wrong_shape_is_refused_naming_m():
    with pytest.raises(ValueError, match="argument m="):
        transforms.perspectiveTransform(np.zeros((4, 1, 2), np.float32), np.eye(2))


def test_traced_points_and_traced_homography_replay_in_onnx_runtime(tmp_path):
    import onnxruntime

    import patchport
    from patchport import annotate

    def project(corners, homography, affine):
        moved = cv2.perspectiveTransform(corners, homography)
        back = cv2.invertAffineTransform(affine)
        return {"moved": moved, "back": back}

    rng = np.random.default_rng(0)
    sample = {
        "corners": (rng.normal(size=(4, 1, 2)) * 20).astype(np.float32),
        "homography": np.eye(3) + rng.normal(size=(3, 3)) * 0.05,
        "affine": rng.normal(size=(2, 3)),
    }
    with patchport.session("pts", str(tmp_path), patching=["opencv"], strict=True):
        traced = annotate.input_tensors("geo", sample)
        annotate.output_tensors("geo", project(*traced), export_with="onnx")
    result = patchport.compile_graph(visualize=False)
    session = onnxruntime.InferenceSession(str(result.models["geo"]))
    fresh = {
        "corners": (rng.normal(size=(4, 1, 2)) * 20).astype(np.float32),
        "homography": np.eye(3) + rng.normal(size=(3, 3)) * 0.05,
        "affine": rng.normal(size=(2, 3)),
    }
    got = dict(zip(["moved", "back"], session.run(None, fresh)))
    want = project(*fresh.values())
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-6)


@PROPERTY
@given(
    seed=seeds,
    count=st.integers(1, 30),
    cn=st.sampled_from([1, 2, 3, 4]),
    rows=st.integers(1, 4),
    affine=st.booleans(),
    dtype=st.sampled_from(["float32", "float64"]),
)
def test_transform_matches_opencv(seed, count, cn, rows, affine, dtype):
    rng = np.random.default_rng(seed)
    points = (rng.normal(size=(count, 1, cn)) * 50).astype(dtype)
    matrix = rng.normal(size=(rows, cn + 1 if affine else cn))
    expected = cv2.transform(points, matrix)
    got = transforms.transform(points, matrix)
    assert_matches("transform", expected, got, scale=float(np.abs(expected).max()))


def test_transform_of_8bit_images_is_refused_naming_the_dtype():
    with pytest.raises(ValueError, match="argument src.dtype=uint8"):
        transforms.transform(np.zeros((3, 3, 3), np.uint8), np.eye(3))
