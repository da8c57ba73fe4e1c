"""The exported forms chosen for ONNX Runtime's speed give OpenCV's results bit for bit on
fresh frames: channel moves and column flips through the (W, C, H) view (frames of at
least 64 rows take that path), LUT as one GatherElements, masks as a uint8 minimum, the
uint8 resizes that blend columns in the transposed view, Sobel in int16, and the
QuantizeLinear endings of YCrCb, gray and 2:1 INTER_AREA. Also that the slow ONNX forms
stay out of the file (Where, a Gather copying short runs)."""

from __future__ import annotations

import cv2
import numpy as np
import onnx
import pytest

import patchport
from patchport import annotate
from patchport.patches import opencv

from .helpers import assert_matches

pytestmark = pytest.mark.filterwarnings("error:export_with='jit-script'")  # no trace fallback

HEIGHT, WIDTH = 70, 90  # >= 64 rows: flips and channel moves go through the transpose
LUT1 = (np.arange(256) ** 0.5 * 16).astype(np.uint8)
LUT3 = np.random.default_rng(5).integers(-100, 100, (1, 256, 3)).astype(np.int16)
LUTF = (np.arange(256, dtype=np.float32) / 7.0).reshape(256, 1)


def calls(bgr, other, gray, bgra):
    """Each lowering once; results keyed by the function they check."""
    mask = other[..., 1]  # one channel of a traced image: a Split in ONNX
    return {
        "LUT": cv2.LUT(bgr, LUT1),
        "LUT_channels": cv2.LUT(bgr, LUT3),
        "LUT_float": cv2.LUT(gray, LUTF),
        "cvtColor_rgb": cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB),
        "cvtColor_bgra": cv2.cvtColor(bgr, cv2.COLOR_BGR2BGRA),
        "cvtColor_rgba": cv2.cvtColor(bgra, cv2.COLOR_BGRA2RGBA),
        "cvtColor_drop_alpha": cv2.cvtColor(bgra, cv2.COLOR_BGRA2BGR),
        "cvtColor_from_gray": cv2.cvtColor(gray, cv2.COLOR_GRAY2BGR),
        "cvtColor_from_gray_alpha": cv2.cvtColor(gray, cv2.COLOR_GRAY2BGRA),
        "cvtColor_gray": cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY),
        "cvtColor_ycrcb": cv2.cvtColor(bgr, cv2.COLOR_BGR2YCrCb),
        "cvtColor_yuv": cv2.cvtColor(bgr, cv2.COLOR_RGB2YUV),
        "cvtColor_hsv": cv2.cvtColor(bgr, cv2.COLOR_BGR2HSV),
        "cvtColor_hsv_full": cv2.cvtColor(bgr, cv2.COLOR_RGB2HSV_FULL),
        "cvtColor_xyz": cv2.cvtColor(bgr, cv2.COLOR_BGR2XYZ),
        "cvtColor_from_xyz": cv2.cvtColor(other, cv2.COLOR_XYZ2RGB),
        "applyColorMap": cv2.applyColorMap(bgr, cv2.COLORMAP_TURBO),
        "applyColorMap_gray": cv2.applyColorMap(gray, cv2.COLORMAP_JET),
        "flip_columns": cv2.flip(bgr, 1),
        "flip_both": cv2.flip(bgr, -1),
        "flip_gray": cv2.flip(gray, 1),
        "bitwise_and_masked": cv2.bitwise_and(bgr, bgr, mask=mask),
        "bitwise_or_same": cv2.bitwise_or(bgr, bgr),
        "bitwise_xor_same": cv2.bitwise_xor(bgr, bgr),
        "bitwise_and": cv2.bitwise_and(bgr, other),
        "bitwise_not": cv2.bitwise_not(bgr),
        "add_masked": cv2.add(bgr, other, mask=mask),
        "subtract_masked_gray": cv2.subtract(gray, 40, mask=mask),
        "resize_shrink": cv2.resize(bgr, (37, 23)),
        "resize_enlarge": cv2.resize(bgr, (131, 101)),
        "resize_half": cv2.resize(bgr, (45, 35)),
        "resize_area": cv2.resize(bgr, (41, 29), interpolation=cv2.INTER_AREA),
        "resize_cubic": cv2.resize(bgr, (41, 29), interpolation=cv2.INTER_CUBIC),
        "Sobel": cv2.Sobel(bgr, cv2.CV_16S, 1, 0),
        "Sobel_5": cv2.Sobel(gray, cv2.CV_16S, 1, 1, ksize=5, borderType=cv2.BORDER_REPLICATE),
        "Sobel_float": cv2.Sobel(bgr, cv2.CV_32F, 0, 1, scale=0.5, delta=3),
        "GaussianBlur": cv2.GaussianBlur(bgr, (5, 5), 1.2),
        "GaussianBlur_constant": cv2.GaussianBlur(gray, (3, 7), 0, borderType=cv2.BORDER_CONSTANT),
    }


def _frames(seed):
    rng = np.random.default_rng(seed)
    bgr, other = (rng.integers(0, 256, (HEIGHT, WIDTH, 3), dtype=np.uint8) for _ in range(2))
    other[..., 1] *= rng.random((HEIGHT, WIDTH)) < 0.5  # the mask: half of it zero
    return {
        "bgr": bgr,
        "other": other,
        "gray": np.ascontiguousarray(bgr[..., 2]),
        "bgra": rng.integers(0, 256, (HEIGHT, WIDTH, 4), dtype=np.uint8),
    }


def _export(folder, backend):
    with patchport.session("lowering", folder, patching=opencv.all()):
        traced = annotate.input_tensors("calls", _frames(0))
        annotate.output_tensors("calls", calls(*traced), export_with=backend)
    result = patchport.compile_graph(visualize=False)
    assert result.ok
    return result


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    return _export(tmp_path_factory.mktemp("lowering"), "onnx")


def function_of(name: str) -> str:
    """The replaced function an output name starts with (bitwise_and_masked: bitwise_and)."""
    parts = name.split("_")
    return next(
        "_".join(parts[:n])
        for n in range(len(parts), 0, -1)
        if "_".join(parts[:n]) in opencv.REGISTRY
    )


def test_replays_match_opencv_on_fresh_frames(exported):
    _assert_replays_match(exported)


@pytest.mark.parametrize("backend", [pytest.param("pt2", marks=pytest.mark.slow), "jit"])
def test_pt2_and_jit_replays_match_opencv(tmp_path, backend):
    """The same torch code is what torch.export and TorchScript write."""
    _assert_replays_match(_export(tmp_path, backend), seeds=(3,))


def _assert_replays_match(exported, seeds=(1, 2)):
    manager = patchport.InferenceManager(exported.yaml_path)
    for seed in seeds:
        frames = _frames(seed)
        outputs = manager.run_policy({f"calls/{k}": v for k, v in frames.items()})
        for name, expected in calls(*frames.values()).items():
            got = outputs[f"calls/{name}"].numpy()
            assert_matches(function_of(name), expected, got, scale=255.0)
            if expected.dtype.kind in "iu":
                np.testing.assert_array_equal(got, expected, err_msg=name)


def test_the_slow_onnx_forms_stay_out(exported):
    """ONNX Runtime's Where branches per element and its Gather copies each block on its
    own: neither may come back for these calls (a Gather copies long rows only)."""
    model = onnx.shape_inference.infer_shapes(onnx.load(str(exported.models["calls"])))
    shapes = {
        v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
        for v in [*model.graph.value_info, *model.graph.input]
    }
    shapes.update({t.name: list(t.dims) for t in model.graph.initializer})
    ops = {node.op_type for node in model.graph.node}
    assert "Where" not in ops  # integer selects and masks are arithmetic
    assert "GatherElements" in ops  # LUT
    for node in model.graph.node:
        if node.op_type == "Gather":
            axis = next((a.i for a in node.attribute if a.name == "axis"), 0)
            data = shapes[node.input[0]]
            assert np.prod(data[axis + 1 :]) >= 32, onnx.helper.printable_node(node)


def test_size_specialised_lowerings_keep_dynamic_axes_dynamic(tmp_path):
    """GaussianBlur and uint8 gray convolve with a channel per image row when the size is
    fixed; with dynamic axes they take the size-independent form: one ONNX export replays
    bit-exact at sizes never traced."""
    import onnxruntime

    ops = {
        "GaussianBlur": lambda x: cv2.GaussianBlur(x, (5, 5), 1.2),
        "GaussianBlur_wide": lambda x: cv2.GaussianBlur(
            x, (9, 3), 0, borderType=cv2.BORDER_REPLICATE
        ),
        "cvtColor_gray": lambda x: cv2.cvtColor(x, cv2.COLOR_BGR2GRAY),
    }
    rng = np.random.default_rng(4)
    with patchport.session("dynamic", tmp_path, patching=["opencv"]):
        for name, call in ops.items():
            image = annotate.input_tensors(
                name,
                {"image": rng.integers(0, 256, (24, 32, 3), dtype=np.uint8)},
                dynamic={"image": {0: "h", 1: "w"}},
            )
            annotate.output_tensors(name, {"out": call(image)}, export_with="onnx")
    result = patchport.compile_graph(visualize=False)
    assert result.ok, result.summary()
    for name, call in ops.items():
        session = onnxruntime.InferenceSession(str(result.models[name]))
        for height, width in [(37, 53), (9, 120)]:
            frame = rng.integers(0, 256, (height, width, 3), dtype=np.uint8)
            np.testing.assert_array_equal(session.run(None, {"image": frame})[0], call(frame))
