"""TorchScript modules called on traced data are recorded as their operations, on every
backend, or refused loudly at the user's line naming the module."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

import patchport
from patchport import annotate
from patchport.errors import TraceLossError, TraceLossWarning
from patchport.tracing import Recorder, finish, trace_input
from tests.script_runs import Script

HERE = Path(__file__).parent
POLICY_SCRIPT = Script(
    "torchscript_policy",
    lambda folder: [sys.executable, HERE / "torchscript_policy.py", folder],
    timeout=300,
)
BACKGROUND = [POLICY_SCRIPT]


class TwoHeads(torch.nn.Module):
    """An actor-critic with two outputs and an extra exported method."""

    def __init__(self) -> None:
        super().__init__()
        self.body = torch.nn.Linear(5, 8)
        self.actor = torch.nn.Linear(8, 2)
        self.critic = torch.nn.Linear(8, 1)
        self.register_buffer("mean", torch.linspace(-1, 1, 5))

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        hidden = torch.relu(self.body(obs - self.mean))
        return self.actor(hidden), self.critic(hidden)

    @torch.jit.export
    def act(self, obs: torch.Tensor) -> torch.Tensor:
        return self.actor(torch.relu(self.body(obs)))


def scripted() -> torch.jit.ScriptModule:
    torch.manual_seed(3)
    return torch.jit.script(TwoHeads())


def test_a_policy_loaded_with_jit_load_exports_on_every_backend_in_a_script() -> None:
    lines = POLICY_SCRIPT.result().output().splitlines()
    results = {line.split()[0]: float(line.split()[-1]) for line in lines}
    assert set(results) == {"onnx", "pt2", "jit"}, lines
    assert all(diff < 1e-5 for diff in results.values()), results


def test_a_scripted_module_is_recorded_as_its_operations_with_weights_as_constants() -> None:
    policy = scripted()
    rec = Recorder("policy")
    obs = trace_input(rec, "obs", torch.zeros(3, 5))
    with warnings.catch_warnings():
        warnings.simplefilter("error", TraceLossWarning)
        action, value = policy(obs * 2.0)
        graph = finish(rec, {"action": action, "value": value.squeeze(-1)})
    origins = " ".join(c.origin for c in rec.constants())
    assert "TorchScript module" in origins and "mean" in origins, origins
    fresh = torch.randn(3, 5)
    want_action, want_value = policy(fresh * 2.0)
    got = graph(fresh)
    torch.testing.assert_close(got["action"], want_action)
    torch.testing.assert_close(got["value"], want_value.squeeze(-1))
    script = torch.jit.script(torch.fx.GraphModule(graph, graph.graph))  # scriptable targets
    torch.testing.assert_close(script(fresh)["action"], want_action)


def test_a_scripted_module_exports_right_with_onnx_on_fresh_inputs(tmp_path: Path) -> None:
    policy = scripted()
    with patchport.session("scripted", save_path=str(tmp_path)):
        obs = annotate.input_tensors("policy", {"obs": np.zeros((2, 5), np.float32)})
        action, _ = policy(torch.from_numpy(obs))
        annotate.output_tensors("policy", {"action": action}, export_with="onnx")
    result = patchport.compile_graph(visualize=False)
    manager = patchport.InferenceManager(result.yaml_path)
    fresh = np.random.default_rng(1).normal(size=(2, 5)).astype(np.float32)
    got = manager.run_policy({"policy/obs": fresh})["policy/action"]
    torch.testing.assert_close(torch.as_tensor(got), policy(torch.from_numpy(fresh))[0])


def test_a_method_the_converter_cannot_take_is_a_loss_at_the_users_line() -> None:
    policy = scripted()
    rec = Recorder("policy")
    obs = trace_input(rec, "obs", torch.zeros(3, 5))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1
        result = policy.act(obs)
    found = [w for w in caught if issubclass(w.category, TraceLossWarning)]
    assert found, "no TraceLossWarning"
    message = str(found[0].message)
    assert "TwoHeads.act" in message and "forward" in message, message
    assert found[0].filename == __file__ and found[0].lineno == line, message
    rec.close()
    torch.testing.assert_close(result, policy.act(torch.zeros(3, 5)))  # eager value unchanged
    with Recorder("strict", strict=True) as strict:
        with pytest.raises(TraceLossError, match="TwoHeads.act"):
            policy.act(trace_input(strict, "obs", torch.zeros(3, 5)))


@torch.jit.script
def _scaled(x: torch.Tensor, gain: float) -> torch.Tensor:
    return torch.tanh(x * gain) + 1.0


def test_a_scripted_function_is_inlined_in_a_session_and_restored_after(tmp_path: Path) -> None:
    original = torch._C.ScriptFunction.__call__
    with warnings.catch_warnings():
        warnings.simplefilter("error", TraceLossWarning)
        with patchport.session("fn", save_path=str(tmp_path)):
            obs = annotate.input_tensors("n", {"obs": np.zeros((2, 3), np.float32)})
            y = _scaled(torch.from_numpy(obs), 0.5)
            annotate.output_tensors("n", {"y": y}, export_with="onnx")
    assert torch._C.ScriptFunction.__call__ is original
    result = patchport.compile_graph(visualize=False)
    manager = patchport.InferenceManager(result.yaml_path)
    fresh = np.random.default_rng(2).normal(size=(2, 3)).astype(np.float32)
    got = manager.run_policy({"n/obs": fresh})["n/y"]
    torch.testing.assert_close(torch.as_tensor(got), _scaled(torch.from_numpy(fresh), 0.5))
