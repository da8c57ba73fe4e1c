"""Export with patches, then prove the program general: narrowings in words, new shapes run.

"Export passed" does not mean the program accepts the inputs it will see: torch may fix a
dynamic dimension to its example value, bound it, or exclude a value such as ``seq == 1``
(the decode step). :func:`export` compares what the program accepts with what was asked
for, says every difference in plain words, and runs the program against the eager model
on new inputs. :func:`check_program` runs the steps; each job has its module: argument
checks (``export_arguments``), dimension names (``export_dimensions``), guard analysis
(``export_guards``), shape checks (``export_shape_checks``), the report (``export_report``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from ..errors import ExportArgumentError
from ..patching import PatchDetails
from .dynamic_shapes import nest_var_keyword
from .export_arguments import check_arguments
from .export_dimensions import name_dims, requested_dimensions
from .export_guards import analyse_guards
from .export_report import Attempt, ExportReport, ExportResult, Narrowing, ShapeCheck
from .export_shape_checks import eager_outputs, run_checks

__all__ = [
    "Attempt",
    "ExportArgumentError",
    "ExportReport",
    "ExportResult",
    "Narrowing",
    "ShapeCheck",
    "check_program",
    "eager_outputs",
    "run_checks",
]


def check_program(
    program: Any,
    model: torch.nn.Module,
    args: tuple = (),
    kwargs: dict[str, Any] | None = None,
    *,
    dynamic_shapes: Any = None,
    check_shapes: Sequence[Any] | None = None,
    patches: PatchDetails | None = None,
    rtol: float = 1e-4,
    atol: float = 1e-4,
    expected_outputs: Sequence[Any] | None = None,
) -> ExportReport:
    """The generality report of any exported program (made by patchport or not).

    ``args``/``kwargs``/``dynamic_shapes`` are those the program was exported with
    (strings naming dimensions allowed); ``check_shapes`` new inputs to compare with eager.
    """
    kwargs = {} if kwargs is None else kwargs
    check_arguments(model, args, kwargs, dynamic_shapes, check_shapes)
    dynamic_shapes = nest_var_keyword(model, args, kwargs, dynamic_shapes)
    marked = name_dims(dynamic_shapes)[0] if dynamic_shapes is not None else None
    dims = requested_dimensions(model, args, kwargs, marked, program) if marked else []
    requested, narrowings, relations, assumptions = analyse_guards(dims, program)
    report = ExportReport(
        patches if patches is not None else PatchDetails(), requested, narrowings, relations
    )
    report.assumptions = assumptions
    report.notes = _notes(report.patches)
    if check_shapes:
        report.shape_checks = run_checks(program, model, check_shapes, rtol, atol, expected_outputs)
    return report


def _notes(patches: PatchDetails) -> list[str]:
    """What a user of the program must know because of a patch that shaped it."""
    notes = []
    if any("DynamicSlidingWindowLayer" in p.target_name for p in patches.exercised()):
        notes.append(
            "sliding-window cache layers were traced as full layers (transformers' own export "
            "patch): give the program the whole past in every layer, e.g. "
            "make_dynamic_cache(..., full_sliding_layers=True); a cache cropped to the window "
            "would shift the positions"
        )
    return notes
