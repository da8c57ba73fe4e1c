"""The graph optimiser of the direct ONNX translator: the file it writes gives the
translated graph's outputs bit for bit, has fewer nodes where casts, Identity nodes or
float64 arithmetic were redundant, keeps every cast it cannot prove exact, and the bundle
says what was done."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime
import pytest
import torch

import patchport
from patchport import annotate
from patchport.bundle.spec import read_spec
from patchport.export.backends import onnx_output_names
from patchport.export.onnx import driver, value_ranges
from patchport.patches import opencv
from tests.export.test_fx_onnx import trace_node
from tests.patches import pipelines
from tests.patches.test_opencv_contract import FRAME

pytestmark = pytest.mark.filterwarnings("ignore:annotate.output_tensors")


def written_and_translated(node, path):
    """(optimised model written by write_direct, its report, the plain translation)."""
    names = [p.name for p in node.inputs]
    outputs = onnx_output_names(names, [p.name for p in node.outputs])
    example = [torch.as_tensor(node.samples[0].inputs[n]) for n in names]
    report = driver.write_direct(node.graph_module, example, names, outputs, path)
    plain, _ = driver.translate(node.graph_module, example, names, outputs)
    return onnx.load(str(path)), report, onnx.load_from_string(plain)


def outputs_of(model, feed):
    session = onnxruntime.InferenceSession(model.SerializeToString())
    return session.run(None, feed)


def assert_bit_identical(optimised, plain, feeds):
    for feed in feeds:
        for got, want in zip(outputs_of(optimised, feed), outputs_of(plain, feed)):
            assert got.dtype == want.dtype and got.shape == want.shape
            assert got.tobytes() == want.tobytes()


def ops(model):
    return [n.op_type for n in model.graph.node]


def test_camera_pipeline_optimised_file_is_bit_identical_and_smaller(tmp_path):
    maps = pipelines.undistort_maps(48, 64)
    model = pipelines.TinyCNN().eval()
    frame = FRAME.repeat(3, 0).repeat(3, 1)[:48, :64]

    def policy(bgr):
        return {"action": pipelines.policy(bgr, maps, (32, 24), model)}

    node = trace_node(tmp_path, policy, {"bgr": frame}, opencv.all())
    optimised, report, plain = written_and_translated(node, tmp_path / "camera.onnx")
    assert report["applied"] is True
    assert report["nodes_before"] == len(plain.graph.node)
    assert report["nodes_after"] == len(optimised.graph.node) < len(plain.graph.node)
    assert ops(optimised).count("Cast") < ops(plain).count("Cast")  # the blur's u8 round trip
    assert "Identity" not in ops(optimised)
    rng = np.random.default_rng(0)
    feeds = [{"bgr": rng.integers(0, 256, frame.shape, dtype=np.uint8)} for _ in range(3)]
    assert_bit_identical(optimised, plain, feeds + [{"bgr": np.zeros_like(frame)}])


def test_bundle_records_the_optimisation(tmp_path):
    maps = pipelines.undistort_maps(48, 64)
    frame = FRAME.repeat(3, 0).repeat(3, 1)[:48, :64]
    with patchport.session("cam", tmp_path, patching=opencv.all()):
        bgr = annotate.input_tensors("cam", {"bgr": frame})
        small = pipelines.preprocess(bgr, maps, (32, 24))
        annotate.output_tensors("cam", {"chw": small}, export_with="onnx")
    result = patchport.compile_graph(visualize=False)
    record = read_spec(result.yaml_path)["models"]["cam"]["parameters"]["onnx optimisation"]
    assert record["applied"] is True and record["nodes_after"] < record["nodes_before"]
    assert record["ort_version"] == onnxruntime.__version__
    assert record["rewrites"]["identity"] >= 1
    written = onnx.load(str(result.models["cam"]))
    assert len(written.graph.node) == record["nodes_after"]
    manager = patchport.InferenceManager(result.yaml_path)
    fresh = np.random.default_rng(1).integers(0, 256, frame.shape, dtype=np.uint8)
    got = manager.run_policy({"cam/bgr": fresh})["cam/chw"]
    want = pipelines.preprocess(fresh, maps, (32, 24))
    np.testing.assert_allclose(np.asarray(got), want, atol=1e-6)


def redundant(x):
    """Casts and float64 arithmetic that hold every value exactly, and two that do not."""
    wide = x.to(torch.int32).to(torch.float32)  # uint8 -> int32 -> float32 == uint8 -> float32
    back = wide.round().clamp(0, 255).to(torch.uint8).t().t().to(torch.float32)
    double = (x.to(torch.float64) * 3 - 7).to(torch.float32)  # integers below 2**24
    inexact = (x.to(torch.float64) * 0.1).to(torch.float32)  # 0.1 rounds: stays float64
    lossy = (x.to(torch.int32) * 70000).to(torch.float32).to(torch.int32)  # > 2**24: rounds
    return {"a": back + wide, "b": double, "c": inexact, "d": lossy}


def test_redundant_casts_and_float64_go_and_lossy_casts_stay(tmp_path):
    node = trace_node(tmp_path, lambda x: redundant(torch.as_tensor(x)), {"x": FRAME[:8, :8, 0]})
    optimised, report, plain = written_and_translated(node, tmp_path / "casts.onnx")
    assert report["applied"] is True
    assert report["rewrites"]["casts"] >= 2 and report["rewrites"]["float64"] == 2
    assert len(optimised.graph.node) < len(plain.graph.node)
    assert ops(optimised).count("Cast") < ops(plain).count("Cast")
    assert ops(optimised).count("Transpose") == 0
    doubles = {i.name for i in optimised.graph.initializer if i.data_type == 11}
    assert len(doubles) == 1  # only the 0.1 multiply kept its float64 constant
    casts = [[a.i for a in n.attribute][0] for n in optimised.graph.node if n.op_type == "Cast"]
    assert casts.count(onnx.TensorProto.INT32) >= 2  # the lossy int32 -> float32 -> int32 stays
    rng = np.random.default_rng(2)
    feeds = [{"x": rng.integers(0, 256, (8, 8), dtype=np.uint8)} for _ in range(3)]
    assert_bit_identical(optimised, plain, feeds + [{"x": np.full((8, 8), 255, np.uint8)}])


def test_value_ranges_prove_only_exact_float32():
    exact = value_ranges.of_array(np.array([0.5, 3.0, -1.25]))
    assert exact == value_ranges.Range(-1.25, 3.0, -2, no_minus_zero=True)
    assert value_ranges.exact_in(exact, np.float32)
    tenth = value_ranges.of_array(np.array([0.1]))
    assert not value_ranges.exact_in(tenth, np.float32)
    assert value_ranges.exact_in(tenth, np.float64)
    big = value_ranges.Range(0.0, 2.0**24 + 1, 0)
    assert not value_ranges.exact_in(big, np.float32)
    assert value_ranges.exact_in(value_ranges.Range(0.0, 2.0**24, 0), np.float32)
    assert value_ranges.of_array(np.array([np.nan])) is None


def test_round_trip_through_an_integer_keeps_turning_minus_zero_into_plus_zero(tmp_path):
    def negated(x):
        return {"y": (-torch.as_tensor(x).to(torch.float32)).to(torch.int16).to(torch.float32)}

    node = trace_node(tmp_path, negated, {"x": FRAME[:4, :4, 0]})
    optimised, report, plain = written_and_translated(node, tmp_path / "zero.onnx")
    assert ops(optimised).count("Cast") == ops(plain).count("Cast")  # -0.0 may reach the casts
    zeros = {"x": np.zeros((4, 4), np.uint8)}
    (got,) = outputs_of(optimised, zeros)
    assert not np.signbit(got).any()  # as torch: -0.0 -> int16 0 -> +0.0
    assert_bit_identical(optimised, plain, [zeros])


def test_remap_lerp_is_bounded_so_its_uint8_round_trip_goes(tmp_path):
    import cv2

    maps = pipelines.undistort_maps(48, 64)
    frame = FRAME.repeat(3, 0).repeat(3, 1)[:48, :64]

    def undistort(bgr):
        return {"f": cv2.remap(bgr, maps[0], maps[1], cv2.INTER_LINEAR).astype(np.float32)}

    node = trace_node(tmp_path, undistort, {"bgr": frame}, opencv.all())
    optimised, report, plain = written_and_translated(node, tmp_path / "remap.onnx")
    to_uint8 = [n for n in optimised.graph.node if n.op_type == "Cast" and n.attribute[0].i == 2]
    assert report["applied"] is True and not to_uint8  # Round(lerp) is proven in [0, 255]
    rng = np.random.default_rng(3)
    feeds = [{"bgr": rng.integers(0, 256, frame.shape, dtype=np.uint8)} for _ in range(3)]
    extremes = [{"bgr": np.full_like(frame, 255)}, {"bgr": np.zeros_like(frame)}]
    assert_bit_identical(optimised, plain, feeds + extremes)


def test_thousands_of_duplicates_go_in_one_sweep_and_a_large_graph_stays_bounded(monkeypatch):
    # a 6,935-node calibration graph took over ten minutes: the analysis was redone after
    # each of its 2,197 duplicate removals; duplicates now go in one sweep, and the
    # range-based passes stop at a work budget (what is left stays as translated)
    from patchport.export.onnx import optimize
    from patchport.export.onnx.proto import Node

    width = 2000
    nodes = [Node("Add", ["x", "one"], [f"a{i}"], {}) for i in range(width)]
    nodes += [Node("Mul", [f"a{i}", "x"], [f"m{i}"], {}) for i in range(width)]
    nodes.append(Node("Concat", [f"m{i}" for i in range(width)], ["y"], {"axis": 0}))
    constants = {"one": np.ones(1, np.float32), "one_again": np.ones(1, np.float32)}
    graph = optimize.Graph(nodes, constants, ["x"], ["y"])
    analyses = []
    real = optimize._facts
    monkeypatch.setattr(optimize, "_facts", lambda g: analyses.append(1) or real(g))
    done = optimize.optimize(graph)
    assert done["common"] == 2 * (width - 1)
    assert [n.op_type for n in graph.nodes] == ["Add", "Mul", "Concat"]
    assert graph.nodes[-1].inputs == ["m0"] * width  # every use reads the one left
    assert len(analyses) <= 2 * len(optimize._PASSES)
    monkeypatch.setattr(optimize, "WORK_BUDGET", 0)
    small = optimize.Graph([Node("Identity", ["x"], ["y"], {})], {}, ["x"], ["y"])
    assert optimize.optimize(small) == {"stopped early (work budget)": 1}


def test_an_output_reshaped_from_an_element_wise_result_is_written_by_the_op(tmp_path):
    """ONNX Runtime copies a graph output made by a Reshape; the op writes it instead, its
    operands reshaped (a Reshape inside the graph shares its buffer), scalars and
    broadcast operands left as they are."""

    def flat_min(x):
        t = torch.as_tensor(x)
        flat = t.reshape(t.shape[0], -1)
        low = torch.minimum(flat, flat.flip(0)) + 1
        return {"low": low.reshape(t.shape), "kept": (flat * flat[:1]).reshape(t.shape)}

    node = trace_node(tmp_path, flat_min, {"x": FRAME[:6, :5]})
    optimised, report, plain = written_and_translated(node, tmp_path / "reshape.onnx")
    assert report["applied"] is True and report["rewrites"]["output reshapes"] == 1
    producers = {o: n.op_type for n in optimised.graph.node for o in n.output}
    outputs = [o.name for o in optimised.graph.output]
    assert producers[outputs[0]] == "Add"  # computed in the output's shape
    assert producers[outputs[1]] == "Reshape"  # Mul broadcasts one row: left alone
    rng = np.random.default_rng(4)
    feeds = [{"x": rng.integers(0, 256, (6, 5, 3), dtype=np.uint8)} for _ in range(2)]
    assert_bit_identical(optimised, plain, feeds + [{"x": np.full((6, 5, 3), 255, np.uint8)}])


def test_round_then_cast_to_uint8_is_one_quantize_where_the_range_allows(tmp_path):
    """Round (after a multiply by 2**-k) then a cast to uint8 is one QuantizeLinear where
    the rounded values are proven in [0, 255] or a Clip to exactly [0, 255] saturates
    them: the same bits in one pass. A cast that may see values out of range stays."""

    def conversions(x):
        f = torch.as_tensor(x).to(torch.float32)
        return {
            "halved": torch.round(f * 0.5).to(torch.uint8),  # [0, 127.5]: proven
            "clipped": torch.clamp(torch.round(f * 3.0 - 100.0), 0, 255).to(torch.uint8),
            "wraps": torch.round(f * 1.5).to(torch.uint8),  # up to 382: kept as written
        }

    node = trace_node(tmp_path, conversions, {"x": FRAME[:6, :7]})
    optimised, report, plain = written_and_translated(node, tmp_path / "quantize.onnx")
    assert report["applied"] is True and report["rewrites"]["quantize"] == 2
    assert ops(optimised).count("QuantizeLinear") == 2 and ops(optimised).count("Round") == 1
    values = {i.name: onnx.numpy_helper.to_array(i) for i in optimised.graph.initializer}
    quantizers = [n for n in optimised.graph.node if n.op_type == "QuantizeLinear"]
    scales = sorted(float(values[n.input[1]].reshape(-1)[0]) for n in quantizers)
    assert scales == [1.0, 2.0]  # the multiply by 0.5 went into the scale
    rng = np.random.default_rng(5)
    feeds = [{"x": rng.integers(0, 256, (6, 7, 3), dtype=np.uint8)} for _ in range(2)]
    ties = {"x": np.arange(6 * 7 * 3, dtype=np.uint8).reshape(6, 7, 3)}  # x * 0.5 hits .5
    assert_bit_identical(optimised, plain, feeds + [ties])


def test_a_uint8_cast_scaled_by_a_constant_is_one_dequantize(tmp_path):
    """A uint8 cast to float32 read only by a product with a positive scalar is one
    DequantizeLinear: the same bits in one pass. A cast read twice, a negative or
    a per-channel factor stays as written."""

    def scaled(x):
        t = torch.as_tensor(x)
        f = t.to(torch.float32)
        shared = t[..., 1].to(torch.float32)
        return {
            "weighted": t[..., 0].to(torch.float32) * 19235.0 + f[..., 2] * 0.1,
            "shared": shared * 3.0 + shared,  # the cast is read twice: kept
            "negative": t[..., 2].to(torch.float32) * -2.0,
            "per_channel": f * torch.tensor([1.5, 2.5, 3.5]),
        }

    node = trace_node(tmp_path, scaled, {"x": FRAME[:6, :7]})
    optimised, report, plain = written_and_translated(node, tmp_path / "dequantize.onnx")
    assert report["applied"] is True and report["rewrites"]["dequantize"] == 1
    assert ops(optimised).count("DequantizeLinear") == 1
    values = {i.name: onnx.numpy_helper.to_array(i) for i in optimised.graph.initializer}
    (dq,) = [n for n in optimised.graph.node if n.op_type == "DequantizeLinear"]
    scale = values[dq.input[1]]
    assert scale.size == 1 and scale.dtype == np.float32 and float(scale.reshape(-1)[0]) == 19235.0
    rng = np.random.default_rng(6)
    feeds = [{"x": rng.integers(0, 256, (6, 7, 3), dtype=np.uint8)} for _ in range(2)]
    assert_bit_identical(optimised, plain, feeds + [{"x": np.full((6, 7, 3), 255, np.uint8)}])


def test_random_inputs_the_graph_refuses_leave_no_onnx_runtime_error_log(tmp_path, capfd):
    """The optimised graph is checked on random inputs; random indices out of range are
    refused by ONNX Runtime, which is expected and must not print an error to stderr."""

    def lookup(index, values):
        return {"picked": np.take(values * 2.0, index)}

    index = np.array([1, 0, 2], np.int64)
    node = trace_node(tmp_path, lookup, {"index": index, "values": np.arange(3.0)})
    capfd.readouterr()
    model, report, _ = written_and_translated(node, tmp_path / "lookup.onnx")
    assert "onnxruntime" not in capfd.readouterr().err
    feed = {"index": index, "values": np.full(3, 2.0)}
    np.testing.assert_allclose(outputs_of(model, feed)[0], [4.0, 4.0, 4.0])
