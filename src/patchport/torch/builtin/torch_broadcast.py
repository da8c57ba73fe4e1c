"""Broadcasting without guessing: replacements for torch's symbolic broadcasting helpers.

Under ``torch.export`` with dynamic dimensions (and ``backed_size_oblivious=True``), torch
decides each undecided broadcast from the example input: a dimension traced as 1
becomes "must be 1" (or worse, a bound such as ``<= 2``) and two dynamic dimensions of
equal example size become one. The exported program then rejects valid inputs.

These replacements keep every dimension independent: when torch cannot prove which
side broadcasts, the output dimension is ``max(a, b)``, which is right whenever the
shapes are broadcastable at run time; the runtime kernel still refuses shapes that are
not. They only differ from torch on symbolic sizes; plain integers follow torch's rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Number
from typing import Any

import torch
import torch._refs
from torch.fx.experimental.symbolic_shapes import (
    guard_or_false,
    guarding_hint_or_throw,
    has_guarding_hint,
    is_nested_int,
)

from ...patching import original_of


def broadcast_dim(a: Any, b: Any) -> Any:
    """Broadcast two sizes; when the answer depends on run-time values, return ``max(a, b)``.

    Sizes traced with the same value (neither is the 1 of a broadcast) take torch's own
    path, ``a == b`` checked: they are the same length, and a ``max`` there would hide any
    later specialization of that length from torch's check of the dimensions asked to be
    dynamic, turning torch's refusal into a program that accepts only the traced size.
    """
    if guard_or_false(a == b):
        return a
    if guard_or_false(a == 1):
        return b
    if guard_or_false(b == 1):
        return a
    if isinstance(a, int) and isinstance(b, int):
        raise RuntimeError(
            f"The size of tensor a ({a}) must match the size of tensor b ({b}) at a "
            f"non-singleton dimension."
        )
    if _same_hint(a, b):
        torch._check(a == b, lambda: f"sizes {a} and {b} must match (they broadcast as equal)")
        return a
    return torch.sym_max(a, b)


def _same_hint(a: Any, b: Any) -> bool:
    """True when both sizes have an example value and the values are equal."""
    if not (has_guarding_hint(a) and has_guarding_hint(b)):
        return False
    return guarding_hint_or_throw(a) == guarding_hint_or_throw(b)


def broadcast_two_shapes(a: Sequence[Any], b: Sequence[Any]) -> tuple[Any, ...]:
    """Broadcast two shapes right-aligned, dimension by dimension, with :func:`broadcast_dim`."""
    ndim = max(len(a), len(b))
    padded_a = (1,) * (ndim - len(a)) + tuple(a)
    padded_b = (1,) * (ndim - len(b)) + tuple(b)
    return tuple(broadcast_dim(x, y) for x, y in zip(padded_a, padded_b))


def infer_size_any_size(a: Sequence[Any], b: Sequence[Any]) -> tuple[Any, ...]:
    """Fake-tensor shape rule of binary ops: no guard, ``max`` where undecided."""
    return broadcast_two_shapes(a, b)


def broadcast_shapes_any_size(*_shapes: Any) -> list[Any] | None:
    """``torch._refs._broadcast_shapes`` without specializing on example sizes."""
    shapes = [(s,) if isinstance(s, (int, torch.SymInt)) else s for s in _shapes if s is not None]
    if not shapes:
        return None
    for shape in shapes:
        if not isinstance(shape, Sequence):
            raise RuntimeError(
                f"Input shapes should be of type ints, a tuple of ints, or a list of ints, "
                f"got {shape}"
            )
    if any(is_nested_int(size) for shape in shapes for size in shape):
        # jagged dimensions have their own rules; torch's helper handles them
        return original_of(torch._refs, "_broadcast_shapes")(*_shapes)
    common: tuple[Any, ...] = ()
    for shape in shapes:
        common = broadcast_two_shapes(common, shape)
    return list(common)


def _statically_same(shape: Sequence[Any], other: Sequence[Any]) -> bool:
    return len(shape) == len(other) and all(guard_or_false(x == y) for x, y in zip(shape, other))


def _provably_expands(shape: Sequence[Any], common: Sequence[Any]) -> bool:
    padded = (1,) * (len(common) - len(shape)) + tuple(shape)
    return all(
        (isinstance(x, int) and x == 1) or guard_or_false(x == y) for x, y in zip(padded, common)
    )


def maybe_broadcast_any_size(*args: Any, preserve_cpu_scalar_tensors: bool = True) -> tuple:
    """``torch._refs._maybe_broadcast`` that never guards on an undecided broadcast.

    Only fake tensors (shape propagation, no data) with undecided sizes take the new
    path: they are replaced by a fresh fake tensor of the common shape, which is exactly
    what shape propagation needs. Real tensors go through torch's own helper.
    """
    from torch._subclasses.fake_tensor import FakeTensor

    tensors = [arg for arg in args if isinstance(arg, torch.Tensor)]
    if not any(isinstance(t, FakeTensor) for t in tensors):
        return original_of(torch._refs, "_maybe_broadcast")(
            *args, preserve_cpu_scalar_tensors=preserve_cpu_scalar_tensors
        )
    shapes = (arg.shape if isinstance(arg, torch.Tensor) else None for arg in args)
    common = torch._refs._broadcast_shapes(*shapes)
    result = []
    for arg in args:
        if arg is None or isinstance(arg, Number) or not isinstance(arg, torch.Tensor):
            result.append(arg)
        elif preserve_cpu_scalar_tensors and arg.dim() == 0 and arg.device.type == "cpu":
            result.append(arg)
        elif _statically_same(arg.shape, common):
            result.append(arg)
        elif _provably_expands(arg.shape, common):
            result.append(arg.expand(common))  # a plain broadcast torch can prove
        else:
            result.append(arg.new_empty(common))
    return tuple(result)
