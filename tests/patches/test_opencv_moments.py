"""cv2.moments of an image vs real cv2 (every moment within 1e-9 of its magnitude), its
refusals, and a blob's centroid and orientation replayed in ONNX Runtime."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchport.patches.opencv import features

from .helpers import PROPERTY, image, seeds


@PROPERTY
@given(
    seed=seeds,
    height=st.integers(1, 40),
    width=st.integers(1, 40),
    dtype=st.sampled_from(["uint8", "uint16", "float32", "float64"]),
    binary=st.booleans(),
    sparse=st.booleans(),
)
def test_moments_match_opencv(seed, height, width, dtype, binary, sparse):
    src = image(seed, height, width, 0, dtype)
    if dtype == "float32" and width == 2:  # OpenCV reads it as a contour's points
        return
    if sparse:  # mostly zero, as a mask: m00 can be 0 (OpenCV's own zero guard)
        src = np.where(image(seed + 1, height, width, 0, "uint8") > 230, src, 0).astype(dtype)
    want = cv2.moments(src, binaryImage=binary)
    got = features.moments(src, binaryImage=binary)
    assert sorted(got) == sorted(want)
    for key, value in want.items():
        assert isinstance(got[key], np.ndarray) and got[key].shape == (), key
        # each family of moments against its own magnitude (central ones cancel)
        family = [v for k, v in want.items() if k[:2] == key[:2] and len(k) == len(key)]
        scale = max(max(abs(v) for v in family), 1e-300)
        assert abs(float(got[key]) - value) <= 1e-9 * scale + 1e-12 * abs(value), key


def test_contours_and_channels_are_refused_naming_the_argument():
    contour = np.array([[[0, 0]], [[4, 0]], [[4, 3]]], np.int32)
    with pytest.raises(ValueError, match="array"):
        features.moments(contour)
    with pytest.raises(ValueError, match="contour's points"):
        features.moments(np.zeros((5, 2), np.float32))
    with pytest.raises(ValueError, match="channels"):
        features.moments(np.zeros((4, 4, 3), np.uint8))


def test_blob_centroid_and_orientation_replay_in_onnx_runtime(tmp_path, recwarn):
    import onnxruntime

    import patchport
    from patchport import annotate

    def describe(mask):
        m = cv2.moments(mask, binaryImage=True)
        centroid = np.array([m["m10"] / m["m00"], m["m01"] / m["m00"]])
        theta = 0.5 * np.arctan2(2 * m["mu11"], m["mu20"] - m["mu02"])
        return {"centroid": centroid, "theta": np.array([theta]), "hu": np.array([m["nu20"]])}

    def blob(rng):
        ys, xs = np.indices((40, 48))
        cy, cx, t = rng.uniform(12, 28), rng.uniform(12, 36), rng.uniform(0, np.pi)
        u = (xs - cx) * np.cos(t) + (ys - cy) * np.sin(t)
        v = -(xs - cx) * np.sin(t) + (ys - cy) * np.cos(t)
        return ((u / 9) ** 2 + (v / 4) ** 2 <= 1).astype(np.uint8) * 255

    rng = np.random.default_rng(0)
    with patchport.session("moments", str(tmp_path), patching=["opencv"], strict=True):
        mask = annotate.input_tensors("blob", {"mask": blob(rng)})
        annotate.output_tensors("blob", describe(mask), export_with="onnx")
    result = patchport.compile_graph(visualize=False)
    assert not [w for w in recwarn if issubclass(w.category, patchport.PatchportWarning)]
    session = onnxruntime.InferenceSession(str(result.models["blob"]))
    fresh = blob(rng)
    got = dict(zip(["centroid", "theta", "hu"], session.run(None, {"mask": fresh})))
    for key, want in describe(fresh).items():
        np.testing.assert_allclose(got[key], want, rtol=1e-9, atol=1e-12)
