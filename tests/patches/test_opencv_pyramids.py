"""pyrDown and pyrUp replacements vs real cv2 on random images."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchport.patches.opencv import pyramids

from .helpers import PROPERTY, assert_matches, image, seeds

channels = st.sampled_from([0, 1, 2, 3, 4])
dtypes = st.sampled_from(["uint8", "float32", "float64"])


@PROPERTY
@given(
    seed=seeds,
    height=st.integers(1, 40),
    width=st.integers(1, 40),
    cn=channels,
    dtype=dtypes,
    border=st.sampled_from([cv2.BORDER_REFLECT_101, cv2.BORDER_REFLECT, cv2.BORDER_REPLICATE]),
)
def test_pyr_down_matches_opencv(seed, height, width, cn, dtype, border):
    src = image(seed, height, width, cn, dtype)
    expected = cv2.pyrDown(src, borderType=border)
    got = pyramids.pyrDown(src, borderType=border)
    assert_matches("pyrDown", expected, got, scale=float(np.abs(src).max()))


@PROPERTY
@given(seed=seeds, height=st.integers(1, 30), width=st.integers(1, 30), cn=channels, dtype=dtypes)
def test_pyr_up_matches_opencv(seed, height, width, cn, dtype):
    src = image(seed, height, width, cn, dtype)
    expected = cv2.pyrUp(src)
    got = pyramids.pyrUp(src)
    assert_matches("pyrUp", expected, got, scale=float(np.abs(src).max()))


def test_other_sizes_and_borders_are_refused_naming_the_argument():
    src = image(1, 10, 12, 3, "uint8")
    assert pyramids.pyrDown(src, dstsize=(6, 5)).shape == (5, 6, 3)
    with pytest.raises(ValueError, match=r"argument dstsize=\(7, 5\)"):
        pyramids.pyrDown(src, dstsize=(7, 5))
    with pytest.raises(ValueError, match="argument borderType=BORDER_CONSTANT"):
        pyramids.pyrDown(src, borderType=cv2.BORDER_CONSTANT)
    with pytest.raises(ValueError, match="argument borderType=BORDER_REPLICATE"):
        pyramids.pyrUp(src, borderType=cv2.BORDER_REPLICATE)
