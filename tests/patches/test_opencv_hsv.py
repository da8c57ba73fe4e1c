"""cvtColor HSV -> BGR/RGB vs real cv2 (both ways round), uint8 H/2 included."""

from __future__ import annotations

import cv2
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from patchport.patches.opencv import color

from .helpers import PROPERTY, assert_matches, seeds

FULL = (cv2.COLOR_HSV2BGR_FULL, cv2.COLOR_HSV2RGB_FULL)
ANY = (cv2.COLOR_HSV2BGR, cv2.COLOR_HSV2RGB, *FULL)


def _hsv(seed: int, height: int, width: int, dtype: str) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "uint8":
        return rng.integers(0, 256, (height, width, 3), dtype=np.uint8)
    hsv = np.dstack(
        [
            rng.uniform(0, 360, (height, width)),
            rng.random((height, width)),
            rng.random((height, width)),
        ]
    ).astype(np.float32)
    hsv[: height // 3, :, 1] = 0  # grey pixels: s == 0
    return hsv


@PROPERTY
@given(
    seed=seeds,
    height=st.integers(1, 30),
    width=st.integers(1, 60),
    case=st.one_of(
        st.sampled_from(ANY).map(lambda c: (c, "float32")),
        st.sampled_from(FULL).map(lambda c: (c, "uint8")),
    ),
)
def test_hsv_to_bgr_and_rgb_match_opencv(seed, height, width, case):
    code, dtype = case
    src = _hsv(seed, height, width, dtype)
    expected = cv2.cvtColor(src, code)
    got = color.cvtColor(src, code)
    if dtype == "uint8" and cv2.ipp.useIPP():  # _FULL through IPP: declared within 1
        assert np.abs(got.astype(int) - expected.astype(int)).max() <= 1
        return
    assert_matches("cvtColor", expected, got, scale=1.0)
    if dtype == "uint8":
        np.testing.assert_array_equal(got, expected)  # declared exact


def test_full_range_hsv_of_uint8_follows_opencv_kernel_with_ipp_off():
    """HSV2BGR_FULL: OpenCV 5.1 hands uint8 images to IPP (rounding); with IPP off its own
    kernel truncates in 64-pixel vector blocks like H/2 images: exact, both ways round."""
    before = cv2.ipp.useIPP()
    try:
        for ipp in (False, True):
            cv2.ipp.setUseIPP(ipp)
            for seed in range(40):
                src = np.random.default_rng(seed).integers(0, 256, (5, 70 + seed, 3), np.uint8)
                for code in FULL:
                    want, got = cv2.cvtColor(src, code), color.cvtColor(src, code)
                    if ipp:
                        assert np.abs(got.astype(int) - want.astype(int)).max() <= 1
                    else:
                        np.testing.assert_array_equal(got, want)
    finally:
        cv2.ipp.setUseIPP(before)


def test_bgr_hsv_bgr_round_trip_of_float_images_matches_opencv():
    bgr = np.random.default_rng(3).random((32, 48, 3)).astype(np.float32)
    hsv = color.cvtColor(bgr, cv2.COLOR_BGR2HSV)
    back = color.cvtColor(hsv, cv2.COLOR_HSV2BGR)
    expected = cv2.cvtColor(cv2.cvtColor(bgr, cv2.COLOR_BGR2HSV), cv2.COLOR_HSV2BGR)
    np.testing.assert_allclose(back, expected, rtol=1e-5, atol=1e-6)


@PROPERTY
@given(
    seed=seeds,
    height=st.integers(1, 8),
    width=st.integers(1, 150),
    code=st.sampled_from([cv2.COLOR_HSV2BGR, cv2.COLOR_HSV2RGB]),
)
def test_uint8_half_hue_to_bgr_matches_opencv(seed, height, width, code):
    """The optical-flow visualisation idiom (H = angle / 2, uint8): OpenCV truncates in its
    vector blocks and rounds the row's remaining pixels, both after fused products."""
    rng = np.random.default_rng(seed)
    src = np.dstack(
        [rng.integers(0, 180, (height, width)), rng.integers(0, 256, (height, width, 2))]
    ).astype(np.uint8)
    np.testing.assert_array_equal(color.cvtColor(src, code), cv2.cvtColor(src, code))


def test_uint8_half_hue_matches_opencv_on_every_hsv_triple():
    h, s, v = np.meshgrid(np.arange(180), np.arange(256), np.arange(256), indexing="ij")
    every = np.stack([h, s, v], -1).astype(np.uint8)
    for width in (64, 61):  # whole vector blocks; a block and a tail per row
        src = every.reshape(-1, 3)[: width * 20000].reshape(-1, width, 3)
        np.testing.assert_array_equal(
            color.cvtColor(src, cv2.COLOR_HSV2BGR), cv2.cvtColor(src, cv2.COLOR_HSV2BGR)
        )


def test_hsv_augmentation_replays_in_onnx_runtime(tmp_path):
    """albumentations-style hue shift on float images: BGR -> HSV, shift, -> BGR."""
    import onnxruntime

    import patchport
    from patchport import annotate

    def shift_hue(bgr):
        hsv = cv2.cvtColor(bgr, cv2.COLOR_BGR2HSV)
        hsv = hsv + np.array([20.0, 0.0, 0.0], np.float32)
        hsv[..., 0] = np.mod(hsv[..., 0], 360.0)
        return cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)

    frame = np.random.default_rng(0).random((24, 32, 3)).astype(np.float32)
    with patchport.session("hsv", str(tmp_path), patching=["opencv"], strict=True):
        bgr = annotate.input_tensors("aug", {"bgr": frame})
        annotate.output_tensors("aug", {"out": shift_hue(bgr)}, export_with="onnx")
    result = patchport.compile_graph(visualize=False)
    session = onnxruntime.InferenceSession(str(result.models["aug"]))
    fresh = np.random.default_rng(1).random((24, 32, 3)).astype(np.float32)
    np.testing.assert_allclose(
        session.run(None, {"bgr": fresh})[0], shift_hue(fresh), rtol=1e-5, atol=1e-5
    )
