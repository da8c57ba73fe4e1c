"""PatchDetails: an ordered set of patches and the one place that applies and restores them.

Applying validates every patch before touching anything, rolls back on any failure
(KeyboardInterrupt included), and restoring goes in reverse order, keeping values that
other code assigned meanwhile. The same object then answers the audit questions: which
patches were exercised, which produced graph nodes, what each one changed.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

try:  # Python >= 3.11; on 3.10 the backport (a dependency there) provides it
    from builtins import ExceptionGroup
except ImportError:  # pragma: no cover - Python 3.10
    from exceptiongroup import ExceptionGroup

from .._stack import user_stacklevel
from ..errors import PatchDefinitionError, PatchRestoreWarning, PatchStateError
from .graph_involvement import nodes_by_patch
from .patch_info import _MISSING as _NOT_KEPT
from .patch_info import PatchInfo
from .stack_anchors import add_stack_anchors, remove_stack_anchors


@dataclass(frozen=True)
class SkippedPatch:
    """A patch that was not applied here, and why (version mismatch, missing target...)."""

    name: str
    family: str
    target: str
    reason: str


class PatchDetails:
    """Ordered collection of :class:`PatchInfo`; also a context manager applying them all."""

    def __init__(self, patches: Iterable[PatchInfo] | None = None) -> None:
        self.patched: list[PatchInfo] = []
        self.skipped: list[SkippedPatch] = []
        self.kept_external: list[PatchInfo] = []
        self._applied: list[PatchInfo] = []
        self._anchors: list[tuple[str, str]] = []  # filled in place, so nothing is lost
        if patches is not None:
            self.extend(patches)

    # -- collection ---------------------------------------------------------------------
    def __iter__(self) -> Iterator[PatchInfo]:
        return iter(self.patched)

    def __len__(self) -> int:
        return len(self.patched)

    def __getitem__(self, index: int) -> PatchInfo:
        return self.patched[index]

    def __bool__(self) -> bool:
        return True  # an empty PatchDetails is still a valid result, never falsy by accident

    def __repr__(self) -> str:
        return f"PatchDetails({self.n_patches} patches, {len(self.skipped)} skipped)"

    _model_changes: tuple[str, ...] = ()  # set by apply_patches_for_model(model=...) on exit

    @property
    def model_changes(self) -> list[str]:
        """Read-only, kept for compatibility: what ``apply_patches_for_model(model=...)``
        put back on the model (``patchport.torch.export``: ``ExportReport.model_changes``)."""
        return list(self._model_changes)

    @property
    def n_patches(self) -> int:
        """Number of patches held."""
        return len(self.patched)

    def append(self, patch: PatchInfo) -> None:
        """Add one patch (refused while this collection is applied)."""
        if not isinstance(patch, PatchInfo):
            raise PatchDefinitionError(
                f"PatchDetails.append: expected a PatchInfo, got {type(patch).__name__}; build one "
                f"with PatchInfo.make(replacement, module_or_class, 'name', family=...)."
            )
        if self._applied:
            raise PatchStateError(
                f"PatchDetails.append({patch.name}): the patches are applied; add before applying."
            )
        self.patched.append(patch)

    def extend(self, patches: Iterable[PatchInfo]) -> None:
        """Add several patches, in order."""
        for patch in patches:
            self.append(patch)

    def find(self, name: str) -> PatchInfo | None:
        """The patch whose name or dotted target is ``name``, else None."""
        for patch in self.patched:
            if name in (patch.name, patch.target_name):
                return patch
        return None

    def data(self) -> list[dict[str, Any]]:
        """One dict per patch (name, family, target, versions, applied, calls, ...)."""
        return [patch.to_dict() for patch in self.patched]

    # -- apply / restore ----------------------------------------------------------------
    def validate(self) -> None:
        """Raise the first problem that would stop :meth:`apply`, changing nothing."""
        if self._applied:
            raise PatchStateError("PatchDetails.apply: these patches are already applied.")
        seen: dict[tuple[int, str], PatchInfo] = {}
        for patch in self.patched:
            earlier = seen.setdefault(patch.target_key(), patch)
            if earlier is not patch:
                raise PatchStateError(
                    f"PatchDetails: {patch.target_name} is targeted twice ({earlier.name} and "
                    f"{patch.name}); keep one patch per target."
                )
            patch.check_can_apply()

    def apply(self) -> PatchDetails:
        """Apply every patch, all or nothing; return self.

        Each patch is tracked before its :meth:`PatchInfo.do`, so an interrupt at any
        line (``return`` included) is rolled back by :meth:`restore` before it propagates.
        """
        self.validate()
        self.kept_external = []
        for patch in self.patched:
            patch.kept_external = _NOT_KEPT
        try:
            for patch in self.patched:
                self._applied.append(patch)  # tracked before do(): restore skips unapplied
                patch.do()
            add_stack_anchors(self.patched, self._anchors)
            return self
        except BaseException:
            self.restore()
            raise

    def restore(self) -> None:
        """Undo applied patches in reverse order; keep (and report) foreign reassignments.

        Every patch is tried: one failure is raised as it is, several together as an
        ``ExceptionGroup``, once all the others are restored. A patch whose undo failed
        stays tracked (and applied), so the second pass here and any later ``restore``
        retry it. Safe to interrupt: an interrupt cutting the pass short triggers a second
        pass that finishes it, and calling restore again after a cut-short call does too.
        """
        try:
            self._restore_pass()
        except BaseException:
            with contextlib.suppress(Exception):
                self._restore_pass()  # idempotent: settles what the first pass left
            raise

    def _restore_pass(self) -> None:
        errors: list[Exception] = []
        failed: list[PatchInfo] = []
        remove_stack_anchors(self._anchors)
        for patch in reversed(self._applied):
            try:
                if patch.applied:
                    patch.undo()
                if patch.was_reassigned and patch not in self.kept_external:
                    self._report_kept(patch)
            except Exception as exc:  # keep restoring the others, then raise them all
                errors.append(exc)
                failed.append(patch)
        self._anchors.clear()
        # a patch whose undo failed is still applied: kept, so the next pass retries it
        self._applied[:] = [patch for patch in self._applied if patch in failed]
        if len(errors) == 1:
            raise errors[0]
        if errors:
            raise ExceptionGroup(
                f"PatchDetails.restore: {len(errors)} patches could not be restored", errors
            )

    def _report_kept(self, patch: PatchInfo) -> None:
        warnings.warn(
            f"patchport did not restore {patch.target_name}: it was reassigned while "
            f"patched (now {patch.kept_external!r}); the newer value is kept.",
            PatchRestoreWarning,
            stacklevel=user_stacklevel(),
        )
        self.kept_external.append(patch)

    @property
    def is_applied(self) -> bool:
        """True while the patches are applied through this collection."""
        return bool(self._applied)

    def __enter__(self) -> PatchDetails:
        return self.apply()

    def __exit__(self, *exc_info: Any) -> None:
        self.restore()

    # -- audit --------------------------------------------------------------------------
    def exercised(self) -> list[PatchInfo]:
        """Patches whose replacement ran at least once during their last application."""
        return [patch for patch in self.patched if patch.calls]

    def patches_involved_in_graph(self, graph: Any) -> list[tuple[PatchInfo, list[Any]]]:
        """Pairs ``(patch, nodes)`` for patches whose code appears in a node's stack trace.

        ``graph`` is anything with ``.nodes`` whose nodes carry a ``.meta`` dict with a
        ``"stack_trace"`` string (a ``torch.fx.Graph`` does).
        """
        found = nodes_by_patch(self.patched, graph)
        return [(patch, found[patch]) for patch in self.patched if patch in found]

    def make_report(
        self,
        patches: list[tuple[PatchInfo, list[Any]]] | None = None,
        format: str = "raw",  # noqa: A002 - the seed's keyword
    ) -> str:
        """Describe involved patches (diff and nodes), then patches exercised without nodes.

        A patch that only changes shape reasoning adds no node, yet an export may fail
        without it; listing it as *exercised* keeps the report honest.
        """
        if format not in ("raw", "rst"):
            raise ValueError(f"PatchDetails.make_report(format={format!r}): use 'raw' or 'rst'.")
        patches = list(patches or [])
        rows: list[str] = []
        for patch, nodes in patches:
            rows.append(patch.format_diff(format=format))
            rows.append("")
            rows.append(f"nodes produced by {patch.name} ({len(nodes)}):")
            if format == "rst":
                rows.extend(["", ".. code-block:: text", ""])
            for node in nodes:
                args = ", ".join(str(arg) for arg in getattr(node, "args", ()))
                rows.append(f"    {getattr(node, 'target', '?')}({args}) -> {node.name}")
            rows.append("")
        involved = {patch for patch, _ in patches}
        silent = [patch for patch in self.exercised() if patch not in involved]
        if silent:
            rows.append("patches exercised without adding nodes (they changed shape reasoning):")
            rows.append("")
            for patch in silent:
                rows.append(
                    f"- [{patch.family}] {patch.name} on {patch.target_name}: {patch.calls} call(s)"
                )
            rows.append("")
        if not rows:
            rows.append("no patch was involved in the graph or exercised.")
        return "\n".join(rows)
