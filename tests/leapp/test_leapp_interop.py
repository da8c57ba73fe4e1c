"""Bundles interoperate with the real leapp 0.7.2 package in both directions, and our
semantics types write what LEAPP's write."""

import leapp  # the test extra pins leapp==0.7.2: interop is checked against the real package
import pytest
import torch
import yaml

import patchport
from patchport import GraphConfigs, TemporalAxis, TensorSemantics, annotate


def run_both(yaml_path, steps):
    """Run LEAPP's and our InferenceManager side by side on the same inputs."""
    theirs = leapp.InferenceManager(str(yaml_path))
    ours = patchport.InferenceManager(yaml_path)
    assert ours.inputs == theirs.inputs and ours.outputs == theirs.outputs
    assert ours.feedback_inputs == theirs.feedback_inputs
    for inputs in steps:
        expected = theirs.run_policy(dict(inputs))
        got = ours.run_policy(dict(inputs))
        assert list(got) == list(expected)
        for key in expected:
            torch.testing.assert_close(got[key], expected[key].cpu(), rtol=1e-5, atol=1e-6)


def test_leapp_runs_our_bundle_with_state_and_feedback(tmp_path):
    torch.manual_seed(0)
    cell = torch.nn.GRUCell(3, 4).eval()
    with torch.no_grad(), patchport.session("ours", save_path=tmp_path):
        hidden = torch.zeros(1, 4)
        for _ in range(2):
            obs = annotate.input_tensors("encode", {"obs": torch.randn(1, 3)})
            feature = torch.tanh(obs * 2.0)
            annotate.output_tensors("encode", {"feature": feature}, export_with="jit")
            f, h = annotate.input_tensors("memory", {"feature": feature, "h_prev": hidden})
            hidden = cell(f, h)
            annotate.output_tensors("memory", {"h_next": hidden, "act": hidden.sum(1)}, "onnx")
    result = patchport.compile_graph(visualize=False)
    pipeline = yaml.safe_load(result.yaml_path.read_text())["pipeline"]
    assert pipeline["feedback_flow"] == {"memory/h_next": ["memory/h_prev"]}
    run_both(result.yaml_path, [{"encode/obs": torch.randn(1, 3)} for _ in range(4)])


def test_leapp_runs_our_module_state_exported_with_onnx_torchscript(tmp_path):
    class Memory(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("h", torch.zeros(1, 2))

        def forward(self, x):
            self.h = 0.5 * self.h + x
            return self.h * 2

    model = Memory()
    with patchport.session("module", save_path=tmp_path):
        x = annotate.input_tensors("m", {"x": torch.ones(1, 2)})
        annotate.module("m", model)
        annotate.output_tensors("m", {"y": model(x)}, export_with="onnx-torchscript")
    result = patchport.compile_graph(visualize=False)
    run_both(result.yaml_path, [{"m/x": torch.randn(1, 2)} for _ in range(4)])


def make_leapp_bundle(folder):
    """A recurrent filter traced and exported by the real leapp package."""
    leapp.start("theirs", save_path=str(folder))
    try:
        memory = torch.tensor([0.25, -0.25])
        for step in range(2):
            x = leapp.annotate.input_tensors("filter", {"x": torch.ones(2) * step})
            state = leapp.annotate.state_tensors("filter", {"memory": memory})
            memory = 0.9 * state + 0.1 * torch.tanh(x)
            leapp.annotate.update_state("filter", {"memory": memory})
            leapp.annotate.output_tensors("filter", {"level": memory * 3.0}, export_with="jit")
    finally:
        leapp.stop()
    leapp.compile_graph(visualize=False)


def test_we_run_a_bundle_made_by_leapp(tmp_path):
    make_leapp_bundle(tmp_path)
    yaml_path = tmp_path / "theirs" / "theirs.yaml"
    ours = patchport.InferenceManager(yaml_path)
    assert ours.feedback_inputs == ["filter/memory"]
    memory = torch.tensor([0.25, -0.25])
    for value in (1.0, -2.0, 0.5):
        x = torch.full((2,), value)
        memory = 0.9 * memory + 0.1 * torch.tanh(x)
        torch.testing.assert_close(ours.run_policy({"filter/x": x})["filter/level"], memory * 3)
    ours.reset()
    run_both(yaml_path, [{"filter/x": torch.randn(2)} for _ in range(3)])


def test_kind_enums_carry_leapp_values():
    from leapp.utils import enums as theirs

    from patchport.utils import enums as ours

    for name in ("InputKindEnum", "OutputKindEnum"):
        assert {m.name: m.value for m in getattr(ours, name)} == {
            m.name: m.value for m in getattr(theirs, name)
        }


def plain_lists(value):
    """LEAPP's YAML list subclass as plain lists, for comparison."""
    if isinstance(value, dict):
        return {key: plain_lists(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_lists(item) for item in value]
    return value


def test_semantics_and_configs_serialise_as_leapp_does():
    joints = ["hip", "knee"]
    cases = [
        ("q", dict(kind="state/joint/position", element_names=joints)),
        ("a", dict(element_names=[TemporalAxis(20), joints], extra={"unit": "rad"})),
        ("b", dict(element_names=[None, ["x", "y"]])),
    ]
    for name, labels in cases:
        theirs_labels = dict(labels)
        if "element_names" in labels:
            theirs_labels["element_names"] = [
                leapp.TemporalAxis(e.period_ms) if isinstance(e, TemporalAxis) else e
                for e in labels["element_names"]
            ]
        ours = TensorSemantics(name, torch.zeros(3, 2), **labels).to_dict()
        theirs = leapp.TensorSemantics(name, torch.zeros(3, 2), **theirs_labels).to_dict()
        assert plain_lists(ours) == plain_lists(theirs)
    configs = GraphConfigs(frequency=50, extra={"robot": "h1"})
    assert configs.to_dict() == leapp.GraphConfigs(frequency=50, extra={"robot": "h1"}).to_dict()
    with pytest.raises(TypeError, match="positive"):
        GraphConfigs(frequency=0)
    with pytest.raises(TypeError, match="positive"):
        TemporalAxis(period_ms=-1)


def test_semantics_and_configs_round_trip_through_the_bundle(tmp_path):
    joints = ["hip", "knee", "ankle"]
    kinds = patchport.InputKindEnum, patchport.OutputKindEnum
    with patchport.session("labels", save_path=tmp_path):
        q, cmd = annotate.input_tensors(
            "ctrl",
            [
                TensorSemantics(
                    "q", torch.zeros(3), kind=kinds[0].JOINT_POSITION, element_names=joints
                ),
                TensorSemantics("cmd", torch.ones(3), kind=kinds[0].COMMAND_JOINT_POSITION),
            ],
        )
        chunk = torch.stack([q + (cmd - q) * f for f in (0.5, 1.0)])
        annotate.output_tensors(
            "ctrl",
            TensorSemantics(
                "targets",
                chunk,
                kind=kinds[1].JOINT_POSITION,
                element_names=[TemporalAxis(period_ms=10), joints],
            ),
            export_with="jit",
        )
    result = patchport.compile_graph(visualize=False, graph_configs=GraphConfigs(frequency=25))
    spec = yaml.safe_load(result.yaml_path.read_text())
    assert spec["pipeline"]["configs"] == {"frequency": 25}
    q_port, cmd_port = spec["models"]["ctrl"]["inputs"]
    assert q_port["kind"] == "state/joint/position" and q_port["element_names"] == [joints]
    assert cmd_port["kind"] == "command/joint/position" and "element_names" not in cmd_port
    (targets,) = spec["models"]["ctrl"]["outputs"]
    assert targets["kind"] == "target/joint/position"
    assert targets["element_names"] == ["__temporal_axis__", joints]
    assert targets["temporal_period_ms"] == 10
    theirs = leapp.InferenceManager(str(result.yaml_path))
    got = theirs.run_policy({"ctrl/q": torch.zeros(3), "ctrl/cmd": torch.full((3,), 2.0)})
    torch.testing.assert_close(got["ctrl/targets"].cpu(), torch.tensor([[1.0] * 3, [2.0] * 3]))


def test_an_unused_input_stays_an_input_of_the_onnx_torchscript_model(tmp_path):
    with patchport.session("unused", save_path=tmp_path):
        a, _ = annotate.input_tensors("n", {"a": torch.ones(2), "spare": torch.ones(3)})
        annotate.output_tensors("n", {"y": a * 2}, export_with="onnx-torchscript")
    result = patchport.compile_graph(visualize=False)
    run_both(result.yaml_path, [{"n/a": torch.randn(2), "n/spare": torch.randn(3)}])
