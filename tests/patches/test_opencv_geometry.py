"""flip/rotate/transpose/copyMakeBorder/resize/remap/warpAffine replacements vs real cv2."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from patchport.patches.opencv import geometry
from patchport.patches.opencv.semantics import current

from .helpers import PROPERTY, assert_matches, image, seeds

channels = st.sampled_from([0, 1, 2, 3, 4])  # 0: a 2-D image
image_dtypes = st.sampled_from(["uint8", "uint16", "float32"])
any_dtypes = st.sampled_from(["uint8", "int8", "uint16", "int16", "int32", "float32", "float64"])


def _image(seed, height, width, cn, dtype):
    src = image(seed, height, width, cn, "float32" if dtype == "float64" else dtype)
    if dtype in ("int8", "int32", "float64"):
        src = (src.astype(np.float64) * 100).astype(dtype)
    return src


@PROPERTY
@given(
    seed=seeds,
    height=st.integers(1, 30),
    width=st.integers(1, 30),
    cn=channels,
    dtype=any_dtypes,
    flip_code=st.integers(-3, 3),
    rotate_code=st.sampled_from(
        [cv2.ROTATE_90_CLOCKWISE, cv2.ROTATE_180, cv2.ROTATE_90_COUNTERCLOCKWISE]
    ),
)
def test_flip_rotate_transpose_match_opencv(seed, height, width, cn, dtype, flip_code, rotate_code):
    src = _image(seed, height, width, cn, dtype)
    assert_matches("flip", cv2.flip(src, flip_code), geometry.flip(src, flip_code))
    assert_matches("rotate", cv2.rotate(src, rotate_code), geometry.rotate(src, rotate_code))
    assert_matches("transpose", cv2.transpose(src), geometry.transpose(src))


@PROPERTY
@given(
    seed=seeds,
    height=st.integers(1, 20),
    width=st.integers(1, 20),
    cn=channels,
    dtype=any_dtypes,
    sizes=st.tuples(*[st.integers(0, 25)] * 4),
    border=st.sampled_from(
        [
            cv2.BORDER_CONSTANT,
            cv2.BORDER_REPLICATE,
            cv2.BORDER_REFLECT,
            cv2.BORDER_REFLECT_101,
            cv2.BORDER_WRAP,
        ]
    ),
    value=st.one_of(st.none(), st.floats(-300, 300), st.tuples(*[st.floats(-300, 300)] * 4)),
)
def test_copy_make_border_matches_opencv(seed, height, width, cn, dtype, sizes, border, value):
    src = _image(seed, height, width, cn, dtype)
    expected = cv2.copyMakeBorder(src, *sizes, border, value=value)
    assert_matches(
        "copyMakeBorder", expected, geometry.copyMakeBorder(src, *sizes, border, value=value)
    )


@PROPERTY
@given(
    seed=seeds,
    height=st.integers(1, 48),
    width=st.integers(1, 48),
    cn=channels,
    dtype=image_dtypes,
    interpolation=st.sampled_from([cv2.INTER_NEAREST, cv2.INTER_LINEAR, cv2.INTER_AREA]),
    target=st.one_of(
        st.tuples(st.integers(1, 70), st.integers(1, 70)).map(lambda s: ("dsize", s)),
        st.tuples(st.floats(0.1, 4.0), st.floats(0.1, 4.0)).map(lambda f: ("factors", f)),
        st.tuples(st.floats(1.0, 6.0), st.floats(1.0, 6.0)).map(lambda f: ("factors", f)),
        st.sampled_from(
            [
                ("factors", (0.5, 0.5)),
                ("factors", (2.0, 2.0)),
                ("factors", (0.25, 1 / 3)),
                ("factors", (1.5, 1.25)),
                ("factors", (3.0, 1.7)),
            ]
        ),
    ),
)
def test_resize_matches_opencv(seed, height, width, cn, dtype, interpolation, target):
    src = image(seed, height, width, cn, dtype)
    if target[0] == "dsize":
        args, kwargs = (target[1],), {}
    else:
        fx, fy = target[1]
        assume(round(width * fx) > 0 and round(height * fy) > 0)
        args, kwargs = (None,), {"fx": fx, "fy": fy}
    expected = cv2.resize(src, *args, interpolation=interpolation, **kwargs)
    got = geometry.resize(src, *args, interpolation=interpolation, **kwargs)
    assert_matches("resize", expected, got, scale=float(np.abs(src).max()))
    if dtype == "uint8":  # declared exact
        np.testing.assert_array_equal(got, expected)


def _maps(rng, height, width, kind, spread=1.4):
    """Sub-pixel maps reaching ``spread`` times the source size, beyond every edge."""
    offset = (spread - 1.0) / 2
    mx = (rng.random((height, width)) * spread - offset) * 40
    my = (rng.random((height, width)) * spread - offset) * 30
    mx[: height // 2] = np.round(mx[: height // 2] * 8) / 8  # exact halves and eighths too
    mx, my = mx.astype(np.float32), my.astype(np.float32)
    if kind == "xy":
        return np.dstack([mx, my]), None
    if kind == "fixed":
        return cv2.convertMaps(mx, my, cv2.CV_16SC2)
    return mx, my


@PROPERTY
@given(
    seed=seeds,
    src_size=st.tuples(st.integers(1, 30), st.integers(1, 40)),
    dst_size=st.tuples(st.integers(1, 25), st.integers(1, 25)),
    cn=channels,
    dtype=image_dtypes,
    kind=st.sampled_from(["x_y", "xy", "fixed"]),
    border=st.sampled_from([cv2.BORDER_CONSTANT, cv2.BORDER_REPLICATE]),
    value=st.one_of(st.none(), st.tuples(*[st.integers(0, 255)] * 4)),
    spread=st.sampled_from([1.0, 1.4, 3.0]),
)
def test_remap_matches_opencv(seed, src_size, dst_size, cn, dtype, kind, border, value, spread):
    rng = np.random.default_rng(seed)
    src = image(seed, *src_size, cn, dtype)
    map1, map2 = _maps(rng, *dst_size, kind, spread)
    kwargs = {"borderMode": border, "borderValue": value}
    expected = cv2.remap(src, map1, map2, cv2.INTER_LINEAR, **kwargs)
    got = geometry.remap(src, map1, map2, cv2.INTER_LINEAR, **kwargs)
    assert_matches(
        "remap", expected, got, scale=max(255.0 if value else 0, float(np.abs(src).max()))
    )


@pytest.mark.skipif(
    not current().float_positions,
    reason="OpenCV 4 samples float maps through its 1/32-pixel table: no fused path there",
)
def test_remap_uint8_fast_path_is_the_general_path_bit_for_bit(monkeypatch):
    """3/4-channel uint8 images with float maps take the int32 GatherElements lowering; it
    must give exactly what the general float64 path gives (ties on 1/8 pixels included)."""
    rng = np.random.default_rng(11)
    taken = []
    fast = geometry._fused_uint8
    monkeypatch.setattr(geometry, "_fused_uint8", lambda *a: taken.append(1) or fast(*a))
    cases = []
    for cn, border, value in [
        (3, cv2.BORDER_CONSTANT, (9, 200, 77, 0)),
        (4, cv2.BORDER_REPLICATE, None),
    ]:
        src = rng.integers(0, 256, (23, 31, cn), dtype=np.uint8)
        src[::3] = cv2.GaussianBlur(src, (5, 5), 2)[::3]  # smooth rows: near-tie lerps
        mx = rng.uniform(1, 34, (19, 27)).astype(np.float32)  # beyond the right/bottom edges
        my = rng.uniform(1, 26, (19, 27)).astype(np.float32)
        mx[::2] = np.round(mx[::2] * 8) / 8
        kwargs = {"borderMode": border, "borderValue": value}
        cases.append((src, mx, my, kwargs, geometry.remap(src, mx, my, cv2.INTER_LINEAR, **kwargs)))
    assert len(taken) == len(cases)
    monkeypatch.setattr(geometry, "_fused_uint8", lambda *a: None)
    for src, mx, my, kwargs, got in cases:
        np.testing.assert_array_equal(got, geometry.remap(src, mx, my, cv2.INTER_LINEAR, **kwargs))
        assert_matches("remap", cv2.remap(src, mx, my, cv2.INTER_LINEAR, **kwargs), got, scale=255)


def test_remap_undistortion_maps_match_opencv():
    rng = np.random.default_rng(3)
    src = rng.integers(0, 256, (96, 128, 3), dtype=np.uint8)
    K = np.array([[100.0, 0, 63.5], [0, 100, 47.5], [0, 0, 1]])
    dist = np.array([-0.3, 0.1, 0.001, 0.002, 0.0])
    for m1type in (cv2.CV_32FC1, cv2.CV_32FC2, cv2.CV_16SC2):
        map1, map2 = cv2.initUndistortRectifyMap(K, dist, None, K, (128, 96), m1type)
        for image_ in (src, src.astype(np.float32) / 255):
            expected = cv2.remap(image_, map1, map2, cv2.INTER_LINEAR)
            assert_matches("remap", expected, geometry.remap(image_, map1, map2, cv2.INTER_LINEAR))


@PROPERTY
@given(
    seed=seeds,
    src_size=st.tuples(st.integers(1, 30), st.integers(1, 40)),
    dsize=st.tuples(st.integers(1, 40), st.integers(1, 30)),
    cn=st.sampled_from([0, 1, 3, 4]),
    dtype=image_dtypes,
    angle=st.floats(-180, 180),
    scale=st.floats(0.3, 2.5),
    shift=st.tuples(st.floats(-10, 10), st.floats(-10, 10)),
    inverse=st.booleans(),
    border=st.sampled_from([cv2.BORDER_CONSTANT, cv2.BORDER_REPLICATE]),
    value=st.one_of(st.none(), st.tuples(*[st.integers(0, 255)] * 4)),
)
def test_warp_affine_matches_opencv(
    seed, src_size, dsize, cn, dtype, angle, scale, shift, inverse, border, value
):
    src = image(seed, *src_size, cn, dtype)
    M = cv2.getRotationMatrix2D((src_size[1] / 2, src_size[0] / 2), angle, scale)
    M[:, 2] += shift
    flags = cv2.INTER_LINEAR | (cv2.WARP_INVERSE_MAP if inverse else 0)
    kwargs = {"flags": flags, "borderMode": border, "borderValue": value}
    expected = cv2.warpAffine(src, M, dsize, **kwargs)
    got = geometry.warpAffine(src, M, dsize, **kwargs)
    assert_matches(
        "warpAffine", expected, got, scale=max(255.0 if value else 0, float(np.abs(src).max()))
    )


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "float32"])
@pytest.mark.parametrize("border", [cv2.BORDER_CONSTANT, cv2.BORDER_REPLICATE])
def test_warp_affine_follows_opencv_kernel_without_ipp(dtype, border):
    """IPP off (cv2.ipp.setUseIPP(False), or a build without IPP) or a one-pixel-high
    source: OpenCV 5.1's own kernel (float32 row starts, fused products in 16-column
    blocks, a compiler-fused tail, fused lerps) computes warpAffine: reproduced exactly."""
    before = cv2.ipp.useIPP()
    cases = []
    for seed in range(8):
        rng = np.random.default_rng(seed)
        src = image(seed, 9 + 3 * seed, 31 - 2 * seed, [0, 1, 3, 4][seed % 4], dtype)
        M = cv2.getRotationMatrix2D((15.0, 11.0), rng.uniform(-40, 40), rng.uniform(0.6, 1.6))
        M[:, 2] += rng.uniform(-6, 6, 2)
        cases.append((src, M, (7 + 5 * seed, 30 - 2 * seed)))
    cases.append((image(9, 1, 30, 3, dtype), cases[0][1], (40, 6)))  # IPP declines 1-row images
    try:
        cv2.ipp.setUseIPP(False)
        for src, M, size in cases:
            want = cv2.warpAffine(src, M, size, borderMode=border)
            np.testing.assert_array_equal(
                geometry.warpAffine(src, M, size, borderMode=border), want
            )
        cv2.ipp.setUseIPP(before)
        src, M, size = cases[-1]
        want = cv2.warpAffine(src, M, size, borderMode=border)
        np.testing.assert_array_equal(geometry.warpAffine(src, M, size, borderMode=border), want)
    finally:
        cv2.ipp.setUseIPP(before)
