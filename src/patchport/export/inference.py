"""InferenceManager: load an exported pipeline from its YAML and run it on new inputs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from .backends import load_runner
from .bundle_safety import ModelIntegrityError, read_verified  # noqa: F401 - re-exported
from .input_checks import check_policy_inputs
from .pipeline import run_order
from .spec import read_spec
from .spec_checks import read_checked_spec


class InferenceManager:
    """Runs the nodes of an exported pipeline in dependency order.

    Inputs and outputs are keyed ``"node/port"``; inputs fed by another node are wired
    automatically, so ``run_policy`` needs only the pipeline's own inputs.
    """

    def __init__(self, yaml_path: str | Path) -> None:
        self.path = Path(yaml_path)
        self.spec = read_checked_spec(self.path, read_spec)
        self.models: dict[str, dict[str, Any]] = self.spec["models"]
        pipeline = self.spec["pipeline"]
        self.flow: list[dict[str, Any]] = pipeline.get("data_flow") or []
        self.order = run_order(self.models, self.flow)
        self._feeds = {target: edge["source"] for edge in self.flow for target in edge["targets"]}
        self.inputs: list[str] = [
            f"{node}/{port}"
            for node, ports in (pipeline.get("inputs") or {}).items()
            for port in ports
        ]
        self.outputs: list[str] = [
            f"{node}/{port}"
            for node, ports in (pipeline.get("outputs") or {}).items()
            for port in ports
        ]
        self._runners = {}
        for node, model in self.models.items():
            model_path, data = read_verified(
                self.path, node, model.get("model_path"), model.get("sha256")
            )
            names = [port["name"] for port in model["inputs"]]
            self._runners[node] = load_runner(model["backend"], model_path, names, data=data)

    def get_mock_input(self, seed: int = 0) -> dict[str, np.ndarray]:
        """Random inputs with the recorded shapes and dtypes, keyed ``"node/port"``."""
        rng = np.random.default_rng(seed)
        mock = {}
        for key in self.inputs:
            node, port = key.split("/", 1)
            spec = next(p for p in self.models[node]["inputs"] if p["name"] == port)
            dtype = np.dtype(spec["dtype"])
            shape = tuple(spec["shape"])
            if dtype.kind == "b":
                mock[key] = rng.integers(0, 2, size=shape).astype(dtype)
            elif dtype.kind in "iu":
                high = 256 if dtype.itemsize == 1 else 100
                mock[key] = rng.integers(0, high, size=shape).astype(dtype)
            else:
                mock[key] = rng.standard_normal(size=shape).astype(dtype)
        return mock

    def run_policy(self, inputs: dict[str, Any]) -> dict[str, np.ndarray]:
        """Run every node once; return all node outputs keyed ``"node/port"``."""
        check_policy_inputs(self, inputs)
        values: dict[str, Any] = dict(inputs)
        for node in self.order:
            model = self.models[node]
            args = []
            for port in model["inputs"]:
                key = f"{node}/{port['name']}"
                args.append(values[self._feeds.get(key, key)])
            results = self._runners[node](args)
            for port, result in zip(model["outputs"], results):
                values[f"{node}/{port['name']}"] = result
        return {key: value for key, value in values.items() if key not in inputs}
