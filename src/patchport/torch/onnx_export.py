"""``patchport.torch.to_onnx``: a model to a verified ONNX file in one call.

The program comes from :func:`patchport.torch.export` (the same patch selection, never
less general than plain ``torch.export``); ``torch.onnx.export(dynamo=True)`` converts it
with patchport's translations (MoE ``grouped_mm``); the file is then run in ONNX Runtime
against the eager model on every check shape, and optionally in a greedy generation loop
that feeds the file its own cache (``check_generation=N``). Inputs, outputs and dynamic
dimensions are named for the user (:mod:`.onnx_naming`).
"""

from __future__ import annotations

import contextlib
import copy
import inspect
import io
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import torch

from ..errors import ExportArgumentError, ExportFailedError, PatchportError
from .dynamic_shapes import nest_var_keyword
from .export_report import ExportReport, ShapeCheck
from .export_shape_checks import (
    _describe,
    _split_inputs,
    compare_outputs,
    eager_outputs,
    eager_outputs_of_checks,
)
from .onnx_naming import input_dimension_names, ordered_inputs, tensor_leaves

# weights above this many bytes go to external data (protobuf refuses files over 2 GiB)
EXTERNAL_DATA_BYTES = 1 << 30


@dataclass
class OnnxReport:
    """What :func:`to_onnx` did: the export's report, the file's names and what ONNX
    Runtime was checked on."""

    path: Path
    export: ExportReport
    inputs: list[str]
    outputs: list[str]
    dynamic: dict[str, list[str]]
    checks: list[ShapeCheck] = field(default_factory=list)
    external_data: bool = False
    generation: str | None = None
    generation_ok: bool | None = None

    @property
    def largest_difference(self) -> float | None:
        """The largest |ONNX Runtime - eager| over every check that ran."""
        diffs = [c.max_abs_diff for c in self.checks if c.max_abs_diff is not None]
        return max(diffs) if diffs else None

    @property
    def ok(self) -> bool:
        """Every ONNX Runtime check matched eager, and generation when it was checked."""
        return all(c.ok for c in self.checks) and self.generation_ok is not False

    def to_text(self) -> str:
        """The report in words: patched, dynamic dimensions, verified shapes, differences."""
        exercised = [f"{p.name} on {p.target_name}" for p in self.export.patches.exercised()]
        rows = [
            f"ONNX file: {self.path}"
            + (" (weights as external data)" if self.external_data else ""),
            f"program: {self.export.configuration} ({self.export.choice})",
            "patched: " + (", ".join(exercised) if exercised else "nothing"),
        ]
        dims = sorted({d for names in self.dynamic.values() for d in names})
        rows.append("dynamic dimensions: " + (", ".join(dims) if dims else "none"))
        rows.append("inputs: " + ", ".join(self.inputs))
        rows.append("outputs: " + ", ".join(self.outputs))
        for check in self.checks:
            verdict = "ok" if check.ok else "MISMATCH" if check.error is None else "FAILED"
            diff = "" if check.max_abs_diff is None else f" max|diff|={check.max_abs_diff:.2e}"
            error = "" if check.error is None else f": {check.error}"
            rows.append(f"ONNX Runtime vs eager on {check.label}: {verdict}{diff}{error}")
        if self.generation is not None:
            rows.append(f"generation: {self.generation}")
        largest = self.largest_difference
        rows.append(
            "largest difference: " + ("none measured" if largest is None else f"{largest:.2e}")
        )
        return "\n".join(rows)


class OnnxResult(NamedTuple):
    """``(path, report)``."""

    path: Path
    report: OnnxReport


def to_onnx(
    model: torch.nn.Module,
    args: tuple = (),
    kwargs: dict[str, Any] | None = None,
    *,
    dynamic_shapes: Any = None,
    filename: str | Path | None = None,
    path: str | Path | None = None,
    check_shapes: Sequence[Any] | None = None,
    check_generation: int = 0,
    target_opset: int | None = None,
    large_model: bool | None = None,
    patch_torch: bool = True,
    patch_transformers: Any = True,
    allow_narrowing: bool = False,
    rtol: float = 1e-3,
    atol: float = 1e-4,
    verbose: int = 0,
) -> OnnxResult:
    """Export ``model`` with :func:`patchport.torch.export`, convert it to ONNX, and run
    the file in ONNX Runtime against eager on every ``check_shapes`` input set.

    ``filename`` (yobx's name) or ``path`` is where the file goes (a temporary folder when
    neither is given). ``check_generation=N`` also runs a greedy loop of ``N`` new tokens
    that feeds the file its own cache, against ``model.generate(do_sample=False)``.
    ``large_model`` saves weights as external data (``None``: when they pass 1 GiB).
    Returns ``OnnxResult(path, report)``; ``report.to_text()`` says it in words.
    """
    kwargs = {} if kwargs is None else kwargs
    if filename is not None and path is not None and Path(filename) != Path(path):
        raise ExportArgumentError(
            f"patchport.torch.to_onnx: filename={filename!r} and path={path!r} differ; "
            f"pass one of them."
        )
    target = filename if filename is not None else path
    if target is None:
        target = Path(tempfile.mkdtemp(prefix="patchport_onnx_")) / "model.onnx"
    target = Path(target)
    if not isinstance(check_generation, int) or check_generation < 0:
        raise ExportArgumentError(
            f"patchport.torch.to_onnx(check_generation=...): expected a number of new tokens "
            f">= 0, got {check_generation!r}."
        )
    from .export_arguments import check_arguments
    from .export_select import export

    check_arguments(model, args, kwargs, dynamic_shapes, check_shapes)  # before any run
    _refuse_generation(model, args, kwargs, check_generation)
    # the eager runs on the check shapes serve the program's checks and the file's
    expected = (
        eager_outputs_of_checks(model, check_shapes, "patchport.torch.to_onnx")
        if check_shapes
        else None
    )
    program, export_report = export(
        model,
        args,
        kwargs,
        dynamic_shapes=dynamic_shapes,
        patch_torch=patch_torch,
        patch_transformers=patch_transformers,
        check_shapes=check_shapes,
        allow_narrowing=allow_narrowing,
        verbose=verbose,
        expected_outputs=expected,
    )
    return program_to_onnx(
        program,
        export_report,
        model,
        args,
        kwargs,
        dynamic_shapes=dynamic_shapes,
        path=target,
        check_shapes=check_shapes,
        check_generation=check_generation,
        target_opset=target_opset,
        large_model=large_model,
        rtol=rtol,
        atol=atol,
        expected=expected,
    )


def program_to_onnx(
    program: Any,
    export_report: ExportReport,
    model: torch.nn.Module,
    args: tuple = (),
    kwargs: dict[str, Any] | None = None,
    *,
    dynamic_shapes: Any = None,
    path: str | Path,
    check_shapes: Sequence[Any] | None = None,
    check_generation: int = 0,
    target_opset: int | None = None,
    large_model: bool | None = None,
    rtol: float = 1e-3,
    atol: float = 1e-4,
    expected: Sequence[Any] | None = None,
) -> OnnxResult:
    """The second half of :func:`to_onnx`, for a program :func:`patchport.torch.export`
    already made (with its report): convert, name, save at ``path``, check in ONNX Runtime
    on ``check_shapes`` and, with ``check_generation=N``, in a greedy loop. The corpus
    (bench/export_corpus.py) uses it to convert the program it timed."""
    kwargs = {} if kwargs is None else kwargs
    target = Path(path)
    _refuse_generation(model, args, kwargs, check_generation)
    onnx_program = _convert(program, args, kwargs, target_opset, export_report, model)
    with _stage(model, "naming the file's inputs and outputs"):
        traced = ordered_inputs(program, model, args, kwargs)
        inputs = tensor_leaves(traced, "past_key_values")
        expected_traced = eager_outputs(model, [kwargs if not args else args])[0]
        outputs = tensor_leaves(expected_traced, "present")
        dynamic = _rename(
            onnx_program.model,
            inputs,
            outputs,
            input_dimension_names(
                model, args, kwargs, nest_var_keyword(model, args, kwargs, dynamic_shapes)
            ),
        )
    size = sum(p.numel() * p.element_size() for p in model.parameters())
    external = size > EXTERNAL_DATA_BYTES if large_model is None else bool(large_model)
    with _stage(model, f"saving the file at {target}"):
        target.parent.mkdir(parents=True, exist_ok=True)
        onnx_program.save(str(target), external_data=external)
    report = OnnxReport(
        target,
        export_report,
        [name for name, _ in inputs],
        [name for name, _ in outputs],
        dynamic,
        external_data=external,
    )
    with _stage(model, "opening the file in ONNX Runtime"):
        session = _session(target)
    if check_shapes:
        with _stage(model, "checking the file in ONNX Runtime against eager"):
            report.checks = _run_checks(session, program, model, check_shapes, rtol, atol, expected)
    if check_generation:
        from .onnx_generation import check_generation as run_generation

        with _stage(model, "checking greedy generation from the file"):
            report.generation_ok, report.generation = run_generation(
                session, model, dict(inputs), check_generation
            )
    return OnnxResult(target, report)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0][:300] if text else ''}"


@contextlib.contextmanager
def _stage(model: torch.nn.Module, stage: str) -> Any:
    """A failure in ``stage`` of the conversion as an :class:`ExportFailedError` naming
    the model, the stage and the cause (patchport's own errors pass as they are)."""
    try:
        yield
    except PatchportError:
        raise
    except Exception as exc:
        raise ExportFailedError(
            f"patchport.torch.to_onnx({type(model).__name__}): {stage} failed: {_first_line(exc)}",
            [],
        ) from exc


def _refuse_generation(model: torch.nn.Module, args: tuple, kwargs: dict, new_tokens: int) -> None:
    """``check_generation`` on inputs whose file cannot run a greedy loop: refused in words
    before exporting."""
    if not new_tokens:
        return
    from .onnx_generation import generation_refusal

    named = {**dict(zip(inspect.signature(model.forward).parameters, args)), **kwargs}
    why = generation_refusal(model, named)
    if why is not None:
        raise ExportArgumentError(
            f"patchport.torch.to_onnx(check_generation={new_tokens}): {why}. Pass "
            f"check_generation=0 to convert and check the file without the loop."
        )


def _convert(
    program: Any,
    args: tuple,
    kwargs: dict,
    opset: int | None,
    report: ExportReport,
    model: torch.nn.Module,
) -> Any:
    """``torch.onnx.export`` of the program in the configuration that exported it: its
    decomposition traces the program again (and rebuilds the cache from its inputs), so it
    needs the same patches and ``backed_size_oblivious`` to take the same branches."""
    from .apply import apply_patches_for_model
    from .onnx_promotions import cast_before_promoted_rsub
    from .onnx_rewrites import onnx_rewrite_patches
    from .onnx_translation import onnx_translation_table
    from .onnx_views import contiguous_as_clones

    # to_onnx's own program: the user is not given it back
    with _stage(model, "preparing the program for torch.onnx"):
        contiguous_as_clones(program)
        cast_before_promoted_rsub(program)
    options: dict[str, Any] = {} if opset is None else {"opset_version": opset}
    patched = report.configuration != "plain"
    try:
        with (
            contextlib.redirect_stdout(io.StringIO()),
            torch.fx.experimental._config.patch(backed_size_oblivious=report.backed_size_oblivious),
            apply_patches_for_model(
                patch_torch=patched,
                patch_transformers=True,
                extra_patches=onnx_rewrite_patches(),
            ),
        ):
            return torch.onnx.export(
                program,
                args,
                kwargs=copy.deepcopy(kwargs),
                dynamo=True,
                verbose=False,
                custom_translation_table=onnx_translation_table(),
                **options,
            )
    except Exception as exc:
        cause = exc
        while cause.__cause__ is not None:  # torch.onnx wraps the real error
            cause = cause.__cause__
        raise ExportFailedError(
            f"patchport.torch.to_onnx({type(model).__name__}): torch.onnx.export could not "
            f"convert the exported program: {_first_line(cause)}\nAn op it names may need an ONNX "
            f"translation (patchport.torch.onnx_translation); the program itself is right "
            f"(patchport.torch.export returns it).",
            [],
        ) from exc


_SYMBOL = re.compile(r"\b[su]\d+\b")


def _rename(
    model: Any,
    inputs: list[tuple[str, torch.Tensor]],
    outputs: list[tuple[str, torch.Tensor]],
    dims_by_leaf: dict[int, dict[int, str]],
) -> dict[str, list[str]]:
    """Name the ONNX graph's inputs and outputs, and its symbolic dimensions as the user
    named them; returns the dynamic dimension names of each input."""
    import onnx_ir as ir

    graph = model.graph
    if len(graph.inputs) != len(inputs) or len(graph.outputs) != len(outputs):
        raise ValueError(  # program_to_onnx's stage names the model
            f"the ONNX graph has {len(graph.inputs)} inputs and {len(graph.outputs)} "
            f"outputs, the model {len(inputs)} tensor inputs and {len(outputs)} tensor "
            f"outputs; cannot name them"
        )
    symbols: dict[str, str] = {}
    dynamic: dict[str, list[str]] = {}
    for value, (name, leaf) in zip(graph.inputs, inputs):
        value.name = name
        labels = dims_by_leaf.get(id(leaf), {})
        shape = value.shape
        if shape is None:
            continue
        for axis, dim in enumerate(shape):
            if isinstance(dim, ir.SymbolicDim) and dim.value and axis in labels:
                symbols.setdefault(dim.value, labels[axis])
        dynamic[name] = [labels[a] for a in sorted(labels)]
    for value, (name, _) in zip(graph.outputs, outputs):
        value.name = name

    def relabel(text: str) -> str:
        if text in symbols:
            return symbols[text]
        return _SYMBOL.sub(lambda m: symbols.get(m.group(0), m.group(0)), text)

    values = [*graph.inputs, *(o for node in graph.all_nodes() for o in node.outputs)]
    for value in values:
        shape = value.shape
        if shape is None or not any(isinstance(d, ir.SymbolicDim) for d in shape):
            continue
        value.shape = ir.Shape(
            [
                ir.SymbolicDim(relabel(d.value)) if isinstance(d, ir.SymbolicDim) and d.value else d
                for d in shape
            ]
        )
    return dynamic


def _session(target: Path) -> Any:
    import onnxruntime

    return onnxruntime.InferenceSession(str(target), providers=["CPUExecutionProvider"])


def _run_checks(
    session: Any,
    program: Any,
    model: torch.nn.Module,
    check_shapes: Sequence[Any],
    rtol: float,
    atol: float,
    expected: Sequence[Any] | None = None,
) -> list[ShapeCheck]:
    """ONNX Runtime against eager on each input set (``expected``: eager's outputs there,
    when already computed)."""
    if expected is None:
        expected = eager_outputs(model, check_shapes)
    wanted = [item.name for item in session.get_inputs()]
    checks = []
    for item, eager in zip(check_shapes, expected):
        args, kwargs = _split_inputs(item)
        label = _describe(model, args, kwargs)
        named = dict(tensor_leaves(ordered_inputs(program, model, args, kwargs), "past_key_values"))
        missing = [name for name in wanted if name not in named]
        if missing:
            checks.append(ShapeCheck(label, False, None, f"inputs missing: {missing}"))
            continue
        feed = {name: named[name].detach().cpu().numpy() for name in wanted}
        try:
            got = session.run(None, feed)
        except Exception as exc:  # ONNX Runtime refused these shapes: that is the finding
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            checks.append(ShapeCheck(label, False, None, f"{type(exc).__name__}: {first[:300]}"))
            continue
        ok, worst, problem = compare_outputs(eager, [torch.from_numpy(x) for x in got], rtol, atol)
        checks.append(ShapeCheck(label, ok, worst, problem))
    return checks
