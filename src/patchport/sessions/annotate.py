"""annotate.input_tensors / annotate.output_tensors: where a traced node starts and ends.

The first pass through a node records its graph. Later passes (a control loop calling
the same code again) are kept as samples: their concrete inputs and eager outputs let
validation replay the exported model on data it was not traced with.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ..errors import PatchDefinitionError, PatchStateError
from ..tracing import Recorder, finish, trace_input
from ..tracing.values import plain
from .lifecycle import require_session
from .names import check_file_name
from .state import BACKENDS, NodeTrace, Port, Sample
from .verify import plain_copy


def _port(name: str, value: Any) -> Port:
    data = plain(value)
    if isinstance(data, torch.Tensor):
        return Port(name, tuple(data.shape), str(data.dtype).replace("torch.", ""), "torch")
    array = np.asarray(data)
    return Port(name, tuple(array.shape), str(array.dtype), "numpy")


def _check_mapping(caller: str, node: str, tensors: Any) -> dict[str, Any]:
    check_file_name(caller, "node", node)  # it names the node's model file
    if not isinstance(tensors, dict) or not tensors:
        raise PatchDefinitionError(
            f"{caller}({node!r}, ...): expected a non-empty dict {{name: array or tensor}}, got "
            f"{type(tensors).__name__}."
        )
    for key, value in tensors.items():
        if not isinstance(key, str) or not key.isidentifier():
            raise PatchDefinitionError(
                f"{caller}({node!r}, ...): port name {key!r} must be a Python identifier."
            )
        if not isinstance(value, (np.ndarray, torch.Tensor, np.generic)):
            raise PatchDefinitionError(
                f"{caller}({node!r}, {{{key!r}: ...}}): expected a NumPy array or a torch tensor, "
                f"got {type(value).__name__}."
            )
    return tensors


def _single_or_tuple(values: list[Any]) -> Any:
    return values[0] if len(values) == 1 else tuple(values)


def input_tensors(node: str, tensors: dict[str, Any]) -> Any:
    """Declare ``node``'s inputs; return traced values (one value, or a tuple in dict order).

    The given arrays and tensors are not modified; the traced values are new objects.
    """
    tensors = _check_mapping("annotate.input_tensors", node, tensors)
    session = require_session("annotate.input_tensors")
    trace = session.nodes.get(node)
    if trace is None:
        trace = NodeTrace(node, Recorder(node, strict=session.strict))
        session.nodes[node] = trace
    recorder = trace.recorder
    if trace.finished:
        # a later pass: traced again so patched calls take the same replacements as the
        # recorded pass; its graph is dropped, its data becomes a validation sample
        if trace.pass_recorder is None or not trace.pass_recorder.active:
            trace.pass_recorder = Recorder(f"{node}#pass{trace.entries}", strict=session.strict)
        recorder = trace.pass_recorder
    elif not recorder.active:
        raise PatchStateError(
            f"annotate.input_tensors({node!r}, ...): node {node!r} was closed without outputs."
        )
    declared = {port.name for port in trace.inputs}
    for key in tensors:  # every refusal before anything changes
        if key in trace.pending_inputs:
            raise PatchDefinitionError(
                f"annotate.input_tensors({node!r}, ...): input {key!r} was already declared for "
                f"this node; use another name."
            )
        if trace.finished and key not in declared:
            raise PatchDefinitionError(
                f"annotate.input_tensors({node!r}, ...): input {key!r} was not declared in the "
                f"first pass {sorted(declared)}; a node keeps one signature."
            )
    traced = []
    for key, value in tensors.items():
        if not trace.finished:
            source = session.output_owner.get(id(value))
            if source is not None and source[0] is value:
                trace.sources[key] = source[1]
            trace.inputs.append(_port(key, value))
        trace.pending_inputs[key] = plain_copy(value)
        traced.append(trace_input(recorder, key, plain(value)))
    return _single_or_tuple(traced)


def output_tensors(node: str, tensors: dict[str, Any], export_with: str = "onnx") -> Any:
    """Finish ``node`` with these outputs; return their plain values (one, or a tuple)."""
    tensors = _check_mapping("annotate.output_tensors", node, tensors)
    if export_with not in BACKENDS:
        raise PatchDefinitionError(
            f"annotate.output_tensors({node!r}, export_with={export_with!r}): use one of "
            f"{', '.join(repr(b) for b in BACKENDS)}."
        )
    session = require_session("annotate.output_tensors")
    trace = session.nodes.get(node)
    if trace is None or not trace.pending_inputs:
        raise PatchStateError(
            f"annotate.output_tensors({node!r}, ...): node {node!r} has no inputs in this pass; "
            f"call annotate.input_tensors({node!r}, {{...}}) first."
        )
    missing = [p.name for p in trace.inputs if p.name not in trace.pending_inputs]
    if trace.finished and missing:
        raise PatchDefinitionError(
            f"annotate.output_tensors({node!r}, ...): this pass did not declare inputs {missing}; "
            f"declare every input of the first pass with annotate.input_tensors({node!r}, ...)."
        )
    outputs = {key: plain_copy(value) for key, value in tensors.items()}
    if not trace.finished:
        trace.graph_module = finish(trace.recorder, list(tensors.values()))
        trace.outputs = [_port(key, value) for key, value in tensors.items()]
        trace.export_with = export_with
    else:
        if trace.pass_recorder is not None:
            trace.pass_recorder.close()
            trace.pass_recorder = None
        if [p.name for p in trace.outputs] != list(tensors):
            raise PatchDefinitionError(
                f"annotate.output_tensors({node!r}, ...): outputs {list(tensors)} differ from "
                f"the first pass {[p.name for p in trace.outputs]}; a node keeps one signature."
            )
    trace.samples.append(Sample(inputs=trace.pending_inputs, outputs=outputs))
    trace.pending_inputs = {}
    trace.entries += 1
    returned = [plain(value) for value in tensors.values()]
    for key, value, given in zip(tensors, returned, tensors.values()):
        session.output_owner[id(value)] = (value, f"{node}/{key}")
        session.output_owner[id(given)] = (given, f"{node}/{key}")
    return _single_or_tuple(returned)
