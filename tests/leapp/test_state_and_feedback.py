"""Recurrent state in a bundle: module() buffers (a GRU hidden state), explicit
state_tensors/update_state, and feedback inferred from a second pass; each replayed for
several steps against the eager program."""

import pytest
import torch
import yaml
from safetensors.torch import load_file

import patchport
from patchport import annotate


class GRUPolicy(torch.nn.Module):
    """A policy whose hidden state is a registered buffer that forward reassigns."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.gru = torch.nn.GRU(4, 6)
        self.head = torch.nn.Linear(6, 2)
        self.register_buffer("h", torch.full((1, 1, 6), 0.1))
        self.register_buffer("scale", torch.tensor([0.5, 2.0]))  # read, never reassigned

    def forward(self, obs):
        out, h = self.gru(obs.unsqueeze(0), self.h)
        self.h = h
        return self.head(out.squeeze(0)) * self.scale


def trace_gru(folder, backend, passes=2):
    model = GRUPolicy().eval()
    with torch.no_grad(), patchport.session("gru", save_path=folder):
        for _ in range(passes):
            obs = annotate.input_tensors("policy", {"obs": torch.randn(1, 4)})
            annotate.module("policy", model)
            annotate.output_tensors("policy", {"action": model(obs)}, export_with=backend)
    return model


@pytest.mark.parametrize("backend", ["jit", "onnx-torchscript"])
def test_gru_buffer_state_replays_like_the_eager_model(tmp_path, backend):
    traced = trace_gru(tmp_path, backend)
    # the model gets plain buffers back; the hidden state advanced as without tracing
    assert type(traced.h) is torch.Tensor and type(traced.scale) is torch.Tensor
    assert not torch.equal(traced.h, torch.full((1, 1, 6), 0.1))
    result = patchport.compile_graph(visualize=False)
    assert result.ok and result.validation[0].samples == 2
    spec = yaml.safe_load(result.yaml_path.read_text())
    state_in = state_out = "h"  # the user's name on every backend (ONNX renames inside)
    model = spec["models"]["policy"]
    assert [p["name"] for p in model["inputs"]] == ["obs", state_in]  # scale was baked
    assert [p["name"] for p in model["outputs"]] == ["action", state_out]
    assert spec["pipeline"]["feedback_flow"] == {f"policy/{state_out}": [f"policy/{state_in}"]}
    assert spec["pipeline"]["outputs"] == {"policy": ["action"]}
    initial = load_file(str(result.directory / spec["pipeline"]["initial_values"]))
    torch.testing.assert_close(initial[f"policy/{state_in}"], torch.full((1, 1, 6), 0.1))

    manager = patchport.InferenceManager(result.yaml_path)
    assert manager.feedback_inputs == [f"policy/{state_in}"]
    torch.testing.assert_close(manager.value_dict["policy"][state_in], torch.full((1, 1, 6), 0.1))
    eager = GRUPolicy().eval()
    observations = torch.randn(5, 1, 4)
    for _ in range(2):  # reset() starts the episode again from the saved initial state
        for obs in observations:
            with torch.no_grad():
                expected = eager(obs)
            got = manager.run_policy({"policy/obs": obs})["policy/action"]
            torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-5)
        manager.reset()
        eager = GRUPolicy().eval()


def test_buffers_are_restored_when_the_node_is_never_finished(tmp_path):
    model = GRUPolicy()
    with pytest.warns(patchport.TraceLossWarning, match="never finished"):
        with patchport.session("unfinished", save_path=tmp_path):
            annotate.input_tensors("policy", {"obs": torch.randn(1, 4)})
            annotate.module("policy", model, buffer_names=["h"])
            assert type(model.h) is not torch.Tensor and type(model.scale) is torch.Tensor
    assert type(model.h) is torch.Tensor
    torch.testing.assert_close(model.h, torch.full((1, 1, 6), 0.1))


def test_module_refuses_unknown_buffer_names():
    with patchport.session("names"):
        annotate.input_tensors("policy", {"obs": torch.randn(1, 4)})
        with pytest.raises(TypeError, match=r"\['nope'\] are not registered buffers"):
            annotate.module("policy", GRUPolicy(), buffer_names=["nope"])
        annotate.output_tensors("policy", {"y": torch.zeros(1)})


def smooth(reading, memory):
    return 0.7 * memory + 0.3 * torch.tanh(reading)


def test_explicit_state_replays_with_its_initial_value(tmp_path):
    start = torch.tensor([0.5, -0.5])
    with patchport.session("ema", save_path=tmp_path):
        memory = start
        for step in range(2):
            reading = annotate.input_tensors("filter", {"reading": torch.ones(2) * step})
            state = annotate.state_tensors("filter", {"memory": memory})
            memory = smooth(reading, state)
            annotate.update_state("filter", {"memory": memory})
            annotate.output_tensors("filter", {"level": memory.sum(0, keepdim=True)}, "jit")
    result = patchport.compile_graph(visualize=False)
    manager = patchport.InferenceManager(result.yaml_path)
    assert manager.feedback_inputs == ["filter/memory"] and manager.outputs == ["filter/level"]
    memory = start
    for value in torch.linspace(-2, 2, 6):
        reading = torch.full((2,), float(value))
        memory = smooth(reading, memory)
        got = manager.run_policy({"filter/reading": reading})["filter/level"]
        torch.testing.assert_close(got, memory.sum(0, keepdim=True))


def test_update_state_checks_the_state_it_replaces():
    with patchport.session("checks"):
        annotate.input_tensors("n", {"x": torch.ones(2)})
        with pytest.raises(RuntimeError, match="node 'm' does not exist yet"):
            annotate.state_tensors("m", {"s": torch.zeros(2)})
        s = annotate.state_tensors("n", {"s": torch.zeros(2)})
        with pytest.raises(TypeError, match=r"float32\[3\] but the state is float32\[2\]"):
            annotate.update_state("n", {"s": torch.zeros(3)})
        with pytest.raises(TypeError, match="'t' is not a state of this node"):
            annotate.update_state("n", {"t": s})
        annotate.update_state("n", {"s": s + 1})
        annotate.output_tensors("n", {"y": s * 2})
        annotate.input_tensors("n", {"x": torch.ones(2)})
        s = annotate.state_tensors("n", {"s": torch.zeros(2)})
        with pytest.raises(TypeError, match=r"state \['s'\] got no new value in this pass"):
            annotate.output_tensors("n", {"y": s * 2})


def mix(observation, memory):
    return torch.tanh(observation - 0.5 + 0.25 * memory)


def blend(context, previous):
    return 0.8 * previous + 0.2 * context


def test_feedback_between_two_nodes_is_inferred_from_the_second_pass(tmp_path):
    with patchport.session("loop", save_path=tmp_path):
        memory = torch.zeros(1)
        for step in range(2):
            obs, mem = annotate.input_tensors(
                "policy", {"observation": torch.tensor([1.0 + step]), "memory_in": memory}
            )
            context = mix(obs, mem)
            action = torch.clamp(2.0 * context, -1.0, 1.0)
            annotate.output_tensors("policy", {"context": context, "action": action}, "jit")
            ctx, prev = annotate.input_tensors(
                "update", {"context": context, "memory_prev": memory}
            )
            memory = blend(ctx, prev)
            annotate.output_tensors("update", {"memory_out": memory}, export_with="jit")
    result = patchport.compile_graph(visualize=False)
    spec = yaml.safe_load(result.yaml_path.read_text())
    assert list(spec["models"]) == ["policy", "update"]
    assert spec["pipeline"]["data_flow"] == {"policy/context": ["update/context"]}
    assert spec["pipeline"]["feedback_flow"] == {
        "update/memory_out": ["policy/memory_in", "update/memory_prev"]
    }
    assert spec["pipeline"]["inputs"] == {"policy": ["observation"]}
    assert spec["pipeline"]["outputs"] == {"policy": ["action"]}

    manager = patchport.InferenceManager(result.yaml_path)
    memory = torch.zeros(1)
    for value in (0.3, -1.0, 2.0, 0.0, 1.5):
        observation = torch.tensor([value])
        context = mix(observation, memory)
        expected = torch.clamp(2.0 * context, -1.0, 1.0)
        memory = blend(context, memory)
        got = manager.run_policy({"policy/observation": observation})["policy/action"]
        torch.testing.assert_close(got, expected)
