"""cv2.resize by factors: OpenCV's own paths reproduced at every size.

An exact 2:1 INTER_LINEAR shrink is OpenCV's INTER_AREA fast path (partial windows at odd
sizes included); ``fx``/``fy`` give an output size OpenCV rounds half to even.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from patchport.patches.opencv import geometry
from patchport.patches.opencv.resize_lowering import round_ratio, size_ratio


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "float32"])
@pytest.mark.parametrize("cn", [1, 2, 3, 4])
def test_half_size_linear_is_opencvs_area_fast_path(cn, dtype):
    rng = np.random.default_rng(cn)
    for height in range(1, 10):
        for width in range(2, 12):
            src = rng.integers(0, 256, (height, width, cn)).astype(dtype)
            if dtype == "float32":
                src = src / np.float32(255)
            if round(height * 0.5) == 0:
                continue
            expected = cv2.resize(src, None, fx=0.5, fy=0.5)
            got = geometry.resize(src, None, fx=0.5, fy=0.5)
            if dtype == "float32":
                np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)
            elif dtype == "uint16":  # declared within 1
                assert np.abs(got.astype(int) - expected.astype(int)).max() <= 1
            else:
                np.testing.assert_array_equal(got, expected, err_msg=f"{height}x{width}")


@pytest.mark.parametrize("factor", [0.5, 0.25, 1 / 3, 0.3, 1.5, 2.0, 2 / 3, 0.9, 0.123456])
def test_output_size_in_integers_is_opencvs_rounding(factor):
    """The size computed in the graph from an integer ratio equals cvRound(size * factor)."""
    sizes = np.arange(1, 1 << 16, dtype=np.int64)
    p, q = size_ratio(factor)
    np.testing.assert_array_equal(round_ratio(sizes, p, q), np.rint(sizes * factor))


@pytest.mark.parametrize("factor", [0.7, 1.1])
def test_factors_whose_double_product_rounds_unlike_any_ratio_have_none(factor):
    """0.7 lies just below 7/10: OpenCV's size*0.7 rounds up at some sizes (5 -> 4) and not
    at others (45 -> 31), so such a size cannot follow a dynamic axis (reported in words)."""
    assert size_ratio(factor) is None


DYNAMIC_CASES = {  # node -> (dtype, call): each traced once at 24x32, replayed at other sizes
    "half_linear": ("uint8", lambda x: cv2.resize(x, None, fx=0.5, fy=0.5)),
    "third_linear": ("uint8", lambda x: cv2.resize(x, None, fx=1 / 3, fy=0.3)),
    "grow_linear": ("uint8", lambda x: cv2.resize(x, None, fx=1.5, fy=0.75)),
    "float_linear": ("float32", lambda x: cv2.resize(x, None, fx=0.3, fy=1.5)),
    "nearest": ("uint8", lambda x: cv2.resize(x, None, fx=0.25, fy=2 / 3, interpolation=0)),
    "area_quarter": ("uint8", lambda x: cv2.resize(x, None, fx=0.25, fy=0.25, interpolation=3)),
    "area_grow": ("float32", lambda x: cv2.resize(x, None, fx=2.0, fy=1.5, interpolation=3)),
    "near_one": ("uint8", lambda x: cv2.resize(x, None, fx=0.75, fy=1.25)),  # copies at 2x2
}
BACKENDS = {"half_linear_pt2": "pt2", "float_linear_pt2": "pt2", "half_linear_jit": "jit"}


def _frame(height, width, dtype, seed=0):
    pixels = np.random.default_rng(seed).integers(0, 256, (height, width, 3), dtype=np.uint8)
    return pixels if dtype == "uint8" else pixels.astype(np.float32) / 255


@pytest.fixture(scope="module")
def dynamic_bundle(tmp_path_factory):
    import patchport
    from patchport import annotate

    nodes = {n: (n, "onnx") for n in DYNAMIC_CASES}
    nodes.update({n: (n[:-4], b) for n, b in BACKENDS.items()})
    with patchport.session("resize", tmp_path_factory.mktemp("resize"), patching=["opencv"]):
        for node, (case, backend) in nodes.items():
            dtype, call = DYNAMIC_CASES[case]
            image = annotate.input_tensors(
                node, {"image": _frame(24, 32, dtype)}, dynamic={"image": {0: "h", 1: "w"}}
            )
            annotate.output_tensors(node, {"out": call(image)}, export_with=backend)
    return patchport.compile_graph(visualize=False, strict=False), nodes


def _assert_like_opencv(got, expected, dtype):
    assert got.shape == expected.shape
    if dtype == "uint8":
        np.testing.assert_array_equal(got, expected)
    else:
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", sorted(DYNAMIC_CASES))
def test_resize_by_factors_exports_once_for_every_size(dynamic_bundle, case):
    """One ONNX export, replayed in ONNX Runtime at sizes never traced (odd, larger,
    smaller, one much wider than tall) against cv2 itself: bit-exact for uint8."""
    import onnxruntime

    result, _ = dynamic_bundle
    assert next(v for v in result.validation if v.node == case).ok, result.summary()
    session = onnxruntime.InferenceSession(str(result.models[case]))
    dtype, call = DYNAMIC_CASES[case]
    for height, width in [(37, 53), (50, 17), (120, 161), (2, 2), (1, 2), (2, 9)]:
        frame = _frame(height, width, dtype, seed=height)
        try:
            expected = call(frame)
        except cv2.error:  # an empty output: OpenCV refuses the size
            continue
        _assert_like_opencv(session.run(None, {"image": frame})[0], expected, dtype)


def test_resize_by_factors_on_pt2_and_jit(dynamic_bundle):
    """pt2 keeps the sizes symbolic; TorchScript is kept only where its replay at other
    sizes holds (else the node's validation says to use onnx or pt2)."""
    import torch

    import patchport

    result, nodes = dynamic_bundle
    manager = patchport.InferenceManager(result.yaml_path)
    mock = manager.get_mock_input()
    for node, (case, backend) in nodes.items():
        if backend == "onnx":
            continue
        validation = next(v for v in result.validation if v.node == node)
        if backend == "jit" and not validation.ok:
            assert "use 'onnx' or 'pt2' for this node" in " ".join(validation.problems)
            continue
        assert validation.ok, result.summary()
        dtype, call = DYNAMIC_CASES[case]
        for height, width in [(37, 53), (61, 40)]:
            frame = _frame(height, width, dtype, seed=width)
            out = manager.run_policy({**mock, f"{node}/image": torch.from_numpy(frame)})
            _assert_like_opencv(out[f"{node}/out"].numpy(), call(frame), dtype)
