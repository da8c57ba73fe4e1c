"""cvtColor BGR/RGB -> HLS (lane detection's S channel) vs real cv2: every uint8 colour
exactly, float32 images within the declared accuracy, and a traced lane front end."""

from __future__ import annotations

import warnings

import cv2
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import patchport
from patchport import annotate
from patchport.patches.opencv import color

from .helpers import PROPERTY, assert_matches, image, seeds

CODES = (cv2.COLOR_BGR2HLS, cv2.COLOR_RGB2HLS, cv2.COLOR_BGR2HLS_FULL, cv2.COLOR_RGB2HLS_FULL)


@pytest.mark.parametrize("code", CODES)
@pytest.mark.parametrize("width", [4099, 37])
def test_every_uint8_colour_matches_opencv(code, width):
    """All 2**24 colours, in rows whose lengths put pixels in OpenCV's vector loop and in
    its scalar remainder (which differ in how the hue's sum is rounded)."""
    v = np.arange(256, dtype=np.uint8)
    colours = np.stack(np.meshgrid(v, v, v, indexing="ij"), -1).reshape(-1, 3)
    img = colours[: len(colours) // width * width].reshape(-1, width, 3)
    ipp = cv2.ipp.useIPP()
    try:
        cv2.ipp.setUseIPP(False)  # uint8 _FULL goes to IPP otherwise (refused, below)
        np.testing.assert_array_equal(color.cvtColor(img, code), cv2.cvtColor(img, code))
    finally:
        cv2.ipp.setUseIPP(ipp)


@pytest.mark.parametrize("code", CODES[2:])
def test_uint8_full_range_hls_through_ipp_is_refused(code):
    ipp = cv2.ipp.useIPP()
    try:
        cv2.ipp.setUseIPP(True)
        if not cv2.ipp.useIPP():
            pytest.skip("this OpenCV has no IPP")
        with pytest.raises(ValueError, match="setUseIPP"):
            color.cvtColor(image(1, 4, 5, 3, "uint8"), code)
    finally:
        cv2.ipp.setUseIPP(ipp)


@PROPERTY
@given(
    seed=seeds,
    height=st.integers(1, 20),
    width=st.integers(1, 60),
    code=st.sampled_from(CODES),
    dtype=st.sampled_from(["uint8", "float32"]),
)
def test_hls_matches_opencv(seed, height, width, code, dtype):
    src = image(seed, height, width, 3, dtype)
    if dtype == "uint8" and code in CODES[2:] and cv2.ipp.useIPP():
        return  # refused (the test above)
    if dtype == "float32":
        src = np.clip(src, 0.0, 1.0)
        src[: height // 3] = src[: height // 3, :, :1]  # grey pixels: no hue
    assert_matches("cvtColor", cv2.cvtColor(src, code), color.cvtColor(src, code), scale=360.0)


def lane_binary(rgb):
    """The advanced-lane-finding threshold: Sobel x scaled by its max, OR the HLS S channel."""
    gray = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
    sobel = np.absolute(cv2.Sobel(gray, cv2.CV_64F, 1, 0))
    scaled = np.uint8(255 * sobel / np.max(sobel))
    s_channel = cv2.cvtColor(rgb, cv2.COLOR_RGB2HLS)[:, :, 2]
    binary = np.zeros_like(s_channel)
    binary[((s_channel >= 120) & (s_channel <= 255)) | (scaled >= 40)] = 1
    return {"binary": binary, "hls": cv2.cvtColor(rgb, cv2.COLOR_BGR2HLS)}


def test_a_traced_lane_threshold_replays_in_onnx_and_pt2(tmp_path):
    rng = np.random.default_rng(8)
    frames = [rng.integers(0, 256, (24, 40, 3), dtype=np.uint8) for _ in range(3)]
    backends = ("onnx", "pt2")
    with (
        warnings.catch_warnings(),
        patchport.session("lane", str(tmp_path), patching=["opencv"], strict=True),
    ):
        warnings.simplefilter("error", patchport.PatchportWarning)
        for backend in backends:
            rgb = annotate.input_tensors(backend, {"rgb": frames[0]})
            annotate.output_tensors(backend, lane_binary(rgb), export_with=backend)
    manager = patchport.InferenceManager(patchport.compile_graph(visualize=False).yaml_path)
    for frame in frames[1:]:
        got = manager.run_policy({f"{b}/rgb": frame for b in backends})
        for name, want in lane_binary(frame).items():
            for backend in backends:
                np.testing.assert_array_equal(got[f"{backend}/{name}"].numpy(), want)
