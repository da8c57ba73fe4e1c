"""The opt-in fast level (patching=["opencv:fast"]): remap as float32 weighted taps,
within 1 of OpenCV on uint8, its measured largest difference reported at compile time;
the default level stays the reference replacements."""

from __future__ import annotations

import cv2
import numpy as np
import onnx
import pytest
from hypothesis import given
from hypothesis import strategies as st

import patchport
from patchport import annotate
from patchport.patches import opencv
from patchport.patches.opencv import fast, geometry

from . import pipelines
from .helpers import PROPERTY, image, seeds

HEIGHT, WIDTH = 96, 128


def frames(seed: int, count: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, (HEIGHT, WIDTH, 3), dtype=np.uint8) for _ in range(count)]


def test_fast_remap_exports_replays_within_one_and_reports_its_largest_difference(tmp_path):
    maps = pipelines.undistort_maps(HEIGHT, WIDTH)
    traced = frames(0, 2)
    with patchport.session("camera", tmp_path, patching=["opencv:fast"]):
        for frame in traced:
            bgr = annotate.input_tensors("camera", {"bgr": frame})
            out = cv2.remap(bgr, maps[0], maps[1], cv2.INTER_LINEAR)
            annotate.output_tensors("camera", {"out": out}, export_with="onnx")
        assert patchport.session_patches().find("cv2.remap").name == "remap_fast"
    result = patchport.compile_graph(visualize=False)
    assert result.ok
    # the reported figure is the real largest difference from cv2 over the traced calls
    measured = max(
        int(
            np.abs(
                fast.remap_fast(f, *maps, cv2.INTER_LINEAR).astype(int)
                - cv2.remap(f, *maps, cv2.INTER_LINEAR)
            ).max()
        )
        for f in traced
    )
    largest, calls = result.patch_checks["cv2.remap"]
    assert (largest, calls) == (measured, 2) and largest <= 1
    assert f"patch cv2.remap: largest difference from cv2.remap {largest:.3g}" in result.summary()
    # no float64 pass in the fast graph (the reference lowering has several)
    model = onnx.load(str(result.models["camera"]))
    casts = [a.i for n in model.graph.node if n.op_type == "Cast" for a in n.attribute]
    assert onnx.TensorProto.DOUBLE not in casts
    manager = patchport.InferenceManager(result.yaml_path)
    for frame in frames(5, 2):  # fresh frames replayed by ONNX Runtime
        got = manager.run_policy({"camera/bgr": frame})["camera/out"]
        expected = cv2.remap(frame, maps[0], maps[1], cv2.INTER_LINEAR)
        assert np.abs(np.asarray(got).astype(int) - expected).max() <= 1


def test_default_level_keeps_the_reference_replacements():
    default = {p.function_name: p for p in opencv.all()}
    named = {p.function_name: p for p in patchport.patches.named_patch_sets()["opencv"]()}
    quick = {p.function_name: p for p in opencv.all(level="fast")}
    assert default["remap"].replacement is geometry.remap is named["remap"].replacement
    assert quick["remap"].replacement is fast.remap_fast
    assert quick["remap"].atol == opencv.LEVELS["fast"]["remap"].atol == 1.0
    others = set(default) - set(opencv.LEVELS["fast"])
    assert all(quick[name].replacement is default[name].replacement for name in others)


def test_unknown_levels_are_refused_naming_the_known_ones(tmp_path):
    with pytest.raises(opencv.UnsupportedCaseError, match="level='quick'.*reference, fast"):
        opencv.all(level="quick")
    with pytest.raises(opencv.UnsupportedCaseError, match="level='quick'"):
        opencv.patch("remap", level="quick")
    with pytest.raises(patchport.PatchTargetError, match="opencv:fast"):
        patchport.start("bad", tmp_path, patching=["opencv:quick"])
    assert patchport.patches.named_patch_sets()["opencv:fast"]()  # the known set works


@PROPERTY
@given(
    seed=seeds,
    height=st.integers(1, 24),
    width=st.integers(1, 24),
    cn=st.sampled_from([0, 1, 2, 3, 4]),
    dtype=st.sampled_from(["uint8", "uint8", "uint16", "float32"]),
    border=st.sampled_from([cv2.BORDER_CONSTANT, cv2.BORDER_REPLICATE]),
    packed=st.booleans(),
)
def test_fast_remap_within_its_declared_accuracy(seed, height, width, cn, dtype, border, packed):
    src = image(seed, height, width, cn, dtype)
    rng = np.random.default_rng(seed)
    shape = (rng.integers(1, 20), rng.integers(1, 20))
    xs = rng.uniform(-3, width + 2, shape).astype(np.float32)
    ys = rng.uniform(-3, height + 2, shape).astype(np.float32)
    maps = (np.dstack([xs, ys]), None) if packed else (xs, ys)
    value = (11, 200, 37, 90)
    expected = cv2.remap(src, *maps, cv2.INTER_LINEAR, borderMode=border, borderValue=value)
    got = fast.remap_fast(src, *maps, cv2.INTER_LINEAR, borderMode=border, borderValue=value)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    reference = geometry.remap(src, *maps, cv2.INTER_LINEAR, borderMode=border, borderValue=value)
    if dtype != "uint8" or cn == 2:  # not the fast lowering's case: the reference result
        np.testing.assert_array_equal(got, reference)
    else:
        units = opencv.LEVELS["fast"]["remap"].tolerance(np.uint8)[1]
        assert np.abs(got.astype(int) - expected).max() <= units
