"""The direct FX->ONNX translator: recorded graphs give ONNX models that compute what the
graph computes on fresh inputs (integers bit-exact), and what it cannot write falls back."""

from __future__ import annotations

import logging
import warnings

import numpy as np
import onnx
import onnxruntime
import pytest
import torch

import patchport
from patchport import annotate
from patchport.export.backends import ExportJob, onnx_output_names, write_model
from patchport.export.onnx import driver
from patchport.patches import opencv
from patchport.sessions.lifecycle import last_session
from tests.patches import pipelines
from tests.patches.test_opencv_contract import FRAME
from tests.patches.test_opencv_contract import all_functions as opencv_calls

pytestmark = pytest.mark.filterwarnings("ignore:annotate.output_tensors")


def numpy_calls(a, f):
    """A broad sample of the NumPy table on a uint8 image and a float32 array."""
    g = f * 2.0 - 1.0
    return {
        "arith": (a.astype(np.int16) * 3 - 7) // 1 + np.uint8(5),
        "wrap": a + a,  # uint8 wraparound
        "mix": a * 0.5 + f[..., None],
        "div": a / 255.0,
        "cmp": (a > 100) & (a < 200) | (a == 7),
        "where": np.where(a > 128, a, 255 - a),
        "clip": np.clip(g * 300, -255, 255).astype(np.int32),
        "unary": np.abs(g) + np.sqrt(np.abs(g)) + np.exp(-g) - np.floor(g * 3) + np.round(g),
        "reduce": a.sum(axis=(0, 1)) + a.max(axis=0).astype(np.int64).sum(),
        "mean": f.mean(axis=1, keepdims=True) + f.min() - f.max(),
        "shape": np.transpose(a, (2, 0, 1)).reshape(3, -1)[:, ::3],
        "stack": np.stack([a[..., 0], a[..., 2]], axis=-1),
        "concat": np.concatenate([f, f[::-1]], axis=0),
        "flip": a[::-1, :, ::-1],
        "index": a[2:7, 1, None],
        "matmul": f @ f.T,
        "tanh": np.tanh(f).astype(np.float64),
        "minimum": np.minimum(np.maximum(a, 30), 220),
        "logic": np.logical_not(a > 3) ^ (a < 9),
    }


def torch_calls(x):
    """Torch calls a policy network makes."""
    image = torch.from_numpy(x).permute(2, 0, 1).float().unsqueeze(0) / 255.0
    conv = torch.nn.functional.conv2d(image, torch.ones(4, 3, 3, 3) / 27, stride=2, padding=1)
    pooled = torch.nn.functional.max_pool2d(torch.relu(conv), 2)
    flat = torch.flatten(torch.nn.functional.adaptive_avg_pool2d(pooled, 1), 1)
    head = torch.nn.functional.linear(flat, torch.eye(4), torch.arange(4.0))
    return {
        "head": torch.softmax(head, dim=-1),
        "sigmoid": torch.sigmoid(conv).mean(dim=(2, 3)),
        "clamp": torch.clamp(conv, min=0.1).to(torch.float16),
        "cat": torch.cat([flat, head], dim=1).transpose(0, 1),
        "narrow": conv.narrow(3, 1, 3).sum(-1),
        "gather": torch.gather(conv.reshape(-1), 0, torch.arange(0, 40, 3)),  # int32 index
        # whole-tensor and elementwise forms of Tensor.max / min (equalizeHist's darkest value)
        "extremes": conv.max() - conv.min() + torch.max(conv, conv * 0.5).sum(),
        "reorder": conv[..., [2, 0, 1]] + conv[:, [3, 1]].sum(),  # index lists: constant Gathers
        "int_min": image.reshape(-1).mul(255).long().min().reshape(1),
        "histogram": torch.zeros(16, dtype=torch.int64).scatter_add(
            0, (image.reshape(-1) * 15).long(), (image.reshape(-1) > 0.5).long()
        ),
    }


def trace_node(tmp_path, function, inputs, patching=None):
    """Trace ``function`` on ``inputs`` in one session; return the finished node."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", patchport.TraceLossWarning)
        with patchport.session("translate", tmp_path, patching=patching):
            traced = annotate.input_tensors("node", inputs)
            if not isinstance(traced, (list, tuple)):
                traced = [traced]
            annotate.output_tensors("node", function(*traced), export_with=None)
    return last_session().nodes["node"]


def fresh_like(value, rng):
    if value.dtype == np.uint8:
        return rng.integers(0, 256, value.shape, dtype=np.uint8)
    return rng.random(value.shape).astype(value.dtype)


def assert_translation_replays(node, rng):
    """The translated model on fresh inputs gives the graph's results (ints bit-exact)."""
    names = [p.name for p in node.inputs]
    outputs = onnx_output_names(names, [p.name for p in node.outputs])
    example = [torch.as_tensor(node.samples[0].inputs[n]) for n in names]
    model, _ = driver.translate(node.graph_module, example, names, outputs)
    onnx.checker.check_model(onnx.load_from_string(model), full_check=True)
    session = onnxruntime.InferenceSession(model)
    assert [i.name for i in session.get_inputs()] == names
    assert [o.name for o in session.get_outputs()] == outputs
    for _ in range(2):
        fresh = [fresh_like(np.asarray(node.samples[0].inputs[n]), rng) for n in names]
        want = node.graph_module(*[torch.from_numpy(f) for f in fresh])
        want = [want] if isinstance(want, torch.Tensor) else list(want)
        got = session.run(None, dict(zip(names, fresh)))
        for name, g, w in zip(outputs, got, want):
            w = w.numpy()
            assert g.dtype == w.dtype and g.shape == w.shape, name
            if w.dtype.kind in "fc":
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=name)
            else:
                np.testing.assert_array_equal(g, w, err_msg=name)


def test_every_opencv_replacement_translates_and_replays(tmp_path):
    gray = np.ascontiguousarray(FRAME[..., 1])
    node = trace_node(tmp_path, opencv_calls, {"bgr": FRAME, "gray": gray}, opencv.all())
    assert_translation_replays(node, np.random.default_rng(1))


def test_numpy_table_sample_translates_and_replays(tmp_path):
    inputs = {"a": FRAME[:8, :6], "f": np.random.default_rng(2).random((8, 6), np.float32)}
    node = trace_node(tmp_path, numpy_calls, inputs)
    assert_translation_replays(node, np.random.default_rng(3))


def test_torch_policy_calls_translate_and_replay(tmp_path):
    node = trace_node(tmp_path, torch_calls, {"x": FRAME[:12, :16]})
    assert_translation_replays(node, np.random.default_rng(4))


def test_camera_pipeline_translates_and_replays(tmp_path):
    maps = pipelines.undistort_maps(48, 64)
    model = pipelines.TinyCNN().eval()
    frame = FRAME.repeat(3, 0).repeat(3, 1)[:48, :64]

    def policy(bgr):
        return {"action": pipelines.policy(bgr, maps, (32, 24), model)}

    node = trace_node(tmp_path, policy, {"bgr": frame}, opencv.all())
    assert_translation_replays(node, np.random.default_rng(5))


def test_untranslatable_graph_falls_back_to_torch_onnx(tmp_path, caplog):
    node = trace_node(
        tmp_path,
        lambda x: {"y": torch.nn.functional.gelu(torch.from_numpy(x).float() / 100)},
        {"x": FRAME},
    )
    args = [torch.from_numpy(FRAME)]
    with pytest.raises(driver.Untranslatable, match="gelu"):
        driver.translate(node.graph_module, args, ["x"], ["y"])
    job = ExportJob(node.graph_module, [FRAME], ["x"], ["y"], tmp_path / "node.onnx")
    with caplog.at_level(logging.DEBUG, logger="patchport.export.backends"):
        write_model("onnx", job)
    assert "torch.onnx fallback" in caplog.text and "gelu" in caplog.text
    session = onnxruntime.InferenceSession(str(job.path))
    want = node.graph_module(torch.from_numpy(FRAME))[0].numpy()
    np.testing.assert_allclose(session.run(None, {"x": FRAME})[0], want, rtol=1e-5, atol=1e-6)


def test_port_names_like_operators_and_shared_with_inputs(tmp_path):
    """Names such as ``Identity`` or an output named like its input keep working."""
    node = trace_node(tmp_path, lambda x: {"x": x[::-1], "Identity": x + 1}, {"x": FRAME})
    job = ExportJob(node.graph_module, [FRAME], ["x"], ["x", "Identity"], tmp_path / "n.onnx")
    write_model("onnx", job)
    session = onnxruntime.InferenceSession(str(job.path))
    assert [o.name for o in session.get_outputs()] == ["x_out", "Identity"]
    flipped, plus = session.run(None, {"x": FRAME})
    np.testing.assert_array_equal(flipped, FRAME[::-1])
    np.testing.assert_array_equal(plus, FRAME + 1)


def test_dynamic_dimensions_are_left_to_torch_onnx(tmp_path):
    from patchport.export.backends import _write_onnx_direct

    node = trace_node(tmp_path, lambda x: {"y": x + 1}, {"x": FRAME})
    job = ExportJob(node.graph_module, [FRAME], ["x"], ["y"], tmp_path / "n.onnx")
    job.params["dynamic_shapes"] = {"x": {0: "batch"}}
    assert not _write_onnx_direct(job) and not job.path.exists()
    job.params.clear()
    assert _write_onnx_direct(job) and job.path.exists()


PROPERTY_DTYPES = [np.uint8, np.int8, np.uint16, np.int32, np.uint32, np.int64, np.float32]


def test_property_ops_on_every_dtype_translate_or_fall_back(tmp_path):
    """Each op of the tracing property test, on each dtype: the translation replays the
    graph on fresh inputs exactly (integers) or refuses; most of them translate."""
    from tests.tracing.helpers import assert_same, conform, fresh_like, make
    from tests.tracing.test_property import OPS

    translated, refused = 0, []
    for dtype in PROPERTY_DTYPES:
        for name, op in sorted(OPS.items()):
            x = make((3, 4), dtype, 7, low=0 if dtype == np.uint8 else -3, high=9)
            with np.errstate(all="ignore"):
                graph = conform(op, x, rtol=1e-4)
            try:
                model, _ = driver.translate(graph, [torch.from_numpy(x)], ["x0"], ["y"])
            except driver.Untranslatable as exc:
                refused.append(f"{name}/{np.dtype(dtype)}: {str(exc).splitlines()[0]}")
                continue
            translated += 1
            fresh = fresh_like(x, 1)
            session = onnxruntime.InferenceSession(model)
            (got,) = session.run(None, {"x0": fresh})
            want = graph(torch.from_numpy(fresh.copy()))
            assert_same(np.asarray(got), want.numpy(), rtol=1e-5)
    print(f"translated {translated}, refused {len(refused)}:", *refused, sep="\n  ")
    assert translated >= 0.7 * (translated + len(refused)), refused


def test_uint8_arithmetic_stays_in_uint8_and_wraps_like_torch(tmp_path):
    """uint8 add/sub/mul/min/max are written in uint8 (ONNX Runtime wraps modulo 256 like
    torch, min/max select): no int64 round trip, results bit-exact, wraparound included."""

    def uint8_math(a, b):
        return {
            "sum": a + b,
            "difference": a - b,
            "product": a * b * 3,
            "constant": 255 - a + 7,
            "extremes": torch.minimum(a, b) + torch.maximum(a, b),
        }

    rng = np.random.default_rng(5)
    a, b = (torch.from_numpy(rng.integers(0, 256, (6, 7, 3), dtype=np.uint8)) for _ in "ab")
    node = trace_node(tmp_path, uint8_math, {"a": a, "b": b})
    names = [p.name for p in node.inputs]
    outputs = onnx_output_names(names, [p.name for p in node.outputs])
    model, _ = driver.translate(node.graph_module, [a, b], names, outputs)
    assert [n.op_type for n in onnx.load_from_string(model).graph.node if n.op_type == "Cast"] == []
    assert_translation_replays(node, rng)


def test_per_channel_constant_is_widened_to_whole_rows(tmp_path):
    """A (1, 1, C) constant against an (H, W, C) image is written as (1, W, C): ONNX Runtime
    broadcasts three-element runs one element at a time, whole rows fast; same results."""

    def shifted(image):
        colour = torch.tensor([3.0, -2.0, 0.5]).reshape(1, 1, 3)
        return {"shifted": image.to(torch.float32) * colour + colour}

    image = torch.from_numpy(np.random.default_rng(6).integers(0, 256, (5, 70, 3), np.uint8))
    node = trace_node(tmp_path, shifted, {"image": image})
    names = [p.name for p in node.inputs]
    outputs = onnx_output_names(names, [p.name for p in node.outputs])
    model, _ = driver.translate(node.graph_module, [image], names, outputs)
    shapes = {tuple(i.dims) for i in onnx.load_from_string(model).graph.initializer}
    assert (1, 70, 3) in shapes and (1, 1, 3) not in shapes
    assert_translation_replays(node, np.random.default_rng(7))


def test_pad_is_one_pad_node_in_every_mode_and_dtype(tmp_path):
    """F.pad (constant, replicate, reflect) is one ONNX Pad, not a torch.onnx fallback or
    concatenated strips; int16 (no Pad kernel in ONNX Runtime) is padded as int32 exactly."""

    def padded(image, wide):
        batch = image.unsqueeze(0)
        return {
            "constant": torch.nn.functional.pad(image, (0, 0, 1, 2, 2, 1), value=255.0),
            "edge": torch.nn.functional.pad(batch, (0, 0, 2, 1, 1, 2), mode="replicate"),
            "reflect": torch.nn.functional.pad(batch, (0, 0, 1, 1, 2, 2), mode="reflect"),
            "int16": torch.nn.functional.pad(wide, (0, 0, 1, 1, 1, 1), value=-7.0),
        }

    rng = np.random.default_rng(8)
    image = torch.from_numpy(rng.integers(0, 256, (5, 6, 3), dtype=np.uint8))
    wide = torch.from_numpy(rng.integers(-999, 999, (4, 5, 2), dtype=np.int16))
    node = trace_node(tmp_path, padded, {"image": image, "wide": wide})
    names = [p.name for p in node.inputs]
    outputs = onnx_output_names(names, [p.name for p in node.outputs])
    model, expected = driver.translate(node.graph_module, [image, wide], names, outputs)
    ops = [n.op_type for n in onnx.load_from_string(model).graph.node]
    assert ops.count("Pad") == 4 and "Concat" not in ops
    session = onnxruntime.InferenceSession(model)
    got = session.run(None, dict(zip(names, [image.numpy(), wide.numpy()])))
    for name, g, w in zip(outputs, got, expected):
        np.testing.assert_array_equal(g, w.numpy(), err_msg=name)


def _slices(model):
    """(input, starts, ends, axes) of every Slice node, constants read from initializers."""
    graph = onnx.load_from_string(model).graph
    values = {i.name: onnx.numpy_helper.to_array(i).tolist() for i in graph.initializer}
    return [
        tuple([n.input[0]] + [str(values.get(name)) for name in n.input[1:]])
        for n in graph.node
        if n.op_type == "Slice"
    ]


def test_uint8_morphology_and_median_stay_in_uint8_with_one_shift_per_window_read(tmp_path):
    """uint8 erode/dilate/gradient and medianBlur are written as uint8 Pad, Slice, Min, Max
    and Sub: no Cast, no border strips concatenated, each shifted copy made once."""
    import cv2

    def filters(image):
        return {
            "gradient": cv2.morphologyEx(image, cv2.MORPH_GRADIENT, None),
            "erode": cv2.erode(image, np.ones((5, 5), np.uint8)),
            "median3": cv2.medianBlur(image, 3),
            "median5": cv2.medianBlur(image, 5),
        }

    image = np.random.default_rng(9).integers(0, 256, (12, 14, 3), dtype=np.uint8)
    node = trace_node(tmp_path, filters, {"image": image}, opencv.all())
    names = [p.name for p in node.inputs]
    outputs = onnx_output_names(names, [p.name for p in node.outputs])
    model, _ = driver.translate(node.graph_module, [torch.from_numpy(image)], names, outputs)
    ops = {n.op_type for n in onnx.load_from_string(model).graph.node}
    assert ops <= {"Pad", "Slice", "Min", "Max", "Sub", "Reshape", "Identity"}, ops
    slices = _slices(model)
    assert len(slices) == len(set(slices))
    assert_translation_replays(node, np.random.default_rng(10))


def test_long_rectangle_windows_double_instead_of_one_step_per_cell(tmp_path):
    """A 7x7 rectangle is 3 minima and 3 shifts per direction (windows of 2, 4, then two
    overlapping 4s), not 6 of each: the same exact erosion, half the passes over the image
    (one Pad for the border, one Slice to crop it)."""
    import cv2

    image = np.random.default_rng(11).integers(0, 256, (16, 18, 3), dtype=np.uint8)
    node = trace_node(
        tmp_path, lambda x: {"eroded": cv2.erode(x, np.ones((7, 7), np.uint8))},
        {"image": image}, opencv.all(),
    )  # fmt: skip
    names = [p.name for p in node.inputs]
    outputs = onnx_output_names(names, [p.name for p in node.outputs])
    model, _ = driver.translate(node.graph_module, [torch.from_numpy(image)], names, outputs)
    ops = [n.op_type for n in onnx.load_from_string(model).graph.node]
    assert ops.count("Min") == 6 and ops.count("Pad") == 1 + 6 and ops.count("Slice") == 1
    assert_translation_replays(node, np.random.default_rng(12))


def test_a_3x3_erosion_is_four_shifts_and_four_minima_and_a_median_28_passes(tmp_path):
    """The default border enters with the shifts of the (H, W*C) view: no Pad of the
    image, no Slice; the 3x3 median: its border Pad, 8 shifted copies, 18 minima and
    maxima and the crop."""
    import cv2

    image = np.random.default_rng(13).integers(0, 256, (9, 11, 3), dtype=np.uint8)
    for call, counts in (
        (lambda x: cv2.erode(x, None), {"Pad": 4, "Min": 4}),
        (lambda x: cv2.medianBlur(x, 3), {"Pad": 9, "Min": 9, "Max": 9, "Slice": 1}),
    ):
        node = trace_node(tmp_path, lambda x, f=call: {"out": f(x)}, {"image": image}, opencv.all())
        names = [p.name for p in node.inputs]
        outputs = onnx_output_names(names, [p.name for p in node.outputs])
        model, _ = driver.translate(node.graph_module, [torch.from_numpy(image)], names, outputs)
        ops = [n.op_type for n in onnx.load_from_string(model).graph.node]
        passes = {op: ops.count(op) for op in ops if op not in ("Reshape", "Identity")}
        assert passes == counts
        assert_translation_replays(node, np.random.default_rng(14))


def test_a_slice_that_drops_no_axis_is_one_slice_node(tmp_path):
    """``x[1:4, 2:5]`` keeps every axis: the Slice is the result, no Reshape after it (a
    Reshape writing a graph output costs ONNX Runtime a copy); an int index still drops
    its axis with one."""
    image = np.random.default_rng(15).integers(0, 256, (6, 7, 3), dtype=np.uint8)

    def crops(x):
        t = torch.as_tensor(x)
        return {"box": t[1:4, 2:5] + 0, "row": t[2, 1:5] + 0}

    node = trace_node(tmp_path, crops, {"image": image})
    names = [p.name for p in node.inputs]
    outputs = onnx_output_names(names, [p.name for p in node.outputs])
    model, _ = driver.translate(node.graph_module, [torch.from_numpy(image)], names, outputs)
    ops = [n.op_type for n in onnx.load_from_string(model).graph.node]
    assert ops.count("Slice") == 2 and ops.count("Reshape") == 1
    assert_translation_replays(node, np.random.default_rng(16))
