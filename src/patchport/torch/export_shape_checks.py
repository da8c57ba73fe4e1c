"""Shape checks: run an exported program on new inputs and compare it with the eager
model, each eager run from the model's state before it."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import torch
from torch.utils import _pytree as pytree

from .export_dimensions import leaf_name
from .export_report import ShapeCheck
from .model_state import ModelState


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
            parts.append(f"{leaf_name(path)}={tuple(leaf.shape)}")
    return ", ".join(parts)


def compare_outputs(
    expected: Any, got: Any, rtol: float, atol: float
) -> tuple[bool, float, str | None]:
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
            shapes = f"shape {tuple(b.shape)}, eager {tuple(a.shape)}"
            a, b = _common_tail(a, b)
            if a is None:
                return False, float("nan"), f"output {index}: {shapes}"
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


def eager_outputs_of_checks(
    model: torch.nn.Module, check_shapes: Sequence[Any], caller: str
) -> list[Any]:
    """:func:`eager_outputs` on a user's ``check_shapes``; an input set the eager model
    itself cannot run is an :class:`ExportArgumentError` naming it (no program can be
    compared there), raised before anything is exported."""
    from ..errors import ExportArgumentError

    outputs = []
    for index, item in enumerate(check_shapes):
        try:
            outputs.extend(eager_outputs(model, [item]))
        except Exception as exc:
            args, kwargs = _split_inputs(item)
            first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
            raise ExportArgumentError(
                f"{caller}(check_shapes=...): the eager {type(model).__name__} itself fails "
                f"on check_shapes[{index}] ({_describe(model, args, kwargs)}): "
                f"{type(exc).__name__}: {first}. No program can be compared with eager "
                f"there; remove that input set, or give sizes the model accepts."
            ) from exc
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
        ok, worst, problem = compare_outputs(expected, got, rtol, atol)
        checks.append(ShapeCheck(label, ok, worst, problem))
    return checks
