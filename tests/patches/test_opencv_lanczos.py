"""cv2.resize INTER_LANCZOS4 vs real cv2 (uint8 within 1, floats within 1e-6 of the data's
magnitude, as declared) and a traced Lanczos resize replayed in ONNX Runtime."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from patchport.patches.opencv import geometry

from .helpers import PROPERTY, assert_matches, image, seeds


@PROPERTY
@given(
    seed=seeds,
    height=st.integers(1, 40),
    width=st.integers(1, 40),
    cn=st.sampled_from([0, 1, 3, 4]),
    dtype=st.sampled_from(["uint8", "float32", "float64"]),
    target=st.one_of(
        st.tuples(st.integers(1, 70), st.integers(1, 70)).map(lambda s: ("dsize", s)),
        st.tuples(st.floats(0.2, 4.0), st.floats(0.2, 4.0)).map(lambda f: ("factors", f)),
    ),
)
def test_resize_lanczos4_matches_opencv(seed, height, width, cn, dtype, target):
    src = image(seed, height, width, cn, dtype)
    if target[0] == "dsize":
        args, kwargs = (target[1],), {}
    else:
        fx, fy = target[1]
        assume(round(width * fx) > 0 and round(height * fy) > 0)
        args, kwargs = (None,), {"fx": fx, "fy": fy}
    expected = cv2.resize(src, *args, interpolation=cv2.INTER_LANCZOS4, **kwargs)
    got = geometry.resize(src, *args, interpolation=cv2.INTER_LANCZOS4, **kwargs)
    assert_matches("resize", expected, got, scale=float(np.abs(src).max()))
    if dtype != "uint8":  # declared: within 1e-6 of the data's magnitude
        magnitude = float(np.abs(src).max())
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6 * magnitude)


def test_lanczos4_of_uint16_is_refused_naming_the_argument():
    with pytest.raises(ValueError, match="INTER_LANCZOS4.*uint8, float32, float64"):
        geometry.resize(np.zeros((4, 4), np.uint16), (8, 8), interpolation=cv2.INTER_LANCZOS4)


def test_traced_lanczos4_resize_replays_in_onnx_runtime(tmp_path):
    import onnxruntime

    import patchport
    from patchport import annotate

    def prepare(bgr):
        small = cv2.resize(bgr, (37, 23), interpolation=cv2.INTER_LANCZOS4)
        big = cv2.resize(bgr / 255.0, None, fx=1.5, fy=1.5, interpolation=cv2.INTER_LANCZOS4)
        return {"small": small, "big": big}

    rng = np.random.default_rng(0)
    with patchport.session("lanczos", str(tmp_path), patching=["opencv"], strict=True):
        bgr = annotate.input_tensors("prep", {"bgr": rng.integers(0, 256, (30, 40, 3), np.uint8)})
        annotate.output_tensors("prep", prepare(bgr), export_with="onnx")
    result = patchport.compile_graph(visualize=False)
    session = onnxruntime.InferenceSession(str(result.models["prep"]))
    fresh = rng.integers(0, 256, (30, 40, 3), dtype=np.uint8)
    got = dict(zip(["small", "big"], session.run(None, {"bgr": fresh})))
    want = prepare(fresh)
    assert got["small"].dtype == np.uint8
    assert np.abs(got["small"].astype(int) - want["small"]).max() <= 1
    np.testing.assert_allclose(got["big"], want["big"], rtol=0, atol=1e-6)
