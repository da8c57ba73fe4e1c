"""The rest of LEAPP's annotate API: passthrough outside a session, nested inputs, static
outputs, bring-your-own models, register_buffer, the method decorator, mirror_leapp_tags,
and start(dry_run=, non_traced=, max_cached_io=)."""

import warnings

import numpy as np
import pytest
import torch
import yaml

import patchport
from patchport import ExportManager, TensorSemantics, annotate
from patchport.errors import TraceLossWarning


def test_every_annotation_is_a_passthrough_outside_a_session():
    a, b = torch.ones(2), np.zeros(3)
    assert annotate.input_tensors("n", {"a": a}) is a
    assert annotate.input_tensors("n", {"a": a, "b": b}) == (a, b)
    assert annotate.input_tensors("n", [TensorSemantics("a", a)]) is a
    assert annotate.output_tensors("n", {"a": a}, export_with="jit") is a
    assert annotate.state_tensors("n", {"a": a}) is a
    assert annotate.update_state("n", {"a": a}) is a
    assert annotate.register_buffer("n", a) is a
    assert annotate.register_buffer("n", [a, b]) == (a, b)
    model = torch.nn.BatchNorm1d(2)
    assert annotate.module("n", model) is None and type(model.running_mean) is torch.Tensor
    assert annotate.mirror_leapp_tags(a, b) is b

    @annotate.method(export_with="jit")
    def double(x):
        y = x * 2
        return y

    torch.testing.assert_close(double(a), a * 2)


def test_nested_inputs_become_named_ports_and_keep_their_structure(tmp_path):
    with patchport.session("nested", save_path=tmp_path):
        obs = {"pos": torch.ones(2), "hist": [torch.zeros(2), torch.full((2,), 3.0)]}
        traced, gain = annotate.input_tensors("n", {"obs": obs, "gain": torch.tensor([2.0])})
        assert set(traced) == {"pos", "hist"} and isinstance(traced["hist"], list)
        total = (traced["pos"] + traced["hist"][0] + traced["hist"][1]) * gain
        out = annotate.output_tensors("n", {"out": {"total": total, "neg": [-total]}}, "jit")
    assert set(out) == {"total", "neg"} and out["total"] is total  # the values given
    result = patchport.compile_graph(visualize=False)
    manager = patchport.InferenceManager(result.yaml_path)
    assert manager.inputs == ["n/obs_pos", "n/obs_hist_0", "n/obs_hist_1", "n/gain"]
    assert manager.outputs == ["n/out_total", "n/out_neg_0"]
    got = manager.run_policy(
        {
            "n/obs_pos": torch.tensor([1.0, 2.0]),
            "n/obs_hist_0": torch.tensor([0.5, 0.5]),
            "n/obs_hist_1": torch.tensor([0.0, 1.0]),
            "n/gain": torch.tensor([3.0]),
        }
    )
    torch.testing.assert_close(got["n/out_total"], torch.tensor([4.5, 10.5]))
    torch.testing.assert_close(got["n/out_neg_0"], torch.tensor([-4.5, -10.5]))


def test_static_outputs_and_register_buffer_are_baked_in(tmp_path):
    offsets = torch.tensor([1.0, -1.0])
    kp = TensorSemantics("kp", torch.tensor([30.0, 40.0]), kind=patchport.OutputKindEnum.KP)
    with patchport.session("static", save_path=tmp_path):
        x = annotate.input_tensors("n", {"x": torch.zeros(2)})
        bias = annotate.register_buffer("n", {"bias": offsets})
        annotate.output_tensors("n", {"y": x + bias}, [kp], export_with="jit")  # LEAPP's order
    result = patchport.compile_graph(visualize=False)
    model = yaml.safe_load(result.yaml_path.read_text())["models"]["n"]
    assert [p["name"] for p in model["inputs"]] == ["x"]  # the buffer is no input
    assert model["outputs"][1] == {
        "name": "kp",
        "dtype": "float32",
        "shape": [2],
        "type": "tensor",
        "kind": "kp",
    }
    got = patchport.InferenceManager(result.yaml_path).run_policy({"n/x": torch.tensor([5.0, 6.0])})
    torch.testing.assert_close(got["n/y"], torch.tensor([6.0, 5.0]))
    torch.testing.assert_close(got["n/kp"], torch.tensor([30.0, 40.0]))


def test_a_numpy_buffer_keeps_numpy_arithmetic(tmp_path):
    with patchport.session("np_buffer", save_path=tmp_path):
        x = annotate.input_tensors("n", {"x": np.array([7, 3], dtype=np.uint32)})
        table = annotate.register_buffer("n", np.array([2**32 - 3, 10], dtype=np.uint32))
        annotate.output_tensors("n", {"y": x + table}, export_with="jit")  # wraps like uint32
    result = patchport.compile_graph(visualize=False)
    manager = patchport.InferenceManager(result.yaml_path)
    got = manager.run_policy({"n/x": np.array([5, 1], np.uint32)})
    assert got["n/y"].tolist() == [2, 11] and got["n/y"].dtype == torch.uint32


def test_static_outputs_must_be_constants():
    with patchport.session("not_static"):
        x = annotate.input_tensors("n", {"x": torch.zeros(2)})
        with pytest.raises(TypeError, match="a static output is a constant tensor"):
            annotate.output_tensors("n", {"y": x}, static_outputs={"s": x * 2})
        annotate.output_tensors("n", {"y": x})


def test_a_model_you_bring_is_copied_into_the_bundle(tmp_path):
    scripted = torch.jit.script(torch.nn.Linear(3, 1).eval())
    own = tmp_path / "own_model.pt"
    torch.jit.save(scripted, str(own))
    with patchport.session("byo", save_path=tmp_path / "out"):
        x = annotate.input_tensors("n", {"x": torch.ones(3)})
        annotate.output_tensors(
            "n", {"y": scripted(x)}, export_with=None, backend_params={"model_path": str(own)}
        )
    result = patchport.compile_graph(visualize=False)
    parameters = yaml.safe_load(result.yaml_path.read_text())["models"]["n"]["parameters"]
    assert parameters["model_path"] == "own_model.pt" and parameters["backend"] == "jit"
    assert (result.directory / "own_model.pt").read_bytes() == own.read_bytes()
    assert [(v.node, v.ok, v.samples) for v in result.validation] == [("n", True, 1)]
    got = patchport.InferenceManager(result.yaml_path).run_policy({"n/x": torch.ones(3)})
    with torch.no_grad():
        torch.testing.assert_close(got["n/y"], scripted(torch.ones(3)))


GAIN = torch.tensor([0.5])


def test_method_decorator_names_ports_from_the_signature_and_return(tmp_path):
    @annotate.method(node_name="ctrl", export_with="jit")
    def controller(error, rate, gain=GAIN):
        command = error * gain - 0.1 * rate
        saturated = torch.clamp(command, -1.0, 1.0)
        return command, saturated

    with patchport.session("method", save_path=tmp_path):
        for step in range(2):
            controller(torch.tensor([1.0 + step, -2.0]), rate=torch.tensor([0.1, 0.2]))
    result = patchport.compile_graph(visualize=False)
    manager = patchport.InferenceManager(result.yaml_path)
    assert manager.inputs == ["ctrl/error", "ctrl/rate"]  # the default is a constant
    assert manager.outputs == ["ctrl/command", "ctrl/saturated"]
    error, rate = torch.tensor([4.0, -1.0]), torch.tensor([0.0, 1.0])
    got = manager.run_policy({"ctrl/error": error, "ctrl/rate": rate})
    command, saturated = controller(error, rate)
    torch.testing.assert_close(got["ctrl/command"], command)
    torch.testing.assert_close(got["ctrl/saturated"], saturated)


def test_mirror_leapp_tags_keeps_a_recomputed_value_in_the_graph(tmp_path):
    with patchport.session("mirror", save_path=tmp_path):
        x = annotate.input_tensors("n", {"x": torch.tensor([1.0, 2.0])})
        y = x * 3
        copy = annotate.mirror_leapp_tags(y, torch.tensor([3.0, 6.0]))
        with pytest.raises(TypeError, match="target must hold exactly the data of source"):
            annotate.mirror_leapp_tags(y, torch.tensor([3.0, 7.0]))
        annotate.output_tensors("n", {"z": copy + 1}, export_with="jit")
    result = patchport.compile_graph(visualize=False)
    got = patchport.InferenceManager(result.yaml_path).run_policy({"n/x": torch.tensor([2.0, 0])})
    torch.testing.assert_close(got["n/z"], torch.tensor([7.0, 1.0]))


def test_mirror_leapp_tags_wires_a_buffer_filled_from_a_finished_output(tmp_path):
    """A preallocated buffer filled from one node's output, then mirrored, is that output's
    edge into the next node (the torch buffer even when the returned value is dropped)."""

    @annotate.method(export_with="jit")
    def first(x: torch.Tensor):
        doubled = x * 2.0
        return doubled

    with warnings.catch_warnings():
        warnings.simplefilter("error", TraceLossWarning)  # no "is a copy" warning
        with patchport.session("mirrored", save_path=tmp_path):
            out = first(torch.tensor([1.0, 2.0]))
            buffer = torch.zeros(2)
            buffer[:] = out
            annotate.mirror_leapp_tags(out, buffer)  # LEAPP promotes the torch buffer
            y = annotate.input_tensors("second", {"buffer": buffer})
            values = annotate.output_tensors("second", {"values": y.numpy() + 1.0})
            table = np.zeros(2, np.float32)
            table[:] = values
            table = annotate.mirror_leapp_tags(values, table)
            z = annotate.input_tensors("third", {"table": table})
            annotate.output_tensors("third", {"z": z * 3.0})
    result = patchport.compile_graph(visualize=False)
    assert ExportManager().detected_pipeline["data_flow"] == {
        "first/doubled": ["second/buffer"],
        "second/values": ["third/table"],
    }
    got = patchport.InferenceManager(result.yaml_path).run_policy({"first/x": torch.ones(2)})
    torch.testing.assert_close(got["third/z"], torch.full((2,), 9.0))


def trace_two_nodes(folder, **options):
    with patchport.session("opts", save_path=folder, **options):
        for step in range(4):
            x = annotate.input_tensors("a", {"x": torch.ones(2) * step})
            y = annotate.output_tensors("a", {"y": x + 1}, export_with="jit")
            z = annotate.input_tensors("b", {"y": y})
            annotate.output_tensors("b", {"z": z * 2}, export_with="jit")


def test_dry_run_writes_the_description_but_no_model(tmp_path):
    trace_two_nodes(tmp_path, dry_run=True)
    result = patchport.compile_graph(visualize=False)
    assert result.models == {} and result.validation == []
    assert sorted(p.name for p in result.directory.iterdir()) == ["opts.yaml"]
    spec = yaml.safe_load(result.yaml_path.read_text())
    assert spec["models"]["a"]["parameters"]["model_path"] is None
    assert spec["pipeline"]["data_flow"] == {"a/y": ["b/y"]}


def test_dry_run_asked_at_compile_writes_the_description_but_no_model(tmp_path):
    """Newer LEAPP takes compile_graph(dry_run=True) after an ordinary trace."""
    trace_two_nodes(tmp_path)
    result = patchport.compile_graph(visualize=False, dry_run=True)
    assert (
        result.models == {}
        and result.validation == []
        and dict(result.items())
        == {
            "a": True,
            "b": True,
        }
    )
    assert sorted(p.name for p in result.directory.iterdir()) == ["opts.yaml"]
    assert patchport.compile_graph(visualize=False).models.keys() == {"a", "b"}  # still there


def test_non_traced_nodes_and_max_cached_io(tmp_path):
    trace_two_nodes(tmp_path, non_traced=["b"], max_cached_io=2)
    result = patchport.compile_graph(visualize=False)
    assert list(result.models) == ["a"]
    assert [(v.node, v.samples) for v in result.validation] == [("a", 2)]
    with pytest.raises(TypeError, match="max_cached_io=0"):
        patchport.start("bad", max_cached_io=0)


def test_the_compile_result_reads_as_leapps_results_by_node(tmp_path):
    """LEAPP's compile_graph returns {node: passed}; LEAPP's tests index and list it."""
    trace_two_nodes(tmp_path, non_traced=["b"])
    result = patchport.compile_graph(visualize=False)
    assert set(result.keys()) == {"a", "b"} and list(result) == ["a", "b"] and len(result) == 2
    assert result["a"] is True and result["b"] is True  # b: not exported, nothing to fail
    assert dict(result.items()) == {"a": True, "b": True} and all(result.values())
    assert "a" in result and "c" not in result and bool(result)
    with pytest.raises(KeyError, match="'c'.*nodes: \\['a', 'b'\\]"):
        result["c"]


@pytest.mark.parametrize("backend", ["onnx", "jit"])
def test_method_accepts_environment_constants_and_traces_a_scripted_global(tmp_path, backend):
    """LEAPP's ``environment_constants=[...]`` names the globals a method reads; here a
    torch.jit.trace'd module. The call is traced, so the bundle computes it afresh."""
    torch.manual_seed(0)
    scripted = torch.jit.trace(torch.nn.Linear(3, 3).eval(), torch.ones(3))

    @annotate.method(export_with=backend, environment_constants=["scripted"])
    def gate(x: torch.Tensor, threshold: torch.Tensor):
        y = scripted(x)
        out = torch.where(y > threshold, y, torch.zeros_like(y))
        return out

    with patchport.session("env_consts", save_path=tmp_path):
        gate(torch.tensor([1.0, 2.0, 3.0]), torch.tensor(0.1))
    result = patchport.compile_graph(visualize=False)
    assert result.ok
    manager = patchport.InferenceManager(result.yaml_path)
    x, t = torch.tensor([-2.0, 0.5, 4.0]), torch.tensor(-0.3)
    got = manager.run_policy({"gate/x": x, "gate/threshold": t})["gate/out"]
    torch.testing.assert_close(got, gate(x, t))
    with pytest.raises(patchport.PatchDefinitionError, match="list of global names"):
        annotate.method(environment_constants="scripted")


def test_method_traces_tensors_passed_through_star_args_and_star_kwargs(tmp_path):
    """Tensors in ``*args`` are inputs ``arg_0``, ``arg_1``... (by position among them, as
    LEAPP names them) and those in ``**kwargs`` keep their keyword; other values pass as
    given and are constants of the node."""

    @annotate.method(node_name="mix", export_with="jit")
    def mix(*inputs, **named):
        scale, x, offset = inputs
        return x * scale + offset + named["bias"]

    with patchport.session("star", save_path=tmp_path):
        out = mix(2, torch.tensor([3.0, 4.0]), 10, bias=torch.tensor([0.5, -0.5]))
    torch.testing.assert_close(torch.as_tensor(out), torch.tensor([16.5, 17.5]))
    result = patchport.compile_graph(visualize=False)
    manager = patchport.InferenceManager(result.yaml_path)
    assert sorted(manager.inputs) == ["mix/arg_1", "mix/bias"]
    got = manager.run_policy({"mix/arg_1": torch.tensor([1.0, 0.0]), "mix/bias": torch.ones(2)})
    torch.testing.assert_close(got["mix/output1"], torch.tensor([13.0, 11.0]))


def test_method_binds_inputs_before_defaults_and_refuses_a_call_without_tensors(tmp_path):
    """A tensor default before the given tensor is a constant of the node; a call that
    passes no tensor at all is refused by name (a node needs an input)."""
    weight = torch.tensor([2.0, 3.0])

    @annotate.method(node_name="scaled", export_with="jit")
    def scaled(w=weight, x=None):
        return x * w

    @annotate.method(node_name="const", export_with="jit")
    def const(w=weight):
        return w + 1

    with patchport.session("defaults", save_path=tmp_path):
        scaled(x=torch.tensor([1.0, 1.0]))
        with pytest.raises(patchport.PatchDefinitionError, match=r"const.*passes no tensor"):
            const()
    result = patchport.compile_graph(visualize=False)
    manager = patchport.InferenceManager(result.yaml_path)
    assert manager.inputs == ["scaled/x"]
    got = manager.run_policy({"scaled/x": torch.tensor([4.0, -1.0])})["scaled/output1"]
    torch.testing.assert_close(got, torch.tensor([8.0, -3.0]))
