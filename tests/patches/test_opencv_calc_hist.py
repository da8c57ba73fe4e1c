"""calcHist (uniform ranges) and compareHist vs real cv2, their refusals, and a colour
histogram descriptor compared by chi-square replayed in ONNX Runtime."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchport.patches.opencv import calc_hist

from .helpers import PROPERTY, image, seeds

METHODS = [
    cv2.HISTCMP_CORREL,
    cv2.HISTCMP_CHISQR,
    cv2.HISTCMP_INTERSECT,
    cv2.HISTCMP_BHATTACHARYYA,
    cv2.HISTCMP_CHISQR_ALT,
    cv2.HISTCMP_KL_DIV,
]


@PROPERTY
@given(
    seed=seeds,
    height=st.integers(1, 24),
    width=st.integers(1, 24),
    cn=st.integers(1, 4),
    dtype=st.sampled_from(["uint8", "uint16", "float32"]),
    data=st.data(),
)
def test_histograms_and_distances_match_opencv(seed, height, width, cn, dtype, data):
    img = image(seed, height, width, cn, dtype).reshape(height, width, cn)
    dims = data.draw(st.integers(1, min(cn, 3)))
    chosen = data.draw(st.permutations(range(cn)))[:dims]
    sizes = [data.draw(st.integers(1, 10)) for _ in range(dims)]
    ranges = []
    for _ in range(dims):
        low = data.draw(st.sampled_from([0.0, 10.0, -0.3, 0.1]))
        ranges += [low, low + data.draw(st.sampled_from([256.0, 180.0, 1.0, 0.7, 4000.0]))]
    mask = None
    if data.draw(st.booleans()):
        mask = (image(seed + 1, height, width, 0, "uint8") > 80).astype(np.uint8)
    want = cv2.calcHist([img], chosen, mask, sizes, ranges)
    got = calc_hist.calcHist([img], chosen, mask, sizes, ranges)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    other = cv2.calcHist([np.ascontiguousarray(img[::-1, ::-1])], chosen, None, sizes, ranges)
    for method in METHODS:
        if method == cv2.HISTCMP_CORREL and want.ndim > 2:
            continue
        expected = cv2.compareHist(want, other, method)
        result = calc_hist.compareHist(want, other, method)
        assert isinstance(result, np.ndarray) and result.shape == ()
        assert np.isclose(float(result), expected, rtol=1e-9, atol=1e-12), method


def test_unreproduced_cases_are_refused_naming_the_argument():
    img = np.zeros((4, 4, 3), np.uint8)
    with pytest.raises(ValueError, match="accumulate"):
        calc_hist.calcHist([img], [0], None, [8], [0, 256], accumulate=True)
    with pytest.raises(ValueError, match="ranges"):
        calc_hist.calcHist([img], [0, 1], None, [8, 8], [0, 256])
    h3 = np.ones((2, 2, 2), np.float32)
    with pytest.raises(ValueError, match="HISTCMP_CORREL"):
        calc_hist.compareHist(h3, h3, cv2.HISTCMP_CORREL)
    with pytest.raises(ValueError, match="method"):
        calc_hist.compareHist(h3, h3, 99)


def test_colour_descriptor_chi_square_replays_in_onnx_runtime(tmp_path, recwarn):
    import onnxruntime

    import patchport
    from patchport import annotate

    def compare(bgr0, bgr1):
        hists = []
        for bgr in (bgr0, bgr1):
            hsv = cv2.cvtColor(bgr, cv2.COLOR_BGR2HSV)
            hist = cv2.calcHist([hsv], [0, 1], None, [8, 8], [0, 180, 0, 256])
            cv2.normalize(hist, hist, alpha=0, beta=1, norm_type=cv2.NORM_MINMAX)
            hists.append(hist)
        chi2 = cv2.compareHist(hists[0], hists[1], cv2.HISTCMP_CHISQR)
        return {"hist": hists[0], "chi2": np.array([chi2])}

    rng = np.random.default_rng(0)

    def frame():
        return cv2.resize(rng.integers(0, 256, (6, 8, 3), np.uint8), (64, 48))

    with patchport.session("hist", str(tmp_path), patching=["opencv"], strict=True):
        pair = annotate.input_tensors("colour", {"bgr0": frame(), "bgr1": frame()})
        annotate.output_tensors("colour", compare(*pair), export_with="onnx")
    result = patchport.compile_graph(visualize=False)
    assert not [w for w in recwarn if issubclass(w.category, patchport.PatchportWarning)]
    session = onnxruntime.InferenceSession(str(result.models["colour"]))
    fresh = {"bgr0": frame(), "bgr1": frame()}
    got = dict(zip(["hist", "chi2"], session.run(None, fresh)))
    want = compare(*fresh.values())
    np.testing.assert_allclose(got["hist"], want["hist"], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(got["chi2"], want["chi2"], rtol=1e-5)
