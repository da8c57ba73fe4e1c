"""What :func:`patchport.torch.export` and :func:`check_program` report: narrowings in
words, shape checks against eager, the configurations tried and the one chosen."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ..patching import PatchDetails


@dataclass(frozen=True)
class Narrowing:
    """One way the exported program accepts less than what was asked for."""

    dimension: str
    text: str


@dataclass(frozen=True)
class ShapeCheck:
    """The exported program against eager on one set of new inputs."""

    label: str
    ok: bool
    max_abs_diff: float | None
    error: str | None = None


@dataclass
class ExportReport:
    """What an export did and how general its program is."""

    patches: PatchDetails
    requested: dict[str, str]
    narrowings: list[Narrowing]
    relations: list[str]
    shape_checks: list[ShapeCheck] = field(default_factory=list)
    assumptions: list[Narrowing] = field(default_factory=list)
    backed_size_oblivious: bool = True
    notes: list[str] = field(default_factory=list)
    configuration: str = ""
    attempts: list[Attempt] = field(default_factory=list)
    choice: str = ""
    # model attributes and buffers the export replaced, put back afterwards (one line each)
    model_changes: list[str] = field(default_factory=list)
    # upper bounds the eager model has too (it runs at the bound and fails past it)
    limits: list[Narrowing] = field(default_factory=list)

    @property
    def is_general(self) -> bool:
        """True when nothing was narrowed and every shape check matched eager."""
        return not self.narrowings and all(check.ok for check in self.shape_checks)

    @property
    def wrong_values(self) -> int:
        """Shape checks the program ran but answered differently from eager."""
        return sum(1 for c in self.shape_checks if not c.ok and c.max_abs_diff is not None)

    @property
    def refused(self) -> int:
        """Shape checks the program refused to run (it rejects those inputs)."""
        return sum(1 for c in self.shape_checks if not c.ok and c.max_abs_diff is None)

    def verdict(self) -> str:
        """One line: general, or what was narrowed, refused or wrong."""
        if self.is_general:
            return "general"
        parts = [n.text for n in self.narrowings]
        if self.refused:
            parts.append(f"refused {self.refused}/{len(self.shape_checks)} new shapes")
        if self.wrong_values:
            parts.append(f"WRONG on {self.wrong_values}/{len(self.shape_checks)} new shapes")
        return "; ".join(parts)

    def verdict_with_assumptions(self) -> str:
        """:meth:`verdict`, plus the sizes torch assumed without checking them."""
        if not self.assumptions:
            return self.verdict()
        assumed = ", ".join(dict.fromkeys(n.dimension for n in self.assumptions))
        return f"{self.verdict()}, but traced assuming {assumed} >= 2"

    def to_text(self) -> str:
        """A plain-text report: configurations tried, patches, dimensions, narrowings,
        relations, shape checks."""
        rows = []
        if self.attempts:
            rows.append("configurations tried:")
            rows += [f"  {attempt.to_text()}" for attempt in self.attempts]
            rows.append(f"chosen: {self.configuration} ({self.choice})")
        rows.append(f"patches applied: {self.patches.n_patches}, exercised:")
        rows += [f"  [{p.family}] {p.name} on {p.target_name}" for p in self.patches.exercised()]
        asked = ", ".join(dict.fromkeys(self.requested.values())) or "none"
        rows.append(f"dynamic dimensions asked for: {asked}")
        if self.narrowings:
            rows.append("narrowed (the program rejects inputs you asked for):")
            rows += [f"  {item.text}" for item in self.narrowings]
        else:
            rows.append("narrowed: nothing")
        if self.limits:
            rows.append("limits of the model itself (eager fails past them too):")
            rows += [f"  {item.text}" for item in self.limits]
        if self.assumptions:
            rows.append("assumed by torch, not enforced (the program runs sizes 0 and 1 untraced):")
            rows += [f"  {item.text}" for item in self.assumptions]
        if self.relations:
            rows.append("relations between inputs the program requires:")
            rows += [f"  {text}" for text in self.relations]
        for check in self.shape_checks:
            verdict = "ok" if check.ok else "MISMATCH" if check.error is None else "FAILED"
            diff = "" if check.max_abs_diff is None else f" max|diff|={check.max_abs_diff:.2e}"
            error = "" if check.error is None else f": {check.error}"
            rows.append(f"check {check.label}: {verdict}{diff}{error}")
        rows += [f"note: {note}" for note in self.notes]
        rows.append(f"general: {'yes' if self.is_general else 'no'}")
        return "\n".join(rows)


@dataclass
class Attempt:
    """One configuration :func:`patchport.torch.export` tried, and what came of it."""

    configuration: str
    seconds: float
    report: ExportReport | None = None
    error: str | None = None

    def to_text(self) -> str:
        """``patches: general (3.1 s)`` or ``plain: export failed: ...``."""
        if self.report is None:
            return f"{self.configuration}: export failed ({self.seconds:.1f} s): {self.error}"
        verdict = self.report.verdict_with_assumptions()
        return f"{self.configuration}: {verdict} ({self.seconds:.1f} s)"


class ExportResult(NamedTuple):
    """``(program, report)``."""

    program: Any
    report: ExportReport
