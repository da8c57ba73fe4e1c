"""A legged-robot style deployment script: the policy is a TorchScript file.

The observation is built with NumPy, the policy saved by ``torch.jit.save`` is loaded back
and called inside the traced node, actions are scaled after it. For each backend the
bundle is compiled and replayed on fresh observations; one line per backend is printed.
Usage: ``python torchscript_policy.py FOLDER``.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import torch

import patchport
from patchport import annotate
from patchport.errors import PatchportWarning


class Actor(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = torch.nn.Sequential(
            torch.nn.Linear(12, 32), torch.nn.ELU(), torch.nn.Linear(32, 4)
        )

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.net(obs))


def pipeline(policy: torch.jit.ScriptModule, obs: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Observation scaling in NumPy, the TorchScript policy, action scaling back in NumPy."""
    clipped = np.clip(obs * scale, -5.0, 5.0).astype(np.float32)
    actions = policy(torch.from_numpy(clipped)).detach().numpy()
    return actions * 0.25 + 0.1


def main(folder: Path) -> None:
    torch.manual_seed(0)
    torch.jit.save(torch.jit.script(Actor()), str(folder / "policy.pt"))
    policy = torch.jit.load(str(folder / "policy.pt"))
    scale = np.linspace(0.5, 2.0, 12).astype(np.float32)
    rng = np.random.default_rng(0)
    for backend in ("onnx", "pt2", "jit"):
        with warnings.catch_warnings():
            warnings.simplefilter("error", PatchportWarning)  # trace loss, jit-trace fallback
            patchport.start(f"legged_{backend}", save_path=str(folder))
            try:
                obs = annotate.input_tensors("policy", {"obs": np.zeros((1, 12), np.float32)})
                actions = pipeline(policy, obs, scale)
                annotate.output_tensors("policy", {"actions": actions}, export_with=backend)
            finally:
                patchport.stop()
            result = patchport.compile_graph(visualize=False)
        manager = patchport.InferenceManager(result.yaml_path)
        fresh = rng.normal(size=(1, 12)).astype(np.float32) * 3
        got = np.asarray(manager.run_policy({"policy/obs": fresh})["policy/actions"])
        want = pipeline(policy, fresh, scale)
        print(backend, "max difference", float(np.abs(got - want).max()))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
