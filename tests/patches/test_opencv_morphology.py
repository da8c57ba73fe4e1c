"""erode, dilate and morphologyEx replacements vs real cv2 (kernels, iterations, borders)."""

from __future__ import annotations

import cv2
from hypothesis import given
from hypothesis import strategies as st

from patchport.patches.opencv import morphology

from .helpers import PROPERTY, assert_matches, image, seeds

OPERATIONS = [
    cv2.MORPH_ERODE,
    cv2.MORPH_DILATE,
    cv2.MORPH_OPEN,
    cv2.MORPH_CLOSE,
    cv2.MORPH_GRADIENT,
    cv2.MORPH_TOPHAT,
    cv2.MORPH_BLACKHAT,
]


@PROPERTY
@given(
    seed=seeds,
    height=st.integers(1, 25),
    width=st.integers(1, 25),
    cn=st.sampled_from([0, 1, 2, 3, 4]),
    dtype=st.sampled_from(["uint8", "uint16", "int16", "float32", "float64"]),
    shape=st.sampled_from([None, cv2.MORPH_RECT, cv2.MORPH_CROSS, cv2.MORPH_ELLIPSE]),
    ksize=st.tuples(st.integers(1, 7), st.integers(1, 7)),
    iterations=st.integers(0, 3),
    border=st.sampled_from(
        [cv2.BORDER_CONSTANT, cv2.BORDER_REPLICATE, cv2.BORDER_REFLECT, cv2.BORDER_REFLECT_101]
    ),
    value=st.one_of(st.none(), st.tuples(*[st.floats(-100, 300)] * 4)),
    op=st.sampled_from(OPERATIONS),
)
def test_morphology_matches_opencv(
    seed, height, width, cn, dtype, shape, ksize, iterations, border, value, op
):
    src = image(seed, height, width, cn, dtype)
    kernel = None if shape is None else cv2.getStructuringElement(shape, ksize)
    kwargs = {"iterations": iterations, "borderType": border}
    if value is not None:
        kwargs["borderValue"] = value
    for name in ("erode", "dilate"):
        expected = getattr(cv2, name)(src, kernel, **kwargs)
        assert_matches(name, expected, getattr(morphology, name)(src, kernel, **kwargs))
    expected = cv2.morphologyEx(src, op, kernel, **kwargs)
    assert_matches("morphologyEx", expected, morphology.morphologyEx(src, op, kernel, **kwargs))
