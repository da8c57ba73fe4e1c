"""compile_graph: export every traced node, describe the pipeline, replay and compare.

Validation replays each exported model on every sample the session saw (the traced
pass and each later pass through the node) and compares with the eager outputs, then
lists the constants each graph holds and where in user code they came from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import PatchportError, PatchStateError
from ..sessions.lifecycle import current_session, last_session
from ..sessions.state import NodeTrace, Session
from .backends import SUFFIX, as_numpy, load_runner, write_model
from .pipeline import data_flow, run_order
from .spec import sha256_of, system_info, write_spec
from .staging import writes_atomically
from .visualize import draw_pipeline

_SUSPECT_ORIGINS = ("native", "another recorder", "derived from traced data")


class ValidationError(PatchportError, AssertionError):
    """An exported model does not reproduce the eager computation."""


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

    @property
    def ok(self) -> bool:
        return all(v.ok for v in self.validation)

    def summary(self) -> str:
        """A few lines per node, for logs and examples."""
        lines = [f"pipeline written to {self.yaml_path}"]
        for v in self.validation:
            state = "ok" if v.ok else "MISMATCH"
            lines.append(
                f"  {v.node} [{v.backend}]: {state} on {v.samples} sample(s), "
                f"max |diff| {v.max_abs_diff:.3g}"
            )
            lines += [f"    problem: {p}" for p in v.problems]
            for c in v.constants:
                flag = " (looks derived from traced data!)" if c["suspect"] else ""
                lines.append(
                    f"    constant {c['name']} {c['dtype']}{c['shape']} "
                    f"{c['nbytes']} B from {c['origin']}{flag}"
                )
        return "\n".join(lines)


def _ports(ports: list[Any]) -> list[dict[str, Any]]:
    return [port.as_dict() for port in ports]


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


def _validate(trace: NodeTrace, runner: Any, rtol: float, atol: float) -> NodeValidation:
    worst, problems = 0.0, []
    for index, sample in enumerate(trace.samples):
        inputs = [sample.inputs[port.name] for port in trace.inputs]
        try:
            produced = runner(inputs)
        except Exception as exc:  # a program that refuses a sample is a finding, not a crash
            problems.append(f"sample {index}: the exported model failed: {exc}")
            continue
        for port, got in zip(trace.outputs, produced):
            want = as_numpy(sample.outputs[port.name])
            if got.shape != want.shape or got.dtype != want.dtype:
                problems.append(
                    f"sample {index}, output {port.name}: {got.dtype}{list(got.shape)} "
                    f"instead of {want.dtype}{list(want.shape)}"
                )
                continue
            if want.size == 0:
                continue
            diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
            worst = max(worst, float(np.nanmax(diff)))
            if not np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True):
                problems.append(
                    f"sample {index}, output {port.name}: max |diff| "
                    f"{float(np.nanmax(diff)):.3g} exceeds rtol={rtol}, atol={atol}"
                )
    return NodeValidation(
        trace.name,
        trace.export_with,
        len(trace.samples),
        worst,
        not problems,
        problems,
        _constants(trace),
    )


def build_spec(session: Session, model_files: dict[str, Path]) -> dict[str, Any]:
    """The pipeline description of a finished session."""
    nodes = {name: t for name, t in session.nodes.items() if t.finished}
    flow = data_flow({name: t.sources for name, t in nodes.items()})
    consumed = {source for edge in flow for source in [edge["source"]]}
    models = {}
    for name, trace in nodes.items():
        models[name] = {
            "backend": trace.export_with,
            "model_path": f"./{model_files[name].name}",
            "sha256": sha256_of(model_files[name]),
            "inputs": _ports(trace.inputs),
            "outputs": _ports(trace.outputs),
            "constants": [
                {k: v for k, v in c.items() if k != "suspect"} for c in _constants(trace)
            ],
        }
    graph_inputs = {
        n: [p.name for p in t.inputs if p.name not in t.sources] for n, t in nodes.items()
    }
    graph_outputs = {
        n: [p.name for p in t.outputs if f"{n}/{p.name}" not in consumed] for n, t in nodes.items()
    }
    return {
        "name": session.name,
        "models": models,
        "pipeline": {
            "data_flow": flow,
            "inputs": {n: ports for n, ports in graph_inputs.items() if ports},
            "outputs": {n: ports for n, ports in graph_outputs.items() if ports},
        },
        "system_info": system_info(),
    }


@writes_atomically
def compile_graph(
    visualize: bool = True,
    validate: bool = True,
    rtol: float = 1e-3,
    atol: float = 1e-5,
    strict: bool = True,
) -> CompileResult:
    """Export each node of the last session, write ``<name>.yaml`` (and a PNG), and replay.

    With ``strict=True`` a node whose replay differs from the eager run raises
    :class:`ValidationError`; otherwise the result lists the problems.
    """
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
    nodes = {name: t for name, t in session.nodes.items() if t.finished}
    if not nodes:
        raise PatchStateError(
            f"compile_graph(): session {session.name!r} has no finished node; "
            f"call annotate.output_tensors(...) for each node."
        )
    directory = session.directory
    directory.mkdir(parents=True, exist_ok=True)
    model_files: dict[str, Path] = {}
    for name, trace in nodes.items():
        path = directory / f"{name}{SUFFIX[trace.export_with]}"
        first = trace.samples[0].inputs
        write_model(
            trace.graph_module,
            [first[p.name] for p in trace.inputs],
            [p.name for p in trace.inputs],
            [p.name for p in trace.outputs],
            trace.export_with,
            path,
        )
        model_files[name] = path
    spec = build_spec(session, model_files)
    yaml_path = write_spec(directory / f"{session.name}.yaml", spec)
    picture = None
    if visualize:
        order = run_order(spec["models"], spec["pipeline"]["data_flow"])
        picture = draw_pipeline(spec, order, directory / f"{session.name}.png")
    validation = []
    if validate:
        for name, trace in nodes.items():
            runner = load_runner(
                trace.export_with, model_files[name], [p.name for p in trace.inputs]
            )
            validation.append(_validate(trace, runner, rtol, atol))
    result = CompileResult(directory, yaml_path, model_files, picture, validation)
    if strict and not result.ok:
        raise ValidationError(
            "compile_graph(validate=True): exported models differ from the "
            "eager run:\n" + result.summary()
        )
    return result
