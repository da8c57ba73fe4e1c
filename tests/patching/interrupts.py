"""Inject ``KeyboardInterrupt`` at each line patchport runs, one point per run.

A Ctrl-C can land between any two lines of apply or restore. ``sys.settrace`` lets a test
raise at every line event inside patchport's own source, one point per run, and then
check that nothing stayed behind: patched attributes, claimed targets, stack anchors,
an active session. (A trace function that raises is switched off by CPython, so each
run gets exactly one interrupt.)
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import torch

import patchport
from patchport.patching import patch_info, stack_anchors

PATCHPORT_DIR = os.path.dirname(os.path.abspath(patchport.__file__)) + os.sep
_MISSING = object()


def _tracer(on_line: Callable[[Any], None]) -> Callable[..., Any]:
    def local(frame: Any, event: str, arg: Any) -> Any:
        if event == "line":
            on_line(frame)
        return local

    def global_(frame: Any, event: str, arg: Any) -> Any:
        if frame.f_code.co_filename.startswith(PATCHPORT_DIR):
            return local
        return None

    return global_


def count_points(scenario: Callable[[], Any]) -> int:
    """How many line events inside patchport one uninterrupted run of ``scenario`` has."""
    seen = [0]

    def on_line(frame: Any) -> None:
        seen[0] += 1

    sys.settrace(_tracer(on_line))
    try:
        scenario()
    finally:
        sys.settrace(None)
    return seen[0]


def run_interrupted(
    scenario: Callable[[], Any], point: int, error: type[BaseException] = KeyboardInterrupt
) -> str | None:
    """Run ``scenario`` raising ``error`` at line event ``point``; return where.

    Any other exception escaping the scenario is a failure of that point: re-raised. With
    an ``Exception`` subclass injected, what the scenario raises in its wake (the error
    itself, re-raised alone or in a group) is expected.
    """
    seen = [0]
    where: list[str] = []

    def on_line(frame: Any) -> None:
        seen[0] += 1
        if seen[0] == point:
            code = frame.f_code
            where.append(f"{os.path.basename(code.co_filename)}:{frame.f_lineno} {code.co_name}")
            raise error("injected")

    expected = (error, Exception) if issubclass(error, Exception) else error
    sys.settrace(_tracer(on_line))
    try:
        scenario()
    except expected:
        if not where:
            raise
    finally:
        sys.settrace(None)
    return where[0] if where else None


def _raw(owner: Any, attribute: str) -> Any:
    return vars(owner).get(attribute, _MISSING)


@dataclass
class Snapshot:
    """Everything an interrupted apply/restore could leave behind."""

    targets: dict[tuple[Any, str], Any]
    anchors: set[Any] | None
    extra: Callable[[], list[str]] = field(default=lambda: [])
    grad_enabled: bool = True  # torch's process-wide autograd switch: outside state too

    @classmethod
    def take(
        cls, targets: Iterable[tuple[Any, str]], extra: Callable[[], list[str]] | None = None
    ) -> Snapshot:
        anchors = stack_anchors._anchor_set()
        return cls(
            {(owner, name): _raw(owner, name) for owner, name in targets},
            set(anchors) if anchors is not None else None,
            extra or (lambda: []),
            torch.is_grad_enabled(),
        )

    def leaks(self) -> list[str]:
        """What differs from the snapshot (empty when nothing leaked)."""
        found = [
            f"{getattr(owner, '__name__', owner)}.{name} still patched"
            for (owner, name), value in self.targets.items()
            if _raw(owner, name) is not value
        ]
        if patch_info._ACTIVE_TARGETS:
            found.append(f"{len(patch_info._ACTIVE_TARGETS)} target(s) still claimed")
        anchors = stack_anchors._anchor_set()
        if anchors is not None and self.anchors is not None and set(anchors) != self.anchors:
            found.append("stack anchors changed")
        if torch.is_grad_enabled() != self.grad_enabled:
            found.append(f"torch grad mode left {torch.is_grad_enabled()}")
        return found + self.extra()

    def put_back(self) -> None:
        """Undo a leak so the next point starts clean."""
        for (owner, name), value in self.targets.items():
            if _raw(owner, name) is not value:
                if value is _MISSING:
                    delattr(owner, name)
                else:
                    setattr(owner, name, value)
        patch_info._ACTIVE_TARGETS.clear()
        torch.set_grad_enabled(self.grad_enabled)
        anchors = stack_anchors._anchor_set()
        if anchors is not None and self.anchors is not None:
            anchors.clear()
            anchors.update(self.anchors)


@dataclass
class SweepResult:
    """Points tried and the ones that leaked (with the line they interrupted)."""

    tried: int = 0
    leaked: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        shown = "\n".join(self.leaked[:20])
        return f"{len(self.leaked)} of {self.tried} interrupt points leaked\n{shown}"


def sweep(
    scenario: Callable[[], Any],
    snapshot: Snapshot,
    reset: Callable[[], None] = lambda: None,
    limit: int | None = None,
    error: type[BaseException] = KeyboardInterrupt,
) -> SweepResult:
    """Interrupt ``scenario`` at each of its line events in turn; collect the leaks.

    ``error`` is what is raised: Ctrl-C by default, or an exception (a failing
    ``setattr``, a bug in a callee) to check the ``except Exception`` paths too.

    With ``limit``, a longer run is sampled: its first and last ``limit // 4`` points and
    an even stride through the rest (a session watching every cv2 function runs ~70k lines).
    """
    total = count_points(scenario)
    assert total > 0, "the scenario ran no patchport line: the tracer sees nothing"
    assert not snapshot.leaks(), f"an uninterrupted run leaked: {snapshot.leaks()}"
    points = list(range(1, total + 1))
    if limit is not None and total > limit:
        stride = -(-total // limit)
        edge = max(10, limit // 4)
        edges = set(points[:edge] + points[-edge:])
        points = sorted(edges | set(points[::stride]))
    result = SweepResult()
    for point in points:
        where = run_interrupted(scenario, point, error)
        if where is None:  # fewer lines this run (a cache warmed up): the sweep is done
            break
        result.tried += 1
        leaks = snapshot.leaks()
        if leaks:
            result.leaked.append(f"{where}: {', '.join(leaks)}")
            snapshot.put_back()
        reset()
    return result
