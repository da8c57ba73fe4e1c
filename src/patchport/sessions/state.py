"""What a tracing session holds: its patches and the nodes traced so far."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..patching import PatchDetails, PatchFamily, PatchInfo
from ..tracing import Recorder


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


@dataclass
class Sample:
    """Concrete inputs and the eager outputs of one pass through a node."""

    inputs: dict[str, Any]
    outputs: dict[str, Any]


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
    graph_module: Any = None
    pass_recorder: Recorder | None = None  # records (and discards) a later pass
    export_with: str | None = "onnx"
    backend_params: dict[str, Any] = field(default_factory=dict)
    entries: int = 0
    constant_outputs: list[str] = field(default_factory=list)  # computed without inputs
    index: int | None = None  # completion order of the first pass; orders the pipeline
    states: list[str] = field(default_factory=list)  # names that are both input and output
    pending_states: dict[str, Any] = field(default_factory=dict)  # update_state, this pass
    static_outputs: list[str] = field(default_factory=list)  # constant outputs, by name
    trackers: list[Any] = field(default_factory=list)  # annotate.module buffer trackers
    skip_export: bool = False  # dry_run / non_traced: described, not written

    @property
    def finished(self) -> bool:
        return self.graph_module is not None

    @property
    def m(self) -> Any:
        """The traced graph module (LEAPP's name for it), None until the node is finished."""
        return self.graph_module

    @property
    def graph(self) -> Any:
        """The node's torch.fx graph: as recorded so far, then the finished module's."""
        return self.graph_module.graph if self.finished else self.recorder.graph


@dataclass
class Session:
    """A tracing session: patches applied between ``start`` and ``stop``, and its nodes."""

    name: str
    directory: Path
    strict: bool
    verify: bool | None
    verbose: bool
    patches: PatchDetails
    nodes: dict[str, NodeTrace] = field(default_factory=dict)
    produced: dict[int, list[str]] = field(default_factory=dict)  # id(PatchInfo) -> node names
    # outputs the user still holds: id -> (weakref, port) and memory -> (weakref, port)
    output_owner: dict[int, tuple[Any, str]] = field(default_factory=dict)
    output_views: dict[tuple, tuple[Any, str]] = field(default_factory=dict)
    checks: dict[str, list[float]] = field(default_factory=dict)  # target -> [largest, calls]
    active: bool = True
    dry_run: bool = False  # trace and describe; write no models (LEAPP's start(dry_run=))
    non_traced: frozenset[str] = frozenset()  # nodes described but not exported
    max_cached_io: int = 5  # passes kept per node for validation (the first included)
    completed: int = 0  # nodes whose first pass finished, for their ``index``
    spec: dict[str, Any] | None = None  # the bundle description compile_graph last wrote

    def restore_buffers(self) -> None:
        """Put back every module buffer an unfinished ``annotate.module`` replaced."""
        for node in self.nodes.values():
            for tracker in node.trackers:
                tracker.restore()
            node.trackers.clear()

    def nodes_of(self, patch: PatchInfo) -> list[str]:
        """Names of the graph nodes a patch's replacement produced in this session."""
        return list(self.produced.get(id(patch), []))

    def report(self) -> str:
        """What each patch did in this session: calls and graph nodes.

        Native-function watchers are summarised in one line; what they caught was
        reported as TraceLossWarnings at the user's lines.
        """
        watchers = [p for p in self.patches if p.family == PatchFamily.WATCH]
        lines = [
            f"session {self.name!r}: {self.patches.n_patches} patches "
            f"({len(watchers)} native-function watchers)"
        ]
        for patch in self.patches:
            if patch.family == PatchFamily.WATCH:
                continue
            nodes = self.nodes_of(patch)
            shown = ", ".join(nodes[:8]) + (" ..." if len(nodes) > 8 else "")
            lines.append(
                f"  [{patch.family}] {patch.target_name} -> {patch.name}: "
                f"{patch.calls} call(s)" + (f"; nodes: {shown}" if nodes else "")
            )
        return "\n".join(lines)

    def record_check(self, target: str, difference: float) -> None:
        """Remember the largest difference a replacement showed from its original."""
        seen = self.checks.setdefault(target, [0.0, 0])
        seen[0] = max(seen[0], difference)
        seen[1] += 1

    def record_nodes(self, patch: PatchInfo, nodes: list[Any]) -> None:
        """Remember the graph nodes a replacement call appended (for the session report)."""
        self.produced.setdefault(id(patch), []).extend(node.name for node in nodes)


@dataclass
class SessionSlots:
    """The process-wide session state, declared in one place: which session is active
    (between ``start`` and ``stop``) and which one stopped last (what ``compile_graph``
    and ``session_patches()`` read after ``stop``). Only ``lifecycle`` writes it."""

    current: Session | None = None
    last: Session | None = None


SESSIONS = SessionSlots()
