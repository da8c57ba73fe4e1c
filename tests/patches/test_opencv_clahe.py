"""CLAHE (``cv2.createCLAHE(...).apply``) vs real cv2: property tests on uint8 and uint16,
the method patch's life in a session, and the traced graph replayed in ONNX Runtime."""

from __future__ import annotations

import warnings

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import patchport
from patchport import annotate
from patchport.patches import opencv
from patchport.patches.opencv import histogram

from .helpers import PROPERTY, seeds

clip_limits = st.one_of(
    st.sampled_from([0.0, -1.0, 1.0, 2.0, 4.0, 40.0]), st.floats(0.01, 60.0, allow_nan=False)
)
grids = st.tuples(st.integers(1, 12), st.integers(1, 12))


def gray(seed: int, height: int, width: int, dtype: str) -> np.ndarray:
    """A gray image whose histogram is narrow, full-range or flat (clipping varies)."""
    rng = np.random.default_rng(seed)
    top = 256 if dtype == "uint8" else int(rng.choice([65536, 4096, 300]))
    mode = seed % 4
    if mode == 0:  # a few grey levels: tall histogram bins, much clipping
        low = int(rng.integers(0, top - 8))
        values = rng.integers(low, low + 8, (height, width))
    elif mode == 1:  # a smooth gradient with noise, like a photograph
        yy, xx = np.mgrid[:height, :width]
        values = (np.sin(xx / 7.0) + np.cos(yy / 5.0)) * top / 5 + top / 2
        values = values + rng.normal(0, top / 50, (height, width))
    elif mode == 2:  # constant
        values = np.full((height, width), int(rng.integers(0, top)))
    else:
        values = rng.integers(0, top, (height, width))
    return np.clip(values, 0, top - 1).astype(dtype)


@PROPERTY
@given(
    seed=seeds,
    height=st.integers(1, 90),
    width=st.integers(1, 90),
    clip=clip_limits,
    grid=grids,
)
def test_clahe_uint8_is_bit_exact_with_opencv(seed, height, width, clip, grid):
    image = gray(seed, height, width, "uint8")
    clahe = cv2.createCLAHE(clip, grid)
    np.testing.assert_array_equal(histogram.apply(clahe, image), clahe.apply(image))


@settings(PROPERTY, max_examples=50)  # 65536-bin histograms per tile: slower examples
@given(
    seed=seeds,
    height=st.integers(1, 48),
    width=st.integers(1, 48),
    clip=clip_limits,
    grid=st.tuples(st.integers(1, 6), st.integers(1, 6)),
)
def test_clahe_uint16_is_bit_exact_with_opencv(seed, height, width, clip, grid):
    image = gray(seed, height, width, "uint16")
    clahe = cv2.createCLAHE(clip, grid)
    got = histogram.apply(clahe, image)
    assert got.dtype == np.uint16
    np.testing.assert_array_equal(got, clahe.apply(image))


@pytest.mark.parametrize(("height", "width"), [(480, 640), (481, 639), (7, 640)])
def test_camera_sized_frames_with_albumentations_defaults_are_bit_exact(height, width):
    rng = np.random.default_rng(height)
    yy, xx = np.mgrid[:height, :width]
    image = np.clip(np.sin(xx / 37.0) * 60 + np.cos(yy / 23.0) * 50 + 128, 0, 255)
    image = np.clip(image + rng.normal(0, 3, image.shape), 0, 255).astype(np.uint8)
    for clip, grid in [(4.0, (8, 8)), (2.0, (8, 8)), (40.0, (16, 16))]:
        clahe = cv2.createCLAHE(clip, grid)
        np.testing.assert_array_equal(histogram.apply(clahe, image), clahe.apply(image))


def test_a_single_channel_third_axis_gives_opencvs_two_dimensional_result():
    image = gray(3, 13, 17, "uint8")[..., None]
    clahe = cv2.createCLAHE(2.0, (3, 4))
    np.testing.assert_array_equal(histogram.apply(clahe, image), clahe.apply(image))


@pytest.mark.parametrize(
    ("image", "grid", "named"),
    [
        (np.zeros((8, 8), np.float32), (2, 2), "src.dtype=float32"),
        (np.zeros((8, 8, 3), np.uint8), (2, 2), "src channels=3"),
        (np.zeros((8, 8), np.uint8), (0, 2), "tileGridSize=(0, 2)"),  # cv2 itself: SIGFPE
        (np.zeros((0, 8), np.uint8), (2, 2), "src.shape"),
    ],
)
def test_unsupported_cases_are_refused_naming_the_method_and_argument(image, grid, named):
    with pytest.raises(ValueError, match="cv2.CLAHE.apply") as error:
        histogram.apply(cv2.createCLAHE(2.0, grid), image)
    assert named in str(error.value)
    assert "supported:" in str(error.value)


def test_a_dst_buffer_is_refused():
    image = np.zeros((8, 8), np.uint8)
    with pytest.raises(ValueError, match="argument dst=ndarray"):
        histogram.apply(cv2.createCLAHE(), image, image.copy())


def test_a_clip_limit_overflowing_opencvs_int_is_refused_naming_clip_limit():
    with pytest.raises(ValueError, match="argument clipLimit=1e\\+30"):
        histogram.apply(cv2.createCLAHE(1e30, (1, 1)), np.zeros((64, 64), np.uint8))


def equalize(gray_a: np.ndarray, gray_b: np.ndarray) -> dict[str, np.ndarray]:
    """albumentations' step (clip 4, 8x8) and a padded, coarser one on a second image."""
    first = cv2.createCLAHE(clipLimit=4.0, tileGridSize=(8, 8)).apply(gray_a)
    second = cv2.createCLAHE(2.5, (3, 5)).apply(gray_b)
    return {"first": first, "second": second}


def test_traced_clahe_is_a_listed_restored_patch_and_replays_in_onnx_runtime(tmp_path):
    import onnxruntime

    original = vars(cv2.CLAHE)["apply"]
    plain = gray(1, 40, 56, "uint8")
    want_plain = cv2.createCLAHE(3.0, (4, 4)).apply(plain)
    sample = {"a": gray(5, 64, 96, "uint8"), "b": gray(6, 61, 83, "uint8")}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with patchport.session("clahe", str(tmp_path), patching=["opencv"], strict=True):
            assert vars(cv2.CLAHE)["apply"] is not original
            traced = annotate.input_tensors("eq", sample)
            annotate.output_tensors("eq", equalize(*traced), export_with="onnx")
            # plain data still reaches OpenCV, unchanged
            np.testing.assert_array_equal(cv2.createCLAHE(3.0, (4, 4)).apply(plain), want_plain)
            found = patchport.session_patches().find("cv2.CLAHE.apply")
            assert found is not None and found.family == "user" and found.calls == 2
    assert not [w for w in caught if issubclass(w.category, patchport.PatchMismatchWarning)]
    assert vars(cv2.CLAHE)["apply"] is original  # restored on exit
    result = patchport.compile_graph(visualize=False)
    assert result.ok
    session = onnxruntime.InferenceSession(str(result.models["eq"]))
    names = [o.name for o in session.get_outputs()]
    for seed in (11, 12, 13):  # fresh images: a baked result would differ here
        fresh = {"a": gray(seed, 64, 96, "uint8"), "b": gray(seed + 100, 61, 83, "uint8")}
        got = dict(zip(names, session.run(None, fresh)))
        for name, want in equalize(*fresh.values()).items():
            np.testing.assert_array_equal(got[name], want)


def test_the_method_patch_is_declared_on_the_class_and_named_in_full():
    declared = opencv.patch("CLAHE.apply")
    assert declared.module is cv2.CLAHE and declared.function_name == "apply"
    assert declared.target_name == "cv2.CLAHE.apply"
    assert [p.target_name for p in opencv.all() if p.module is cv2.CLAHE] == ["cv2.CLAHE.apply"]


@pytest.mark.parametrize("backend", ["pt2", "jit"])
def test_traced_clahe_exports_with_the_other_backends(tmp_path, backend):
    def step(image):
        return {"eq": cv2.createCLAHE(4.0, (8, 8)).apply(image)}

    with patchport.session("clahe_" + backend, str(tmp_path), patching=["opencv"], strict=True):
        for seed in (1, 2):
            image = annotate.input_tensors("eq", {"image": gray(seed, 61, 83, "uint8")})
            annotate.output_tensors("eq", step(image), export_with=backend)
    result = patchport.compile_graph(visualize=False)
    assert result.ok and result.validation[0].samples == 2
    manager = patchport.InferenceManager(result.yaml_path)
    fresh = gray(21, 61, 83, "uint8")
    got = manager.run_policy({"eq/image": fresh})["eq/eq"]
    np.testing.assert_array_equal(np.asarray(got), step(fresh)["eq"])
