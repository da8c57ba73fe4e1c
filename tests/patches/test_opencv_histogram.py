"""equalizeHist replacement vs real cv2, and its export with a traced image."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchport.patches.opencv import histogram

from .helpers import PROPERTY, seeds


@PROPERTY
@given(
    seed=seeds,
    height=st.integers(1, 40),
    width=st.integers(1, 40),
    low=st.integers(0, 255),
    span=st.integers(0, 255),
)
def test_equalize_hist_matches_opencv(seed, height, width, low, span):
    """Narrow and full ranges, one-valued images included (OpenCV leaves those as they are)."""
    high = min(255, low + span)
    src = np.random.default_rng(seed).integers(low, high + 1, (height, width), dtype=np.uint8)
    np.testing.assert_array_equal(histogram.equalizeHist(src), cv2.equalizeHist(src))


def test_colour_images_are_refused_naming_the_channels():
    with pytest.raises(ValueError, match="argument src channels=3"):
        histogram.equalizeHist(np.zeros((4, 4, 3), np.uint8))


def test_a_traced_image_equalizes_in_onnx_runtime(tmp_path):
    import patchport
    from patchport import annotate

    rng = np.random.default_rng(2)
    frames = [rng.integers(40, 120, (24, 32), dtype=np.uint8) for _ in range(3)]
    frames.append(np.full((24, 32), 9, np.uint8))  # one value: unchanged
    with patchport.session("eq", str(tmp_path), patching=["opencv"], strict=True):
        gray = annotate.input_tensors("n", {"gray": frames[0]})
        annotate.output_tensors("n", {"eq": cv2.equalizeHist(gray)}, export_with="onnx")
    manager = patchport.InferenceManager(patchport.compile_graph(visualize=False).yaml_path)
    for frame in frames[1:]:
        got = manager.run_policy({"n/gray": frame})["n/eq"].numpy()
        np.testing.assert_array_equal(got, cv2.equalizeHist(frame))
