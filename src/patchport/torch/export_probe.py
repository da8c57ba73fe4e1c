"""Size-1 probes: proof of torch's 0/1 assumption for far less than another export.

torch traces a dynamic dimension as >= 2 and, for a bound of 2, does not enforce it: the
program runs size 1 without having traced it. When no shape check ran such a dimension at
size 1, one run of the program against eager on the traced inputs cut to size 1 along it
says whether the assumption is harmless. Sizes tied to it (a mask of length ``past+seq``)
are cut with it where every input set shows the tie. A probe that eager or the program
does not run proves nothing (the next configuration is then exported, as without it).

The same resizing tells a model's own limit from a narrowing: a program bounded at
``seq <= 64`` where eager runs 64 and fails at 65 (a table of 64 positions) is as general
as the model, and no other configuration is worth exporting for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch.utils import _pytree as pytree

from .export_dimensions import sizes_by_label
from .export_report import ExportReport, ShapeCheck
from .export_shape_checks import _split_inputs, eager_outputs, run_checks

_UNENFORCED = "traced as >= 2"


def unproven_labels(
    report: ExportReport, model: torch.nn.Module, checks: Sequence[Any] | None, shapes: Any
) -> list[str]:
    """Dimensions torch assumed >= 2 without enforcing it that no passing check ran at 1.
    (An enforced bound such as ``past+seq >= 4`` is a refusal the report names, not a
    silent risk: it needs no probe.)"""
    ran: dict[str, set[int]] = {}
    for item in checks or []:
        try:
            sizes = sizes_by_label(model, *_split_inputs(item), shapes)
        except Exception:  # an input set the specs do not fit: proves nothing
            continue
        for label, values in sizes.items():
            ran.setdefault(label, set()).update(values)
    labels = [a.dimension for a in report.assumptions if _UNENFORCED in a.text]
    return [label for label in dict.fromkeys(labels) if 1 not in ran.get(label, set())]


def probe_inputs(
    model: torch.nn.Module,
    args: tuple,
    kwargs: dict,
    shapes: Any,
    labels: Sequence[str],
    others: Sequence[Any] = (),
) -> Any | None:
    """The inputs ``(args, kwargs)`` cut to size 1 along each of ``labels``, or None when
    that cannot be done (a label with two sizes in one input set, a tied size that would
    fall below 1)."""
    traced = _single_sizes(sizes_by_label(model, args, kwargs, shapes))
    if traced is None or any(label not in traced for label in labels):
        return None
    observed = [traced] + [
        s for s in (_single_sizes(_safe_sizes(model, item, shapes)) for item in others) if s
    ]
    target = dict(traced)
    for label in labels:
        cut = traced[label] - 1
        target[label] = 1
        for tied in _tied(label, observed):
            target[tied] -= cut
    if any(size < 1 for size in target.values()):
        return None
    return _with_sizes(model, args, kwargs, shapes, target)


def resized_inputs(
    model: torch.nn.Module,
    args: tuple,
    kwargs: dict,
    shapes: Any,
    label: str,
    size: int,
    others: Sequence[Any] = (),
) -> Any | None:
    """The inputs ``(args, kwargs)`` with ``label`` (and the sizes tied to it) resized to
    ``size``: cut, or grown by repeating their values along the axis; None when that
    cannot be done."""
    traced = _single_sizes(sizes_by_label(model, args, kwargs, shapes))
    if traced is None or label not in traced:
        return None
    observed = [traced] + [
        s for s in (_single_sizes(_safe_sizes(model, item, shapes)) for item in others) if s
    ]
    target = dict(traced)
    change = size - traced[label]
    target[label] = size
    for tied in _tied(label, observed):
        target[tied] += change
    if any(value < 1 for value in target.values()):
        return None
    return _with_sizes(model, args, kwargs, shapes, target)


def _with_sizes(
    model: torch.nn.Module, args: tuple, kwargs: dict, shapes: Any, target: dict[str, int]
) -> tuple[tuple, dict]:
    from torch._export.non_strict_utils import _flatten_dynamic_shapes
    from torch.export.dynamic_shapes import _combine_args

    from .export_dimensions import _axes, _dim_label, name_dims

    marked = name_dims(shapes)[0]
    combined = _combine_args(model, args, kwargs)
    if isinstance(marked, (tuple, list)):
        marked = dict(zip(combined, marked))
    leaves = pytree.tree_flatten_with_path(combined)[0]
    axes_by_id: dict[int, dict[int, str]] = {}
    for (path, leaf), spec in zip(leaves, _flatten_dynamic_shapes(combined, marked)):
        if isinstance(leaf, torch.Tensor):
            axes_by_id[id(leaf)] = {
                axis: _dim_label(dim, f"{path}.{axis}") for axis, dim in _axes(spec).items()
            }

    def resize(leaf: Any) -> Any:
        if not isinstance(leaf, torch.Tensor) or id(leaf) not in axes_by_id:
            return leaf
        out = leaf
        for axis, label in axes_by_id[id(leaf)].items():
            want = target.get(label)
            if want is None or want == out.shape[axis] or out.shape[axis] == 0:
                continue
            index = torch.arange(want) % out.shape[axis]  # cut, or repeat the values
            out = out.index_select(axis, index)
        return out.clone()

    return pytree.tree_map(resize, args), pytree.tree_map(resize, kwargs)


def model_limit(
    model: torch.nn.Module,
    args: tuple,
    kwargs: dict,
    shapes: Any,
    label: str,
    bound: int,
    others: Sequence[Any] = (),
    lower: bool = False,
) -> str | None:
    """Why ``label <= bound`` is the eager model's own limit (it runs at ``bound`` and
    raises at ``bound + 1``: a table of positions, say), or None when it is not shown.
    With ``lower=True``, why ``label >= bound`` is (it runs at ``bound`` and raises at
    ``bound - 1``: a convolution kernel wider than the input, say)."""
    past_bound = bound - 1 if lower else bound + 1
    if past_bound < 1:
        return None
    runs = []
    for size in (bound, past_bound):
        built = resized_inputs(model, args, kwargs, shapes, label, size, others)
        if built is None or (built[0] and built[1]):
            return None
        item = built[0] if built[0] else built[1]
        try:
            eager_outputs(model, [item])
        except Exception as exc:  # what the model says past its limit
            runs.append(f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:160]}")
        else:
            runs.append(None)
    at_bound, past = runs
    if at_bound is not None or past is None:
        return None
    return f"eager runs {label}={bound} and fails at {past_bound} ({past})"


def probe(
    program: Any,
    model: torch.nn.Module,
    args: tuple,
    kwargs: dict,
    shapes: Any,
    labels: Sequence[str],
    others: Sequence[Any],
    rtol: float,
    atol: float,
) -> ShapeCheck | None:
    """The program against eager on the size-1 probe of ``labels``; None when either
    cannot run it (then it proves nothing either way)."""
    built = probe_inputs(model, args, kwargs, shapes, labels, others)
    if built is None:
        return None
    probe_args, probe_kwargs = built
    if probe_args and probe_kwargs:
        return None  # a check input set is positional or keyword, not both
    item = probe_args if probe_args else probe_kwargs
    try:
        expected = eager_outputs(model, [item])
    except Exception:  # inputs the model does not take: the tie was guessed wrong
        return None
    (check,) = run_checks(program, model, [item], rtol, atol, expected)
    if not check.ok and check.max_abs_diff is None:
        return None  # the program refused it: a guard this probe does not meet
    names = ", ".join(f"{label}=1" for label in labels)
    return ShapeCheck(f"probe {names} (torch traced >= 2): {check.label}", *_fields(check))


def _fields(check: ShapeCheck) -> tuple[bool, float | None, str | None]:
    return check.ok, check.max_abs_diff, check.error


def _safe_sizes(model: torch.nn.Module, item: Any, shapes: Any) -> dict[str, set[int]]:
    try:
        return sizes_by_label(model, *_split_inputs(item), shapes)
    except Exception:  # an input set the specs do not fit: shows no tie
        return {}


def _single_sizes(sizes: dict[str, set[int]]) -> dict[str, int] | None:
    if any(len(values) != 1 for values in sizes.values()):
        return None
    return {label: next(iter(values)) for label, values in sizes.items()}


def _tied(label: str, observed: list[dict[str, int]]) -> list[str]:
    """Labels whose size is ``label``'s plus another label's in every input set seen
    (``past+seq`` = ``past`` + ``seq``): cutting ``label`` cuts them as much."""
    found = []
    for tied in observed[0]:
        if tied == label:
            continue
        others = [o for o in observed[0] if o not in (label, tied)]
        if any(
            all(
                tied in sizes
                and label in sizes
                and other in sizes
                and sizes[tied] == sizes[label] + sizes[other]
                for sizes in observed
            )
            for other in others
        ):
            found.append(tied)
    return found
