"""Shared pieces of the OpenCV replacement tests: random images and the comparison rule."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from patchport.patches import opencv

# modest: two CPU cores are shared; every example runs real cv2 and the torch replacement
PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

seeds = st.integers(0, 2**32 - 1)


def image(seed: int, height: int, width: int, channels: int, dtype: str) -> np.ndarray:
    """A random image; float32 values span [-0.5, 1.5) so signs and saturation both occur."""
    rng = np.random.default_rng(seed)
    shape = (height, width) if channels == 0 else (height, width, channels)
    if dtype == "uint8":
        return rng.integers(0, 256, size=shape, dtype=np.uint8)
    if dtype == "uint16":  # depth images: full range, or millimetres of a few metres
        high = 65536 if seed % 2 else 8000
        return rng.integers(0, high, size=shape).astype(np.uint16)
    if dtype == "int16":
        return rng.integers(-2000, 2000, size=shape).astype(np.int16)
    return (rng.random(shape) * 2.0 - 0.5).astype(dtype)


def assert_matches(function: str, expected: np.ndarray, got: np.ndarray, scale: float = 0.0):
    """The promised accuracy: integer outputs within the declared units (0 = exact), float
    outputs within 1e-5 relative to the data's magnitude (``scale`` or the output's)."""
    assert isinstance(got, np.ndarray) and type(got) is np.ndarray, type(got)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    assert got.flags.c_contiguous
    if expected.size == 0:
        return
    if expected.dtype.kind in "iu":
        units = opencv.REGISTRY[function].tolerance(expected.dtype)[1]
        diff = np.abs(got.astype(np.int64) - expected.astype(np.int64))
        assert diff.max() <= units, f"max |diff| {diff.max()} > {units} at {diff.argmax()}"
    else:
        magnitude = max(scale, float(np.abs(expected).max()), 1e-30)
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5 * magnitude)
