"""threshold, inRange, addWeighted, convertScaleAbs, normalize, split and merge vs cv2."""

from __future__ import annotations

import warnings

import cv2
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchport.patches.opencv import arithmetic, channels

from .helpers import PROPERTY, assert_matches, image, seeds

cns = st.sampled_from([0, 1, 2, 3, 4])
dtypes = st.sampled_from(["uint8", "uint16", "float32"])
sizes = st.tuples(st.integers(1, 30), st.integers(1, 30))


@PROPERTY
@given(
    seed=seeds,
    size=sizes,
    cn=cns,
    dtype=dtypes,
    kind=st.sampled_from(
        [
            cv2.THRESH_BINARY,
            cv2.THRESH_BINARY_INV,
            cv2.THRESH_TRUNC,
            cv2.THRESH_TOZERO,
            cv2.THRESH_TOZERO_INV,
        ]
    ),
    thresh=st.one_of(
        st.floats(-10, 300),
        st.integers(-2, 257).map(float),
        st.floats(-1, 2),
        st.floats(-10, 70000),
        st.sampled_from([65534.5, 65535.0, 65536.0]),
    ),
    maxval=st.one_of(st.floats(-10, 300), st.just(255.0), st.floats(0, 2), st.floats(0, 70000)),
)
def test_threshold_matches_opencv(seed, size, cn, dtype, kind, thresh, maxval):
    src = image(seed, *size, cn, dtype)
    expected_value, expected = cv2.threshold(src, thresh, maxval, kind)
    got_value, got = arithmetic.threshold(src, thresh, maxval, kind)
    assert got_value == expected_value
    assert_matches("threshold", expected, got)


@PROPERTY
@given(
    seed=seeds,
    size=sizes,
    cn=cns,
    dtype=dtypes,
    bounds=st.sampled_from(["number", "tuple", "four", "vector", "array"]),
    low=st.floats(-20, 200),
    width=st.floats(0, 200),
)
def test_in_range_matches_opencv(seed, size, cn, dtype, bounds, low, width):
    src = image(seed, *size, cn, dtype)
    if dtype == "float32":
        low, width = low / 200, width / 200
    elif dtype == "uint16":
        low, width = low * 40, width * 300
    channels_ = max(cn, 1)
    if bounds == "number":
        lower, upper = low, low + width
    elif bounds == "vector":  # a NumPy vector of per-channel bounds
        lower = np.array([low + 0.37 * i for i in range(channels_)])
        upper = lower + width
    elif bounds in ("tuple", "four"):
        count = channels_ if bounds == "tuple" else 4
        lower = tuple(low + 0.37 * i for i in range(count))
        upper = tuple(v + width for v in lower)
    else:
        rng = np.random.default_rng(seed + 1)
        lower = image(seed + 1, *size, cn, dtype)
        upper = np.maximum(lower, image(seed + 2, *size, cn, dtype))
        lower = np.where(rng.random(lower.shape) < 0.2, upper, lower)
    expected = cv2.inRange(src, lower, upper)
    assert_matches("inRange", expected, arithmetic.inRange(src, lower, upper))


@PROPERTY
@given(
    seed=seeds,
    size=sizes,
    cn=cns,
    dtype=dtypes,
    alpha=st.one_of(st.floats(-3, 3), st.sampled_from([0.5, 0.25, 1.0])),
    beta=st.one_of(st.floats(-3, 3), st.sampled_from([0.5, 0.75, 0.0])),
    gamma=st.one_of(st.floats(-50, 50), st.sampled_from([0.0, 0.5, 10.0])),
)
def test_add_weighted_matches_opencv(seed, size, cn, dtype, alpha, beta, gamma):
    dtype = "float32" if dtype == "uint16" else dtype  # addWeighted: uint8 and float32
    a, b = image(seed, *size, cn, dtype), image(seed + 1, *size, cn, dtype)
    expected = cv2.addWeighted(a, alpha, b, beta, gamma)
    got = arithmetic.addWeighted(a, alpha, b, beta, gamma)
    peak = float(np.abs(a).max()) + float(np.abs(b).max())
    scale = (abs(alpha) + abs(beta)) * peak + abs(gamma)
    assert_matches("addWeighted", expected, got, scale=scale)


def test_add_weighted_uint8_rounds_like_opencv_on_short_rows():
    """OpenCV's scalar loop (another float32 rounding) takes rows shorter than its SIMD
    step and, in OpenCV 4, the tail after the last whole step (a whole contiguous image
    counts as one row): ties must round as it does there too."""
    rng = np.random.default_rng(0)
    cases = [((1, 3), None), ((2, 7), None), ((3, 7), None), ((8, 30), np.s_[:, :7])]
    cases += [((1, 21), None), ((1, 40), None), ((2, 45), None), ((8, 60), np.s_[:, :40])]
    for shape, view in cases:
        for alpha, beta, gamma in [(0.3, 0.0, 0.3), (0.1, 0.7, 0.5), (0.3, 0.3, 0.1)]:
            for _ in range(40):
                a = rng.integers(0, 256, shape, dtype=np.uint8)
                b = rng.integers(0, 256, shape, dtype=np.uint8)
                if view is not None:
                    a, b = a[view], b[view]
                expected = cv2.addWeighted(a, alpha, b, beta, gamma)
                got = arithmetic.addWeighted(a, alpha, b, beta, gamma)
                np.testing.assert_array_equal(got, expected, err_msg=f"{shape} {alpha} {gamma}")


@PROPERTY
@given(
    seed=seeds,
    size=sizes,
    cn=cns,
    dtype=st.sampled_from(["uint8", "uint16", "int16", "float32", "float64"]),
    alpha=st.one_of(st.floats(-4, 4), st.sampled_from([1.0, 0.5, -1.0, 255.0, 1 / 256])),
    beta=st.one_of(st.floats(-100, 100), st.sampled_from([0.0, 0.5, -0.5])),
)
def test_convert_scale_abs_matches_opencv(seed, size, cn, dtype, alpha, beta):
    # float64: the running average cv2.accumulateWeighted keeps, shown as uint8
    src = image(seed, *size, cn, dtype)
    expected = cv2.convertScaleAbs(src, alpha=alpha, beta=beta)
    assert_matches("convertScaleAbs", expected, arithmetic.convertScaleAbs(src, None, alpha, beta))


@PROPERTY
@given(
    seed=seeds,
    size=sizes,
    cn=cns,
    dtype=dtypes,
    norm_type=st.sampled_from([cv2.NORM_MINMAX, cv2.NORM_L2, cv2.NORM_L1, cv2.NORM_INF]),
    alpha=st.one_of(st.floats(-300, 300), st.sampled_from([0.0, 1.0, 255.0])),
    beta=st.one_of(st.floats(-300, 300), st.sampled_from([0.0, 1.0, 255.0])),
    out=st.sampled_from([-1, cv2.CV_8U, cv2.CV_16U, cv2.CV_32F]),
    constant=st.booleans(),
)
def test_normalize_matches_opencv(seed, size, cn, dtype, norm_type, alpha, beta, out, constant):
    src = image(seed, *size, cn, dtype)
    if constant:
        src = np.full_like(src, src.flat[0])
    expected = cv2.normalize(src, None, alpha, beta, norm_type, out)
    got = arithmetic.normalize(src, None, alpha, beta, norm_type, out)
    assert_matches("normalize", expected, got, scale=max(abs(alpha), abs(beta)))


@PROPERTY
@given(
    seed=seeds,
    size=sizes,
    cn=cns,
    dtype=dtypes,
    norm_type=st.sampled_from([cv2.NORM_MINMAX, cv2.NORM_L2, cv2.NORM_L1, cv2.NORM_INF]),
    alpha=st.sampled_from([0.0, 1.0, 255.0, 100.0]),
    beta=st.sampled_from([0.0, 1.0, 255.0, 20.0]),
    integer=st.booleans(),
)
def test_normalize_then_astype_uint8_is_bit_exact(
    seed, size, cn, dtype, norm_type, alpha, beta, integer
):
    """float output, then astype(np.uint8): one float32 ulp flips a truncated 8-bit level."""
    src = image(seed, *size, cn, dtype)
    if integer:  # pixel values held as float32, the common depth-image / camera case
        src = np.floor(np.abs(src) * 255 if dtype == "float32" else src).astype(np.float32)
    expected = cv2.normalize(src, None, alpha, beta, norm_type, cv2.CV_32F)
    got = arithmetic.normalize(src, None, alpha, beta, norm_type, cv2.CV_32F)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(got.astype(np.uint8), expected.astype(np.uint8))


@PROPERTY
@given(
    seed=seeds,
    size=sizes,
    cn=cns,
    dtype=st.sampled_from(["uint8", "uint16", "int16", "float32"]),
)
def test_split_and_merge_match_opencv(seed, size, cn, dtype):
    src = image(seed, *size, cn, dtype)
    expected = cv2.split(src)
    got = channels.split(src)
    assert type(got) is type(expected) and len(got) == len(expected)
    for e, g in zip(expected, got):
        assert_matches("split", e, g)
    parts = list(got)
    assert_matches("merge", cv2.merge(parts), channels.merge(parts))
    if len(parts) >= 2:  # a multi-channel piece with a single-channel one
        mixed = [np.dstack(parts[:2]), parts[-1]]
        assert_matches("merge", cv2.merge(mixed), channels.merge(mixed))


_OTSU_KINDS = [
    cv2.THRESH_BINARY,
    cv2.THRESH_BINARY_INV,
    cv2.THRESH_TRUNC,
    cv2.THRESH_TOZERO,
    cv2.THRESH_TOZERO_INV,
]


@PROPERTY
@given(
    seed=seeds,
    size=sizes,
    kind=st.sampled_from(_OTSU_KINDS),
    levels=st.integers(1, 6),
    spread=st.sampled_from(["uniform", "levels", "narrow"]),
    maxval=st.one_of(st.just(255.0), st.floats(-10, 300)),
    shape=st.sampled_from(["hw", "hw1"]),
)
def test_otsu_threshold_matches_opencv(seed, size, kind, levels, spread, maxval, shape):
    """THRESH_OTSU: the level from the image's histogram (two-valued and one-valued images,
    where the between-class variance ties or is zero everywhere, included)."""
    rng = np.random.default_rng(seed)
    if spread == "uniform":
        src = rng.integers(0, 256, size, dtype=np.uint8)
    elif spread == "levels":
        src = rng.choice(rng.integers(0, 256, levels), size).astype(np.uint8)
    else:
        low = int(rng.integers(0, 250))
        src = rng.integers(low, low + 6, size).astype(np.uint8)
    if _otsu_tied(src):  # OpenCV's float32 rounding decides between equal variances
        return
    if shape == "hw1":
        src = src[..., None]
    expected_value, expected = cv2.threshold(src, 0, maxval, kind | cv2.THRESH_OTSU)
    got_value, got = arithmetic.threshold(src, 0, maxval, kind | cv2.THRESH_OTSU)
    assert float(got_value) == expected_value
    assert_matches("threshold", expected, got)


def _otsu_tied(src: np.ndarray) -> bool:
    """Whether the best between-class variance is reached at two occupied grey levels, in
    exact rational arithmetic: (S c1 - N s1)^2 / (c1 (N - c1)) with integer counts."""
    from fractions import Fraction

    counts = np.bincount(src.ravel(), minlength=256).tolist()
    n, total = src.size, sum(i * c for i, c in enumerate(counts))
    c1 = s1 = 0
    scores = []
    for i, c in enumerate(counts):
        c1, s1 = c1 + c, s1 + i * c
        if c and 0 < c1 < n:
            scores.append(Fraction((total * c1 - n * s1) ** 2, c1 * (n - c1)))
    return len(scores) > 1 and scores.count(max(scores)) > 1


def test_otsu_refuses_what_it_does_not_compute_naming_the_argument():
    gray16 = np.zeros((4, 4), np.uint16)
    with pytest.raises(ValueError, match=r"src.dtype=uint16"):
        arithmetic.threshold(gray16, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)


def test_a_traced_otsu_threshold_and_its_level_replay_in_every_backend(tmp_path):
    """Document binarisation: the Otsu mask and its level (reused as a number) follow each
    new page instead of the traced page's level."""
    import patchport
    from patchport import annotate

    rng = np.random.default_rng(5)

    def page(ink: int, paper: int) -> np.ndarray:
        img = np.full((24, 32), paper, np.uint8)
        img[4:20:3, 3:29] = ink
        return np.clip(img + rng.integers(-15, 16, img.shape), 0, 255).astype(np.uint8)

    pages = [page(40, 200), page(90, 160), page(10, 250), page(120, 230)]
    nodes = {}
    with (
        warnings.catch_warnings(),
        patchport.session("otsu", str(tmp_path), patching=["opencv"], strict=True),
    ):
        warnings.simplefilter("error", patchport.PatchportWarning)  # checked, and quiet
        for backend in ("onnx", "pt2", "jit"):
            gray = annotate.input_tensors(backend, {"gray": pages[0]})
            level, mask = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
            soft = (gray.astype(np.float32) > level * 0.8).astype(np.uint8)
            nodes[backend] = annotate.output_tensors(
                backend, {"mask": mask, "soft": soft}, export_with=backend
            )
    manager = patchport.InferenceManager(patchport.compile_graph(visualize=False).yaml_path)
    for img in pages[1:]:
        level, mask = cv2.threshold(img, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
        soft = (img.astype(np.float32) > level * 0.8).astype(np.uint8)
        got = manager.run_policy({f"{b}/gray": img for b in nodes})
        for backend in nodes:
            np.testing.assert_array_equal(got[f"{backend}/mask"].numpy(), mask)
            np.testing.assert_array_equal(got[f"{backend}/soft"].numpy(), soft)
