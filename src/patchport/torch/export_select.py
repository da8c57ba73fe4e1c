"""``patchport.torch.export``: never less general than plain ``torch.export.export``.

Patches and ``backed_size_oblivious`` make many exports succeed or stay general, but on
some models they make the program narrower than plain torch's (it rejects the decode
step, or batch 1). So :func:`export` tries plain ``torch.export.export`` first, then the
patched configurations, checks each program (narrowings in words, new shapes against
eager), and returns the most general right one with a report of what it tried and why
it chose. A requested dynamic dimension that no configuration keeps general is an error
unless ``allow_narrowing=True``.
"""

from __future__ import annotations

import contextlib
import io
import logging
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from ..errors import ExportArgumentError, ExportFailedError, NarrowedExportError
from ..verbose import say
from .apply import apply_patches_for_model
from .dynamic_shapes import nest_var_keyword
from .export_arguments import check_arguments
from .export_check import check_program
from .export_dimensions import name_dims
from .export_report import Attempt, ExportReport, ExportResult, Narrowing
from .export_shape_checks import eager_outputs_of_checks
from .export_specialization import Specialization, recording_specializations

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Configuration:
    """One way to run ``torch.export.export``: with or without patches and
    ``backed_size_oblivious``."""

    name: str
    patched: bool
    backed_size_oblivious: bool


def configurations(
    patch_torch: bool, patch_transformers: Any, backed_size_oblivious: bool | None
) -> list[Configuration]:
    """The configurations to try, plain first: plain, patches, patches + backed_size_oblivious
    (``backed_size_oblivious=True``/``False`` keeps only the patched one that has it so)."""
    patched = bool(patch_torch or patch_transformers)
    label = "patches" if patched else "plain"
    found = [Configuration("plain", False, False)]
    if backed_size_oblivious is not True:
        found.append(Configuration(label, patched, False))
    if backed_size_oblivious is not False:
        found.append(Configuration(f"{label}+backed_size_oblivious", patched, True))
    unique: dict[tuple[bool, bool], Configuration] = {}
    for item in found:
        unique.setdefault((item.patched, item.backed_size_oblivious), item)
    return list(unique.values())


def _rank(attempt: Attempt, index: int) -> tuple[int, int, int, int, int]:
    """Lower is better: wrong values first, then new shapes refused (what was run outranks
    what was read from the guards), then narrowings, then sizes torch assumed without
    tracing them, then the order tried (plain first)."""
    report = attempt.report
    assert report is not None
    return (
        report.wrong_values,
        report.refused,
        len(report.narrowings),
        len(report.assumptions),
        index,
    )


def export(
    model: torch.nn.Module,
    args: tuple = (),
    kwargs: dict[str, Any] | None = None,
    *,
    dynamic_shapes: Any = None,
    patch_torch: bool = True,
    patch_transformers: Any = True,
    backed_size_oblivious: bool | None = None,
    check_shapes: Sequence[Any] | None = None,
    allow_narrowing: bool = False,
    strict: bool = False,
    rtol: float = 1e-4,
    atol: float = 1e-4,
    verbose: int = 0,
    expected_outputs: Sequence[Any] | None = None,
) -> ExportResult:
    """The most general right program among plain ``torch.export.export`` and the patched
    configurations, with a report of each configuration tried and why one was chosen.

    Dimension names given as strings in ``dynamic_shapes`` are used in the report
    ("seq must be != 1"). ``check_shapes`` lists new inputs (dicts of keyword inputs or
    tuples of positional ones) each program must run like the eager model. The first
    configuration that is general and right is taken without trying the next ones.
    When the best program still narrows a requested dimension, refuses a check or
    computes a wrong value, :class:`NarrowedExportError` says so in words (its
    ``result`` holds the program), unless ``allow_narrowing=True``. When plain torch's
    narrowings come from a Python branch on a size modulo a constant (a sequence padded
    to whole chunks) in code no patch replaces, that error comes after one export and
    names the lines (``allow_narrowing=True`` still tries every configuration).
    ``expected_outputs`` are the eager outputs on ``check_shapes`` when the caller has
    them already (as for :func:`check_program`).
    Returns ``ExportResult(program, report)``; the model is left exactly as it was.
    """
    kwargs = {} if kwargs is None else kwargs
    check_arguments(model, args, kwargs, dynamic_shapes, check_shapes)
    dynamic_shapes = nest_var_keyword(model, args, kwargs, dynamic_shapes)
    if not isinstance(backed_size_oblivious, (bool, type(None))):
        raise ExportArgumentError(
            f"patchport.torch.export(backed_size_oblivious=...): expected True, False or None "
            f"(try both), got {backed_size_oblivious!r}."
        )
    plain_shapes = name_dims(dynamic_shapes)[1] if dynamic_shapes is not None else None
    if "transformers" in sys.modules:  # a cache input or output needs its pytree node
        from .transformers_inputs import register_cache_pytrees

        register_cache_pytrees()
    expected = expected_outputs
    if expected is None and check_shapes:
        expected = eager_outputs_of_checks(model, check_shapes, "patchport.torch.export")
    attempts: list[Attempt] = []
    programs: list[Any] = []
    padding: list[Specialization] = []
    failures: list[BaseException] = []
    for configuration in configurations(patch_torch, patch_transformers, backed_size_oblivious):
        if not configuration.backed_size_oblivious and any(
            a.report is not None and a.report.is_general for a in attempts
        ):
            continue  # without backed_size_oblivious, patches can only match that program
        start = time.perf_counter()
        printed = io.StringIO()  # torch prints the partial graph of a failed export
        try:
            with (
                recording_specializations() as specialized,
                contextlib.redirect_stdout(printed),
                torch.fx.experimental._config.patch(
                    backed_size_oblivious=configuration.backed_size_oblivious
                ),
                apply_patches_for_model(
                    patch_torch=patch_torch and configuration.patched,
                    patch_transformers=patch_transformers if configuration.patched else False,
                    model=model,
                    verbose=verbose,
                ) as details,
            ):
                program = torch.export.export(
                    model, args, kwargs=kwargs, dynamic_shapes=plain_shapes, strict=strict
                )
        except Exception as exc:  # a configuration that cannot export: try the next one
            message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            message = _named_constraints(message, model, args, kwargs, dynamic_shapes)
            attempts.append(
                Attempt(
                    configuration.name,
                    time.perf_counter() - start,
                    error=f"{type(exc).__name__}: {message[:300]}",
                )
            )
            failures.append(exc)
            _say(verbose, attempts[-1])
            loops = _fixing_loops(specialized, str(exc), model, patch_torch, patch_transformers)
            if loops:
                raise ExportFailedError(
                    _loop_message(model, loops, attempts, args, kwargs, dynamic_shapes), attempts
                ) from exc
            continue
        sys.stdout.write(printed.getvalue())  # what the model printed while traced
        report = check_program(
            program,
            model,
            args,
            kwargs,
            dynamic_shapes=dynamic_shapes,
            check_shapes=check_shapes,
            patches=details,
            rtol=rtol,
            atol=atol,
            expected_outputs=expected,
        )
        _model_limits(report, model, args, kwargs, dynamic_shapes, check_shapes)
        report.backed_size_oblivious = configuration.backed_size_oblivious
        report.model_changes = details.model_changes
        report.configuration = configuration.name
        attempts.append(Attempt(configuration.name, time.perf_counter() - start, report=report))
        programs.append((len(attempts) - 1, program))
        _say(verbose, attempts[-1])
        if report.is_general and _assumptions_proven(
            report, program, model, args, kwargs, check_shapes, dynamic_shapes, rtol, atol
        ):
            break  # no other configuration is worth another export
        if len(attempts) == 1 and not allow_narrowing:
            padding = _padding_sites(report, specialized, model, patch_torch, patch_transformers)
            if padding:  # every try keeps the guards of code no patch replaces: the call
                break  # ends narrowed (an error) whatever is tried next
    if not programs:
        lines = "\n".join(f"  {attempt.to_text()}" for attempt in attempts)
        raise ExportFailedError(
            f"patchport.torch.export: no configuration exported {type(model).__name__}:\n"
            f"{lines}\nThe first error is torch's; fix the model code it names, or add a "
            f"patch for it (extra_patches of apply_patches_for_model).",
            attempts,
        ) from failures[0]
    index, program = min(programs, key=lambda item: _rank(attempts[item[0]], item[0]))
    report = attempts[index].report
    assert report is not None
    report.attempts = attempts
    report.choice = _why(attempts, index)
    result = ExportResult(program, report)
    if padding:
        report.choice = _padding_choice(model, padding, args, kwargs, dynamic_shapes)
    if not report.is_general and not allow_narrowing:
        extra = f"\n{report.choice}." if padding else ""
        raise NarrowedExportError(_narrowed_message(model, report) + extra, result)
    return result


def _named_constraints(
    message: str, model: torch.nn.Module, args: tuple, kwargs: dict, shapes: Any
) -> str:
    """torch's ``Constraints violated (L['input_ids'].size()[1], ...)!`` with the dimensions
    named as in ``dynamic_shapes`` and what it means: the model's code fixes their size."""
    if "Constraints violated" not in message or shapes is None:
        return message
    from .export_dimensions import labels_by_source

    try:
        labels = labels_by_source(model, args, kwargs, shapes)
    except Exception:  # specs that do not fit the inputs: torch's text as it is
        return message
    named = list(dict.fromkeys(label for source, label in labels.items() if source in message))
    if not named:
        return message
    return (
        f"dynamic {', '.join(named)} cannot stay dynamic: tracing the model fixed its size "
        f"(a Python loop or branch on it, or an op torch specializes; torch: {message})"
    )


_UPPER = re.compile(r"^(.+) must be <= (\d+)$")
_LOWER = re.compile(r"^(.+) must be >= (\d+)$")


def _model_limits(
    report: ExportReport,
    model: torch.nn.Module,
    args: tuple,
    kwargs: dict,
    shapes: Any,
    checks: Sequence[Any] | None,
) -> None:
    """Bounds the eager model has too are its limits, not narrowings: an upper one (BERT's
    64 positions: it runs seq=64 and fails at 65) or a lower one (a convolution kernel of
    10 samples: it runs 10 and fails at 9). No configuration can do better, so they do not
    cost another export. Moved from ``narrowings`` to ``limits``, with the proof; bounds
    a lower limit implies (``1 < samples`` under ``samples >= 10``) go with it."""
    from .export_probe import model_limit

    kept = []
    lowest: dict[str, int] = {}
    for item in report.narrowings:
        why = None
        for pattern, lower in ((_UPPER, False), (_LOWER, True)):
            match = pattern.match(item.text)
            if why is None and match is not None and match.group(1) == item.dimension:
                bound = int(match.group(2))
                why = model_limit(
                    model, args, kwargs, shapes, item.dimension, bound, checks or (), lower
                )
                if why is not None and lower:
                    lowest[item.dimension] = max(bound, lowest.get(item.dimension, bound))
        if why is None:
            kept.append(item)
        else:
            report.limits.append(Narrowing(item.dimension, f"{item.text}: {why}"))
    report.narrowings = [
        item for item in kept if not _implied_lower_bound(item, lowest.get(item.dimension))
    ]


def _implied_lower_bound(item: Narrowing, limit: int | None) -> bool:
    """True when ``item`` bounds its dimension from below by no more than ``limit``
    (``samples >= 4``, ``samples > 1``, ``1 < samples`` under a limit ``samples >= 10``)."""
    if limit is None:
        return False
    label = re.escape(item.dimension)
    for pattern, strict in (
        (rf"^{label} must be >= (\d+)$", False),
        (rf"^{label} must be > (\d+)$", True),
        (rf"^(\d+) must be < {label}$", True),
        (rf"^(\d+) must be <= {label}$", False),
    ):
        match = re.match(pattern, item.text)
        if match is not None:
            least = int(match.group(1)) + (1 if strict else 0)
            return least <= limit
    return False


def _fixing_loops(
    found: list[Specialization],
    error: str,
    model: torch.nn.Module,
    patch_torch: bool,
    patch_transformers: Any,
) -> list[Specialization]:
    """The Python loops that fixed the dimensions torch's error names, when no patch of
    any configuration replaces their code: every configuration would fail the same way."""
    if "Constraints violated" not in error or not found:
        return []
    from .apply import collect_patches
    from .export_specialization import loops_fixing, patched_code

    try:
        patches = collect_patches(patch_torch, patch_transformers, model=model)
    except Exception:  # cannot tell what the patches replace: try them
        return []
    return loops_fixing(found, error, patched_code(patches))


def _padding_sites(
    report: ExportReport,
    found: list[Specialization],
    model: torch.nn.Module,
    patch_torch: bool,
    patch_transformers: Any,
) -> list[Specialization]:
    """The lines that guarded a size modulo a constant, when every narrowing of ``report``
    is such a guard (``seq % 4``: a sequence padded to whole chunks) and no patch of any
    configuration replaces that code, so another export would keep them; else empty."""
    from .export_specialization import modular_sites, patched_code

    texts = [item.text for item in report.narrowings]
    if not texts or report.wrong_values or not all("%" in t or "//" in t for t in texts):
        return []
    from .apply import collect_patches

    try:
        patches = collect_patches(patch_torch, patch_transformers, model=model)
    except Exception:  # cannot tell what the patches replace: try them
        return []
    return modular_sites(found, patched_code(patches))


def _padding_choice(
    model: torch.nn.Module, sites: list[Specialization], args: tuple, kwargs: dict, shapes: Any
) -> str:
    """Why only one configuration was tried: where the model pads, and what to do."""
    from .export_dimensions import labels_by_source

    try:
        labels = labels_by_source(model, args, kwargs, shapes) if shapes is not None else {}
    except Exception:  # specs that do not fit the inputs: torch's names
        labels = {}
    names = ", ".join(
        dict.fromkeys(labels.get(source, source) for site in sites for source in site.sources)
    )
    lines = "\n".join(f"    {site.where()}: {site.line}" for site in sites[:4])
    return (
        f"{type(model).__name__} pads {names} to whole chunks: torch guarded {names} modulo "
        f"a constant at these lines, in code no patch replaces, so every configuration keeps "
        f"those guards and no other was tried:\n{lines}\n  What you can do: make {names} "
        f"static in dynamic_shapes, check only sizes the guards accept, or replace that "
        f"code in a patch (extra_patches of apply_patches_for_model)"
    )


def _loop_message(
    model: torch.nn.Module,
    loops: list[Specialization],
    attempts: list[Attempt],
    args: tuple,
    kwargs: dict,
    shapes: Any,
) -> str:
    """The refusal after one attempt: the dimension, the loop that fixed it, what to do."""
    from .export_dimensions import labels_by_source

    try:
        labels = labels_by_source(model, args, kwargs, shapes) if shapes is not None else {}
    except Exception:  # specs that do not fit the inputs: torch's names
        labels = {}
    loop = loops[0]
    named = ", ".join(dict.fromkeys(labels.get(source, source) for source in loop.sources))
    return (
        f"patchport.torch.export: {type(model).__name__} cannot keep {named} dynamic: a "
        f"Python loop over it runs once per position while torch traces, so any program "
        f"would hold exactly the traced {loop.value} steps:\n  {loop.where()}: {loop.line}\n"
        f"No patch replaces that code, so no other configuration was tried (one export, "
        f"{attempts[-1].seconds:.1f} s; torch: {attempts[-1].error}).\nWhat you can do: make "
        f"{named} static in dynamic_shapes (one program per length; for a recurrent model "
        f"the one-token step with its cache state, {named}=1, is one such program), or "
        f"replace the loop by a vectorised form in a patch (extra_patches of "
        f"apply_patches_for_model)."
    )


def _assumptions_proven(
    report: ExportReport,
    program: Any,
    model: torch.nn.Module,
    args: tuple,
    kwargs: dict,
    checks: Sequence[Any] | None,
    shapes: Any,
    rtol: float,
    atol: float,
) -> bool:
    """True when each size torch assumed >= 2 without enforcing it ran at 1 and matched
    eager: in a shape check, or else in one size-1 probe of the program (a run, not an
    export; its result joins the report's checks, a mismatch making the program not
    general). Bounds the program enforces (``past+seq >= 4``) are refusals the report
    names, not silent risks, so they do not cost another export."""
    from .export_probe import probe, unproven_labels

    if not report.assumptions or shapes is None:
        return True
    labels = unproven_labels(report, model, checks, shapes)
    if not labels:
        return True
    found = probe(program, model, args, kwargs, shapes, labels, checks or (), rtol, atol)
    if found is None:
        return False
    report.shape_checks.append(found)
    return found.ok


def _why(attempts: list[Attempt], index: int) -> str:
    """Why ``attempts[index]`` was chosen, in words."""
    chosen = attempts[index]
    report = chosen.report
    assert report is not None
    if not report.is_general:
        return "no configuration is general; this one rejects the fewest inputs"
    first = "plain torch.export" if index == 0 else "the first patched configuration"
    if not report.assumptions:
        return f"{first} that is general and right"
    if index == len(attempts) - 1:
        probed = any(check.label.startswith("probe ") for check in report.shape_checks)
        enforced = [a.dimension for a in report.assumptions if "traced as >= 2" not in a.text]
        bounds = f" (it enforces the bound on {', '.join(enforced)} noted)" if enforced else ""
        return (
            f"{first} that is general and right; torch traced sizes as >= 2 where noted and "
            f"the shape checks{' and a size-1 probe' if probed else ''} ran each of them at "
            f"size 1{bounds}, so no other configuration was tried"
        )
    return (
        f"{first} that is general and right; it assumes sizes >= 2 where noted, and no "
        f"configuration that traces sizes 0 and 1 as well was as general"
    )


def _narrowed_message(model: torch.nn.Module, report: ExportReport) -> str:
    lines = "\n".join(f"  {attempt.to_text()}" for attempt in report.attempts)
    return (
        f"patchport.torch.export: no configuration keeps {type(model).__name__} as general as "
        f"asked:\n{lines}\nbest: {report.configuration}: {report.verdict()}.\n"
        f"Pass allow_narrowing=True to accept it (the program is in this error's .result), "
        f"or make the dimension static in dynamic_shapes."
    )


def _say(verbose: int, attempt: Attempt) -> None:
    say(logger, verbose, "export %s", attempt.to_text())
