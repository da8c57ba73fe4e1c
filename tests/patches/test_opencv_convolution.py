"""filter2D, Laplacian and Scharr replacements vs real cv2 on random images."""

from __future__ import annotations

import re

import cv2
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchport.patches.opencv import convolution

from .helpers import PROPERTY, assert_matches, image, seeds

channels = st.sampled_from([0, 1, 2, 3, 4])
borders = st.sampled_from(
    [cv2.BORDER_CONSTANT, cv2.BORDER_REPLICATE, cv2.BORDER_REFLECT, cv2.BORDER_REFLECT_101]
)
OWN = {"float32": cv2.CV_32F, "float64": cv2.CV_64F}
KERNELS = {
    "sharpen": np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], np.float32),
    "emboss": np.array([[-2, -1, 0], [-1, 1, 1], [0, 1, 2]]),
    "box": np.ones((3, 3), np.float32) / 9,
    "motion": np.eye(5, dtype=np.float64) / 5,
    "row": np.array([[1, -2, 1]], np.float32),
}


def _kernel(seed: int, name: str) -> np.ndarray:
    if name != "random":
        return KERNELS[name]
    rng = np.random.default_rng(seed)
    shape = tuple(int(v) for v in rng.integers(1, 8, 2))
    if shape[0] * shape[1] >= 50:
        shape = (shape[0], 1)
    return (rng.normal(size=shape) / shape[0]).astype(np.float32)


@PROPERTY
@given(
    seed=seeds,
    height=st.integers(1, 30),
    width=st.integers(1, 30),
    cn=channels,
    source=st.sampled_from(["uint8", "float32", "float64"]),
    ddepth=st.sampled_from([-1, cv2.CV_16S, cv2.CV_32F, cv2.CV_64F]),
    name=st.sampled_from([*KERNELS, "random"]),
    delta=st.sampled_from([0.0, 0.5, 12.25]),
    border=borders,
)
def test_filter2d_matches_opencv(seed, height, width, cn, source, ddepth, name, delta, border):
    if source != "uint8" and ddepth not in (-1, OWN[source]):
        return  # OpenCV refuses these pairs
    src = image(seed, height, width, cn, source)
    kernel = _kernel(seed, name)
    expected = cv2.filter2D(src, ddepth, kernel, delta=delta, borderType=border)
    got = convolution.filter2D(src, ddepth, kernel, delta=delta, borderType=border)
    scale = float(np.abs(src).max()) * float(np.abs(kernel).sum()) + delta
    assert_matches("filter2D", expected, got, scale=scale)


@PROPERTY
@given(
    seed=seeds,
    height=st.integers(1, 30),
    width=st.integers(1, 30),
    cn=channels,
    source=st.sampled_from(["uint8", "float32"]),
    ddepth=st.sampled_from([-1, cv2.CV_16S, cv2.CV_32F, cv2.CV_64F]),
    ksize=st.sampled_from([1, 3, 5, 7]),
    scale=st.sampled_from([1.0, 0.5, 3.0]),
    delta=st.sampled_from([0.0, 7.5]),
    border=borders,
)
def test_laplacian_matches_opencv(
    seed, height, width, cn, source, ddepth, ksize, scale, delta, border
):
    if source != "uint8" and ddepth not in (-1, OWN[source]):
        return  # OpenCV refuses these pairs
    src = image(seed, height, width, cn, source)
    kwargs = {"ksize": ksize, "scale": scale, "delta": delta, "borderType": border}
    expected = cv2.Laplacian(src, ddepth, **kwargs)
    got = convolution.Laplacian(src, ddepth, **kwargs)
    magnitude = float(np.abs(src).max()) * {1: 8, 3: 16, 5: 128, 7: 2048}[ksize] * scale + delta
    assert_matches("Laplacian", expected, got, scale=magnitude)


@PROPERTY
@given(
    seed=seeds,
    height=st.integers(1, 30),
    width=st.integers(1, 30),
    cn=channels,
    source=st.sampled_from(["uint8", "float32"]),
    ddepth=st.sampled_from([cv2.CV_16S, cv2.CV_32F, cv2.CV_64F]),
    dxdy=st.sampled_from([(1, 0), (0, 1)]),
    border=borders,
)
def test_scharr_matches_opencv(seed, height, width, cn, source, ddepth, dxdy, border):
    if ddepth == cv2.CV_16S and source != "uint8":
        return
    src = image(seed, height, width, cn, source)
    expected = cv2.Scharr(src, ddepth, *dxdy, borderType=border)
    got = convolution.Scharr(src, ddepth, *dxdy, borderType=border)
    assert_matches("Scharr", expected, got, scale=float(np.abs(src).max()) * 32)


def test_integer_results_are_exact_where_declared():
    src = image(9, 31, 37, 3, "uint8")
    for kernel in (KERNELS["sharpen"], KERNELS["emboss"], KERNELS["row"]):  # integer-valued
        np.testing.assert_array_equal(
            convolution.filter2D(src, -1, kernel), cv2.filter2D(src, -1, kernel)
        )
    gray = src[..., 1].copy()
    np.testing.assert_array_equal(
        convolution.Laplacian(gray, cv2.CV_64F), cv2.Laplacian(gray, cv2.CV_64F)
    )


@pytest.mark.parametrize(
    ("call", "named"),
    [
        (lambda s: convolution.filter2D(s, -1, np.ones((7, 8))), "kernel=7x8"),
        (lambda s: convolution.filter2D(s, cv2.CV_8S, np.ones((3, 3))), "ddepth=1"),
        (lambda s: convolution.filter2D(s, -1, [[1, 2]]), "kernel=[[1, 2]]"),
        (lambda s: convolution.filter2D(s, -1, np.ones((3, 3)), anchor=(3, 0)), "anchor=(3, 0)"),
        (lambda s: convolution.Laplacian(s, -1, ksize=9), "ksize=9"),
        (lambda s: convolution.Scharr(s, cv2.CV_16S, 1, 1), "dx/dy=(1, 1)"),
        (
            lambda s: convolution.Laplacian(s, -1, borderType=cv2.BORDER_WRAP),
            "borderType=BORDER_WRAP",
        ),
    ],
)
def test_unsupported_cases_are_refused_naming_the_argument(call, named):
    with pytest.raises(ValueError, match=re.escape("argument " + named)):
        call(image(2, 9, 9, 3, "uint8"))


@PROPERTY
@given(
    seed=seeds,
    height=st.integers(1, 30),
    width=st.integers(1, 30),
    cn=channels,
    source=st.sampled_from(["float64", "uint8"]),
    ksize=st.tuples(st.integers(5, 15), st.integers(10, 15)),
    border=borders,
)
def test_large_double_kernels_match_opencv_s_dft(seed, height, width, cn, source, ksize, border):
    """Kernels of 50 entries and more into double results (an 11x11 Gaussian SSIM window
    on img.astype(np.float64)): OpenCV filters them through a DFT in double, which the
    direct sum matches to its rounding (about 1e-15 of the magnitude)."""
    src = image(seed, height, width, cn, source)
    kernel = np.random.default_rng(seed).normal(size=ksize)
    ddepth = cv2.CV_64F if source == "uint8" else -1
    expected = cv2.filter2D(src, ddepth, kernel, borderType=border)
    got = convolution.filter2D(src, ddepth, kernel, borderType=border)
    scale = float(np.abs(src).max()) * float(np.abs(kernel).sum())
    assert_matches("filter2D", expected, got, scale=scale)


def _ssim(x, y):
    """SSIM with an 11x11 Gaussian window by cv2.filter2D on double images."""
    g = cv2.getGaussianKernel(11, 1.5)
    window = g @ g.T
    x, y = x.astype(np.float64), y.astype(np.float64)
    mx, my = cv2.filter2D(x, -1, window), cv2.filter2D(y, -1, window)
    sxy = cv2.filter2D(x * y, -1, window) - mx * my
    sxx, syy = cv2.filter2D(x * x, -1, window) - mx**2, cv2.filter2D(y * y, -1, window) - my**2
    c1, c2 = 6.5025, 58.5225
    ssim = ((2 * mx * my + c1) * (2 * sxy + c2)) / ((mx**2 + my**2 + c1) * (sxx + syy + c2))
    return {"map": ssim}


def test_a_traced_ssim_with_an_11x11_window_replays_in_onnx_and_pt2(tmp_path):
    import warnings

    import patchport
    from patchport import annotate

    pairs = [(image(s, 24, 32, 0, "uint8"), image(s + 50, 24, 32, 0, "uint8")) for s in (1, 2)]
    backends = ("onnx", "pt2")
    with (
        warnings.catch_warnings(),
        patchport.session("ssim", str(tmp_path), patching=["opencv"], strict=True),
    ):
        warnings.simplefilter("error", patchport.PatchportWarning)
        for backend in backends:
            x, y = annotate.input_tensors(backend, {"x": pairs[0][0], "y": pairs[0][1]})
            annotate.output_tensors(backend, _ssim(x, y), export_with=backend)
    manager = patchport.InferenceManager(patchport.compile_graph(visualize=False).yaml_path)
    x, y = pairs[1]
    got = manager.run_policy({f"{b}/{k}": v for b in backends for k, v in (("x", x), ("y", y))})
    for backend in backends:
        np.testing.assert_allclose(got[f"{backend}/map"].numpy(), _ssim(x, y)["map"], atol=1e-9)
