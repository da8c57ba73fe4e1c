"""Rodrigues, projectPoints, undistortPoints, getAffineTransform, getRotationMatrix2D and
reprojectImageTo3D vs real cv2 (every output, jacobians included), traced end to end and
replayed in ONNX Runtime on fresh poses, points, intrinsics and disparities."""

from __future__ import annotations

import warnings

import cv2
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import patchport
from patchport import annotate
from patchport.patches.opencv import UnsupportedCaseError, calibration

from .helpers import PROPERTY, assert_matches, image, seeds

floats = st.sampled_from(["float32", "float64"])
dist_counts = st.sampled_from([0, 4, 5, 8, 12])  # 0: distCoeffs=None
K = np.array([[520.0, 0.0, 318.5], [0.0, 515.0, 241.2], [0.0, 0.0, 1.0]])


def close(expected: np.ndarray, got: np.ndarray, rtol: float) -> None:
    """Same shape and dtype, within ``rtol`` of the largest entry."""
    assert type(got) is np.ndarray and got.flags.c_contiguous
    assert got.shape == expected.shape and got.dtype == expected.dtype
    if np.isnan(expected).all():  # a reflection with no axis: OpenCV divides 0 by 0
        assert np.isnan(got).all()
        return
    scale = max(float(np.nanmax(np.abs(expected))), 1e-300)
    np.testing.assert_allclose(got, expected, rtol=0, atol=rtol * scale)


def rotation_vector(rng: np.random.Generator) -> np.ndarray:
    """Small, ordinary, near-zero and near-half-turn rotations."""
    axis = rng.normal(size=3)
    angle = rng.choice([1e-12, 1e-6, 0.3, 2.0, np.pi - 1e-7, np.pi])
    return axis / np.linalg.norm(axis) * angle * rng.choice([1.0, rng.random()])


@PROPERTY
@given(seed=seeds, dtype=floats, shape=st.sampled_from([(3,), (3, 1), (1, 3)]))
def test_rodrigues_vector_to_matrix_matches_opencv(seed, dtype, shape):
    r = rotation_vector(np.random.default_rng(seed)).reshape(shape).astype(dtype)
    (want, want_j), (got, got_j) = cv2.Rodrigues(r), calibration.Rodrigues(r)
    tol = 2e-15 if dtype == "float64" else 0.0  # float32: exact
    close(want, got, tol)
    close(want_j, got_j, tol)


@PROPERTY
@given(seed=seeds, dtype=floats, noise=st.sampled_from([0.0, 1e-7, 1e-3, 0.3]))
def test_rodrigues_matrix_to_vector_matches_opencv(seed, dtype, noise):
    rng = np.random.default_rng(seed)
    matrix = cv2.Rodrigues(rotation_vector(rng))[0] + rng.normal(size=(3, 3)) * noise
    if seed % 11 == 0:
        matrix = np.diag(rng.choice([-1.0, 1.0], 3))  # exact half turns and reflections
    matrix = matrix.astype(dtype)
    (want, want_j), (got, got_j) = cv2.Rodrigues(matrix), calibration.Rodrigues(matrix)
    # an SVD vs Newton steps, then OpenCV's closed form, which divides by sin(theta)^2: an
    # ulp of the matrix moves the result by up to 3e-11 / sin(theta)^2 in OpenCV itself
    sine = np.nan_to_num(abs(np.sin(np.linalg.norm(want.astype(np.float64)))))  # nan: no axis
    tol = (1e-9 if dtype == "float64" else 1e-5) + 3e-11 / max(sine, 1e-5) ** 2
    close(want, got, tol)
    close(want_j, got_j, tol)


def test_rodrigues_out_of_range_matrix_gives_zeros_like_opencv():
    matrix = np.eye(3) * 150.0
    for want, got in zip(cv2.Rodrigues(matrix), calibration.Rodrigues(matrix)):
        np.testing.assert_array_equal(got, want)


def distortion(rng: np.random.Generator, count: int, strength: float) -> np.ndarray | None:
    if count == 0:
        return None
    coeffs = rng.normal(size=count) * strength
    coeffs[2:4] *= 0.05  # tangential terms are small in real lenses
    return coeffs


@PROPERTY
@given(
    seed=seeds,
    count=st.integers(1, 30),
    dtype=floats,
    ndist=dist_counts,
    layout=st.sampled_from(["n3", "n13", "1n3"]),
)
def test_project_points_matches_opencv(seed, count, dtype, ndist, layout):
    rng = np.random.default_rng(seed)
    points = rng.normal(size=(count, 3)) + [0.0, 0.0, 4.0]
    shape = {"n3": (count, 3), "n13": (count, 1, 3), "1n3": (1, count, 3)}[layout]
    points = points.reshape(shape).astype(dtype)
    rvec, tvec = rotation_vector(rng), rng.normal(size=(3, 1)) * 0.5
    if seed % 4 == 0:
        rvec = cv2.Rodrigues(rvec)[0]  # a 3x3 rotation matrix as rvec
    coeffs = distortion(rng, ndist, 0.05)
    (want, want_j), (got, got_j) = (
        f(points, rvec, tvec, K, coeffs) for f in (cv2.projectPoints, calibration.projectPoints)
    )
    close(want, got, 1e-11 if dtype == "float64" else 0.0)  # float32: exact
    jac_tol = 1e-11
    if rvec.shape == (3, 3):  # dR/dr at the matrix's vector: Rodrigues' conditioning
        sine = np.nan_to_num(abs(np.sin(np.linalg.norm(cv2.Rodrigues(rvec)[0]))))
        jac_tol += 3e-11 / max(sine, 1e-5) ** 2
    close(want_j, got_j, jac_tol)


@PROPERTY
@given(
    seed=seeds,
    count=st.integers(1, 30),
    dtype=floats,
    ndist=dist_counts,
    rp=st.sampled_from(["none", "R", "P3", "RP4"]),
    layout=st.sampled_from(["n2", "n12", "1n2"]),
    strong=st.booleans(),
)
def test_undistort_points_matches_opencv_exactly(seed, count, dtype, ndist, rp, layout, strong):
    rng = np.random.default_rng(seed)
    pixels = rng.random((count, 2)) * [640.0, 480.0] + rng.normal(size=(count, 2)) * 50
    shape = {"n2": (count, 2), "n12": (count, 1, 2), "1n2": (1, count, 2)}[layout]
    pixels = pixels.reshape(shape).astype(dtype)
    coeffs = distortion(rng, ndist, 0.8 if strong else 0.05)  # strong: OpenCV's bail-out
    rot = cv2.Rodrigues(rng.normal(size=3) * 0.1)[0] if "R" in rp else None
    proj = {"P3": K * 1.1, "RP4": np.hstack([K, rng.normal(size=(3, 1))])}.get(rp)
    want = cv2.undistortPoints(pixels, K, coeffs, R=rot, P=proj)
    got = calibration.undistortPoints(pixels, K, coeffs, R=rot, P=proj)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@PROPERTY
@given(
    seed=seeds,
    steps=st.integers(1, 30),
    eps=st.sampled_from([None, 1e-3, 0.05, 1.0, 5.0]),
    strength=st.sampled_from([0.05, 0.3, 0.8]),
    dtype=floats,
)
def test_undistort_points_criteria_match_opencv_exactly(seed, steps, eps, strength, dtype):
    """A fixed count, or count + epsilon: OpenCV 5's per-point stop and damping."""
    rng = np.random.default_rng(seed)
    pixels = (rng.random((12, 1, 2)) * [640.0, 480.0]).astype(dtype)
    coeffs = distortion(rng, int(rng.choice([4, 5, 8, 12])), strength)
    kind = cv2.TERM_CRITERIA_COUNT | (0 if eps is None else cv2.TERM_CRITERIA_EPS)
    criteria = (kind, steps, 0.0 if eps is None else eps)
    want = cv2.undistortPoints(pixels, K, coeffs, criteria=criteria)
    np.testing.assert_array_equal(
        calibration.undistortPoints(pixels, K, coeffs, criteria=criteria), want
    )


@PROPERTY
@given(seed=seeds, layout=st.sampled_from([(3, 2), (3, 1, 2), (1, 3, 2)]))
def test_get_affine_transform_matches_opencv(seed, layout):
    """Bit for bit: OpenCV's 6x6 LU solve in its pivot and rounding order (a closed-form
    inverse was 3e-8 off on a thin triangle, beyond 1e-13 of the largest entry)."""
    rng = np.random.default_rng(seed)
    src = (rng.normal(size=(3, 2)) * 200).astype(np.float32)
    dst = (rng.normal(size=(3, 2)) * 200).astype(np.float32)
    if seed % 9 == 0:
        src[2] = 2 * src[1] - src[0]  # collinear (exact in float32 for small integers)
        src = np.round(src / 50).astype(np.float32)
        src[2] = 2 * src[1] - src[0]
    elif seed % 9 == 1:  # integer corners: equal magnitudes tie in the pivot search
        src = np.round(src / 50).astype(np.float32)
    elif seed % 9 == 2:  # nearly collinear: a thin triangle amplifies every rounding
        src[2] = src[0] + (src[1] - src[0]) * 0.37 + np.float32(1e-3)
    want = cv2.getAffineTransform(src.reshape(layout), dst.reshape(layout))
    got = calibration.getAffineTransform(src.reshape(layout), dst.reshape(layout))
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_get_affine_transform_of_a_thin_triangle_is_exact():
    """The failing example: a closed-form inverse rounds unlike OpenCV's LU (5e-12 of the
    largest entry on seed 2828's triangle, 3e-8 absolute on Hypothesis' example)."""
    rng = np.random.default_rng(2828)
    src = (rng.normal(size=(3, 2)) * 200).astype(np.float32)
    dst = (rng.normal(size=(3, 2)) * 200).astype(np.float32)
    np.testing.assert_array_equal(
        calibration.getAffineTransform(src, dst), cv2.getAffineTransform(src, dst)
    )


@PROPERTY
@given(
    seed=seeds,
    angle=st.floats(-720, 720, allow_nan=False),
    scale=st.floats(-4, 4, allow_nan=False),
)
def test_get_rotation_matrix_2d_matches_opencv(seed, angle, scale):
    center = tuple(np.random.default_rng(seed).normal(size=2) * 300)
    want = cv2.getRotationMatrix2D(center, angle, scale)
    got = calibration.getRotationMatrix2D(center, angle, scale)
    assert got.dtype == want.dtype and got.shape == (2, 3)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-15 * max(1.0, np.abs(want).max()))


REFUSED = [
    (calibration.Rodrigues, (np.zeros((2, 2)),), {}, "src=[2, 2]"),
    (calibration.Rodrigues, (np.zeros(3, np.int32),), {}, "src=int32"),
    (calibration.Rodrigues, (np.zeros(3),), {"jacobian": np.zeros((3, 9))}, "jacobian="),
    (calibration.projectPoints, (np.ones((4, 3)), np.ones(4), np.zeros(3), K, None), {}, "rvec="),
    (
        calibration.projectPoints,
        (np.ones((4, 3)), np.zeros(3), np.zeros(3), K, np.zeros(14)),
        {},
        "distCoeffs=14 values",
    ),
    (
        calibration.projectPoints,
        (np.ones((4, 3)), np.zeros(3), np.zeros(3), K, None),
        {"aspectRatio": 1.0},
        "aspectRatio=1.0",
    ),
    (
        calibration.projectPoints,
        (np.ones((4, 2)), np.zeros(3), np.zeros(3), K, None),
        {},
        "objectPoints=[4, 2]",
    ),
    (
        calibration.undistortPoints,
        (np.ones((4, 1, 2)), K, None),
        {"criteria": (cv2.TERM_CRITERIA_EPS, 20, 1e-6)},
        "criteria=",
    ),
    (calibration.undistortPoints, (np.ones((4, 1, 2)), K, np.zeros(6)), {}, "distCoeffs="),
    (calibration.undistortPoints, (np.ones((4, 1, 2)), K, None), {"P": np.eye(4)}, "P=[4, 4]"),
    (calibration.undistortPoints, (np.ones((4, 1, 2)), K[:2], None), {}, "cameraMatrix=[2, 3]"),
    (
        calibration.getAffineTransform,
        (np.ones((3, 2)), np.ones((3, 2), np.float32)),
        {},
        "src=float64[3, 2]",
    ),
    (calibration.getAffineTransform, (np.ones((4, 2), np.float32),) * 2, {}, "src=float32[4, 2]"),
    (calibration.getRotationMatrix2D, ((1.0,), 30.0, 1.0), {}, "center=(1.0,)"),
    (calibration.reprojectImageTo3D, (np.ones((4, 5)), np.eye(4)), {}, "disparity=float64"),
    (calibration.reprojectImageTo3D, (np.ones((4, 5), np.float32), np.eye(3)), {}, "Q=[3, 3]"),
    (
        calibration.reprojectImageTo3D,
        (np.ones((4, 5), np.float32), np.eye(4)),
        {"ddepth": cv2.CV_16S},
        "ddepth=3",
    ),
]


@pytest.mark.parametrize(("replacement", "args", "kwargs", "named"), REFUSED)
def test_unsupported_cases_are_refused_naming_function_and_argument(
    replacement, args, kwargs, named
):
    with pytest.raises(UnsupportedCaseError, match="supported: ") as caught:
        replacement(*args, **kwargs)
    message = str(caught.value)
    assert message.startswith(
        f"cv2.{replacement.__name__} (patchport replacement): argument {named}"
    ), message


def test_a_refusal_inside_a_session_names_the_call_and_leaves_cv2_unpatched(tmp_path):
    original = cv2.undistortPoints
    criteria = (cv2.TERM_CRITERIA_EPS, 0, 1e-6)
    with pytest.raises(UnsupportedCaseError, match=r"cv2\.undistortPoints .*criteria="):
        with patchport.session("refuse", tmp_path, patching=["opencv"]):
            pixels = annotate.input_tensors("n", {"px": np.ones((3, 1, 2), np.float32)})
            cv2.undistortPoints(pixels, K, None, criteria=criteria)
    assert cv2.undistortPoints is original


def camera_step(points, rvec, tvec, camera, coeffs, pixels, triangle, angle):
    """A pose and calibration step as a pipeline writes it, every input traced."""
    rot, _ = cv2.Rodrigues(rvec)
    back, _ = cv2.Rodrigues(rot)
    projected, jac = cv2.projectPoints(points, rvec, tvec, camera, coeffs)
    rays = cv2.undistortPoints(pixels, camera, coeffs, R=rot, P=camera)
    criteria = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 20, 0.01)
    settled = cv2.undistortPoints(pixels, camera, coeffs * 10, criteria=criteria)
    affine = cv2.getAffineTransform(triangle, triangle[::-1] * 0.5 + 3)
    spin = cv2.getRotationMatrix2D((triangle[0, 0], triangle[0, 1]), angle[0], 1.2)
    return {
        "rot": rot,
        "back": back,
        "projected": projected,
        "jac": jac,
        "rays": rays,
        "settled": settled,
        "affine": affine,
        "spin": spin,
    }


def sample(rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {
        "points": (rng.normal(size=(6, 1, 3)) + [0, 0, 5]).astype(np.float32),
        "rvec": rng.normal(size=(3, 1)) * 0.5,
        "tvec": rng.normal(size=(3, 1)) * 0.2,
        "camera": K + np.diag(rng.normal(size=3) * [5, 5, 0]),
        "coeffs": rng.normal(size=5) * 0.02,
        "pixels": (rng.random((6, 1, 2)) * [640, 480]).astype(np.float32),
        "triangle": (rng.normal(size=(3, 2)) * 100).astype(np.float32),
        "angle": rng.normal(size=1) * 90,
    }


def test_camera_geometry_traces_exports_to_onnx_and_replays_on_fresh_inputs(tmp_path):
    import onnxruntime

    rng = np.random.default_rng(3)
    names = list(camera_step(**sample(rng)))
    with (
        warnings.catch_warnings(),  # every traced call is checked against cv2 and agrees
        patchport.session("cam", str(tmp_path), patching=["opencv"], strict=True),
    ):
        warnings.simplefilter("error", patchport.PatchMismatchWarning)
        for _ in range(2):
            traced = annotate.input_tensors("cam", sample(rng))
            annotate.output_tensors("cam", camera_step(*traced), export_with="onnx")
        used = patchport.session_patches()
        for name in ("Rodrigues", "projectPoints", "undistortPoints", "getAffineTransform"):
            assert used.find(f"cv2.{name}").calls >= 2
        assert used.find("cv2.getRotationMatrix2D").calls >= 2
    result = patchport.compile_graph(visualize=False)
    session = onnxruntime.InferenceSession(str(result.models["cam"]))
    for _ in range(3):
        fresh = sample(rng)
        got = dict(zip(names, session.run(None, fresh)))
        want = camera_step(**fresh)  # real cv2 on plain arrays
        for name, expected in want.items():
            close(expected, got[name], 1e-6 if expected.dtype == np.float32 else 1e-12)


def test_get_affine_transform_s_dst_is_an_input_not_a_buffer(tmp_path):
    """cv2.getAffineTransform(src, dst) takes dst as data: traced, or the very array passed
    as src, it must not be refused as a destination buffer nor written in place."""
    tri = np.float32([[0, 0], [10, 1], [2, 9]])
    with patchport.session("aff", str(tmp_path), patching=["opencv"], strict=True):
        traced = annotate.input_tensors("n", {"tri": tri})
        same = cv2.getAffineTransform(traced, traced)  # identity
        moved = cv2.getAffineTransform(tri, traced * 2)  # plain src, traced dst
        annotate.output_tensors("n", {"same": same, "moved": moved}, export_with="onnx")
    np.testing.assert_allclose(same, cv2.getAffineTransform(tri, tri), atol=1e-12)
    np.testing.assert_allclose(moved, cv2.getAffineTransform(tri, tri * 2), atol=1e-12)


@pytest.mark.parametrize("backend", ["pt2", "jit"])
def test_camera_geometry_exports_to_pt2_and_scripts_for_jit(tmp_path, backend):
    """jit scripts the graph (no fall back to tracing: no number / tensor, no tensor ** n)."""
    rng = np.random.default_rng(8)
    with warnings.catch_warnings():
        warnings.simplefilter("error", patchport.PatchportWarning)
        with patchport.session("cam", str(tmp_path), patching=["opencv"], strict=True):
            for _ in range(2):
                traced = annotate.input_tensors("cam", sample(rng))
                annotate.output_tensors("cam", camera_step(*traced), export_with=backend)
        result = patchport.compile_graph(visualize=False)
    manager = patchport.InferenceManager(result.yaml_path)
    fresh = sample(rng)
    outputs = manager.run_policy({f"cam/{name}": value for name, value in fresh.items()})
    for name, expected in camera_step(**fresh).items():
        close(expected, outputs[f"cam/{name}"].numpy(), 1e-12)


def test_a_dynamic_point_count_replays_at_counts_never_traced(tmp_path):
    """Detected keypoints vary in number: one export serves every count."""
    import onnxruntime

    coeffs = np.array([0.1, -0.05, 0.001, 0.002, 0.01])

    def step(pixels, points, rvec):
        projected, jac = cv2.projectPoints(points, rvec, np.zeros(3), K, coeffs)
        return {"rays": cv2.undistortPoints(pixels, K, coeffs), "proj": projected, "jac": jac}

    def points_of(rng, n):
        return {
            "pixels": (rng.random((n, 1, 2)) * [640, 480]).astype(np.float32),
            "points": rng.normal(size=(n, 1, 3)) + [0, 0, 4],
            "rvec": rng.normal(size=3) * 0.3,
        }

    rng = np.random.default_rng(9)
    dynamic = {"pixels": {0: "n"}, "points": {0: "n"}}
    with patchport.session("pts", str(tmp_path), patching=["opencv"], strict=True):
        for n in (5, 9):
            traced = annotate.input_tensors("pts", points_of(rng, n), dynamic=dynamic)
            annotate.output_tensors("pts", step(*traced), export_with="onnx")
    session = onnxruntime.InferenceSession(
        str(patchport.compile_graph(visualize=False).models["pts"])
    )
    for n in (3, 14):
        fresh = points_of(rng, n)
        got = dict(zip(["rays", "proj", "jac"], session.run(None, fresh)))
        for name, expected in step(**fresh).items():
            close(expected, got[name], 1e-12)


@PROPERTY
@given(
    seed=seeds,
    height=st.integers(2, 60),
    width=st.integers(2, 60),
    cn=st.sampled_from([0, 1, 3, 4]),
    dtype=st.sampled_from(["uint8", "uint16", "float32"]),
    new_camera=st.booleans(),
    count=st.sampled_from([4, 5, 8]),
)
def test_undistort_matches_opencv(seed, height, width, cn, dtype, new_camera, count):
    rng = np.random.default_rng(seed)
    src = image(seed, height, width, cn, dtype)
    focal = width * rng.uniform(0.5, 1.5)
    camera = np.array([[focal, 0, width / 2 - 0.3], [0, focal * 1.01, height / 2 + 0.2], [0, 0, 1]])
    coefficients = rng.normal(0, 0.05, count) + np.r_[-0.2, 0.05, np.zeros(count - 2)]
    new = camera * [[0.9], [0.9], [1.0]] if new_camera else None
    expected = cv2.undistort(src, camera, coefficients, None, new)
    got = calibration.undistort(src, camera, coefficients, None, new)
    assert_matches("undistort", expected, got, scale=float(np.abs(src).max(initial=1)))


def test_undistort_refuses_a_traced_calibration_naming_it():
    from patchport.tracing import Recorder, trace_input

    rec = Recorder("calib")
    camera = trace_input(rec, "K", np.eye(3))
    with pytest.raises(ValueError, match="argument cameraMatrix=traced data"):
        calibration.undistort(np.zeros((4, 4), np.uint8), camera, None)


def stereo_q(rng: np.random.Generator, dtype: str = "float64") -> np.ndarray:
    """cv2.stereoRectify's disparity-to-depth matrix, perturbed (a few cells with w = 0)."""
    q = np.array([[1, 0, 0, -15.5], [0, 1, 0, -11.5], [0, 0, 0, 40.0], [0, 0, -8.0, 0.25]])
    return (q + rng.normal(size=(4, 4)) * 0.01 * (rng.random((4, 4)) < 0.5)).astype(dtype)


@PROPERTY
@given(
    seed=seeds,
    dtype=st.sampled_from(["uint8", "int16", "int32", "float32"]),
    missing=st.booleans(),
    qtype=floats,
)
def test_reproject_image_to_3d_matches_opencv_exactly(seed, dtype, missing, qtype):
    rng = np.random.default_rng(seed)
    disparity = rng.integers(0, 64, size=(7, 9)) * 16 - 16
    disparity = (disparity / 16.0 if dtype == "float32" else disparity).astype(dtype)
    if dtype == "uint8":
        disparity = rng.integers(0, 256, size=(7, 9)).astype(np.uint8)
    q = stereo_q(rng, qtype)
    if seed % 5 == 0:
        q[3] = [0, 0, 0, 0]  # w = 0 everywhere: OpenCV divides by zero
    want = cv2.reprojectImageTo3D(disparity, q, handleMissingValues=missing)
    got = calibration.reprojectImageTo3D(disparity, q, handleMissingValues=missing)
    assert got.dtype == want.dtype == np.float32 and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def stereo_step(disparity, q):
    xyz = cv2.reprojectImageTo3D(disparity / 16.0, q, handleMissingValues=True)
    return {"xyz": xyz, "plain_q": cv2.reprojectImageTo3D(disparity, Q_PLAIN)}


Q_PLAIN = stereo_q(np.random.default_rng(0))


@pytest.mark.parametrize("backend", ["onnx", "pt2", "jit"])
def test_reprojected_disparity_traces_and_replays_on_fresh_inputs(tmp_path, backend):
    rng = np.random.default_rng(4)

    def inputs():
        return {
            "disparity": (rng.integers(-1, 64, size=(6, 8)) * 16).astype(np.float32),
            "q": stereo_q(rng),
        }

    with patchport.session("st", str(tmp_path), patching=["opencv"], strict=True):
        for _ in range(2):
            traced = annotate.input_tensors("st", inputs())
            annotate.output_tensors("st", stereo_step(*traced), export_with=backend)
    manager = patchport.InferenceManager(patchport.compile_graph(visualize=False).yaml_path)
    for _ in range(3):
        fresh = inputs()
        got = manager.run_policy({f"st/{k}": v for k, v in fresh.items()})
        for name, want in stereo_step(**fresh).items():
            np.testing.assert_allclose(got[f"st/{name}"].numpy(), want, rtol=1e-6)
