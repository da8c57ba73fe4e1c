"""What a tracing session holds: its patches and the nodes traced so far."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..patching import PatchDetails, PatchInfo
from ..tracing import Recorder

BACKENDS = ("onnx", "pt2", "jit")


@dataclass
class Port:
    """One named input or output of a node, with the eager value's shape and dtype."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    kind: str  # "numpy" or "torch": what the workflow handed over or received

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "shape": list(self.shape),
            "dtype": self.dtype,
            "kind": self.kind,
        }


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
    export_with: str = "onnx"
    entries: int = 0
    constant_outputs: list[str] = field(default_factory=list)  # computed without inputs

    @property
    def finished(self) -> bool:
        return self.graph_module is not None


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
    output_owner: dict[int, tuple[Any, str]] = field(default_factory=dict)  # id -> (obj, port)
    checks: dict[str, list[float]] = field(default_factory=dict)  # target -> [largest, calls]
    active: bool = True

    def nodes_of(self, patch: PatchInfo) -> list[str]:
        """Names of the graph nodes a patch's replacement produced in this session."""
        return list(self.produced.get(id(patch), []))

    def report(self) -> str:
        """What each patch did in this session: calls and graph nodes.

        Native-function watchers are summarised in one line; what they caught was
        reported as TraceLossWarnings at the user's lines.
        """
        watchers = [p for p in self.patches if p.family == "watch"]
        lines = [
            f"session {self.name!r}: {self.patches.n_patches} patches "
            f"({len(watchers)} native-function watchers)"
        ]
        for patch in self.patches:
            if patch.family == "watch":
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
