"""compile_graph: export every traced node, describe the pipeline, replay and compare.

Validation replays each exported model on every sample the session saw (the traced
pass and each later pass through the node) and compares with the eager outputs, then
lists the constants each graph holds and where in user code they came from.
"""

from __future__ import annotations

import functools
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..bundle.pipeline import graph_ports, run_order, split_edges
from ..bundle.spec import SYSTEM_KEY, digests_of, system_info, write_spec
from ..errors import (
    ExportBackendError,
    OnnxKernelError,
    PatchDefinitionError,
    PatchStateError,
    ValidationError,
)
from ..semantics import GraphConfigs
from ..sessions.lifecycle import current_session, last_session
from ..sessions.state import NodeTrace, Session
from . import progress
from .backends import (
    MODEL_TYPE_OF_SUFFIX,
    ExportJob,
    as_numpy,
    backend_named,
    load_runner,
    write_model,
)
from .dynamic_check import (
    dynamic_axes,
    generated_size_problems,
    merge_smallest,
    refuse_changed_samples,
    refuse_dynamic_feedback,
    refuse_narrowings,
    smallest_sizes,
)
from .staging import build_then_swap
from .visualize import draw_pipeline

_SUSPECT_ORIGINS = ("native", "another recorder", "derived from traced data")


@dataclass
class NodeValidation:
    """Replay result of one node: samples checked, worst difference, constants."""

    node: str
    backend: str
    samples: int
    max_abs_diff: float
    ok: bool
    problems: list[str] = field(default_factory=list)
    constants: list[dict[str, Any]] = field(default_factory=list)
    constant_outputs: list[str] = field(default_factory=list)  # do not depend on inputs

    @property
    def suspicious_constants(self) -> list[dict[str, Any]]:
        """Constants that look derived from traced data (they may freeze an input)."""
        return [c for c in self.constants if c["suspect"]]


@dataclass
class CompileResult:
    """What compile_graph wrote and, with validate=True, what replay found."""

    directory: Path
    yaml_path: Path
    models: dict[str, Path]
    picture: Path | None
    validation: list[NodeValidation]
    # patched function -> (largest difference of its replacement from it, traced calls)
    patch_checks: dict[str, tuple[float, int]] = field(default_factory=dict)
    nodes: list[str] = field(default_factory=list)  # every compiled node, in order

    @property
    def ok(self) -> bool:
        return all(v.ok for v in self.validation)

    # LEAPP's compile_graph returns {node: passed}: the result reads as that mapping too
    # (a node that was not exported or not validated has nothing that failed: True)
    def __getitem__(self, node: str) -> bool:
        if node not in self.nodes:
            raise KeyError(f"CompileResult[{node!r}]: no such node; nodes: {self.nodes}")
        return all(v.ok for v in self.validation if v.node == node)

    def __iter__(self) -> Iterator[str]:
        return iter(self.nodes)

    def __len__(self) -> int:
        return len(self.nodes)

    def __contains__(self, node: object) -> bool:
        return node in self.nodes

    def __bool__(self) -> bool:  # a result, even of no node, is not "nothing"
        return True

    def keys(self) -> list[str]:
        return list(self.nodes)

    def values(self) -> list[bool]:
        return [self[node] for node in self.nodes]

    def items(self) -> list[tuple[str, bool]]:
        return [(node, self[node]) for node in self.nodes]

    def summary(self) -> str:
        """A few lines per node, for logs and examples."""
        lines = [f"pipeline written to {self.yaml_path}"]
        for v in self.validation:
            state = "ok" if v.ok else "MISMATCH"
            lines.append(
                f"  {v.node} [{v.backend}]: {state} on {v.samples} sample(s), "
                f"max |diff| {v.max_abs_diff:.3g}"
            )
            if v.samples == 1:
                lines.append(
                    "    note: validated on the traced sample only, where a value baked in as a "
                    "constant replays identically; run the node a second time on different "
                    "inputs (two passes) so validation can catch it"
                )
            lines += [f"    problem: {p}" for p in v.problems]
            lines += [
                f"    output {port} does not depend on the node's inputs (a constant)"
                for port in v.constant_outputs
            ]
            for c in v.constants:
                flag = " (looks derived from traced data!)" if c["suspect"] else ""
                lines.append(
                    f"    constant {c['name']} {c['dtype']}{c['shape']} "
                    f"{c['nbytes']} B from {c['origin'] or 'an unrecorded origin'}{flag}"
                )
        for target, (largest, calls) in self.patch_checks.items():
            lines.append(
                f"  patch {target}: largest difference from {target} {largest:.3g} "
                f"over {calls} traced call(s)"
            )
        return "\n".join(lines)


def _constants(trace: NodeTrace) -> list[dict[str, Any]]:
    return [
        {
            "name": c.name,
            "shape": list(c.shape),
            "dtype": c.dtype,
            "nbytes": c.nbytes,
            "origin": c.origin,
            "suspect": any(s in c.origin for s in _SUSPECT_ORIGINS),
        }
        for c in trace.recorder.constants()
    ]


def _off_by_one(want: np.ndarray, diff: np.ndarray) -> str:
    """The likely cause when an integer output is off by one in a few elements."""
    if want.dtype.kind not in "iub" or float(np.nanmax(diff)) != 1.0:
        return ""
    count = int(np.count_nonzero(diff))
    if count * 20 > diff.size:
        return ""
    return (
        f" (off by one in {count} of {diff.size} elements of an integer output: float results "
        f"that differ in their last bits between this backend's kernels and torch's, such as "
        f"a resize, land on the other side of a round() or an integer cast; keep that output "
        f"float, or round it after the model)"
    )


def _validate(trace: NodeTrace, runner: Any, rtol: float, atol: float) -> NodeValidation:
    worst, problems = 0.0, []
    for index, sample in enumerate(trace.samples):
        inputs = [sample.inputs[port.name] for port in trace.inputs]
        try:
            produced = runner(inputs)
        except Exception as exc:  # a program that refuses a sample is a finding, not a crash
            problems.append(f"sample {index}: the exported model failed: {exc}")
            continue
        for port, result in zip(trace.outputs, produced):
            got = as_numpy(result)
            want = as_numpy(sample.outputs[port.name])
            if got.shape != want.shape or got.dtype != want.dtype:
                problems.append(
                    f"sample {index}, output {port.name}: {got.dtype}{list(got.shape)} "
                    f"instead of {want.dtype}{list(want.shape)}"
                )
                continue
            if want.size == 0:
                continue
            wide = np.complex128 if np.iscomplexobj(want) else np.float64
            diff = np.abs(got.astype(wide) - want.astype(wide))
            worst = max(worst, float(np.nanmax(diff)))
            if not np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True):
                problems.append(
                    f"sample {index}, output {port.name}: max |diff| "
                    f"{float(np.nanmax(diff)):.3g} exceeds rtol={rtol}, atol={atol}"
                    + _off_by_one(want, diff)
                )
    return NodeValidation(
        trace.name,
        str(trace.export_with),
        len(trace.samples),
        worst,
        not problems,
        problems,
        _constants(trace),
        list(trace.constant_outputs),
    )


def _add_generated_sizes(
    result: NodeValidation, trace: NodeTrace, runner: Any, rtol: float, atol: float
) -> None:
    """Dynamic axes: also replay at sizes the session did not see (see dynamic_check)."""
    problems, count = generated_size_problems(trace, runner, rtol, atol)
    if problems and str(trace.export_with).startswith("jit"):
        problems.append(
            f"export_with={trace.export_with!r} does not keep this graph general over its "
            f"dynamic axes (TorchScript fixed a size); use 'onnx' or 'pt2' for this node"
        )
    result.samples += count
    result.problems += problems
    result.ok = result.ok and not problems


def port_names(trace: NodeTrace, model_type: str | None) -> tuple[list[str], list[str]]:
    """The node's input and output names in the bundle: the names the user gave, on every
    backend. A name used on both sides stays one name in the bundle; inside an ONNX model
    (one namespace for inputs and outputs) the output is renamed by ``name_onnx_ports``,
    and runners read outputs by position, as LEAPP's runtime does."""
    del model_type  # every backend keeps the user's names
    return [p.name for p in trace.inputs], [p.name for p in trace.outputs]


@dataclass
class _Written:
    """One node's model file as the bundle records it."""

    path: Path | None
    model_type: str | None
    metadata: dict[str, Any]


def _write_node(trace: NodeTrace, directory: Path) -> _Written:
    """Export one node with its backend, or record the model the user brought."""
    if trace.skip_export:
        return _Written(None, None, {})
    if trace.export_with is None:
        given = trace.backend_params.get("model_path")
        if given is None:
            return _Written(None, None, {})
        return _bring_own_model(trace, Path(given), directory)
    backend = backend_named(trace.export_with)
    inputs, outputs = port_names(trace, backend.model_type)
    path = directory / f"{trace.name}{backend.suffix}"
    first = trace.samples[0].inputs
    job = ExportJob(
        trace.graph_module,
        [first[p.name] for p in trace.inputs],
        inputs,
        outputs,
        path,
        trace.backend_params,
        dynamic_axes(trace),
    )
    metadata = write_model(trace.export_with, job)
    ranges = merge_smallest(job.dynamic_ranges, smallest_sizes(trace))
    for port in trace.inputs:
        port.ranges = {n: r for n, r in ranges.items() if n in port.dynamic.values()}
    return _Written(path, backend.model_type, metadata)


def _bring_own_model(trace: NodeTrace, given: Path, directory: Path) -> _Written:
    """``export_with=None, backend_params={"model_path": ...}``: the file is copied into
    the bundle folder (so the bundle is self-contained) and described like an export."""
    model_type = MODEL_TYPE_OF_SUFFIX.get(given.suffix)
    if model_type is None or not given.is_file():
        raise ExportBackendError(
            f"annotate.output_tensors({trace.name!r}, export_with=None, backend_params="
            f"{{'model_path': {str(given)!r}}}): expected an existing model file ending in "
            f"{', '.join(MODEL_TYPE_OF_SUFFIX)}."
        )
    target = directory / given.name
    if given.resolve() != target.resolve():
        shutil.copyfile(given, target)
    return _Written(target, model_type, {})


def _feedback_initial_values(
    nodes: dict[str, NodeTrace], feedback: dict[str, list[str]], renamed: dict[str, str]
) -> dict[str, Any]:
    """``{"node/input": first-pass value}`` for every input fed back (safetensors data)."""
    import torch

    original = {new: old for old, new in renamed.items()}
    values = {}
    for targets in feedback.values():
        for target in targets:
            node, port = original.get(target, target).split("/", 1)
            value = nodes[node].samples[0].inputs[port]
            tensor = value if isinstance(value, torch.Tensor) else torch.from_numpy(value)
            values[target] = tensor.detach().cpu().contiguous().clone()
    return values


def build_spec(
    session: Session,
    written: dict[str, _Written],
    graph_configs: GraphConfigs | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The bundle description of a finished session (LEAPP's layout), and the feedback
    initial values to save beside it."""
    nodes = dict(
        sorted(
            ((n, t) for n, t in session.nodes.items() if t.finished),
            key=lambda item: item[1].index,
        )
    )
    renamed: dict[str, str] = {}  # "node/port" -> "node/port in the bundle" (ONNX state)
    names: dict[str, tuple[list[str], list[str]]] = {}
    for name, trace in nodes.items():
        names[name] = port_names(trace, written[name].model_type)
        for port, new in zip(trace.inputs, names[name][0]):
            renamed[f"{name}/{port.name}"] = f"{name}/{new}"
    out_renamed: dict[str, str] = {}
    for name, trace in nodes.items():
        for port, new in zip(trace.outputs, names[name][1]):
            out_renamed[f"{name}/{port.name}"] = f"{name}/{new}"
    sources = {
        name: {
            p.name: t.sources[p.name]
            for p in t.inputs
            if p.name in t.sources and p.name not in t.states
        }
        for name, t in nodes.items()
    }
    index = {name: t.index for name, t in nodes.items()}
    outputs = {name: [p.name for p in t.outputs] for name, t in nodes.items()}
    forward, feedback = split_edges(sources, index, outputs)
    for name, trace in nodes.items():  # declared state: a node feeding itself
        for state in trace.states:
            feedback.setdefault(f"{name}/{state}", []).append(f"{name}/{state}")

    def rename(flow: dict[str, list[str]]) -> dict[str, list[str]]:
        return {
            out_renamed.get(src, src): [renamed.get(t, t) for t in targets]
            for src, targets in flow.items()
        }

    forward, feedback = rename(forward), rename(feedback)
    models = {}
    for name, trace in nodes.items():
        file = written[name]
        digests = digests_of(file.path) if file.path is not None else (None, None)
        parameters = {
            "model_path": file.path.name if file.path is not None else None,
            "md5sum": digests[0],
            "sha256sum": digests[1],
            "backend": file.model_type,
            **file.metadata,
            "export_with": trace.export_with,
            "constants": [
                {k: v for k, v in c.items() if k != "suspect"} for c in _constants(trace)
            ],
        }
        models[name] = {
            "inputs": [p.as_dict(n) for p, n in zip(trace.inputs, names[name][0])],
            "outputs": [p.as_dict(n) for p, n in zip(trace.outputs, names[name][1])],
            "parameters": parameters,
        }
    pipeline: dict[str, Any] = {}
    if graph_configs is not None:
        pipeline["configs"] = graph_configs.to_dict()
    pipeline["data_flow"] = forward
    pipeline["feedback_flow"] = feedback
    pipeline["inputs"] = graph_ports(
        {n: p[0] for n, p in names.items()}, [forward, feedback], "targets"
    )
    pipeline["outputs"] = graph_ports(
        {n: p[1] for n, p in names.items()}, [forward, feedback], "sources"
    )
    initial = _feedback_initial_values(nodes, feedback, renamed)
    spec = {"models": models, "pipeline": pipeline, SYSTEM_KEY: system_info()}
    return spec, initial


def compile_graph(
    visualize: bool = True,
    validate: bool = True,
    rtol: float = 1e-3,
    atol: float = 1e-5,
    strict: bool = True,
    graph_configs: GraphConfigs | None = None,
    verbose: bool | None = None,
    dry_run: bool = False,
) -> CompileResult:
    """Export each node of the last session, write ``<name>.yaml`` (and the pipeline's
    picture as ``<name>.png`` and ``<name>.svg``), and replay.

    With ``strict=True`` a node whose replay differs from the eager run raises
    :class:`ValidationError`; otherwise the result lists the problems.
    ``graph_configs`` is written to ``pipeline.configs``. After ``start(dry_run=True)``
    (or with ``dry_run=True`` here, an earlier LEAPP spelling) only the YAML (and pictures)
    is written. ``verbose`` (by default the session's) logs one
    line per node as it is exported and as it is validated. The bundle is built aside and
    replaces ``<save_path>/<name>/`` only when complete (see :mod:`.staging`).
    """
    if graph_configs is not None and not isinstance(graph_configs, GraphConfigs):
        raise PatchDefinitionError(
            f"compile_graph(graph_configs=...): expected patchport.GraphConfigs(...), got "
            f"{type(graph_configs).__name__}."
        )
    session = _stopped_session()
    options = _Options(visualize, validate, rtol, atol, strict, graph_configs, bool(dry_run))
    with progress.progress_output(session.verbose if verbose is None else verbose):
        return build_then_swap(session.directory, functools.partial(_compile, session, options))


def _refuse_complex_onnx_ports(traces: list[NodeTrace]) -> None:
    """Raise :class:`OnnxKernelError` for a complex input or output of an ONNX node: ONNX
    files hold complex tensors as real pairs, so such a port would change shape and dtype
    (refused before any model is written; complex values inside a graph are fine)."""
    lines = [
        f"  {trace.name + '/' + port.name!r} is {port.dtype}"
        for trace in traces
        if trace.export_with in ("onnx", "onnx-torchscript")
        for port in (*trace.inputs, *trace.outputs)
        if port.dtype.startswith("complex")
    ]
    if lines:
        raise OnnxKernelError(
            "compile_graph(): ONNX files hold complex tensors as real pairs, so these ports "
            "cannot keep their dtype:\n"
            + "\n".join(lines)
            + "\nfix: return real data from the node (np.abs(s), s.real and s.imag, or "
            "np.angle(s)), or export it with export_with='pt2' or 'jit', which keep complex "
            "ports."
        )


def _stopped_session() -> Session:
    """The one session compile_graph compiles: the last one stopped."""
    if current_session() is not None:
        raise PatchStateError(
            "compile_graph(): the session is still active; call "
            "patchport.stop() first so every patch is restored."
        )
    session = last_session()
    if session is None:
        raise PatchStateError(
            "compile_graph(): no session to compile; run patchport.start(), "
            "trace, then patchport.stop()."
        )
    return session


@dataclass(frozen=True)
class _Options:
    """compile_graph's arguments that shape the bundle and its validation."""

    visualize: bool
    validate: bool
    rtol: float
    atol: float
    strict: bool
    graph_configs: GraphConfigs | None
    dry_run: bool = False  # describe every node, write no model


def _compile(session: Session, options: _Options, directory: Path) -> CompileResult:
    """compile_graph's work for ``session``, written into ``directory`` (a staging folder)."""
    nodes = {name: t for name, t in session.nodes.items() if t.finished}
    if not nodes:
        raise PatchStateError(
            f"compile_graph(): session {session.name!r} has no finished node; "
            f"call annotate.output_tensors(...) for each node."
        )
    skip = {name: options.dry_run or t.skip_export for name, t in nodes.items()}
    exported = [t for name, t in nodes.items() if not skip[name]]
    refuse_changed_samples(exported)
    refuse_narrowings(exported)
    refuse_dynamic_feedback(list(nodes.values()))
    _refuse_complex_onnx_ports([t for t in nodes.values() if not t.skip_export])
    directory.mkdir(parents=True, exist_ok=True)
    written: dict[str, _Written] = {}
    for index, (name, trace) in enumerate(nodes.items(), 1):
        started = progress.clock()
        written[name] = (
            _write_node(trace, directory) if not skip[name] else _Written(None, None, {})
        )
        if written[name].path is not None:
            backend = str(trace.export_with)
            progress.exported(index, len(nodes), name, backend, started, written[name].path)
    spec, initial = build_spec(session, written, options.graph_configs)
    if initial and not session.dry_run and not options.dry_run:
        from safetensors.torch import save_file

        filename = f"{session.name}_initial_values.safetensors"
        save_file(initial, str(directory / filename))
        spec["pipeline"]["initial_values"] = filename
    yaml_path = write_spec(directory / f"{session.name}.yaml", spec)
    session.spec = spec  # what ExportManager.detected_nodes / detected_pipeline show
    picture = None
    if options.visualize:
        order = run_order(spec["models"], spec["pipeline"]["data_flow"])
        # both pictures, as LEAPP writes them: <name>.png and <name>.svg
        picture = draw_pipeline(
            spec, order, directory / f"{session.name}.png", directory / f"{session.name}.svg"
        )
    model_files = {name: w.path for name, w in written.items() if w.path is not None}
    validation = []
    if options.validate:
        for index, (name, trace) in enumerate(nodes.items(), 1):
            file = written[name]
            if file.path is None:  # not exported (dry run, non_traced, no model given)
                continue
            started = progress.clock()
            runner = load_runner(file.model_type, file.path, port_names(trace, file.model_type)[0])
            validation.append(_validate(trace, runner, options.rtol, options.atol))
            _add_generated_sizes(validation[-1], trace, runner, options.rtol, options.atol)
            progress.validated(index, len(nodes), validation[-1], started)
    checks = {target: (seen[0], int(seen[1])) for target, seen in session.checks.items()}
    result = CompileResult(
        directory, yaml_path, model_files, picture, validation, checks, nodes=list(nodes)
    )
    if options.strict and not result.ok:
        raise ValidationError(
            "compile_graph(validate=True): exported models differ from the "
            "eager run:\n" + result.summary()
        )
    return result
