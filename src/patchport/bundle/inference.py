"""InferenceManager: load a bundle (ours or LEAPP's) from its YAML and run it, as LEAPP's.

Inputs and outputs are keyed ``"node/port"``: torch tensors, LEAPP's contract, when torch is
imported (by the caller, or by a ``.pt``/``.pt2`` model of the bundle); NumPy arrays when it is
not, so an ONNX bundle runs where torch is not installed (``arrays=`` picks one). Each node
input has a buffer: ``run_policy`` writes the given inputs there, runs the nodes in dependency
order, and routes every output along ``data_flow`` and ``feedback_flow`` (so recurrent
state reaches its input on the next call); it returns the pipeline's outputs.

What does not change between calls is worked out once (at load and on ``reset``): the run
plan, and each static input's expected type, dtype and shape, so a call whose inputs all
match passes its checks with a few comparisons (any other call takes the full check, which
names the port, what it expects and what it got). A contiguous NumPy array given again (the
same object) to a torch manager reuses the tensor that views its memory, so writes into the
array in between are seen, as with a new view. Every returned array is new to that call: no
later call writes into it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import BundleFormatError, PatchportError, UnknownPolicyInputError
from .arrays import arrays_for, numpy_dtype, numpy_tensor
from .bundle_safety import read_verified
from .initial_values import checked_initial_values, read_initial_values
from .input_checks import check_policy_inputs
from .input_shapes import check_input_shape
from .loaders import load_runner
from .pipeline import merge_flows, run_order
from .spec import LEAPP_KEYS, SYSTEM_KEY, read_spec
from .spec_checks import read_checked_spec


@dataclass
class NodeInfo:
    """One loaded node: its port names, the runner, and where it runs."""

    name: str
    input_names: list[str]
    output_names: list[str]
    model: Any
    device: str = "cpu"
    input_descriptions: list[dict[str, Any]] = field(default_factory=list)  # the YAML's ports
    output_descriptions: list[dict[str, Any]] = field(default_factory=list)
    model_path: str | None = None

    @property
    def input_shapes(self) -> list[list[int]]:
        return [list(p["shape"]) for p in self.input_descriptions]

    @property
    def input_dtypes(self) -> list[str]:
        return [p["dtype"] for p in self.input_descriptions]

    @property
    def output_shapes(self) -> list[list[int]]:
        return [list(p["shape"]) for p in self.output_descriptions]

    @property
    def output_dtypes(self) -> list[str]:
        return [p["dtype"] for p in self.output_descriptions]


class InferenceManager:
    """Runs the nodes of an exported pipeline; LEAPP's runtime contract.

    ``inputs`` / ``outputs`` / ``feedback_inputs`` list ``"node/port"`` keys;
    ``run_policy(inputs)`` (or calling the manager) returns the pipeline outputs;
    ``set_input_value`` writes one input buffer; ``reset`` restores initial state.

    ``arrays``: ``"torch"`` (tensors in and out), ``"numpy"`` (arrays in and out), or None:
    torch if it is imported once the models are loaded, NumPy otherwise. Inputs of either
    type are accepted and converted.
    """

    def __init__(self, yaml_path: str | Path, arrays: str | None = None) -> None:
        self.path = Path(yaml_path)
        if not self.path.is_file():
            raise FileNotFoundError(
                f"InferenceManager: no pipeline description at {self.path} (Leapp description "
                f"file not found); pass the .yaml compile_graph wrote."
            )
        if self.path.suffix != ".yaml":
            raise ValueError(
                f"InferenceManager({str(yaml_path)!r}): a pipeline description is a .yaml file "
                f"(the one compile_graph writes); the Leapp description file must end with .yaml."
            )
        self.spec = read_checked_spec(self.path, read_spec)
        self._check_description()
        self.models: dict[str, dict[str, Any]] = self.spec["models"]
        self.pipeline: dict[str, Any] = self.spec["pipeline"]
        self.system_info: dict[str, Any] = self.spec.get(SYSTEM_KEY) or {}
        self.data_flow: dict[str, list[str]] = dict(self.pipeline.get("data_flow") or {})
        self.feedback_flow: dict[str, list[str]] = dict(self.pipeline.get("feedback_flow") or {})
        self.order = run_order(self.models, self.data_flow)
        self._routes = merge_flows(self.data_flow, self.feedback_flow)
        self._slots_out = set(self.outputs)
        self._check_routes()
        initial_file = self.pipeline.get("initial_values")
        initial_data = read_initial_values(self.path, initial_file) if initial_file else None
        if arrays not in (None, "torch", "numpy"):
            raise ValueError(f"InferenceManager(arrays={arrays!r}): use 'torch', 'numpy' or None.")
        # all ports static: run_policy refuses any other shape or dtype, so a runtime that
        # checks its inputs again on every call (torch.export's module) may skip that
        self._all_static = not any(
            port.get("dynamic_axes")
            for model in self.models.values()
            for side in ("inputs", "outputs")
            for port in model[side] or []
        )
        self._loaded = {node: self._open(node, model) for node, model in self.models.items()}
        self._arrays = arrays_for(arrays)  # after loading: a .pt/.pt2 model imports torch
        self._tensor = self._arrays.native if self._arrays.name == "torch" else None
        self._runners = {node: self._converted(run) for node, run in self._loaded.items()}
        self._initial = (
            checked_initial_values(initial_data, initial_file, self.models, self._arrays)
            if initial_data is not None
            else {}
        )
        self.nodes = {
            node: NodeInfo(
                node,
                [p["name"] for p in model["inputs"]],
                [p["name"] for p in model["outputs"]],
                self._runners[node],
                input_descriptions=model["inputs"] or [],
                output_descriptions=model["outputs"] or [],
                model_path=model["parameters"]["model_path"],
            )
            for node, model in self.models.items()
        }
        self._buffers: dict[str, dict[str, Any]] = {}
        self.reset()

    # ------------------------------------------------------------------ loading
    def _check_description(self) -> None:
        """The keys every bundle has (LEAPP's reader needs them too), before any file opens."""
        if SYSTEM_KEY not in self.spec:
            raise ValueError(
                f"InferenceManager: {self.path.name} lacks {SYSTEM_KEY!r}; {LEAPP_KEYS} "
                f"(write it with compile_graph)."
            )
        for node, model in self.spec["models"].items():
            missing = [
                key
                for key in ("model_path", "md5sum", "sha256sum", "backend")
                if key not in (model.get("parameters") or {})
            ]
            if missing:
                raise ValueError(
                    f"InferenceManager: model {node!r} in {self.path.name} lacks parameters "
                    f"{missing} (Model description must contain model_path, md5sum, sha256sum, "
                    f"and backend)."
                )

    def _open(self, node: str, model: dict[str, Any]) -> Any:
        """Resolve, check and load one node's model file (the one place files are opened)."""
        parameters = model["parameters"]
        if not parameters.get("model_path") or not parameters.get("backend"):
            raise ValueError(
                f"InferenceManager: node {node!r} has no model in {self.path.name} (exported "
                f"with export_with=None or a dry run); give it a model_path and backend."
            )
        recorded = parameters.get("sha256sum") or parameters.get("sha256")
        model_path, data = read_verified(self.path, node, parameters["model_path"], recorded)
        names = [port["name"] for port in model["inputs"]]
        try:
            return load_runner(
                parameters["backend"], model_path, names, data=data, inputs_checked=self._all_static
            )
        except (PatchportError, ImportError):  # our own refusals; a runtime not installed
            raise
        except Exception as exc:  # the bytes match the YAML but are no model of that kind
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            raise BundleFormatError(
                f"InferenceManager: node {node!r}: {model_path.name} is not a loadable "
                f"{parameters['backend']} model ({type(exc).__name__}: {first[:200]}); "
                f"re-export the bundle with compile_graph()."
            ) from exc

    def _converted(self, run: Any) -> Any:
        """The runner, its outputs in the manager's array type."""
        native, output = self._arrays.native, self._arrays.output

        def run_converted(inputs: list[Any]) -> list[Any]:
            return [v if type(v) is native else output(v) for v in run(inputs)]

        return run_converted

    @property
    def arrays(self) -> str:
        """``"torch"`` or ``"numpy"``: what ``run_policy`` returns and the buffers hold."""
        return self._arrays.name

    def _check_routes(self) -> None:
        """Every edge joins existing ports of equal shape and dtype, and every output goes
        somewhere (an edge or the pipeline outputs)."""
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
        routed = set(self._routes) | set(self.outputs)
        unrouted = sorted(key for key in ports["outputs"] if key not in routed)
        if unrouted:
            raise ValueError(
                f"InferenceManager: outputs {unrouted} go nowhere (unroutable outputs of "
                f"{', '.join(sorted({key.partition('/')[0] for key in unrouted}))}): "
                f"each output must be in data_flow, feedback_flow or pipeline outputs of "
                f"{self.path.name}."
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
    def organized_pipeline_connections(self) -> dict[str, dict[str, list[tuple[str, str]]]]:
        """LEAPP's routing table, ``{node: {output: [(node, input), ...]}}``; a pipeline output
        also goes to ``("==out==", "node/output")``."""
        table: dict[str, dict[str, list[tuple[str, str]]]] = {}
        for source, targets in self._routes.items():
            node, _, port = source.partition("/")
            table.setdefault(node, {})[port] = [tuple(t.split("/", 1)) for t in targets]
        for key in self.outputs:
            node, _, port = key.partition("/")
            table.setdefault(node, {}).setdefault(port, []).append(("==out==", key))
        return table

    @property
    def model_path(self) -> str:
        """The YAML this manager was loaded from (LEAPP's name)."""
        return str(self.path)

    @property
    def leapp_description(self) -> dict[str, Any]:
        """The whole description as read (LEAPP's name for ``spec``)."""
        return self.spec

    @property
    def value_dict(self) -> dict[str, dict[str, Any]]:
        """Each node's input buffers, ``{node: {input: tensor}}``, and the last outputs under
        ``"==out=="`` (LEAPP's names)."""
        return {**self._buffers, "==out==": self._last}

    # ------------------------------------------------------------------ state
    def _port(self, key: str) -> dict[str, Any]:
        node, _, port = key.partition("/")
        for description in (self.models.get(node) or {}).get("inputs") or []:
            if description["name"] == port:
                return description
        raise UnknownPolicyInputError(
            f"InferenceManager: {key!r} is not a node input; pipeline inputs: {self.inputs} "
            f"(every node input is addressable as 'node/port')."
        )

    def reset(self) -> None:
        """Zero every input buffer, then load the feedback initial values again."""
        zeros = self._arrays.zeros
        self._buffers = {
            node: {p["name"]: zeros(tuple(p["shape"]), p["dtype"]) for p in model["inputs"] or []}
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
        self._last = {  # the last outputs; zeros before the first run
            f"{node}/{p['name']}": zeros(tuple(p["shape"]), p["dtype"])
            for node, model in self.models.items()
            for p in model["outputs"] or []
            if f"{node}/{p['name']}" in self._slots_out
        }
        for key, value in self._initial.items():  # feedback inputs start from them
            node, _, port = key.partition("/")
            self._buffers[node][port] = self._arrays.copy(value)
        self._steps = self._plan()
        self._fast = self._fast_checks()
        self._viewed: dict[str, tuple[Any, Any]] = {}  # key -> (NumPy array, its tensor)

    def set_input_value(self, node_name: str, input_name: str, value: Any) -> None:
        """Write one input buffer (copied into it; shape and dtype are kept)."""
        key = f"{node_name}/{input_name}"
        if key not in self._slots:
            self._port(key)  # raises, naming the inputs
        buffers, name = self._slots[key]
        value = self._arrays.convert(key, value)
        check_input_shape(key, self._described[key], tuple(value.shape))
        buffers[name] = self._arrays.stored(value, buffers[name])  # a copy, in the port's dtype
        self._missing.discard(key)

    def get_mock_input(self) -> dict[str, Any]:
        """Random values for the pipeline inputs (normal floats, integers in [0, 256))."""
        mock = {}
        for key in self.inputs:
            description = self._port(key)
            mock[key] = self._arrays.mock(tuple(description["shape"]), description["dtype"])
        return mock

    # ------------------------------------------------------------------ running
    def _plan(self) -> list[tuple[Any, dict[str, Any], list[str], list[Any]]]:
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
            plan.append((self._loaded[node], self._buffers[node], names, routes))
        return plan

    def _fast_checks(self) -> dict[str, tuple[tuple[dict[str, Any], str], dict[type, Any], Any]]:
        """Per static node input: its buffer slot, the dtype each array type taken as is must
        have (the manager's own type; in a torch manager also NumPy arrays, which become
        tensors without a copy), and its shape. Dynamic ports are left out (full check)."""
        torch_arrays = self._arrays.name == "torch"
        fast = {}
        for key, slot in self._slots.items():
            description = self._described[key]
            if description.get("dynamic_axes"):
                continue
            dtypes: dict[type, Any] = {}
            if torch_arrays:
                dtypes[self._arrays.native] = self._arrays.dtype(description["dtype"])
            try:
                dtypes[np.ndarray] = numpy_dtype(description["dtype"])
            except ValueError:  # bfloat16 and the like: no NumPy array has it
                pass
            fast[key] = (slot, dtypes, tuple(description["shape"]))
        return fast

    def _fast_inputs(self, inputs: Any) -> list[tuple[tuple[dict[str, Any], str], Any]] | None:
        """``[(slot, value), ...]`` when every given input is a CPU array of its static
        port's exact dtype and shape and no pipeline input is missing; None otherwise (the
        full check then accepts or refuses, naming what is wrong)."""
        if self._missing or type(inputs) is not dict:
            return None
        fast, tensor, viewed = self._fast, self._tensor, self._viewed
        ready = []
        for key, value in inputs.items():
            expect = fast.get(key)
            if expect is None:
                return None
            slot, dtypes, shape = expect
            kind = type(value)
            want = dtypes.get(kind)
            if want is None or value.dtype != want or value.shape != shape:
                return None
            if kind is tensor:
                if not value.is_cpu:
                    return None
            elif tensor is not None:  # a NumPy array into a torch buffer
                seen = viewed.get(key)
                if seen is not None and seen[0] is value:
                    value = seen[1]  # the tensor viewing it, made last call (a new one costs)
                elif value.flags.c_contiguous:  # a view of its memory: writes to it show
                    made = numpy_tensor(value)
                    viewed[key] = (value, made)
                    value = made
                else:  # a strided array is copied: never reused
                    value = numpy_tensor(value)
            ready.append((slot, value))
        return ready

    def _accept_inputs(self, inputs: dict[str, Any]) -> None:
        """Check the given inputs against the bundle, then store them in their buffers
        (every refusal before any buffer changes)."""
        ready = self._fast_inputs(inputs)
        if ready is not None:
            for (buffers, name), value in ready:
                buffers[name] = value
            return
        check_policy_inputs(self, inputs, never_given=self._missing)
        native, convert = self._arrays.native, self._arrays.convert
        on_device = self._arrays.name == "torch"  # a tensor may sit on a GPU
        for key, value in inputs.items():
            if type(value) is not native or (on_device and value.device.type != "cpu"):
                value = convert(key, value)
            buffers, name = self._slots[key]
            buffers[name] = value
            self._missing.discard(key)

    def run_policy(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """Run every node once; return the pipeline outputs keyed ``"node/port"``."""
        self._accept_inputs(inputs)
        copy, native, output = self._arrays.copy, self._arrays.native, self._arrays.output
        result: dict[str, Any] = {}
        for runner, buffers, names, routes in self._steps:
            produced = runner([buffers[name] for name in names])
            for (key, targets, returned), value in zip(routes, produced):
                if type(value) is not native:  # another runtime's type: ORT's NumPy arrays
                    value = output(value)
                for index, (consumer, name) in enumerate(targets):
                    consumer[name] = value if index == 0 else copy(value)
                if returned:  # its own tensor when a consumer holds the first one
                    result[key] = copy(value) if targets else value
        self._last = result
        return dict(result)

    def __call__(self, inputs: dict[str, Any]) -> dict[str, Any]:
        return self.run_policy(inputs)
