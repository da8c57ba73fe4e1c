"""magnitude, phase, cartToPolar and polarToCart replacements vs real cv2."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchport.patches.opencv import polar

from .helpers import PROPERTY, assert_matches, seeds


def _field(seed: int, height: int, width: int, dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """Flow-like x, y with exact zeros, signed zeros and axis-aligned vectors mixed in."""
    rng = np.random.default_rng(seed)
    x, y = (
        (rng.normal(size=(height, width)) * 5).astype(dtype),
        (rng.normal(size=(height, width)) * 5).astype(dtype),
    )
    x.flat[:: max(1, x.size // 5)] = 0.0
    y.flat[1 :: max(1, y.size // 4)] = -0.0
    return x, y


@PROPERTY
@given(
    seed=seeds,
    height=st.integers(1, 30),
    width=st.integers(1, 30),
    dtype=st.sampled_from(["float32", "float64"]),
    degrees=st.booleans(),
)
def test_polar_functions_match_opencv(seed, height, width, dtype, degrees):
    x, y = _field(seed, height, width, dtype)
    full_turn = 360.0 if degrees else 2 * np.pi
    assert_matches("magnitude", cv2.magnitude(x, y), polar.magnitude(x, y))
    assert_matches(
        "phase",
        cv2.phase(x, y, angleInDegrees=degrees),
        polar.phase(x, y, None, degrees),
        full_turn,
    )
    mag, ang = cv2.cartToPolar(x, y, angleInDegrees=degrees)
    got_mag, got_ang = polar.cartToPolar(x, y, angleInDegrees=degrees)
    assert_matches("cartToPolar", mag, got_mag)
    assert_matches("cartToPolar", ang, got_ang, full_turn)
    back = cv2.polarToCart(mag, ang, angleInDegrees=degrees)
    got_back = polar.polarToCart(mag, ang, angleInDegrees=degrees)
    for e, g in zip(back, got_back):
        assert_matches("polarToCart", e, g, float(np.abs(mag).max(initial=1.0)))


def test_angles_are_opencv_s_polynomial_not_atan2():
    """OpenCV's fastAtan2 is ~1e-4 radians from atan2: the replacement follows OpenCV."""
    x, y = _field(7, 40, 40, "float32")
    expected = cv2.phase(x, y)
    exact = np.mod(np.arctan2(y, x), 2 * np.pi)
    assert np.abs(expected - exact).max() > 1e-4
    np.testing.assert_allclose(polar.phase(x, y), expected, rtol=0, atol=2e-6)


def test_mismatched_pairs_are_refused_naming_the_argument():
    x, y = _field(1, 4, 5, "float32")
    with pytest.raises(ValueError, match=r"argument y=float64\[4, 5\]"):
        polar.magnitude(x, y.astype(np.float64))
    with pytest.raises(ValueError, match="argument x.dtype=uint8"):
        polar.phase(x.astype(np.uint8), y)
