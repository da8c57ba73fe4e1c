"""InferenceManager: load a bundle (ours or LEAPP's) from its YAML and run it, as LEAPP's.

Inputs and outputs are torch tensors keyed ``"node/port"``. Each node input has a
buffer: ``run_policy`` writes the given inputs there, runs the nodes in dependency
order, and routes every output along ``data_flow`` and ``feedback_flow`` (so recurrent
state reaches its input on the next call); it returns the pipeline's outputs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..errors import PatchportError
from .backends import load_runner
from .input_shapes import check_input_shape
from .pipeline import merge_flows, run_order
from .spec import SYSTEM_KEY, read_spec, sha256_of


class ModelIntegrityError(PatchportError, ValueError):
    """A model file does not match the SHA-256 recorded in the pipeline description."""


def _dtype(name: str) -> torch.dtype:
    dtype = getattr(torch, str(name).replace("torch.", ""), None)
    if not isinstance(dtype, torch.dtype):
        raise ValueError(f"unknown dtype {name!r} in the pipeline description")
    return dtype


def _as_torch(key: str, value: Any) -> torch.Tensor:
    """A CPU tensor for an input (models run on CPU; a CUDA tensor is copied over)."""
    if isinstance(value, torch.Tensor):
        return value.cpu()
    if isinstance(value, (np.ndarray, np.generic)):
        return torch.from_numpy(np.ascontiguousarray(value))
    raise TypeError(
        f"InferenceManager: input {key!r} must be a torch tensor or a NumPy array, got "
        f"{type(value).__name__}."
    )


class InferenceManager:
    """Runs the nodes of an exported pipeline; LEAPP's runtime contract.

    ``inputs`` / ``outputs`` / ``feedback_inputs`` list ``"node/port"`` keys;
    ``run_policy(inputs)`` (or calling the manager) returns the pipeline outputs;
    ``set_input_value`` writes one input buffer; ``reset`` restores initial state.
    """

    def __init__(self, yaml_path: str | Path) -> None:
        self.path = Path(yaml_path)
        if not self.path.is_file():
            raise FileNotFoundError(f"InferenceManager: no pipeline description at {self.path}")
        self.spec = read_spec(self.path)
        self.models: dict[str, dict[str, Any]] = self.spec["models"]
        self.pipeline: dict[str, Any] = self.spec["pipeline"]
        self.system_info: dict[str, Any] = self.spec.get(SYSTEM_KEY) or {}
        self.data_flow: dict[str, list[str]] = dict(self.pipeline.get("data_flow") or {})
        self.feedback_flow: dict[str, list[str]] = dict(self.pipeline.get("feedback_flow") or {})
        self.order = run_order(self.models, self.data_flow)
        self._routes = merge_flows(self.data_flow, self.feedback_flow)
        self._check_routes()
        self._runners = {node: self._open(node, model) for node, model in self.models.items()}
        self._buffers: dict[str, dict[str, torch.Tensor]] = {}
        self.reset()

    # ------------------------------------------------------------------ loading
    def _open(self, node: str, model: dict[str, Any]) -> Any:
        """Resolve, check and load one node's model file (the one place files are opened)."""
        parameters = model["parameters"]
        if not parameters.get("model_path") or not parameters.get("backend"):
            raise ValueError(
                f"InferenceManager: node {node!r} has no model in {self.path.name} (exported "
                f"with export_with=None or a dry run); give it a model_path and backend."
            )
        model_path = (self.path.parent / parameters["model_path"]).resolve()
        if not model_path.exists():
            raise FileNotFoundError(
                f"InferenceManager: model of node {node!r} is missing: {model_path}"
            )
        recorded = parameters.get("sha256sum") or parameters.get("sha256")
        digest = sha256_of(model_path)
        if digest != recorded:
            raise ModelIntegrityError(
                f"InferenceManager: {model_path.name} (node {node!r}) has sha256 "
                f"{digest[:12]}… but {self.path.name} records {str(recorded)[:12]}…; "
                f"it changed after export. Re-run compile_graph() or restore the file."
            )
        names = [port["name"] for port in model["inputs"]]
        return load_runner(parameters["backend"], model_path, names)

    def _check_routes(self) -> None:
        """Every edge joins existing ports of equal shape and dtype."""
        ports = {
            side: {
                f"{node}/{p['name']}": p for node, m in self.models.items() for p in m[side] or []
            }
            for side in ("inputs", "outputs")
        }
        for source, targets in self._routes.items():
            if source not in ports["outputs"]:
                raise ValueError(f"InferenceManager: edge source {source!r} is not a node output.")
            for target in targets:
                if target not in ports["inputs"]:
                    raise ValueError(
                        f"InferenceManager: edge target {target!r} is not a node input."
                    )
                a, b = ports["outputs"][source], ports["inputs"][target]
                if list(a["shape"]) != list(b["shape"]) or a["dtype"] != b["dtype"]:
                    raise ValueError(
                        f"InferenceManager: {source} ({a['dtype']}{list(a['shape'])}) cannot "
                        f"feed {target} ({b['dtype']}{list(b['shape'])})."
                    )

    # ------------------------------------------------------------------ keys
    @property
    def inputs(self) -> list[str]:
        """The pipeline's own inputs, ``"node/port"``."""
        found = self.pipeline.get("inputs") or {}
        return [f"{node}/{port}" for node, ports in found.items() for port in ports]

    @property
    def outputs(self) -> list[str]:
        """The pipeline's outputs (what ``run_policy`` returns), ``"node/port"``."""
        found = self.pipeline.get("outputs") or {}
        return [f"{node}/{port}" for node, ports in found.items() for port in ports]

    @property
    def feedback_inputs(self) -> list[str]:
        """Inputs fed back from the previous call (recurrent state)."""
        return [target for targets in self.feedback_flow.values() for target in targets]

    @property
    def value_dict(self) -> dict[str, dict[str, torch.Tensor]]:
        """Each node's input buffers, ``{node: {input: tensor}}`` (LEAPP's attribute name)."""
        return self._buffers

    # ------------------------------------------------------------------ state
    def _port(self, key: str) -> dict[str, Any]:
        node, _, port = key.partition("/")
        for description in (self.models.get(node) or {}).get("inputs") or []:
            if description["name"] == port:
                return description
        raise KeyError(
            f"InferenceManager: {key!r} is not a node input; pipeline inputs: {self.inputs}."
        )

    def reset(self) -> None:
        """Zero every input buffer, then load the feedback initial values again."""
        self._buffers = {
            node: {
                p["name"]: torch.zeros(tuple(p["shape"]), dtype=_dtype(p["dtype"]))
                for p in model["inputs"] or []
            }
            for node, model in self.models.items()
        }
        self._slots = {
            f"{node}/{name}": (buffers, name)
            for node, buffers in self._buffers.items()
            for name in buffers
        }
        self._described = {
            f"{node}/{p['name']}": p for node, model in self.models.items() for p in model["inputs"]
        }
        self._missing = set(self.inputs)  # pipeline inputs not given since the last reset
        filename = self.pipeline.get("initial_values")
        if filename:
            self._load_initial_values(filename)
        self._steps = self._plan()

    def _load_initial_values(self, filename: str) -> None:
        """Feedback inputs start from the values saved beside the YAML (safetensors)."""
        from safetensors.torch import load_file

        for key, value in load_file(str(self.path.parent / filename)).items():
            self._port(key)
            node, _, port = key.partition("/")
            self._buffers[node][port] = value

    def set_input_value(self, node_name: str, input_name: str, value: Any) -> None:
        """Write one input buffer (copied into it; shape and dtype are kept)."""
        key = f"{node_name}/{input_name}"
        if key not in self._slots:
            self._port(key)  # raises, naming the inputs
        buffers, name = self._slots[key]
        value = _as_torch(key, value)
        check_input_shape(key, self._described[key], tuple(value.shape))
        with torch.no_grad():  # a new tensor: the old one may be an output the caller holds
            if value.shape == buffers[name].shape:
                buffers[name] = torch.empty_like(buffers[name]).copy_(value)
            else:  # a dynamic axis at another size
                buffers[name] = value.to(buffers[name].dtype, copy=True)
        self._missing.discard(key)

    def get_mock_input(self) -> dict[str, torch.Tensor]:
        """Random tensors for the pipeline inputs (normal floats, integers in [0, 256))."""
        mock = {}
        for key in self.inputs:
            description = self._port(key)
            dtype, shape = _dtype(description["dtype"]), tuple(description["shape"])
            if dtype.is_floating_point:
                mock[key] = torch.randn(shape, dtype=dtype)
            elif dtype == torch.bool:
                mock[key] = torch.randint(0, 2, shape).to(torch.bool)
            else:
                mock[key] = torch.randint(0, 256, shape).to(dtype)
        return mock

    # ------------------------------------------------------------------ running
    def _plan(self) -> list[tuple[Any, dict[str, torch.Tensor], list[str], list[Any]]]:
        """Per node in run order: runner, input buffers, input names, and for each output
        where its value goes (buffers to write, and whether the caller gets it)."""
        wanted = set(self.outputs)
        plan = []
        for node in self.order:
            model = self.models[node]
            routes = []
            for port in model["outputs"]:
                key = f"{node}/{port['name']}"
                targets = [
                    (self._buffers[t.partition("/")[0]], t.partition("/")[2])
                    for t in self._routes.get(key, ())
                ]
                routes.append((key, targets, key in wanted))
            names = [p["name"] for p in model["inputs"]]
            plan.append((self._runners[node], self._buffers[node], names, routes))
        return plan

    def _accept_inputs(self, inputs: dict[str, Any]) -> None:
        """Store the given inputs in their buffers; refuse unknown keys before any change."""
        if not isinstance(inputs, dict):
            raise TypeError(
                f"run_policy(inputs): expected a dict {{'node/port': tensor}}, got "
                f"{type(inputs).__name__}."
            )
        accepted = []
        named: dict[str, tuple[int, str]] = {}
        for key, value in inputs.items():
            if key not in self._slots:
                self._port(key)  # raises with the list of inputs
            if type(value) is not torch.Tensor or value.device.type != "cpu":
                value = _as_torch(key, value)
            check_input_shape(key, self._described[key], tuple(value.shape), named)
            accepted.append((key, value))
        if self._missing:
            missing = [k for k in self.inputs if k in self._missing and k not in inputs]
            if missing:
                raise KeyError(
                    f"run_policy: inputs {missing} were never given (in this call, an earlier "
                    f"one or set_input_value); expected keys {self.inputs}."
                )
        for key, value in accepted:
            buffers, name = self._slots[key]
            buffers[name] = value
            self._missing.discard(key)

    def run_policy(self, inputs: dict[str, Any]) -> dict[str, torch.Tensor]:
        """Run every node once; return the pipeline outputs keyed ``"node/port"``."""
        self._accept_inputs(inputs)
        result: dict[str, torch.Tensor] = {}
        for runner, buffers, names, routes in self._steps:
            produced = runner([buffers[name] for name in names])
            for (key, targets, returned), value in zip(routes, produced):
                for index, (consumer, name) in enumerate(targets):
                    consumer[name] = value if index == 0 else value.clone()
                if returned:
                    result[key] = value
        return result

    def __call__(self, inputs: dict[str, Any]) -> dict[str, torch.Tensor]:
        return self.run_policy(inputs)
