"""matchTemplate (six methods) and minMaxLoc vs real cv2, their refusals, and template
matching's best box replayed in ONNX Runtime."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchport.patches.opencv import template

from .helpers import PROPERTY, assert_matches, image, seeds

METHODS = [
    cv2.TM_SQDIFF,
    cv2.TM_SQDIFF_NORMED,
    cv2.TM_CCORR,
    cv2.TM_CCORR_NORMED,
    cv2.TM_CCOEFF,
    cv2.TM_CCOEFF_NORMED,
]


@PROPERTY
@given(
    seed=seeds,
    height=st.integers(1, 24),
    width=st.integers(1, 24),
    cn=st.sampled_from([0, 3]),
    dtype=st.sampled_from(["uint8", "float32"]),
    data=st.data(),
)
def test_template_scores_and_extremes_match_opencv(seed, height, width, cn, dtype, data):
    img = image(seed, height, width, cn, dtype)
    if data.draw(st.booleans()):  # flat windows: OpenCV's guards decide
        img[: height // 2] = img[0, 0]
    h, w = data.draw(st.integers(1, height)), data.draw(st.integers(1, width))
    y, x = data.draw(st.integers(0, height - h)), data.draw(st.integers(0, width - w))
    templ = img[y : y + h, x : x + w].copy()
    # the data's magnitude: the largest sum of products over a window
    scale = float(np.abs(img.astype(np.float64)).max()) ** 2 * h * w * max(cn, 1)
    for method in METHODS:
        want = cv2.matchTemplate(img, templ, method)
        got = template.matchTemplate(img, templ, method)
        normed = method in (cv2.TM_SQDIFF_NORMED, cv2.TM_CCORR_NORMED, cv2.TM_CCOEFF_NORMED)
        assert_matches("matchTemplate", want, got, scale=1.0 if normed else scale)
    scores = cv2.matchTemplate(img, templ, cv2.TM_CCORR)
    got = template.minMaxLoc(scores)
    flat = (*got[:2], *got[2], *got[3])
    assert all(isinstance(v, np.ndarray) and v.shape == () for v in flat)
    lo, hi, lo_at, hi_at = cv2.minMaxLoc(scores)
    assert [float(v) for v in flat] == [lo, hi, *lo_at, *hi_at]


def test_unsupported_cases_are_refused_naming_the_argument():
    img = np.zeros((8, 8), np.uint8)
    with pytest.raises(ValueError, match="mask"):
        template.matchTemplate(img, img[:3, :3].copy(), cv2.TM_CCORR, mask=img[:3, :3])
    with pytest.raises(ValueError, match="templ"):
        template.matchTemplate(img, np.zeros((3, 3), np.float32), cv2.TM_CCORR)
    with pytest.raises(ValueError, match="method"):
        template.matchTemplate(img, img[:3, :3].copy(), 9)
    with pytest.raises(ValueError, match="mask"):
        template.minMaxLoc(img, img)
    with pytest.raises(ValueError, match="src.ndim"):
        template.minMaxLoc(np.zeros((4, 4, 3), np.uint8))


def test_template_box_replays_in_onnx_runtime(tmp_path, recwarn):
    """The usual demo: best match by TM_CCOEFF_NORMED and minMaxLoc, its box and score."""
    import onnxruntime

    import patchport
    from patchport import annotate

    def find(gray, templ):
        res = cv2.matchTemplate(gray, templ, cv2.TM_CCOEFF_NORMED)
        _, max_val, _, max_loc = cv2.minMaxLoc(res)
        th, tw = templ.shape[:2]
        box = np.array([max_loc[0], max_loc[1], max_loc[0] + tw, max_loc[1] + th])
        return {"box": box, "score": np.array([max_val], dtype=np.float32)}

    rng = np.random.default_rng(0)

    def sample():
        gray = cv2.resize(rng.integers(0, 256, (6, 8), np.uint8), (64, 48))
        y, x = rng.integers(0, 36), rng.integers(0, 48)
        return {"gray": gray, "templ": gray[y : y + 12, x : x + 16].copy()}

    with patchport.session("tm", str(tmp_path), patching=["opencv"], strict=True):
        traced = annotate.input_tensors("match", sample())
        annotate.output_tensors("match", find(*traced), export_with="onnx")
    result = patchport.compile_graph(visualize=False)
    assert not [w for w in recwarn if issubclass(w.category, patchport.PatchportWarning)]
    session = onnxruntime.InferenceSession(str(result.models["match"]))
    for _ in range(3):
        fresh = sample()
        got = dict(zip(["box", "score"], session.run(None, fresh)))
        want = find(*fresh.values())
        np.testing.assert_array_equal(got["box"], want["box"])
        np.testing.assert_allclose(got["score"], want["score"], rtol=1e-5)
