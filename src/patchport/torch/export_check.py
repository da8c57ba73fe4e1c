"""Export with patches, then prove the program general: narrowings in words, new shapes run.

"Export passed" does not mean the program accepts the inputs it will see: torch may fix a
dynamic dimension to its example value, bound it, or exclude a value such as ``seq == 1``
(the decode step). :func:`export` compares what the program accepts with what was asked
for, says every difference in plain words, and runs the program against the eager model
on new inputs.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import torch
from torch.utils import _pytree as pytree

from ..errors import ExportArgumentError
from ..patching import PatchDetails
from .model_state import ModelState


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


# -- argument checks --------------------------------------------------------------------
def _check_arguments(
    model: Any, args: Any, kwargs: Any, dynamic_shapes: Any, check_shapes: Any
) -> None:
    where = "patchport.torch.export"
    if not isinstance(model, torch.nn.Module):
        raise ExportArgumentError(
            f"{where}(model=...): expected a torch.nn.Module, got {type(model).__name__}."
        )
    if not isinstance(args, tuple):
        raise ExportArgumentError(
            f"{where}(args=...): expected a tuple of positional inputs, got "
            f"{type(args).__name__}; wrap a single input as (x,)."
        )
    if kwargs is not None and not isinstance(kwargs, dict):
        raise ExportArgumentError(
            f"{where}(kwargs=...): expected a dict of keyword inputs, got {type(kwargs).__name__}."
        )
    if dynamic_shapes is not None and not isinstance(dynamic_shapes, (dict, tuple, list)):
        raise ExportArgumentError(
            f"{where}(dynamic_shapes=...): expected a dict keyed by input name (or a tuple in "
            f"signature order), got {type(dynamic_shapes).__name__}."
        )
    if check_shapes is not None:
        if not isinstance(check_shapes, (list, tuple)):
            raise ExportArgumentError(
                f"{where}(check_shapes=...): expected a list of inputs (each a dict of keyword "
                f"inputs or a tuple of positional ones), got {type(check_shapes).__name__}."
            )
        for index, item in enumerate(check_shapes):
            if not isinstance(item, (dict, tuple)):
                raise ExportArgumentError(
                    f"{where}(check_shapes=...): item {index} is a {type(item).__name__}; give "
                    f"a dict of keyword inputs or a tuple of positional inputs."
                )


# -- dimension names --------------------------------------------------------------------
def _name_dims(dynamic_shapes: Any) -> tuple[Any, Any]:
    """``(marked, plain)``: names (strings) kept as markers for the report, and replaced by
    ``Dim.DYNAMIC`` for torch.export."""
    dynamic = torch.export.Dim.DYNAMIC

    def convert(value: Any) -> Any:
        if isinstance(value, str):
            return _NamedDynamic(value)
        if isinstance(value, dict):
            return {key: convert(item) for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(convert(item) for item in value)
        return value

    marked = convert(dynamic_shapes)

    def strip(value: Any) -> Any:
        if isinstance(value, _NamedDynamic):
            return dynamic
        if isinstance(value, dict):
            return {key: strip(item) for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(strip(item) for item in value)
        return value

    return marked, strip(marked)


class _NamedDynamic:
    """A placeholder for a dimension the user named with a string."""

    def __init__(self, name: str) -> None:
        self.name = name


def _dim_label(dim: Any, fallback: str) -> str:
    if isinstance(dim, _NamedDynamic):
        return dim.name
    name = getattr(dim, "__name__", None)
    if isinstance(name, str) and name and not name.startswith("_"):
        return name
    return fallback


def _axes(spec: Any) -> dict[int, Any]:
    if isinstance(spec, dict):
        return {int(axis): dim for axis, dim in spec.items() if dim is not None}
    if isinstance(spec, (list, tuple)):
        return {axis: dim for axis, dim in enumerate(spec) if dim is not None}
    return {}


def _leaf_name(path: Sequence[Any]) -> str:
    text = ""
    for key in path:
        if isinstance(key, pytree.MappingKey):
            text += f".{key.key}" if text else str(key.key)
        elif isinstance(key, pytree.SequenceKey):
            text += f"[{key.idx}]"
        elif isinstance(key, pytree.GetAttrKey):
            text += f".{key.name}"
        else:
            text += str(key)
    return text


def _leaf_source(path: Sequence[Any]) -> str:
    text = "L"
    for key in path:
        if isinstance(key, pytree.MappingKey):
            text += f"[{key.key!r}]"
        elif isinstance(key, pytree.SequenceKey):
            text += f"[{key.idx}]"
        elif isinstance(key, pytree.GetAttrKey):
            text += f".{key.name}"
    return text


@dataclass
class _Dimension:
    label: str
    source: str
    size: Any
    requested_min: int
    requested_max: int | None


def _requested_dimensions(
    model: torch.nn.Module, args: tuple, kwargs: dict, marked_shapes: Any, ep: Any
) -> list[_Dimension]:
    """Each requested dynamic dimension with its size in the exported program."""
    from torch._export.non_strict_utils import _flatten_dynamic_shapes
    from torch.export.dynamic_shapes import _combine_args

    combined = _combine_args(model, args, kwargs)
    if isinstance(marked_shapes, (tuple, list)):  # positional: in signature order
        marked_shapes = dict(zip(combined, marked_shapes))
    specs = _flatten_dynamic_shapes(combined, marked_shapes)
    leaves = pytree.tree_flatten_with_path(combined)[0]
    by_id = {id(leaf): (path, spec) for (path, leaf), spec in zip(leaves, specs)}
    placeholders = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    user_inputs = [
        placeholders.get(name) if isinstance(name, str) else None
        for name in ep.graph_signature.user_inputs
    ]
    from torch.export._tree_utils import reorder_kwargs

    ordered = reorder_kwargs(kwargs, ep.call_spec.in_spec) if kwargs else {}
    flat = pytree.tree_leaves((args, ordered))
    found = []
    for leaf, node in zip(flat, user_inputs):
        if node is None or id(leaf) not in by_id or not isinstance(leaf, torch.Tensor):
            continue
        path, spec = by_id[id(leaf)]
        value = node.meta.get("val")
        for axis, dim in _axes(spec).items():
            label = _dim_label(dim, f"{_leaf_name(path)}.shape[{axis}]")
            low = getattr(dim, "min", None)
            high = getattr(dim, "max", None)
            found.append(
                _Dimension(
                    label,
                    f"{_leaf_source(path)}.size()[{axis}]",
                    value.shape[axis] if value is not None else None,
                    max(int(low), 1) if isinstance(low, int) else 1,
                    int(high) if isinstance(high, int) and high < 2**62 else None,
                )
            )
    return found


_COMPARISON = re.compile(r"^(.*?)\s*(<=|>=|==|!=|<|>)\s*(.*)$")
_SOURCE = re.compile(r"L\[[^\]]+\](?:\[[^\]]+\]|\.\w+)*\.size\(\)\[\d+\]")


def _readable(expression: str, names: dict[str, str]) -> str:
    text = _SOURCE.sub(lambda m: names.get(m.group(0), m.group(0)), expression)
    text = re.sub(r"\(\(-1\)\*([^()]+?)\)", r"- \1", text)
    return text.replace("+ -", "- ").replace("  ", " ").strip()


def _always_holds(guard: str, names: dict[str, str]) -> bool:
    """True when a guard holds for every positive size (sympy can prove it)."""
    import sympy

    symbols: dict[str, Any] = {}
    keys: dict[str, str] = {}  # one symbol per name: dimensions named alike are one size

    def symbol(match: re.Match) -> str:
        label = names.get(match.group(0), match.group(0))
        key = keys.setdefault(label, f"d{len(keys)}")
        symbols[key] = sympy.Symbol(key, integer=True, positive=True)
        return key

    text = _SOURCE.sub(symbol, guard)
    match = _COMPARISON.match(text)
    if match is None or "L[" in text:
        return False
    left, op, right = match.groups()
    try:
        relation = sympy.Rel(
            sympy.sympify(left, locals=symbols), sympy.sympify(right, locals=symbols), op
        )
        return bool(sympy.simplify(relation) is sympy.true)
    except (sympy.SympifyError, TypeError, ValueError):
        return False


def _without_parentheses(text: str) -> str:
    """``(a + b)`` -> ``a + b``; ``(a) + (b)`` and unbalanced text are kept as they are."""
    text = text.strip()
    while text.startswith("(") and text.endswith(")"):
        depth = 0
        for index, char in enumerate(text):
            depth += {"(": 1, ")": -1}.get(char, 0)
            if depth == 0 and index < len(text) - 1:
                return text
        text = text[1:-1].strip()
    return text


def _scaled(left: str, right: str) -> tuple[str, str]:
    """``8*seq``, ``8`` -> ``seq``, ``1``: say the condition on the dimension itself."""
    match = re.fullmatch(r"(\d+)\*(.+)", left)
    if match and _is_integer(right) and int(right.strip("()")) % int(match.group(1)) == 0:
        return _without_parentheses(match.group(2)), str(
            int(right.strip("()")) // int(match.group(1))
        )
    return left, right


def _is_integer(text: str) -> bool:
    return re.fullmatch(r"\(?-?\d+\)?", text.strip()) is not None


def _analyse(
    dims: list[_Dimension], ep: Any
) -> tuple[dict[str, str], list[Narrowing], list[str], list[Narrowing]]:
    """Narrowings (constants, bounds, excluded values), relations, and assumptions
    (a lower bound of 2 that the program does not enforce: torch's 0/1 specialization)."""
    import sympy

    requested: dict[str, str] = {}
    narrowings: list[Narrowing] = []
    relations: list[str] = []
    assumptions: list[Narrowing] = []
    by_symbol: dict[Any, str] = {}
    names = {dim.source: dim.label for dim in dims}
    for dim in dims:
        requested[dim.source] = dim.label
        size = dim.size
        if isinstance(size, int):
            narrowings.append(
                Narrowing(dim.label, f"{dim.label} was fixed to {size} (asked to be dynamic)")
            )
            continue
        if not isinstance(size, torch.SymInt):
            continue
        expr = size.node.expr
        if not isinstance(expr, sympy.Symbol):
            relations.append(f"{dim.label} = {expr}")
            continue
        if expr in by_symbol and by_symbol[expr] != dim.label:
            relations.append(f"{dim.label} must equal {by_symbol[expr]}")
        by_symbol.setdefault(expr, dim.label)
        bounds = ep.range_constraints.get(expr)
        if bounds is None:
            continue
        lower, upper = bounds.lower, bounds.upper
        if isinstance(lower, sympy.Integer) and int(lower) == 2 and dim.requested_min < 2:
            # the program still runs sizes 0 and 1 (torch skips checking a bound of 2),
            # but the trace assumed >= 2: only a shape check can say whether 1 is right
            text = f"{dim.label} was traced as >= 2; size 1 runs but was not traced"
            assumptions.append(Narrowing(dim.label, text))
        elif isinstance(lower, sympy.Integer) and int(lower) > dim.requested_min:
            narrowings.append(Narrowing(dim.label, f"{dim.label} must be >= {int(lower)}"))
        if isinstance(upper, sympy.Integer):
            if dim.requested_max is None or int(upper) < dim.requested_max:
                narrowings.append(Narrowing(dim.label, f"{dim.label} must be <= {int(upper)}"))
    for guard in getattr(ep, "_guards_code", None) or []:
        if _always_holds(guard, names):
            continue  # e.g. (batch*seq) % batch == 0: true for every size, not a narrowing
        text = _readable(guard, names)
        involved = [label for source, label in names.items() if source in guard]
        match = _COMPARISON.match(text)
        if match is None or not involved:
            relations.append(text)
            continue
        left, op, right = (part.strip() for part in match.groups())
        left, right = _without_parentheses(left), _without_parentheses(right)
        if left == right:
            continue  # two dimensions the user gave the same name: asked for, not narrowed
        left, right = _scaled(left, right)
        constant_side = _is_integer(right) or _is_integer(left)
        if len(set(involved)) == 1 and constant_side:
            if _trivially_true(op, left, right, dims, involved[0]):
                continue
            narrowings.append(Narrowing(involved[0], _must(left, op, right)))
        elif op in ("!=", "==") and constant_side:
            narrowings.append(Narrowing(involved[0], _must(left, op, right)))
        else:
            relations.append(f"{left} {op} {right}")
    return requested, _unique(narrowings), list(dict.fromkeys(relations)), _unique(assumptions)


def _must(left: str, op: str, right: str) -> str:
    """``seq must be != 1``, ``past must be <= 12``, ``width must be 3``."""
    return f"{left} must be {right}" if op == "==" else f"{left} must be {op} {right}"


def _trivially_true(op: str, left: str, right: str, dims: list[_Dimension], label: str) -> bool:
    """``seq >= 1`` and the like hold for every size that was asked for."""
    if left.strip() != label or not _is_integer(right):
        return False
    value = int(right.strip("()"))
    low = next(d.requested_min for d in dims if d.label == label)
    return (op == ">=" and value <= low) or (op == ">" and value < low)


def _unique(items: list[Narrowing]) -> list[Narrowing]:
    seen: set[str] = set()
    kept = []
    for item in items:
        if item.text not in seen:
            seen.add(item.text)
            kept.append(item)
    return kept


# -- running on new shapes --------------------------------------------------------------
def _describe(model: torch.nn.Module, args: tuple, kwargs: dict) -> str:
    """``input_ids=(1, 5), cache.key_cache[0]=(1, 2, 7, 8)``: inputs named as in forward."""
    from torch.export.dynamic_shapes import _combine_args

    try:
        named = _combine_args(model, args, kwargs)
    except Exception:  # an input set forward does not accept: the run will say so
        named = {"args": args, **kwargs}
    parts = []
    for path, leaf in pytree.tree_flatten_with_path(named)[0]:
        if isinstance(leaf, torch.Tensor):
            parts.append(f"{_leaf_name(path)}={tuple(leaf.shape)}")
    return ", ".join(parts)


def _compare(expected: Any, got: Any, rtol: float, atol: float) -> tuple[bool, float, str | None]:
    """Compare two outputs leaf by leaf; a cache layer kept shorter on one side (a sliding
    window) is compared on the positions both sides keep."""
    flat_expected = [x for x in pytree.tree_leaves(expected) if isinstance(x, torch.Tensor)]
    flat_got = [x for x in pytree.tree_leaves(got) if isinstance(x, torch.Tensor)]
    if len(flat_expected) != len(flat_got):
        problem = f"{len(flat_got)} output tensors, eager gives {len(flat_expected)}"
        return False, float("nan"), problem
    worst = 0.0
    for index, (a, b) in enumerate(zip(flat_expected, flat_got)):
        if a.shape != b.shape:
            a, b = _common_tail(a, b)
            if a is None:
                return False, float("nan"), f"output {index}: shape {tuple(b.shape)} vs eager"
        if a.numel():
            worst = max(worst, (a.double() - b.double()).abs().max().item())
        if not torch.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True):
            return False, worst, None
    return True, worst, None


def _common_tail(a: torch.Tensor, b: torch.Tensor) -> tuple[Any, Any]:
    if a.dim() != b.dim():
        return None, None
    differing = [i for i in range(a.dim()) if a.shape[i] != b.shape[i]]
    if len(differing) != 1 or a.dim() != 4 or differing[0] != 2:
        return None, None
    keep = min(a.shape[2], b.shape[2])
    return a[:, :, -keep:], b[:, :, -keep:]


def _split_inputs(item: Any) -> tuple[tuple, dict]:
    return (item, {}) if isinstance(item, tuple) else ((), item)


def eager_outputs(model: torch.nn.Module, inputs: Sequence[Any]) -> list[Any]:
    """The eager model's outputs on each inputs set, each run from the model's state
    before the run, so one run cannot change the next."""
    outputs = []
    for item in inputs:
        args, kwargs = _split_inputs(item)
        state = ModelState.capture(model)
        try:
            with torch.no_grad():
                outputs.append(model(*copy.deepcopy(args), **copy.deepcopy(kwargs)))
        finally:
            state.restore()
    return outputs


def run_checks(
    program: Any,
    model: torch.nn.Module,
    inputs: Sequence[Any],
    rtol: float,
    atol: float,
    expected_outputs: Sequence[Any] | None = None,
) -> list[ShapeCheck]:
    """Run ``program`` on each inputs set and compare with eager (``expected_outputs``
    when already computed, so several programs of one model share the eager runs)."""
    module = program.module()
    if expected_outputs is None:
        expected_outputs = eager_outputs(model, inputs)
    checks = []
    for item, expected in zip(inputs, expected_outputs):
        args, kwargs = _split_inputs(item)
        label = _describe(model, args, kwargs)
        try:
            with torch.no_grad():
                got = module(*copy.deepcopy(args), **copy.deepcopy(kwargs))
        except Exception as exc:  # the program refused these shapes: that is the finding
            message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            checks.append(ShapeCheck(label, False, None, f"{type(exc).__name__}: {message}"))
            continue
        ok, worst, problem = _compare(expected, got, rtol, atol)
        checks.append(ShapeCheck(label, ok, worst, problem))
    return checks


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
    _check_arguments(model, args, kwargs, dynamic_shapes, check_shapes)
    marked = _name_dims(dynamic_shapes)[0] if dynamic_shapes is not None else None
    dims = _requested_dimensions(model, args, kwargs, marked, program) if marked else []
    requested, narrowings, relations, assumptions = _analyse(dims, program)
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
