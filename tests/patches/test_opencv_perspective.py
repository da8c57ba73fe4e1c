"""cv2.warpPerspective (constant homography) vs real cv2, and replayed in ONNX Runtime."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchport.patches.opencv import geometry, warp_positions

from .helpers import PROPERTY, assert_matches, image, seeds

INVERSE = cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP


def _homography(seed: int, width: int, height: int, spread: float) -> np.ndarray:
    rng = np.random.default_rng(seed)
    corners = np.float32([[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]])
    moved = corners + rng.uniform(-spread, spread, (4, 2)).astype(np.float32)
    return cv2.getPerspectiveTransform(corners, moved)


# where IPP's (unpublished) acceptance test may disagree with the prediction (w <= 0 at an
# output corner): the declared bounds of that case, measured by bench/opencv_warp_accuracy.py
UNCERTAIN_UNITS = {"uint8": 1, "uint16": 14}
UNCERTAIN_RELATIVE = 4e-4


def _corner_w(inverse: np.ndarray, size: tuple[int, int]) -> float:
    width, height = size
    corners = [(x, y) for x in (0, width - 1) for y in (0, height - 1)]
    return min(inverse[2, 0] * x + inverse[2, 1] * y + inverse[2, 2] for x, y in corners)


@PROPERTY
@given(
    seed=seeds,
    height=st.integers(4, 40),
    width=st.integers(4, 40),
    cn=st.sampled_from([0, 1, 3, 4]),
    dtype=st.sampled_from(["uint8", "uint16", "float32"]),
    spread=st.floats(0.0, 8.0),
    horizon=st.booleans(),
    inverse=st.booleans(),
    border=st.sampled_from([cv2.BORDER_CONSTANT, cv2.BORDER_REPLICATE]),
    size=st.tuples(st.integers(1, 50), st.integers(1, 50)),
)
def test_warp_perspective_matches_opencv(
    seed, height, width, cn, dtype, spread, horizon, inverse, border, size
):
    src = image(seed, height, width, cn, dtype)
    if horizon:
        matrix = _horizon_homography(seed, *size)
    else:
        matrix = _homography(seed, width, height, spread)
    flags = cv2.INTER_LINEAR | (cv2.WARP_INVERSE_MAP if inverse else 0)
    expected = cv2.warpPerspective(src, matrix, size, flags=flags, borderMode=border)
    got = geometry.warpPerspective(src, matrix, size, flags=flags, borderMode=border)
    backward = matrix if inverse else cv2.invert(matrix)[1]
    if cv2.ipp.useIPP() and _corner_w(backward, size) <= 0:  # the declared uncertain case
        diff = np.abs(got.astype(np.float64) - expected.astype(np.float64))
        if dtype == "float32":
            assert diff.max() <= UNCERTAIN_RELATIVE * max(float(np.abs(src).max()), 1e-30)
        else:
            assert diff.max() <= UNCERTAIN_UNITS[dtype]
        return
    if border == cv2.BORDER_CONSTANT and cv2.ipp.useIPP():
        got = _ipp_edge_fills(expected, got, backward, size, src.shape)
    assert_matches("warpPerspective", expected, got, scale=float(np.abs(src).max()))


def _ipp_edge_fills(expected, got, backward, size, shape):
    """``got`` with the declared IPP exception taken as OpenCV's: with BORDER_CONSTANT, IPP
    fills a few pixels whose position lies within a pixel outside the source's last row or
    column with the border value (0 here), where OpenCV's kernel and the replacement lerp."""
    x, y = warp_positions.perspective_in_double(backward, size)
    rows, cols = shape[0], shape[1]
    edge = ((x > cols - 1) & (x < cols)) | ((y > rows - 1) & (y < rows))
    edge |= ((x < 0) & (x > -1)) | ((y < 0) & (y > -1))
    filled = expected == 0 if expected.ndim == 2 else (expected == 0).all(axis=-1)
    return np.where((edge & filled).reshape(*edge.shape, *[1] * (got.ndim - 2)), expected, got)


def _horizon_homography(seed: int, width: int, height: int) -> np.ndarray:
    """An inverse map whose denominator w = m20 x + m21 y + 1 falls to -0.5 or below at the
    far corner of a width x height output (of two pixels or more each way): the horizon
    crosses the output, part of it maps from behind the camera (a tilted ground plane seen
    from a low camera)."""
    rng = np.random.default_rng(seed)
    m = np.eye(3) + rng.uniform(-0.3, 0.3, (3, 3))
    m[2] = [rng.uniform(0.2, 1.0), rng.uniform(0.2, 1.0), 1.0]
    corner = m[2, 0] * max(width - 1, 1) + m[2, 1] * max(height - 1, 1)
    m[2, :2] *= -rng.uniform(1.5, 3.0) / corner  # w at the far corner: -0.5 to -2
    return m


@pytest.fixture
def without_ipp():
    """OpenCV with Intel IPP switched off (its own kernels compute every warp)."""
    before = cv2.ipp.useIPP()
    cv2.ipp.setUseIPP(False)
    yield
    cv2.ipp.setUseIPP(before)


def _assert_kernel_exact(dtype: str, cn: int, border: int) -> None:
    for seed in range(6):
        src = image(seed, 6 + 5 * seed, 30 - 3 * seed, cn, dtype)
        size = (5 + 9 * seed, 20 + 4 * seed)
        matrix = _horizon_homography(seed, *size)
        want = cv2.warpPerspective(src, matrix, size, flags=INVERSE, borderMode=border)
        got = geometry.warpPerspective(src, matrix, size, flags=INVERSE, borderMode=border)
        np.testing.assert_array_equal(got, want, err_msg=f"seed {seed}")


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "float32"])
@pytest.mark.parametrize("cn", [0, 1, 3, 4])
def test_warp_perspective_across_the_horizon_matches_opencv(dtype, cn):
    """Where w changes sign in a replicated warp's output, OpenCV 5.1's IPP path declines
    and its own float32 kernel computes the positions (row starts, fused products, a float32
    division, 16-column blocks and a scalar tail): reproduced exactly, far-away positions
    included."""
    _assert_kernel_exact(dtype, cn, cv2.BORDER_REPLICATE)


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "float32"])
@pytest.mark.parametrize("border", [cv2.BORDER_CONSTANT, cv2.BORDER_REPLICATE])
def test_warp_perspective_follows_opencv_with_ipp_off(without_ipp, dtype, border):
    """cv2.ipp.setUseIPP(False) (or a build without IPP): OpenCV's kernel for every warp."""
    _assert_kernel_exact(dtype, 3, border)
    src = image(7, 24, 32, 0, dtype)
    matrix = _homography(7, 32, 24, 5.0)  # in front of the camera: IPP's case when on
    want = cv2.warpPerspective(src, matrix, (40, 30), flags=INVERSE, borderMode=border)
    got = geometry.warpPerspective(src, matrix, (40, 30), flags=INVERSE, borderMode=border)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "float32"])
def test_warp_perspective_at_infinity_matches_opencv(dtype):
    """w exactly 0 at some pixels (the horizon through pixel centres): OpenCV's kernel
    lerps an infinite fraction to NaN (stored as the integer maximum), except where a
    constant border fills the pixel (scalar tail, or a whole 16-column block outside)."""
    src = (np.random.default_rng(0).random((12, 9, 3)) * 200).astype(dtype)
    horizon = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.125, -1.0]])  # w = 0 at y=8
    vertical = np.array([[1.0, 0.3, 2.0], [0.2, 1.0, 1.0], [1.0, 0.0, 0.0]])  # w = 0 at x=0
    for matrix in (horizon, vertical):
        for border in (cv2.BORDER_CONSTANT, cv2.BORDER_REPLICATE):
            for width in (5, 16, 37):
                args = dict(flags=INVERSE, borderMode=border, borderValue=(7, 8, 9))
                want = cv2.warpPerspective(src, matrix, (width, 14), **args)
                got = geometry.warpPerspective(src, matrix, (width, 14), **args)
                np.testing.assert_array_equal(got, want, err_msg=f"{border} {width}")


def test_warp_perspective_hypothesis_example_299():
    """The property test's failing example: three pixels 3 off on uint16 (positions at
    y = -105 beside the horizon, OpenCV's float32 kernel, not its double IPP path)."""
    src = image(299, 6, 30, 0, "uint16")
    matrix = _homography(299, 30, 6, 8.0 * (299 % 7) / 7)
    args = dict(flags=INVERSE, borderMode=cv2.BORDER_REPLICATE)
    want = cv2.warpPerspective(src, matrix, (5, 20), **args)
    np.testing.assert_array_equal(geometry.warpPerspective(src, matrix, (5, 20), **args), want)


def test_birds_eye_view_replays_in_onnx_runtime(tmp_path):
    import onnxruntime

    import patchport
    from patchport import annotate

    matrix = _homography(5, 64, 48, 6.0)
    frame = image(1, 48, 64, 3, "uint8")
    with patchport.session("warp", str(tmp_path), patching=["opencv"], strict=True):
        bgr = annotate.input_tensors("top", {"bgr": frame})
        top = cv2.warpPerspective(bgr, matrix, (64, 48))
        annotate.output_tensors("top", {"top": top}, export_with="onnx")
    result = patchport.compile_graph(visualize=False)
    session = onnxruntime.InferenceSession(str(result.models["top"]))
    fresh = image(2, 48, 64, 3, "uint8")
    got = session.run(None, {"bgr": fresh})[0]
    want = cv2.warpPerspective(fresh, matrix, (64, 48))
    assert np.abs(got.astype(int) - want.astype(int)).max() <= 1  # declared within 1


@pytest.mark.parametrize("dtype", ["uint8", "float32"])
def test_view_across_the_horizon_replays_in_onnx_runtime(tmp_path, dtype):
    """The float32 kernel's positions and fused lerps survive export: exact in ORT."""
    import onnxruntime

    import patchport
    from patchport import annotate

    matrix = _horizon_homography(3, 40, 32)
    args = dict(flags=INVERSE, borderMode=cv2.BORDER_REPLICATE)
    with patchport.session("warp", str(tmp_path), patching=["opencv"], strict=True):
        frame = annotate.input_tensors("ground", {"frame": image(1, 30, 40, 1, dtype)})
        ground = cv2.warpPerspective(frame, matrix, (40, 32), **args)
        annotate.output_tensors("ground", {"ground": ground}, export_with="onnx")
    result = patchport.compile_graph(visualize=False)
    session = onnxruntime.InferenceSession(str(result.models["ground"]))
    fresh = image(2, 30, 40, 1, dtype)
    got = session.run(None, {"frame": fresh})[0]
    np.testing.assert_array_equal(got, cv2.warpPerspective(fresh, matrix, (40, 32), **args))
