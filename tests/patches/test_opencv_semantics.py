"""The OpenCV release semantics table, and the Scalar arithmetic that differs between
releases (OpenCV 5.1 adds a fractional Scalar in float32; 4.x and 5.0 round it first)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from patchport.errors import UnsupportedCaseError
from patchport.patches.opencv import elementwise
from patchport.patches.opencv.semantics import current, semantics_for


@pytest.mark.parametrize(
    ("version", "release"),
    [
        ("4.8.1", (4, 14)),
        ("4.14.0", (4, 14)),
        ("5.0.0", (5, 0)),
        ("5.1.0", (5, 1)),
        ("5.3.2", (5, 1)),
        ("3.4.18", (4, 14)),
    ],
)
def test_each_version_reads_the_nearest_older_release(version, release):
    assert semantics_for(version).release == release


def test_the_installed_release_is_read_from_cv2():
    assert current() == semantics_for(cv2.__version__)


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "int16"])
@pytest.mark.parametrize("number", [40.5, 41.5, -40.5, 0.5, 2.5, 0.49999997, 1000.49999, 300.7])
def test_fractional_scalars_round_like_the_installed_opencv(dtype, number):
    """cv2.subtract(gray, 40.5): OpenCV 4.14 gives g - 40, OpenCV 5.1 rounds g - 40.5 half
    to even (41 -> 0, 42 -> 2)."""
    gray = np.arange(0, 240, dtype=dtype).reshape(8, 30)
    for name in ("add", "subtract", "absdiff"):
        expected = getattr(cv2, name)(gray, number)
        np.testing.assert_array_equal(getattr(elementwise, name)(gray, number), expected, name)
    colour = np.repeat(gray[..., None], 3, axis=2)
    scalar = (number, 1.0, -number)
    for name in ("add", "subtract", "absdiff"):
        expected = getattr(cv2, name)(colour, scalar)
        np.testing.assert_array_equal(getattr(elementwise, name)(colour, scalar), expected, name)


@pytest.mark.parametrize("number", [256, 300, -1, -256, -257, 255.6, -255.6, 256.5])
def test_absdiff_with_scalars_out_of_uint8_range(number):
    """OpenCV 5.1 saturates an all-integer Scalar to the image's range first."""
    gray = np.arange(0, 240, dtype=np.uint8).reshape(8, 30)
    np.testing.assert_array_equal(elementwise.absdiff(gray, number), cv2.absdiff(gray, number))
    colour = np.repeat(gray[..., None], 3, axis=2)
    for scalar in ((number, 1, -5), (number, 0.5, -5)):
        got = elementwise.absdiff(colour, scalar)
        np.testing.assert_array_equal(got, cv2.absdiff(colour, scalar))


def test_absdiff_of_int16_below_its_range_matches_or_is_refused():
    """OpenCV 5.1's absdiff of int16 and an integer below -32768 is erratic: refused."""
    values = np.array([[-30000, 1, 32767, -32768, 100, -100]], np.int16)
    if current().absdiff_saturates_integer_scalar:
        with pytest.raises(UnsupportedCaseError, match="absdiff.*src2"):
            elementwise.absdiff(values, -40000)
    else:
        expected = cv2.absdiff(values, -40000)
        np.testing.assert_array_equal(elementwise.absdiff(values, -40000), expected)
    np.testing.assert_array_equal(
        elementwise.absdiff(values, -40000.5), cv2.absdiff(values, -40000.5)
    )


def test_non_finite_scalars_of_integer_images_are_refused():
    gray = np.zeros((4, 8), np.uint8)
    for name in ("add", "subtract", "absdiff", "multiply"):
        with pytest.raises(UnsupportedCaseError, match=f"cv2.{name}.*src2"):
            getattr(elementwise, name)(gray, float("nan"))
