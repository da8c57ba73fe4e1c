"""Shared pieces of the SciPy replacement tests: the comparison rule and hypothesis settings."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, settings

from patchport.patches import scipy as sp

# modest: two CPU cores are shared; every example runs SciPy and the torch replacement
PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def assert_declared(function: str, expected, got, scale: float | None = None) -> None:
    """``got`` is a fresh ndarray like SciPy's ``expected`` (shape, dtype) within the
    accuracy ``function`` declares: integers exactly, floats within (rtol, atol) of the
    declaration, ``atol`` relative to ``scale`` (the data's magnitude) when given."""
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected)
        for e, g in zip(expected, got):
            assert_declared(function, e, g, scale)
        return
    expected, got = np.asarray(expected), got
    assert isinstance(got, np.ndarray) and type(got) is np.ndarray, type(got)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    if expected.size == 0:
        return
    rtol, atol = sp.REGISTRY[function].tolerance(expected.dtype)
    if expected.dtype.kind in "iub":
        assert np.array_equal(got, expected), np.abs(got.astype(float) - expected).max()
        return
    if scale is not None:
        atol = atol * max(scale, 1.0)
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)


def assert_exact(expected, got) -> None:
    """Bit-exact: same shape, dtype and values (NaN where SciPy has NaN)."""
    expected = np.asarray(expected)
    assert isinstance(got, np.ndarray), type(got)
    assert got.shape == expected.shape and got.dtype == expected.dtype, (got, expected)
    assert np.array_equal(got, expected, equal_nan=expected.dtype.kind == "f"), np.abs(
        got.astype(float) - expected.astype(float)
    ).max()
