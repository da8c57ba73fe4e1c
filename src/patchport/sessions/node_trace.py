"""One annotated node and its life: the first pass records its graph, later passes
are kept as samples.

:class:`NodeTrace` owns every change to a node's fields, in the order the annotate
functions make them: ``begin_pass`` (the recorder this pass traces into), ``declare``
(inputs and states), ``add_buffers``, ``set_states``, then at ``output_tensors``
``finish_first_pass`` or ``finish_later_pass``, each of which collects module buffers,
prunes or checks the states and keeps the pass as a sample. What links nodes to each
other (which output feeds an input) belongs to the session, so ``annotate`` does it.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from .._stack import user_stacklevel
from ..errors import PatchDefinitionError, PatchportWarning, PatchStateError, TraceLossWarning
from ..tracing import Recorder, report_loss, trace_input
from ..tracing.dependence import depends_on_inputs, inputs_reached
from ..tracing.dtypes import to_numpy_side
from ..tracing.graph_io import seal
from ..tracing.values import BEFORE_SESSION, make_traced, plain
from .buffers import BufferTracker, bake_input
from .payload import Payload
from .verify import plain_copy


@dataclass
class Port:
    """One named input or output of a node: the eager value's shape and dtype, and labels."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    semantics: dict[str, Any] = field(default_factory=dict)  # TensorSemantics.to_dict()
    dynamic: dict[int, str] = field(default_factory=dict)  # axis -> dimension name
    ranges: dict[str, list[int | None]] = field(default_factory=dict)  # name -> [min, max]

    def as_dict(self, name: str | None = None) -> dict[str, Any]:
        """The port as the bundle YAML describes it (LEAPP's keys; ``dynamic_axes``, which
        LEAPP's loader ignores, only where an axis may change size)."""
        described = {
            "name": name or self.name,
            "dtype": self.dtype,
            "shape": list(self.shape),
            "type": "tensor",
            **self.semantics,
        }
        if self.dynamic:
            described["dynamic_axes"] = dict(self.dynamic)
        if self.ranges:  # only where the exported model accepts fewer sizes than [1, inf)
            described["dynamic_ranges"] = {n: list(r) for n, r in self.ranges.items()}
        return described


# NumPy dtype -> its name (``str(dtype)`` runs Python code in NumPy; few dtypes exist)
_DTYPE_NAMES: dict[np.dtype, str] = {}


def port_of(name: str, value: Any, semantics: dict[str, Any] | None = None) -> Port:
    """The port describing ``value`` (traced or plain, array or tensor)."""
    data = plain(value)
    if isinstance(data, torch.Tensor):
        dtype = str(data.dtype).replace("torch.", "")
        return Port(name, tuple(data.shape), dtype, dict(semantics or {}))
    array = np.asarray(data)
    dtype_name = _DTYPE_NAMES.get(array.dtype)
    if dtype_name is None:
        if len(_DTYPE_NAMES) > 256:  # structured dtypes are unbounded; stay small
            _DTYPE_NAMES.clear()
        dtype_name = _DTYPE_NAMES[array.dtype] = str(array.dtype)
    return Port(name, tuple(array.shape), dtype_name, dict(semantics or {}))


def shape_of(value: Any) -> tuple[int, ...]:
    """The shape :func:`port_of` gives ``value``, without building the port."""
    data = plain(value)
    return tuple(data.shape) if isinstance(data, torch.Tensor) else np.shape(data)


@dataclass
class Sample:
    """Concrete inputs and the eager outputs of one pass through a node."""

    inputs: dict[str, Any]
    outputs: dict[str, Any]


@dataclass
class PassOutputs:
    """The checked arguments of one ``output_tensors`` call."""

    traced: dict[str, Any]  # port -> value computed in the pass
    statics: dict[str, Any]  # port -> constant tensor the model also returns
    labels: dict[str, dict[str, Any]]  # port -> YAML labels
    export_with: str | None
    backend_params: dict[str, Any]


@dataclass
class NodeTrace:
    """One annotated node: its recorder, ports, samples, and the finished graph."""

    name: str
    recorder: Recorder
    inputs: list[Port] = field(default_factory=list)
    outputs: list[Port] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)  # input name -> "node/output"
    samples: list[Sample] = field(default_factory=list)
    pending_inputs: dict[str, Any] = field(default_factory=dict)  # current pass
    pass_recorder: Recorder | None = None  # records (and discards) a later pass
    export_with: str | None = "onnx"
    backend_params: dict[str, Any] = field(default_factory=dict)
    entries: int = 0
    constant_outputs: list[str] = field(default_factory=list)  # computed without inputs
    index: int | None = None  # completion order of the first pass; orders the pipeline
    states: list[str] = field(default_factory=list)  # names that are both input and output
    pending_states: dict[str, Any] = field(default_factory=dict)  # update_state, this pass
    static_outputs: list[str] = field(default_factory=list)  # constant outputs, by name
    trackers: list[BufferTracker] = field(default_factory=list)  # annotate.module's
    skip_export: bool = False  # dry_run / non_traced: described, not written

    @property
    def finished(self) -> bool:
        """Whether the first pass is done (its graph recorded and closed)."""
        return self.recorder.finished

    @property
    def graph_module(self) -> Any:
        """The traced torch.fx GraphModule, None until the node is finished; made on first
        use (export, validation), so the traced pass does not pay for it."""
        return self.recorder.module() if self.recorder.finished else None

    @property
    def m(self) -> Any:
        """The traced graph module (LEAPP's name for it), None until the node is finished."""
        return self.graph_module

    @property
    def graph(self) -> Any:
        """The node's torch.fx graph: as recorded so far, then the finished module's."""
        return self.graph_module.graph if self.finished else self.recorder.graph

    # ------------------------------------------------------------------ a pass's inputs
    def begin_pass(self) -> Recorder:
        """The recorder this pass traces into, opened on the pass's first call: the node's
        own on the first pass, else a throwaway one (so patched calls take the same
        replacements as the recorded pass)."""
        if not self.finished:
            if not self.recorder.active:
                raise PatchStateError(
                    f"annotate.input_tensors({self.name!r}, ...): node {self.name!r} was "
                    f"closed without outputs."
                )
            return self.recorder
        if self.pass_recorder is None or not self.pass_recorder.active:
            self.pass_recorder = Recorder(
                f"{self.name}#pass{self.entries}", strict=self.recorder.strict
            )
            self.pass_recorder.owner = self
        return self.pass_recorder

    def check_inputs(self, caller: str, values: dict[str, Any]) -> None:
        """Refuse, before anything changes, inputs this pass cannot take."""
        declared = {port.name for port in self.inputs}
        for key, value in values.items():
            if key in self.pending_inputs:
                raise PatchDefinitionError(
                    f"{caller}({self.name!r}, ...): input {key!r} was already declared for this "
                    f"node in this pass (Duplicate name); use another name."
                )
            self._refuse_open_node_value(caller, key, value)
            if self.finished and key not in declared:
                raise PatchDefinitionError(
                    f"{caller}({self.name!r}, ...): input {key!r} was not declared in the first "
                    f"pass {sorted(declared)}; a node keeps one signature."
                )

    def _refuse_open_node_value(self, caller: str, key: str, value: Any) -> None:
        """An input may not be a value another node is still tracing: that node's graph
        would not output it, so no edge could carry it (LEAPP refuses the same)."""
        owner = getattr(getattr(value, "_pp", None), "rec", None)
        if owner is None or not owner.active or owner in (self.recorder, self.pass_recorder):
            return
        other = owner.name.partition("#")[0]
        raise PatchDefinitionError(
            f"{caller}({self.name!r}, ...): input {key!r} is a traced value of node "
            f"{other!r}, which is still open (Mixing active contexts is not allowed). Call "
            f"annotate.output_tensors({other!r}, {{...}}) first and pass the value it returns."
        )

    def declare(
        self,
        payload: Payload,
        sources: dict[str, str],
        state: bool = False,
        dynamic: dict[str, dict[int, str]] | None = None,
    ) -> dict[str, Any]:
        """Make each flat port an input of this pass (checked by :meth:`check_inputs`);
        return ``{port: traced value}``. ``sources`` are the ports found to be another
        node's output; ``state`` and ``dynamic`` take effect on the first pass only."""
        recorder = self.begin_pass()
        self.sources.update(sources)
        traced: dict[str, Any] = {}
        for key, value in payload.flat.items():
            if not self.finished:
                self.inputs.append(port_of(key, value, payload.semantics.get(key)))
                if state:
                    self.states.append(key)
            self.pending_inputs[key] = plain_copy(value)
            traced[key] = trace_input(recorder, key, plain(value))
        if dynamic and not self.finished:
            for port in self.inputs:
                port.dynamic = dynamic.get(port.name, port.dynamic)
            self.recorder.track_shapes = True
        return traced

    def add_buffers(self, buffers: dict[str, Any]) -> list[Any]:
        """Constants of the graph (plain tensors or arrays): traced values to compute with."""
        recorder = self.begin_pass()
        out = []
        for name, value in buffers.items():
            origin = f"annotate.register_buffer {self.name}/{name}"
            graph_node = recorder.constant(value, origin=origin)
            if isinstance(value, np.ndarray):  # NumPy semantics on the graph side, as inputs
                graph_node = to_numpy_side(recorder, graph_node, value.dtype)
            out.append(make_traced(recorder, plain_copy(value), graph_node))
        return out

    def track_buffers(self, tracker: BufferTracker) -> None:
        """Sort ``tracker``'s module buffers into states and constants at the pass's end."""
        self.trackers.append(tracker)

    def set_states(self, caller: str, tensors: dict[str, Any]) -> None:
        """Give states their value for the next call; each keeps its shape and dtype."""
        inputs = {port.name: port for port in self.inputs}
        for name, value in tensors.items():
            if name not in self.states:
                raise PatchDefinitionError(
                    f"{caller}({self.name!r}, {{{name!r}: ...}}): {name!r} is not a state of "
                    f"this node; declare it first with annotate.state_tensors({self.name!r}, ...)."
                )
            port, got = inputs[name], port_of(name, value)
            if (got.shape, got.dtype) != (port.shape, port.dtype):
                raise PatchDefinitionError(
                    f"{caller}({self.name!r}, {{{name!r}: ...}}): the new state is "
                    f"{got.dtype}{list(got.shape)} but the state is "
                    f"{port.dtype}{list(port.shape)}; a state keeps its shape and dtype."
                )
        self.pending_states.update(tensors)

    # ------------------------------------------------------------------ a pass's end
    def finish_first_pass(self, given: PassOutputs, index: int, keep: int) -> dict[str, Any]:
        """Close the recorded pass: prune states never updated, report outputs that are
        constant and inputs that reach no output, finish the graph and its ports. Returns
        every output of the pass (given, states, statics) by port name."""
        self._collect_buffers()
        self._drop_states_never_updated()
        flat = self._with_states(given.traced)
        self.constant_outputs = self._report_constant_outputs(flat)
        self._report_unused_inputs(flat)
        flat.update(given.statics)
        outputs = {key: plain_copy(value) for key, value in flat.items()}
        seal(self.recorder, tuple(flat.values()))
        self.outputs = [port_of(key, value, given.labels.get(key)) for key, value in flat.items()]
        self.static_outputs = list(given.statics)
        self.export_with = given.export_with
        self.backend_params = given.backend_params
        self.index = index
        self._end_pass(outputs, keep)
        return flat

    def finish_later_pass(self, given: PassOutputs, keep: int) -> dict[str, Any]:
        """Close a later pass: it must have the first pass's inputs, states and outputs;
        its data is kept as a sample. Returns every output of the pass by port name."""
        self._collect_buffers()
        missing = [p.name for p in self.inputs if p.name not in self.pending_inputs]
        if missing:
            raise PatchDefinitionError(
                f"annotate.output_tensors({self.name!r}, ...): this pass did not declare inputs "
                f"{missing}; declare every input of the first pass with "
                f"annotate.input_tensors({self.name!r}, ...)."
            )
        flat = self._with_states(given.traced)
        flat.update(given.statics)
        outputs = {key: plain_copy(value) for key, value in flat.items()}
        if self.pass_recorder is not None:
            self.pass_recorder.close()
            self.pass_recorder = None
        if [p.name for p in self.outputs] != list(flat):
            raise PatchDefinitionError(
                f"annotate.output_tensors({self.name!r}, ...): outputs {list(flat)} differ from "
                f"the first pass {[p.name for p in self.outputs]}; a node keeps one signature."
            )
        self._end_pass(outputs, keep)
        return flat

    def _end_pass(self, outputs: dict[str, Any], keep: int) -> None:
        """Keep the pass as a sample (at most ``keep`` of them) and start afresh."""
        if len(self.samples) < keep:
            self.samples.append(Sample(inputs=self.pending_inputs, outputs=outputs))
        self.pending_inputs = {}
        self.pending_states = {}
        self.entries += 1

    def _collect_buffers(self) -> None:
        """Turn reassigned module buffers into state updates; bake the others (first pass)."""
        for tracker in self.trackers:
            changed, unchanged = tracker.collect()
            if changed:
                self.set_states("annotate.module", changed)
            for name, original in unchanged.items():
                if self.finished:
                    continue
                bake_input(self.recorder, name, original)
                self.inputs = [p for p in self.inputs if p.name != name]
                self.states.remove(name)
                self.pending_inputs.pop(name, None)
            tracker.restore()
        self.trackers.clear()

    def _drop_states_never_updated(self) -> None:
        """A state never given to update_state stays a plain input (first pass, warned)."""
        for name in [s for s in self.states if s not in self.pending_states]:
            warnings.warn(
                f"annotate.output_tensors({self.name!r}, ...): state {name!r} was never given "
                f"to annotate.update_state; it stays a plain input with no feedback.",
                PatchportWarning,
                stacklevel=user_stacklevel(),
            )
            self.states.remove(name)

    def _with_states(self, traced: dict[str, Any]) -> dict[str, Any]:
        """The pass's outputs followed by each state's new value."""
        stale = [name for name in self.states if name not in self.pending_states]
        if stale:
            raise PatchDefinitionError(
                f"annotate.output_tensors({self.name!r}, ...): state {stale} got no new value "
                f"in this pass; give it one with annotate.update_state({self.name!r}, {{...}}) "
                f"(or reassign the module buffer) as in the first pass."
            )
        clash = [name for name in self.states if name in traced]
        if clash:
            raise PatchDefinitionError(
                f"annotate.output_tensors({self.name!r}, ...): {clash} are state outputs "
                f"already; give the other outputs different names."
            )
        return {**traced, **{name: self.pending_states[name] for name in self.states}}

    def _report_unused_inputs(self, tensors: dict[str, Any]) -> None:
        """Warn for each declared input that no output is computed from (LEAPP checks this
        too): the exported model would ignore it, usually because the trace was lost."""
        reached = inputs_reached(self.recorder, tensors.values())
        for name in self.recorder.input_names:
            if name not in reached:
                warnings.warn(
                    f"annotate.output_tensors({self.name!r}, ...): input '{self.name}/{name}' "
                    f"reaches no output, so the exported model ignores it; if an output should "
                    f"depend on it, an earlier TraceLossWarning names the line that lost it.",
                    TraceLossWarning,
                    stacklevel=user_stacklevel(),
                )

    def _report_constant_outputs(self, tensors: dict[str, Any]) -> list[str]:
        """Warn (raise when strict) for each output computed without the node's inputs."""
        constant = [
            key for key, value in tensors.items() if not depends_on_inputs(self.recorder, value)
        ]
        for key in constant:
            made = self._where_made(tensors[key])
            report_loss(
                self.recorder,
                f"output {key!r} of node {self.name!r} does not depend on the node's inputs"
                + (f" ({made})" if made else ""),
                "it would be exported as a constant: the model returns this value for every "
                "input (compute it from the traced values annotate.input_tensors returned)",
            )
        return constant

    def _where_made(self, value: Any) -> str | None:
        """Where a constant output came from, when known: the line that lost its trace, or
        the line that created the buffer no traced data was written into."""
        origin = self.recorder.origin_of(value)
        if origin is not None:
            return f"it is the {origin}"
        if isinstance(value, np.generic):
            return (
                "a plain NumPy scalar: a scalar-type call on traced data such as "
                "np.float32(x) or np.int64(n) gives one without any hook to warn at; "
                "use x.astype(np.float32)"
            )
        fresh = getattr(getattr(value, "_pp", None), "fresh", None)
        if fresh is None:
            return None
        if fresh.endswith(BEFORE_SESSION):
            made = fresh[: -len(BEFORE_SESSION)]
            return f"{made}, an array made before the session that no traced data was written into"
        return (
            f"an array created at {fresh} that no traced data was written into (a value "
            f"written as a NumPy scalar made from traced data, np.float32(x) of a 0-d array "
            f"of that dtype, carries no trace: NumPy gives that call no hook; use x.astype)"
        )

    # ------------------------------------------------------------------ the session's end
    def close(self) -> bool:
        """Close the node's open recorders (at ``stop``); True when it was never finished."""
        if self.pass_recorder is not None and self.pass_recorder.active:
            self.pass_recorder.close()
            self.pending_inputs = {}
        if not self.recorder.active:
            return False
        self.recorder.close()
        return True

    def restore_buffers(self) -> None:
        """Put back every module buffer an unfinished ``annotate.module`` replaced."""
        for tracker in self.trackers:
            tracker.restore()
        self.trackers.clear()
