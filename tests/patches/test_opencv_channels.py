"""hconcat and vconcat replacements vs real cv2."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchport.patches.opencv import channels

from .helpers import PROPERTY, image, seeds


@PROPERTY
@given(
    seed=seeds,
    count=st.integers(1, 4),
    cn=st.sampled_from([0, 1, 3, 4]),
    dtype=st.sampled_from(["uint8", "uint16", "int16", "float32"]),
    vertical=st.booleans(),
)
def test_concat_matches_opencv(seed, count, cn, dtype, vertical):
    rng = np.random.default_rng(seed)
    fixed = int(rng.integers(1, 20))
    parts = []
    for i in range(count):
        free = int(rng.integers(1, 20))
        height, width = (free, fixed) if vertical else (fixed, free)
        parts.append(image(seed + i, height, width, cn, dtype))
    opencv_concat = cv2.vconcat if vertical else cv2.hconcat
    ours = channels.vconcat if vertical else channels.hconcat
    expected, got = opencv_concat(parts), ours(parts)
    assert got.dtype == expected.dtype and type(got) is np.ndarray
    np.testing.assert_array_equal(got, expected)


def test_mismatched_parts_are_refused_naming_the_part():
    a, b = np.zeros((4, 5, 3), np.uint8), np.zeros((6, 5, 3), np.uint8)
    with pytest.raises(ValueError, match=r"argument src\[1\]=uint8\[6, 5, 3\]"):
        channels.hconcat([a, b])
    with pytest.raises(ValueError, match=r"argument src\[1\]=float32"):
        channels.vconcat([a, b.astype(np.float32)])
