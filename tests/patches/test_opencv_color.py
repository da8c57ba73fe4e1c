"""cvtColor replacement vs real cv2.cvtColor on random images, codes and dtypes."""

from __future__ import annotations

import cv2
import numpy as np
from hypothesis import assume, given
from hypothesis import strategies as st

from patchport.patches.opencv import color

from .helpers import PROPERTY, assert_matches, image, seeds

CODES = sorted(color._codes())


@PROPERTY
@given(
    code=st.sampled_from(CODES),
    dtype=st.sampled_from(["uint8", "float32"]),
    height=st.integers(1, 40),
    width=st.integers(1, 70),
    seed=seeds,
    named_dst_cn=st.booleans(),
    hint=st.sampled_from([cv2.ALGO_HINT_DEFAULT, cv2.ALGO_HINT_ACCURATE, cv2.ALGO_HINT_APPROX]),
)
def test_cvt_color_matches_opencv(code, dtype, height, width, seed, named_dst_cn, hint):
    kind, channels, _, out_channels, full = color._codes()[code]
    assume(not (kind == "from_hsv" and dtype == "uint8" and not full))  # refused (H/2 uint8)
    assume(not (kind == "hls" and dtype == "uint8" and full and cv2.ipp.useIPP()))  # refused
    src = image(seed, height, width, 0 if channels == 1 else channels, dtype)
    if dtype == "float32":
        src = np.abs(src)  # OpenCV's float HSV expects non-negative colours
    if dtype == "float32" and kind == "hls":  # and its float HLS colours in [0, 1]
        src = np.minimum(src, 1.0)
    dst_cn = out_channels if named_dst_cn else 0
    expected = cv2.cvtColor(src, code, dstCn=dst_cn, hint=hint)
    assert_matches("cvtColor", expected, color.cvtColor(src, code, dstCn=dst_cn, hint=hint))


def test_uint8_gray_hsv_ycc_and_xyz_are_bit_exact_on_every_colour():
    """All 2**24 colours would be slow; a 4096x64 cube sample covers every channel value."""
    rng = np.random.default_rng(1)
    src = rng.integers(0, 256, size=(4096, 64, 3), dtype=np.uint8)
    src[:256, 0] = np.arange(256)[:, None]  # every grey level
    codes = (cv2.COLOR_BGR2GRAY, cv2.COLOR_RGB2HSV, cv2.COLOR_BGR2HSV_FULL)
    codes += (cv2.COLOR_BGR2YCrCb, cv2.COLOR_YCrCb2RGB, cv2.COLOR_RGB2YUV, cv2.COLOR_YUV2BGR)
    codes += (cv2.COLOR_BGR2XYZ, cv2.COLOR_RGB2XYZ, cv2.COLOR_XYZ2BGR, cv2.COLOR_XYZ2RGB)
    for code in codes:
        np.testing.assert_array_equal(color.cvtColor(src, code), cv2.cvtColor(src, code))


@PROPERTY
@given(
    colormap=st.sampled_from(sorted(color._colormaps())),
    cn=st.sampled_from([0, 1, 3]),
    height=st.integers(1, 30),
    width=st.integers(1, 30),
    seed=seeds,
)
def test_apply_color_map_matches_opencv(colormap, cn, height, width, seed):
    src = image(seed, height, width, cn, "uint8")
    expected = cv2.applyColorMap(src, colormap)
    assert_matches("applyColorMap", expected, color.applyColorMap(src, colormap))
