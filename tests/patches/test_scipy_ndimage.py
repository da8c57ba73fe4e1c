"""scipy.ndimage replacements against SciPy: filters bit-exact, resampling bit-exact."""

from __future__ import annotations

import pytest

pytest.importorskip("scipy")  # SciPy is an optional dependency: these tests need it

import numpy as np
import scipy.ndimage as ndi
from hypothesis import given
from hypothesis import strategies as st

from patchport.patches.scipy import ndimage as N

from .scipy_helpers import PROPERTY, assert_exact

seeds = st.integers(0, 2**32 - 1)
shapes = st.sampled_from([(7, 9), (1, 5), (6,), (3, 4, 5), (2, 2), (12, 3)])
dtypes = st.sampled_from(["float64", "float32", "uint8", "uint16", "int16"])
modes = st.sampled_from(["reflect", "constant", "nearest", "mirror", "wrap", "grid-mirror"])


def _array(seed: int, shape: tuple, dtype: str) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "float32" or dtype == "float64":
        return (rng.random(shape) * 4 - 1).astype(dtype)
    high = {"uint8": 256, "uint16": 65536, "int16": 2000}[dtype]
    low = -2000 if dtype == "int16" else 0
    return rng.integers(low, high, size=shape).astype(dtype)


@PROPERTY
@given(seeds, shapes, dtypes, modes, st.sampled_from([0.6, 1.0, 2.5]), st.sampled_from([0, 1, 2]))
def test_gaussian_filter(seed, shape, dtype, mode, sigma, order):
    a = _array(seed, shape, dtype)
    kwargs = {"mode": mode, "cval": 1.5, "order": order}
    assert_exact(ndi.gaussian_filter(a, sigma, **kwargs), N.gaussian_filter(a, sigma, **kwargs))
    axis = seed % a.ndim
    assert_exact(
        ndi.gaussian_filter1d(a, sigma, axis, truncate=2.0, **kwargs),
        N.gaussian_filter1d(a, sigma, axis, truncate=2.0, **kwargs),
    )


@PROPERTY
@given(seeds, shapes, dtypes, modes, st.sampled_from([1, 2, 3, 5]))
def test_uniform_min_max_median(seed, shape, dtype, mode, size):
    a = _array(seed, shape, dtype)
    origin = (seed % 3 - 1) if size >= 3 else 0
    for name in ("uniform_filter", "maximum_filter", "minimum_filter", "median_filter"):
        want = getattr(ndi, name)(a, size, mode=mode, cval=2.0, origin=origin)
        assert_exact(want, getattr(N, name)(a, size, mode=mode, cval=2.0, origin=origin))
    axis = seed % a.ndim
    assert_exact(
        ndi.uniform_filter1d(a, size, axis, mode=mode), N.uniform_filter1d(a, size, axis, mode=mode)
    )


@PROPERTY
@given(seeds, shapes, dtypes, modes)
def test_footprints_and_kernels(seed, shape, dtype, mode):
    a = _array(seed, shape, dtype)
    rng = np.random.default_rng(seed)
    footprint = rng.random((3,) * a.ndim) < 0.6
    footprint.flat[0] = True
    weights = rng.normal(size=(3,) * a.ndim)
    weights.flat[1] = 0.0  # SciPy skips weights below float64 epsilon
    for name in ("maximum_filter", "minimum_filter", "median_filter"):
        want = getattr(ndi, name)(a, footprint=footprint, mode=mode)
        assert_exact(want, getattr(N, name)(a, footprint=footprint, mode=mode))
    for name in ("correlate", "convolve"):
        want = getattr(ndi, name)(a, weights, mode=mode, cval=-1.0)
        assert_exact(want, getattr(N, name)(a, weights, mode=mode, cval=-1.0))


@PROPERTY
@given(seeds, shapes, dtypes, st.sampled_from(N._ZOOM_MODES), st.sampled_from([0, 1]))
def test_zoom(seed, shape, dtype, mode, order):
    a = _array(seed, shape, dtype)
    factor = [2, 0.5, 1.7, 3, (1.5, 2.5, 0.8)[: a.ndim] if a.ndim > 1 else 1.3][seed % 5]
    if isinstance(factor, tuple) and len(factor) != a.ndim:
        factor = 2
    want = ndi.zoom(a, factor, order=order, mode=mode, cval=-1)
    assert_exact(want, N.zoom(a, factor, order=order, mode=mode, cval=-1))


@PROPERTY
@given(seeds, shapes, dtypes, st.sampled_from(N._MAP_MODES), st.sampled_from([0, 1]))
def test_map_coordinates(seed, shape, dtype, mode, order):
    a = _array(seed, shape, dtype)
    rng = np.random.default_rng(seed)
    coords = rng.uniform(-2, max(shape) + 2, size=(a.ndim, 4, 3))
    coords[:, 0] = np.round(coords[:, 0] * 2) / 2  # exact halves and integers
    want = ndi.map_coordinates(a, coords, order=order, mode=mode, cval=-1)
    assert_exact(want, N.map_coordinates(a, coords, order=order, mode=mode, cval=-1))


@pytest.mark.parametrize(
    ("call", "named"),
    [
        (lambda a: N.gaussian_filter(a, 1, output=np.empty_like(a)), "output=ndarray"),
        (lambda a: N.zoom(a, 2, order=3), "order=3"),
        (lambda a: N.zoom(a, 2, order=1, grid_mode=True), "grid_mode=True"),
        (lambda a: N.map_coordinates(a, np.zeros((2, 3)), order=1, mode="wrap"), "mode='wrap'"),
        (lambda a: N.uniform_filter(a, 3, mode=["reflect", 7]), "mode=a int"),
        (lambda a: N.gaussian_filter(a.astype(np.complex128), 1), "input.dtype=complex128"),
    ],
)
def test_unsupported_cases_are_refused_naming_the_argument(call, named):
    with pytest.raises(ValueError, match="supported: ") as caught:
        call(np.ones((4, 5)))
    assert f"(patchport replacement): argument {named}" in str(caught.value)


def test_select_rank_is_the_sorted_value_and_a_window_with_nan_gives_nan() -> None:
    """The sorting-network selection medians use: every rank of 1 to 26 values (ties
    included) equals torch.sort's; a NaN among the values makes that element NaN."""
    import torch

    rng = np.random.default_rng(0)
    for n in (1, 2, 3, 5, 8, 9, 16, 17, 25, 26):
        taps = [torch.from_numpy(rng.integers(-3, 4, 12).astype(float)) for _ in range(n)]
        ordered = torch.sort(torch.stack(taps), dim=0).values
        for rank in range(n):
            assert torch.equal(N.select_rank(taps, rank), ordered[rank]), (n, rank)
        taps[n // 3][5] = float("nan")
        picked = N.select_rank(taps, n // 2)
        assert torch.isnan(picked[5]) and not torch.isnan(picked[torch.arange(12) != 5]).any()
