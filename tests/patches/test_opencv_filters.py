"""GaussianBlur, blur and boxFilter replacements vs real cv2 on random images."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchport.patches.opencv import filters

from .helpers import PROPERTY, assert_matches, image, seeds

channels = st.sampled_from([0, 1, 2, 3, 4])
dtypes = st.sampled_from(["uint8", "float32"])
borders = st.sampled_from(
    [cv2.BORDER_CONSTANT, cv2.BORDER_REPLICATE, cv2.BORDER_REFLECT, cv2.BORDER_REFLECT_101]
)
odd = st.integers(0, 7).map(lambda k: 2 * k + 1)


@PROPERTY
@given(
    seed=seeds,
    height=st.integers(1, 30),
    width=st.integers(1, 30),
    cn=channels,
    dtype=dtypes,
    ksize=st.one_of(st.tuples(odd, odd), st.just((0, 0))),
    sigma_x=st.one_of(st.just(0.0), st.floats(0.3, 4.0)),
    sigma_y=st.one_of(st.just(0.0), st.floats(0.3, 4.0)),
    border=borders,
)
def test_gaussian_blur_matches_opencv(
    seed, height, width, cn, dtype, ksize, sigma_x, sigma_y, border
):
    if ksize == (0, 0) and sigma_x == 0:
        sigma_x = 1.1
    src = image(seed, height, width, cn, dtype)
    kwargs = {"sigmaY": sigma_y, "borderType": border}
    expected = cv2.GaussianBlur(src, ksize, sigma_x, **kwargs)
    got = filters.GaussianBlur(src, ksize, sigma_x, **kwargs)
    assert_matches("GaussianBlur", expected, got, scale=float(np.abs(src).max()))


def test_gaussian_kernels_match_get_gaussian_kernel():
    for n in range(1, 32, 2):
        for sigma in (0.0, 0.5, 1.0, 2.7):
            expected = cv2.getGaussianKernel(n, sigma, cv2.CV_64F).ravel()
            np.testing.assert_allclose(filters.gaussian_kernel(n, sigma), expected, atol=1e-15)


@PROPERTY
@given(
    seed=seeds,
    height=st.integers(1, 30),
    width=st.integers(1, 30),
    cn=channels,
    dtype=dtypes,
    ksize=st.tuples(st.integers(1, 9), st.integers(1, 9)),
    anchor=st.one_of(st.just((-1, -1)), st.tuples(st.integers(0, 8), st.integers(0, 8))),
    border=borders,
    ddepth=st.sampled_from([-1, cv2.CV_32F]),
    normalize=st.booleans(),
)
def test_blur_and_box_filter_match_opencv(
    seed, height, width, cn, dtype, ksize, anchor, border, ddepth, normalize
):
    src = image(seed, height, width, cn, dtype)
    if dtype == "uint8" and ksize[0] * ksize[1] == 2:  # refused: OpenCV 5.0 adds 1 there
        with pytest.raises(ValueError, match="2-pixel windows"):
            filters.blur(src, ksize)
        normalize = False
        ksize = (ksize[0], ksize[1] + 1)
    if anchor != (-1, -1):
        anchor = (anchor[0] % ksize[0], anchor[1] % ksize[1])
    scale = float(np.abs(src).max()) * (1 if normalize else ksize[0] * ksize[1])
    expected = cv2.blur(src, ksize, anchor=anchor, borderType=border)
    got = filters.blur(src, ksize, anchor=anchor, borderType=border)
    assert_matches("blur", expected, got, scale=scale)
    kwargs = {"anchor": anchor, "normalize": normalize, "borderType": border}
    expected = cv2.boxFilter(src, ddepth, ksize, **kwargs)
    got = filters.boxFilter(src, ddepth, ksize, **kwargs)
    assert_matches("boxFilter", expected, got, scale=scale)


@PROPERTY
@given(
    seed=seeds,
    height=st.integers(1, 30),
    width=st.integers(1, 30),
    cn=channels,
    dtype=st.sampled_from(["uint8", "uint16", "float32"]),
    ksize=st.sampled_from([3, 5]),
)
def test_median_blur_matches_opencv(seed, height, width, cn, dtype, ksize):
    src = image(seed, height, width, cn, dtype)
    assert_matches("medianBlur", cv2.medianBlur(src, ksize), filters.medianBlur(src, ksize))


@PROPERTY
@given(
    seed=seeds,
    height=st.integers(1, 30),
    width=st.integers(1, 30),
    cn=channels,
    dtype=dtypes,
    ksize=st.sampled_from([-1, 1, 3, 5, 7]),
    order=st.sampled_from([(1, 0), (0, 1), (1, 1), (2, 0), (0, 2), (2, 1)]),
    ddepth=st.sampled_from([-1, cv2.CV_16S, cv2.CV_32F, cv2.CV_64F]),
    scaled=st.booleans(),
    border=borders,
)
def test_sobel_matches_opencv(seed, height, width, cn, dtype, ksize, order, ddepth, scaled, border):
    src = image(seed, height, width, cn, dtype)
    dx, dy = order
    if ksize == -1:
        dx, dy = (1, 0) if dx else (0, 1)
    if ksize == 1 or ksize == 3:
        dx, dy = min(dx, ksize - 1 or 2), min(dy, ksize - 1 or 2)
    ddepth = {"uint8": ddepth if ddepth != -1 else cv2.CV_16S}.get(
        dtype, -1 if ddepth == cv2.CV_16S else ddepth
    )
    scale, delta = (0.5, 3.25) if scaled else (1.0, 0.0)
    kwargs = {"ksize": ksize, "scale": scale, "delta": delta, "borderType": border}
    expected = cv2.Sobel(src, ddepth, dx, dy, **kwargs)
    got = filters.Sobel(src, ddepth, dx, dy, **kwargs)
    weight = float(np.abs(cv2.getDerivKernels(dx, dy, ksize)[0]).sum()) ** 2
    assert_matches("Sobel", expected, got, scale=float(np.abs(src).max()) * weight + 4)


@PROPERTY
@given(
    seed=seeds,
    height=st.integers(1, 30),
    width=st.integers(1, 30),
    method=st.sampled_from([cv2.ADAPTIVE_THRESH_MEAN_C, cv2.ADAPTIVE_THRESH_GAUSSIAN_C]),
    kind=st.sampled_from([cv2.THRESH_BINARY, cv2.THRESH_BINARY_INV]),
    block=st.integers(1, 12).map(lambda k: 2 * k + 1),
    delta=st.one_of(st.integers(-10, 10).map(float), st.floats(-10, 10)),
    maxval=st.one_of(st.just(255.0), st.floats(-5, 300)),
    smooth=st.booleans(),
)
def test_adaptive_threshold_matches_opencv(
    seed, height, width, method, kind, block, delta, maxval, smooth
):
    """Both methods and types, blocks larger than the image, fractional C, any maxValue."""
    src = image(seed, height, width, 0, "uint8")
    if smooth:  # a page-like image: flat paper, darker strokes
        src = cv2.GaussianBlur(src, (5, 5), 0)
    expected = cv2.adaptiveThreshold(src, maxval, method, kind, block, delta)
    got = filters.adaptiveThreshold(src, maxval, method, kind, block, delta)
    assert_matches("adaptiveThreshold", expected, got)


def test_adaptive_threshold_refuses_naming_the_argument():
    gray = np.zeros((8, 8), np.uint8)
    with pytest.raises(ValueError, match="blockSize=4"):
        filters.adaptiveThreshold(gray, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY, 4, 2)
    with pytest.raises(ValueError, match="thresholdType="):
        filters.adaptiveThreshold(gray, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_TRUNC, 5, 2)
    with pytest.raises(ValueError, match="src channels=3"):
        filters.adaptiveThreshold(
            np.zeros((8, 8, 3), np.uint8), 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY, 5, 2
        )


def test_a_traced_adaptive_threshold_replays_in_every_backend(tmp_path):
    """Document binarisation with a local threshold: recorded, not a native call whose
    result would be frozen."""
    import warnings

    import patchport
    from patchport import annotate

    rng = np.random.default_rng(3)
    pages = [cv2.GaussianBlur(rng.integers(0, 256, (24, 32), dtype=np.uint8), (3, 3), 0)]
    pages += [rng.integers(0, 256, (24, 32), dtype=np.uint8) for _ in range(2)]
    methods = {"mean": cv2.ADAPTIVE_THRESH_MEAN_C, "gauss": cv2.ADAPTIVE_THRESH_GAUSSIAN_C}
    with (
        warnings.catch_warnings(),
        patchport.session("adaptive", str(tmp_path), patching=["opencv"], strict=True),
    ):
        warnings.simplefilter("error", patchport.PatchportWarning)
        for backend in ("onnx", "pt2", "jit"):
            gray = annotate.input_tensors(backend, {"gray": pages[0]})
            outputs = {
                name: cv2.adaptiveThreshold(gray, 255, code, cv2.THRESH_BINARY, 11, 2)
                for name, code in methods.items()
            }
            annotate.output_tensors(backend, outputs, export_with=backend)
    manager = patchport.InferenceManager(patchport.compile_graph(visualize=False).yaml_path)
    for page in pages[1:]:
        got = manager.run_policy({f"{b}/gray": page for b in ("onnx", "pt2", "jit")})
        for backend in ("onnx", "pt2", "jit"):
            for name, code in methods.items():
                want = cv2.adaptiveThreshold(page, 255, code, cv2.THRESH_BINARY, 11, 2)
                np.testing.assert_array_equal(got[f"{backend}/{name}"].numpy(), want)


@PROPERTY
@given(
    seed=seeds,
    height=st.integers(1, 30),
    width=st.integers(1, 30),
    cn=channels,
    ksize=st.one_of(st.tuples(odd, odd), st.just((0, 0))),
    sigma=st.floats(0.3, 16.0),
    box=st.tuples(st.integers(1, 13), st.integers(1, 13)),
    border=borders,
    normalize=st.booleans(),
)
def test_float64_filters_match_opencv(
    seed, height, width, cn, ksize, sigma, box, border, normalize
):
    """Double images (img_as_float, astype("float64") / 255 in dehazing and Retinex code):
    Gaussian kernels up to sigma 16 (129 taps, wider than the image), box means and sums
    with ddepth -1 or CV_64F, a uint8 source summed into CV_64F, and Sobel."""
    src = image(seed, height, width, cn, "float64")
    expected = cv2.GaussianBlur(src, ksize, sigma, borderType=border)
    got = filters.GaussianBlur(src, ksize, sigma, borderType=border)
    assert_matches("GaussianBlur", expected, got, scale=float(np.abs(src).max()))
    scale = float(np.abs(src).max()) * (1 if normalize else box[0] * box[1])
    assert_matches(
        "blur", cv2.blur(src, box, borderType=border), filters.blur(src, box, borderType=border)
    )
    for source, ddepth in (
        (src, -1),
        (src, cv2.CV_64F),
        (image(seed, height, width, cn, "uint8"), cv2.CV_64F),
    ):
        kwargs = {"normalize": normalize, "borderType": border}
        expected = cv2.boxFilter(source, ddepth, box, **kwargs)
        got = filters.boxFilter(source, ddepth, box, **kwargs)
        assert_matches(
            "boxFilter", expected, got, scale=scale * (255 if source.dtype == np.uint8 else 1)
        )
    for ddepth in (-1, cv2.CV_64F):
        expected = cv2.Sobel(src, ddepth, 1, 0, ksize=3, borderType=border)
        got = filters.Sobel(src, ddepth, 1, 0, ksize=3, borderType=border)
        assert_matches("Sobel", expected, got, scale=float(np.abs(src).max()) * 16)


def _dehaze_and_retinex(hazy):
    """Float64 image code: a dark channel by cv2.erode, a guided filter by cv2.boxFilter
    (CV_64F), Retinex by np.log1p of a wide cv2.GaussianBlur."""
    img = hazy.astype("float64") / 255
    dark = cv2.erode(np.min(img, axis=2), np.ones((7, 7), np.uint8))
    gray = cv2.cvtColor(hazy, cv2.COLOR_BGR2GRAY).astype("float64") / 255
    mean_i = cv2.boxFilter(gray, cv2.CV_64F, (9, 9))
    mean_p = cv2.boxFilter(dark, cv2.CV_64F, (9, 9))
    cov = cv2.boxFilter(gray * dark, cv2.CV_64F, (9, 9)) - mean_i * mean_p
    var = cv2.boxFilter(gray * gray, cv2.CV_64F, (9, 9)) - mean_i * mean_i
    a = cov / (var + 1e-4)
    guided = cv2.blur(a, (9, 9)) * gray + cv2.blur(mean_p - a * mean_i, (9, 9))
    retinex = np.log1p(img) - np.log1p(cv2.GaussianBlur(img, (0, 0), 15))
    return {"dark": dark, "guided": guided, "retinex": retinex}


def test_traced_float64_filters_replay_in_every_backend(tmp_path):
    """Double images through erode, boxFilter, blur and a 121-tap GaussianBlur are recorded
    and replay like OpenCV on a new image in every backend (ONNX Runtime has no double
    Conv, so long double kernels must not lower to one)."""
    import warnings

    import patchport
    from patchport import annotate

    rng = np.random.default_rng(5)
    images = [cv2.resize(rng.integers(0, 256, (6, 8, 3), dtype=np.uint8), (40, 30)) for _ in "ab"]
    backends = ("onnx", "pt2", "jit")
    with (
        warnings.catch_warnings(),
        patchport.session("f64", str(tmp_path), patching=["opencv"], strict=True),
    ):
        warnings.simplefilter("error", patchport.PatchportWarning)
        for backend in backends:
            hazy = annotate.input_tensors(backend, {"hazy": images[0]})
            annotate.output_tensors(backend, _dehaze_and_retinex(hazy), export_with=backend)
    manager = patchport.InferenceManager(patchport.compile_graph(visualize=False).yaml_path)
    got = manager.run_policy({f"{b}/hazy": images[1] for b in backends})
    for name, want in _dehaze_and_retinex(images[1]).items():
        for backend in backends:
            np.testing.assert_allclose(
                got[f"{backend}/{name}"].numpy(), want, rtol=1e-9, atol=1e-12
            )
