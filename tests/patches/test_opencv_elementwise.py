"""add/subtract/absdiff/multiply/divide, bitwise ops and LUT replacements vs real cv2."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchport.patches.opencv import elementwise

from .helpers import PROPERTY, assert_matches, image, seeds

cns = st.sampled_from([0, 1, 2, 3, 4])
sizes = st.tuples(st.integers(1, 25), st.integers(1, 25))


def _sized(size, kind):
    """cv2 reads an image of up to 4 x 1 beside a Scalar as a second Scalar: keep wider."""
    return size if kind == "array" else (size[0], max(size[1], 5))


def _second(seed, size, cn, dtype, kind, number):
    """The second operand: an array like the first, a number, or per-channel numbers as a
    tuple or as a float64 row / column (normalisation helpers pass ``mean.reshape(1, -1)``)."""
    if kind == "array":
        return image(seed + 1, *size, cn, dtype)
    if kind == "number":
        return number
    numbers = tuple(number + 17.25 * i for i in range(max(cn, 1)))
    if kind == "row" and len(numbers) > 1:  # OpenCV takes (1, channels) as a Scalar
        return np.array(numbers, np.float64).reshape(1, -1)
    if kind == "column":  # ... and 4 numbers as a (4, 1) column
        return np.array((numbers + (0.0,) * 4)[:4], np.float64).reshape(4, 1)
    return numbers


def _mask(seed, size, use):
    if not use:
        return None
    rng = np.random.default_rng(seed + 7)
    return ((rng.random(size) < 0.5) * rng.integers(1, 256)).astype(np.uint8)


@PROPERTY
@given(
    seed=seeds,
    size=sizes,
    cn=cns,
    dtype=st.sampled_from(["uint8", "uint16", "int16", "float32"]),
    kind=st.sampled_from(["array", "number", "tuple", "row", "column"]),
    number=st.one_of(st.floats(-300, 300), st.integers(-300, 300), st.just(4.5)),
    masked=st.booleans(),
)
def test_add_subtract_absdiff_match_opencv(seed, size, cn, dtype, kind, number, masked):
    size = _sized(size, kind)
    a = image(seed, *size, cn, dtype)
    b = _second(seed, size, cn, dtype, kind, number)
    mask = _mask(seed, size, masked)
    scale = 600.0
    assert_matches("add", cv2.add(a, b, mask=mask), elementwise.add(a, b, mask=mask), scale)
    expected = cv2.subtract(a, b, mask=mask)
    assert_matches("subtract", expected, elementwise.subtract(a, b, mask=mask), scale)
    assert_matches("absdiff", cv2.absdiff(a, b), elementwise.absdiff(a, b), scale)


def test_multiply_uint8_rounds_ties_like_opencv():
    """OpenCV multiplies uint8 arrays in float32: (src1*scale)*src2 in its SIMD loop, and
    OpenCV 5.0 (src1*src2)*scale in its scalar loop (rows under 16 elements); ties round
    from there."""
    rng = np.random.default_rng(0)
    cases = [((1, 3), None), ((2, 7), None), ((9, 10), None), ((9, 10, 3), None)]
    cases += [((1, 21), None), ((2, 45), None)]
    cases += [((30, 30), None), ((8, 30), np.s_[:, :7]), ((8, 30), np.s_[:, :20])]
    for shape, view in cases:
        for scale in (0.3, 0.7, 1 / 255):
            for _ in range(30):
                a = rng.integers(0, 256, shape, dtype=np.uint8)
                b = rng.integers(0, 256, shape, dtype=np.uint8)
                if view is not None:
                    a, b = a[view], b[view]
                expected = cv2.multiply(a, b, scale=scale)
                got = elementwise.multiply(a, b, scale=scale)
                np.testing.assert_array_equal(got, expected, err_msg=f"{shape} {scale}")


@PROPERTY
@given(
    seed=seeds,
    size=sizes,
    cn=cns,
    dtype=st.sampled_from(["uint8", "float32"]),
    kind=st.sampled_from(["array", "number", "tuple", "row", "column"]),
    number=st.one_of(st.floats(0.01, 4), st.integers(0, 300)),
    scale=st.one_of(st.just(1.0), st.floats(0.01, 3), st.just(1 / 255)),
    zeros=st.booleans(),
)
def test_multiply_and_divide_match_opencv(seed, size, cn, dtype, kind, number, scale, zeros):
    size = _sized(size, kind)
    a = image(seed, *size, cn, dtype)
    b = _second(seed, size, cn, dtype, kind, number)
    expected = cv2.multiply(a, b, scale=scale)
    got = elementwise.multiply(a, b, scale=scale)
    assert_matches("multiply", expected, got, float(np.abs(expected).max()))
    exact = dtype == "uint8" and kind == "array"  # declared exact there
    if exact:
        np.testing.assert_array_equal(got, expected)
    if dtype == "uint8":
        if zeros and kind == "array":  # division by zero gives 0
            b = np.where(image(seed + 3, *size, cn, "uint8") < 60, 0, b).astype(np.uint8)
        expected, got = cv2.divide(a, b, scale=scale), elementwise.divide(a, b, scale=scale)
        assert_matches("divide", expected, got)
        if exact:
            np.testing.assert_array_equal(got, expected)


@PROPERTY
@given(
    seed=seeds,
    size=sizes,
    cn=cns,
    dtype=st.sampled_from(["uint8", "uint16", "int16"]),
    masked=st.booleans(),
)
def test_bitwise_ops_match_opencv(seed, size, cn, dtype, masked):
    size = _sized(size, "scalar")
    a, b = image(seed, *size, cn, dtype), image(seed + 1, *size, cn, dtype)
    mask = _mask(seed, size, masked)
    for name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
        expected = getattr(cv2, name)(a, b, mask=mask)
        assert_matches(name, expected, getattr(elementwise, name)(a, b, mask=mask))
    expected = cv2.bitwise_not(a, mask=mask)
    assert_matches("bitwise_not", expected, elementwise.bitwise_not(a, mask=mask))


@PROPERTY
@given(
    seed=seeds,
    size=sizes,
    cn=cns,
    table_dtype=st.sampled_from(["uint8", "uint16", "int16", "float32"]),
    per_channel=st.booleans(),
)
def test_lut_matches_opencv(seed, size, cn, table_dtype, per_channel):
    src = image(seed, *size, cn, "uint8")
    shape = (1, 256, max(cn, 1)) if per_channel and cn > 1 else (256,)
    lut = image(seed + 5, 1, 256, shape[-1] if len(shape) == 3 else 0, table_dtype)
    lut = lut.reshape(shape)
    assert_matches("LUT", cv2.LUT(src, lut), elementwise.LUT(src, lut), 2.0)


@PROPERTY
@given(
    seed=seeds,
    size=sizes,
    cn=cns,
    dtype=st.sampled_from(["uint8", "uint16", "int16", "float32", "float64"]),
    kind=st.sampled_from(["array", "number", "tuple"]),
    number=st.one_of(st.integers(-40000, 70000).map(float), st.floats(-300, 300)),
)
def test_min_and_max_match_opencv(seed, size, cn, dtype, kind, number):
    """cv2.min / cv2.max with an array like the first or a number (OpenCV's Scalar(v, 0, 0,
    0): the first channel only), saturated to integer images; tuples are refused."""
    src = image(seed, *_sized(size, kind), cn, dtype)
    other = _second(seed, _sized(size, kind), cn, dtype, kind, number)
    if kind == "tuple":  # OpenCV 5 broadcasts a tuple or reads it as a Scalar, by shape
        with pytest.raises(ValueError, match="src2="):
            elementwise.min_(src, other)
        return
    for name in ("min", "max"):
        expected = getattr(cv2, name)(src, other)
        assert_matches(name, expected, getattr(elementwise, f"{name}_")(src, other))


def _dark_and_floor(img):
    """Dehazing code: the dark channel by nested cv2.min of the split channels, the
    transmission floored by cv2.max with a number, in double."""
    b, g, r = cv2.split(img)
    dark = cv2.min(r, cv2.min(g, b))
    return {
        "dark": dark,
        "t": cv2.max(1.0 - 0.95 * dark, 0.1),
        "cap": cv2.min(img, img[::-1].copy()),
    }


def test_traced_min_and_max_replay_in_every_backend(tmp_path):
    import warnings

    import patchport
    from patchport import annotate

    rng = np.random.default_rng(4)
    images = [rng.random((12, 16, 3)) for _ in range(2)]
    backends = ("onnx", "pt2", "jit")
    with (
        warnings.catch_warnings(),
        patchport.session("minmax", str(tmp_path), patching=["opencv"], strict=True),
    ):
        warnings.simplefilter("error", patchport.PatchportWarning)
        for backend in backends:
            img = annotate.input_tensors(backend, {"img": images[0]})
            annotate.output_tensors(backend, _dark_and_floor(img), export_with=backend)
    manager = patchport.InferenceManager(patchport.compile_graph(visualize=False).yaml_path)
    got = manager.run_policy({f"{b}/img": images[1] for b in backends})
    for name, want in _dark_and_floor(images[1]).items():
        for backend in backends:
            np.testing.assert_array_equal(got[f"{backend}/{name}"].numpy(), want)
