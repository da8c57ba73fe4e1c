"""Window minima and maxima as shifted copies: every plan covers exactly its window, long
windows take logarithmically many steps, and a fill border is only ever shifted in from
the image itself (a partial window next to an edge is not the border beyond it)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from patchport.patches.opencv import window


def _simulate(start: int, length: int, doubling: bool) -> tuple[list[set[int]], int]:
    """The offsets each piece of the plan covers, and the nodes it writes."""
    nodes, lefts, pieces = window._plan(start, length, doubling)
    images, written = [{0}], 0
    for k, left in enumerate(lefts):
        move = -(1 << k) if left else 1 << k
        images.append(images[-1] | {o + move for o in images[-1]})
        written += 2
    covered = [{o + shift for o in images[level]} for level, shift in pieces]
    written += len(pieces) - 1 + sum(shift != 0 for _, shift in pieces)
    assert nodes == written
    return covered, nodes


@pytest.mark.parametrize("doubling", [True, False])
def test_every_plan_covers_its_window_and_nothing_else(doubling):
    for length in range(1, 18):
        for start in range(-length, 3):
            window_cells = set(range(start, start + length))
            covered, _ = _simulate(start, length, doubling)
            assert set().union(*covered) == window_cells
            assert all(piece <= window_cells for piece in covered)


def test_long_windows_double():
    assert _simulate(-1, 3, False)[1] == 4  # 3: two shifts, two picks either way
    assert _simulate(-2, 5, True)[1] == 6  # 5: [0, 2), then [-2, 2), then the last cell
    assert _simulate(-3, 7, True)[1] == 6  # 7: [0, 2), [0, 4), two overlapping fours
    assert _simulate(-15, 31, True)[1] <= 10
    assert _simulate(-15, 31, False)[1] == 60


def test_a_fill_border_is_shifted_in_only_from_the_image():
    """Without doubling, a 5-wide minimum next to the edge keeps the pixels inside: the
    fill (the identity of min) only replaces what lies beyond the image."""
    row = torch.tensor([[5, 1, 7, 3, 9, 4]], dtype=torch.uint8)
    shifts = window.Shifts(channels=1, fill=255)
    got = window.window(shifts, row, 1, -2, 5, torch.minimum, doubling=False)
    padded = np.concatenate([[255, 255], row[0].numpy(), [255, 255]])
    expected = [padded[i : i + 5].min() for i in range(6)]
    assert got[0].tolist() == expected


def test_shifts_past_the_whole_image_are_the_fill():
    image = torch.arange(6, dtype=torch.uint8).reshape(2, 3)
    shifts = window.Shifts(channels=3, fill=9)
    assert torch.equal(shifts.shift(image, 0, 1), torch.full_like(image, 9))
    assert torch.equal(shifts.shift(image, -2, 0), torch.full_like(image, 9))
    assert shifts.shift(image, 1, 0) is shifts.shift(image, 1, 0)  # made once
