"""Median of a square window as min/max images shared between neighbouring windows.

A comparator network over the window's pixels is written once, symbolically; a min or
max whose inputs are the same images at the same relative shift as another's is the
same image shifted, so it is computed once for the whole picture and read at an offset
(the column sorts of a 5x5 window serve five windows, the merge of two sorted columns
two). Min and max select input values, so the result is exact for every dtype.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from .window import Shifts

Offset = tuple[int, int]
# a node: ("leaf",) or (op, key of the first input, key of the second, shift of the second)
Key = int


class _Plan:
    """Interned images: each key is an image; a value is (key, offset into that image)."""

    def __init__(self) -> None:
        self.nodes: list[tuple] = [("leaf",)]
        self.ids: dict[tuple, Key] = {self.nodes[0]: 0}

    def intern(self, node: tuple) -> Key:
        if node not in self.ids:
            self.ids[node] = len(self.nodes)
            self.nodes.append(node)
        return self.ids[node]

    def op(self, name: str, a: tuple[Key, Offset], b: tuple[Key, Offset]) -> tuple[Key, Offset]:
        """min or max of two values; commutative, so the inputs are put in a fixed order."""
        (ka, oa), (kb, ob) = a, b
        if (kb, oa[0] - ob[0], oa[1] - ob[1]) < (ka, ob[0] - oa[0], ob[1] - oa[1]):
            (ka, oa), (kb, ob) = (kb, ob), (ka, oa)
        shift = (ob[0] - oa[0], ob[1] - oa[1])
        return self.intern((name, ka, kb, shift)), oa


def _compare(plan: _Plan, wires: list, i: int, j: int) -> None:
    a, b = wires[i], wires[j]
    wires[i], wires[j] = plan.op("min", a, b), plan.op("max", a, b)


def _merge(plan: _Plan, a: list, b: list) -> list:
    """Batcher's odd-even merge of two sorted lists of any lengths (comparators only)."""
    if not a or not b:
        return a + b
    if len(a) == 1 and len(b) == 1:
        wires = [a[0], b[0]]
        _compare(plan, wires, 0, 1)
        return wires
    evens = _merge(plan, a[0::2], b[0::2])
    odds = _merge(plan, a[1::2], b[1::2])
    out = [evens[0]]
    rest_e, rest_o = evens[1:], odds
    while rest_e or rest_o:
        if rest_e and rest_o:
            wires = [rest_o[0], rest_e[0]]
            _compare(plan, wires, 0, 1)
            out += wires
            rest_e, rest_o = rest_e[1:], rest_o[1:]
        else:
            out += rest_e + rest_o
            rest_e, rest_o = [], []
    return out


def _sort(plan: _Plan, values: list) -> list:
    """Merge sort: halves sorted recursively, then merged (first half the larger)."""
    if len(values) <= 1:
        return list(values)
    half = (len(values) + 1) // 2
    return _merge(plan, _sort(plan, values[:half]), _sort(plan, values[half:]))


@functools.cache
def _median_plan(size: int) -> tuple[list[tuple], tuple[Key, Offset]]:
    """Nodes and the median value of a size x size window: each column sorted, all but the
    last sorted column merged pairwise (neighbouring pairs first: one image serves both
    pairs), then the middle rank selected from that list and the last column. Only what
    the median reads is computed (see :func:`median_of_window`)."""
    plan = _Plan()
    columns = [_sort(plan, [(0, (dy, dx)) for dy in range(size)]) for dx in range(size)]
    if size == 3:  # fewer steps: the median of the largest low, the middle mid and the
        # smallest high of the sorted columns (18 minima and maxima instead of 22)
        low, mid, high = ([column[rank] for column in columns] for rank in range(3))
        largest_low = plan.op("max", plan.op("max", low[0], low[1]), low[2])
        smallest_high = plan.op("min", plan.op("min", high[0], high[1]), high[2])
        middle = _median3(plan, *mid)
        return plan.nodes, _median3(plan, largest_low, middle, smallest_high)
    lists = columns[:-1]
    while len(lists) > 1:
        merged = [_merge(plan, lists[i], lists[i + 1]) for i in range(0, len(lists) - 1, 2)]
        lists = merged + lists[len(merged) * 2 :]
    return plan.nodes, _select(plan, lists[0], columns[-1], (size * size) // 2)


def _median3(plan: _Plan, a: tuple, b: tuple, c: tuple) -> tuple[Key, Offset]:
    """max(min(a, b), min(max(a, b), c)): the median of three values in four steps."""
    return plan.op("max", plan.op("min", a, b), plan.op("min", plan.op("max", a, b), c))


def _select(plan: _Plan, a: list, b: list, k: int) -> tuple[Key, Offset]:
    """The k-th smallest (from 0) of two sorted lists: the least, over every way of taking
    i values from ``a`` and k - i from ``b``, of the larger of the last ones taken plus
    one (a[i - 1] and b[k - i]): k + 1 maxima and their minimum, no full merge."""
    candidates = []
    for i in range(k + 2):
        if i > len(a) or k - i >= len(b):
            continue
        pair = (a[i - 1] if i else None, b[k - i] if k >= i else None)
        taken = [v for v in pair if v is not None]
        value = taken[0] if len(taken) == 1 else plan.op("max", taken[0], taken[1])
        candidates.append(value)
    return functools.reduce(lambda x, y: plan.op("min", x, y), candidates)


def _needed(nodes: list[tuple], root: tuple[Key, Offset]) -> dict[Key, tuple[Offset, Offset]]:
    """Per image, the smallest and largest offset (rows, columns) at which it is read."""
    ranges: dict[Key, tuple[Offset, Offset]] = {}
    order = sorted({root[0]} | _reachable(nodes, root[0]), reverse=True)
    ranges[root[0]] = (root[1], root[1])
    for key in order:  # children have smaller keys: every reader is done first
        if key not in ranges or nodes[key][0] == "leaf":
            continue
        (low, high), (_, a, b, shift) = ranges[key], nodes[key]
        for child, (sy, sx) in ((a, (0, 0)), (b, shift)):
            lo, hi = (low[0] + sy, low[1] + sx), (high[0] + sy, high[1] + sx)
            if child in ranges:
                (clo, chi) = ranges[child]
                lo = (min(lo[0], clo[0]), min(lo[1], clo[1]))
                hi = (max(hi[0], chi[0]), max(hi[1], chi[1]))
            ranges[child] = (lo, hi)
    return ranges


def _reachable(nodes: list[tuple], key: Key) -> set[Key]:
    seen, stack = set(), [key]
    while stack:
        node = nodes[stack.pop()]
        for child in node[1:3] if node[0] != "leaf" else ():
            if child not in seen:
                seen.add(child)
                stack.append(child)
    return seen


@functools.cache
def _layout(size: int) -> tuple[dict[Key, Offset], int]:
    """Where each image of the plan is kept and how many shifted copies that takes.

    Image ``d`` of a node holds the node's value for the window at ``p + d``. A node
    ``op(a, b at shift)`` kept at a's place reads a where it is and b shifted by
    ``d_a + shift - d_b``; kept at b's place, the other way round. A min and a max of the
    same operands share their shifted copy, so the choice decides how many distinct
    copies (one Pad each) the network needs: each node takes the choice that adds fewest
    given those before it, ties broken at random, best of a few hundred tries
    (deterministic: a fixed seed). A place must keep every value the result reads inside
    the image (the first choice, d = d_a, always does: a node's values lie where its
    first operand's do, down to the padded image itself)."""
    nodes, root = _median_plan(size)
    ranges = _needed(nodes, root)
    order = [key for key in sorted(ranges) if key]
    rng = np.random.default_rng(0)

    def fits(key: Key, place: Offset) -> bool:  # every value read is kept inside the image
        (low, high) = ranges[key]
        return all(high[i] - (size - 1) <= place[i] <= low[i] for i in (0, 1))

    best: tuple[int, dict[Key, Offset]] | None = None
    for attempt in range(300):
        places: dict[Key, Offset] = {0: (0, 0)}
        made: set[tuple[Key, Offset]] = set()
        for key in order:
            _, a, b, (sy, sx) = nodes[key]
            (ay, ax), (by, bx) = places[a], places[b]
            options = [
                ((ay, ax), (b, (ay + sy - by, ax + sx - bx))),  # a read in place
                ((by - sy, bx - sx), (a, (by - sy - ay, bx - sx - ax))),  # b read in place
            ]
            costs = [
                int(move[1] != (0, 0) and move not in made) if fits(key, place) else 2
                for place, move in options
            ]
            tie = costs[0] == costs[1] and attempt and rng.random() < 0.5
            pick = int(costs[1] < costs[0] or tie)
            place, move = options[pick]
            places[key] = place
            if move[1] != (0, 0):
                made.add(move)
        if best is None or len(made) < best[0]:
            best = (len(made), places)
    assert best is not None
    return best[1], best[0]


def median_of_window(padded: torch.Tensor, size: int, height: Any, width: Any) -> torch.Tensor:
    """Median of every size x size window of ``padded`` (H + size - 1, W + size - 1, C):
    an (H, W, C) tensor of torch.minimum/maximum over images the size of ``padded``, one
    operand of each read in place, the other a shifted copy of the (rows, cols*C) view
    (one Pad each distinct shift, see :mod:`.window` and :func:`_layout`). A shift brings
    in a value at the edges that no window of the result reads (exact)."""
    nodes, root = _median_plan(size)
    places = _layout(size)[0]
    rows, cols, channels = padded.shape
    shifts = Shifts(channels, 0)
    images = {0: padded.reshape(rows, cols * channels)}
    ops: dict[str, Callable] = {"min": torch.minimum, "max": torch.maximum}
    for key in sorted(places):
        if key == 0:
            continue
        name, a, b, (sy, sx) = nodes[key]
        (dy, dx), (ay, ax), (by, bx) = places[key], places[a], places[b]
        first = shifts.shift(images[a], dy - ay, dx - ax)
        second = shifts.shift(images[b], dy + sy - by, dx + sx - bx)
        images[key] = ops[name](first, second)
    top, left = root[1][0] - places[root[0]][0], root[1][1] - places[root[0]][1]
    out = images[root[0]].reshape(rows, cols, channels)  # cropped as (H, W, C): one Slice
    return out[top : top + height, left : left + width]
