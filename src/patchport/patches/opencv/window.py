"""Minima and maxima over windows of an image, as shifted copies of its 2-D view.

An (H, W, C) image viewed as (H, W*C) moves by whole pixels with one constant Pad whose
negative side crops (dy rows, dx*C elements). ONNX Runtime runs that Pad in one pass, as
fast as a Slice (0.035 ms at 480x640x3, where the same shift of the 3-D image takes 2.8
ms), and the unshifted operand of a min costs nothing: a 3x3 window is 4 shifts and 4
minima, where slices of a padded image take a Pad, 6 slices and 4 minima. The value that
enters at the edges is the border's (``fill``); min and max select input values, so every
result is exact.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable

import numpy as np
import torch
import torch.nn.functional as F

Pick = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


class Shifts:
    """Shifted copies of 2-D views of (H, W, C) images: ``shift(image, dy, dx)[y, x]`` is
    ``image[y + dy, x + dx]`` (pixels), ``fill`` where that falls outside. Each distinct
    shift of an image is made once."""

    def __init__(self, channels: int, fill: float) -> None:
        self.channels = channels
        self.fill = float(fill)  # a float: TorchScript types pad(value=) as float
        self._made: dict[tuple[int, int, int], tuple[torch.Tensor, torch.Tensor]] = {}

    def shift(self, image: torch.Tensor, dy: int, dx: int) -> torch.Tensor:
        if (dy, dx) == (0, 0):
            return image
        key = (id(image), dy, dx)
        if key not in self._made:  # the image is kept beside its shift: ids stay unique
            rows, cols = image.shape
            step = dx * self.channels
            if abs(dy) >= rows or abs(step) >= cols:
                moved = torch.full_like(image, self.fill)
            else:
                moved = F.pad(image, (-step, step, -dy, dy), value=self.fill)
            self._made[key] = (image, moved)
        return self._made[key][1]


def window(
    shifts: Shifts,
    image: torch.Tensor,
    axis: int,
    start: int,
    length: int,
    pick: Pick,
    doubling: bool,
) -> torch.Tensor:
    """``pick`` over ``image[p + start + k]`` along ``axis`` (0: rows, 1: pixels) for k in
    [0, length), at every position p: the fewest shifts and picks :func:`_plan` finds.
    Without ``doubling`` only ``image`` itself is shifted along ``axis``: a window of
    values next to an edge is not the fill beyond it, so a shifted window is right only
    where the fill never enters (a padded image, cropped afterwards)."""
    lefts, pieces = _plan(start, length, doubling)[1:]
    images = [image]
    for k, left in enumerate(lefts):  # 2**k values doubled to the left or to the right
        last = images[-1]
        moved = _move(shifts, last, axis, -(1 << k) if left else 1 << k)
        images.append(pick(moved, last) if left else pick(last, moved))
    result = None
    for level, offset in pieces:
        piece = _move(shifts, images[level], axis, offset)
        result = piece if result is None else pick(result, piece)
    assert result is not None
    return result


def _move(shifts: Shifts, image: torch.Tensor, axis: int, offset: int) -> torch.Tensor:
    return shifts.shift(image, offset, 0) if axis == 0 else shifts.shift(image, 0, offset)


@functools.cache
def _plan(start: int, length: int, doubling: bool) -> tuple[int, tuple, tuple]:
    """How to cover the window [start, start + length) the cheapest way (nodes: shifts
    other than 0 plus picks). Images of 2**k values are doubled from the unshifted image
    (each doubling one shift and one pick, extending left or right); then the window is
    the pick of up to three of them, each shifted (free at 0) and never reaching outside
    the window. Without ``doubling``: the pick of the image at each shift. Returns (nodes,
    per doubling: True if to the left, pieces: (level, shift))."""
    if not doubling:
        return (
            length - 1 + sum(start + k != 0 for k in range(length)),
            (),
            tuple((0, start + k) for k in range(length)),
        )
    stop = start + length
    best: tuple[int, tuple, tuple] | None = None
    for levels in range(length.bit_length()):
        for lows in itertools.product(*[(0, 1)] * levels):  # 1: doubled to the left
            low, intervals = 0, [(0, 1)]
            for k, left in enumerate(lows):
                low -= (1 << k) if left else 0
                intervals.append((low, low + (1 << (k + 1))))
            cost = 2 * levels
            if best is not None and cost >= best[0]:
                continue
            candidates = set()
            for level, (a, b) in enumerate(intervals):
                size = b - a
                if size > length:
                    continue
                for offset in (start - a, stop - b, 0):
                    if start <= a + offset and b + offset <= stop:
                        candidates.add((level, offset))
            for count in (1, 2, 3):
                for pieces in itertools.combinations(sorted(candidates), count):
                    covered = np.zeros(length, bool)
                    for level, offset in pieces:
                        a, b = intervals[level]
                        covered[a + offset - start : b + offset - start] = True
                    if not covered.all():
                        continue
                    total = cost + count - 1 + sum(offset != 0 for _, offset in pieces)
                    if best is None or total < best[0]:
                        best = (total, tuple(map(bool, lows)), pieces)
    assert best is not None
    return best


def extremum(
    shifts: Shifts,
    image: torch.Tensor,
    cells: np.ndarray,
    origin: tuple[int, int],
    pick: Pick,
    doubling: bool,
) -> torch.Tensor:
    """``pick`` over the kernel's true ``cells`` at every pixel of a 2-D view: the result
    at (y, x) reads image[y + i - origin[0], x + j - origin[1]] for each true cell (i, j).
    A full rectangle is separable (rows, then columns); other shapes take each kernel
    row's runs of true cells along the row once, then the kernel rows holding the same
    run as one window down the columns (``doubling``: see :func:`window`)."""
    result = None
    for (a, b), intervals in _pieces(cells).items():
        along = window(shifts, image, 1, a - origin[1], b - a, pick, doubling)
        for first, last in intervals:
            piece = window(shifts, along, 0, first - origin[0], last - first, pick, doubling)
            result = piece if result is None else pick(result, piece)
    return image.clone() if result is None else result


def extremum_nodes(cells: np.ndarray, origin: tuple[int, int], doubling: bool) -> int:
    """How many shifts and picks :func:`extremum` writes (to choose ``doubling``)."""
    total = -1
    for (a, b), intervals in _pieces(cells).items():
        total += _plan(a - origin[1], b - a, doubling)[0]
        for first, last in intervals:
            total += 1 + _plan(first - origin[0], last - first, doubling)[0]
    return max(total, 0)


def _pieces(cells: np.ndarray) -> dict[tuple[int, int], list[tuple[int, int]]]:
    """Each run of true cells along a kernel row, with the intervals of kernel rows that
    hold it (a full rectangle: one run, one interval)."""
    holders: dict[tuple[int, int], list[int]] = {}
    for i in range(cells.shape[0]):
        for run in _runs(cells[i]):
            holders.setdefault(run, []).append(i)
    return {run: _intervals(rows) for run, rows in holders.items()}


def _runs(row: np.ndarray) -> list[tuple[int, int]]:
    """[start, stop) of each run of true cells in a kernel row."""
    edges = np.flatnonzero(np.diff(np.concatenate([[0], row.astype(np.int8), [0]])))
    return [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2])]


def _intervals(indices: list[int]) -> list[tuple[int, int]]:
    """Sorted indices as [first, stop) intervals of consecutive values."""
    out: list[tuple[int, int]] = []
    for i in indices:
        if out and out[-1][1] == i:
            out[-1] = (out[-1][0], i + 1)
        else:
            out.append((i, i + 1))
    return out
