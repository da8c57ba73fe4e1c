"""What a tracing session holds: its patches and the nodes traced so far."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..patching import PatchDetails, PatchFamily, PatchInfo
from .collector import CollectorHold
from .node_trace import NodeTrace
from .user_arrays import UserArrays


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
    scoped: bool = False  # opened by `with patchport.session(...)`, which owns it
    dry_run: bool = False  # trace and describe; write no models (LEAPP's start(dry_run=))
    non_traced: frozenset[str] = frozenset()  # nodes described but not exported
    max_cached_io: int = 5  # passes kept per node for validation (the first included)
    completed: int = 0  # nodes whose first pass finished, for their ``index``
    spec: dict[str, Any] | None = None  # the bundle description compile_graph last wrote
    collector: CollectorHold = field(default_factory=CollectorHold)  # gc.freeze at start
    user_arrays: UserArrays = field(default_factory=UserArrays)  # arrays made before start

    def restore_buffers(self) -> None:
        """Put back every module buffer an unfinished ``annotate.module`` replaced."""
        for node in self.nodes.values():
            node.restore_buffers()

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
