"""cv2.resize by factors: OpenCV's own paths reproduced at every size.

An exact 2:1 INTER_LINEAR shrink is OpenCV's INTER_AREA fast path (partial windows at odd
sizes included); ``fx``/``fy`` give an output size OpenCV rounds half to even.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from patchport.patches.opencv import geometry
from patchport.patches.opencv.resize_lowering import round_ratio, size_ratio


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "float32"])
@pytest.mark.parametrize("cn", [1, 2, 3, 4])
def test_half_size_linear_is_opencvs_area_fast_path(cn, dtype):
    rng = np.random.default_rng(cn)
    for height in range(1, 10):
        for width in range(2, 12):
            src = rng.integers(0, 256, (height, width, cn)).astype(dtype)
            if dtype == "float32":
                src = src / np.float32(255)
            if round(height * 0.5) == 0:
                continue
            expected = cv2.resize(src, None, fx=0.5, fy=0.5)
            got = geometry.resize(src, None, fx=0.5, fy=0.5)
            if dtype == "float32":
                np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)
            elif dtype == "uint16":  # declared within 1
                assert np.abs(got.astype(int) - expected.astype(int)).max() <= 1
            else:
                np.testing.assert_array_equal(got, expected, err_msg=f"{height}x{width}")


@pytest.mark.parametrize("factor", [0.5, 0.25, 1 / 3, 0.3, 1.5, 2.0, 2 / 3, 0.9, 0.123456])
def test_output_size_in_integers_is_opencvs_rounding(factor):
    """The size computed in the graph from an integer ratio equals cvRound(size * factor)."""
    sizes = np.arange(1, 1 << 16, dtype=np.int64)
    p, q = size_ratio(factor)
    np.testing.assert_array_equal(round_ratio(sizes, p, q), np.rint(sizes * factor))


@pytest.mark.parametrize("factor", [0.7, 1.1])
def test_factors_whose_double_product_rounds_unlike_any_ratio_have_none(factor):
    """0.7 lies just below 7/10: OpenCV's size*0.7 rounds up at some sizes (5 -> 4) and not
    at others (45 -> 31), so such a size cannot follow a dynamic axis (reported in words)."""
    assert size_ratio(factor) is None
