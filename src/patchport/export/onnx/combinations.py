"""Bounds for two sums that interval arithmetic overestimates: a lerp and a weighted pair.

Bilinear sampling (cv2.remap, warpAffine) writes ``t + a * (b - t)`` with ``0 <= a <= 1``
and ``u * w1 + v * w2`` with constant weights ``w1 + w2 <= W``. Interval arithmetic sees
independent operands and bounds them by twice the data range, so the uint8 round trip
after the sampling cannot be proven exact. Both shapes are recognised here from the
nodes that produce them, and bounded by what they are: a point between ``t`` and ``b``,
and at most ``max(u, v) * W``. The bounds cover the roundings inside (only non-negative
operands are handled, where those roundings cannot produce -0.0).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .value_ranges import Range, lossless

_SLACK = 2.0**-20  # relative: the inner Sub and Mul roundings of a float lerp


def _through_casts(name: str, producer: Mapping[str, Any], dtypes: Mapping[str, Any]) -> str:
    """The value ``name`` is a lossless cast of (itself where it is none)."""
    while name in producer and producer[name].op_type == "Cast":
        source = producer[name].inputs[0]
        if source not in dtypes or name not in dtypes or not lossless(dtypes[source], dtypes[name]):
            break
        name = source
    return name


def _nonnegative(r: Range | None) -> bool:
    return r is not None and r.lo >= 0 and r.signed_zero_safe


def _lerp(
    node: Any, producer: Mapping[str, Any], ranges: Mapping[str, Range | None], dtypes, consts
):
    """``t + a * (b - t)`` (either operand order) with constant ``a`` in [0, 1]."""
    for product, offset in (node.inputs, node.inputs[::-1]):
        mul = producer.get(product)
        if mul is None or mul.op_type != "Mul":
            continue
        for weight, difference in (mul.inputs, mul.inputs[::-1]):
            a = ranges.get(weight) if weight in consts else None
            sub = producer.get(_through_casts(difference, producer, dtypes))
            if a is None or not (0 <= a.lo and a.hi <= 1) or sub is None or sub.op_type != "Sub":
                continue
            b, t = sub.inputs
            if _through_casts(offset, producer, dtypes) != _through_casts(t, producer, dtypes):
                continue
            rb, rt = ranges.get(b), ranges.get(t)
            if _nonnegative(rb) and _nonnegative(rt) and a.signed_zero_safe:
                top = max(rb.hi, rt.hi) * (1 + _SLACK)  # type: ignore[union-attr]
                return Range(0.0, top, None, True)
    return None


def _weighted_pair(
    node: Any, producer: Mapping[str, Any], ranges: Mapping[str, Range | None], consts
) -> Range | None:
    """``u * w1 + v * w2`` with constant weights >= 0 and ``u, v >= 0``."""
    terms = []
    for name in node.inputs:
        mul = producer.get(name)
        if mul is None or mul.op_type != "Mul":
            return None
        weights = [n for n in mul.inputs if n in consts]
        values = [n for n in mul.inputs if n not in consts]
        if len(weights) != 1 or len(values) != 1:
            return None
        terms.append((ranges.get(values[0]), consts[weights[0]]))
    if len(terms) != 2 or not all(_nonnegative(r) for r, _ in terms):
        return None
    if not all(w.dtype.kind in "iuf" and not np.signbit(w).any() for _, w in terms):
        return None
    try:
        total = float(np.max(terms[0][1].astype(np.float64) + terms[1][1].astype(np.float64)))
    except ValueError:  # weights that do not broadcast
        return None
    top = max(r.hi for r, _ in terms) * total  # type: ignore[union-attr]
    return Range(0.0, top * (1 + _SLACK), None, True)


def tighter(
    node: Any,
    generic: Range | None,
    producer: Mapping[str, Any],
    ranges: Mapping[str, Range | None],
    dtypes: Mapping[str, Any],
    consts: Mapping[str, np.ndarray],
) -> Range | None:
    """``generic`` (the interval bound of an Add's exact sum) narrowed where the Add is a
    lerp or a weighted pair; the grid stays the generic one (it does not depend on bounds)."""
    if node.op_type != "Add" or len(node.inputs) != 2 or generic is None:
        return generic
    bound = _lerp(node, producer, ranges, dtypes, consts) or _weighted_pair(
        node, producer, ranges, consts
    )
    if bound is None:
        return generic
    lo, hi = max(generic.lo, bound.lo), min(generic.hi, bound.hi)
    return Range(lo, hi, generic.grid, generic.signed_zero_safe or bound.no_minus_zero)
