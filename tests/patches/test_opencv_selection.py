"""The shared min/max median networks of medianBlur, proved on every 0/1 window.

A network of minima and maxima commutes with every monotone map, so one that returns the
median of every window of zeros and ones returns the median of every window of any
values (the 0-1 principle): 2**9 and 2**25 windows, as packed bits, prove both sizes.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from patchport.patches.opencv import selection


def _zero_one_median(size: int) -> tuple[np.ndarray, np.ndarray]:
    """The plan's output and the true median over every 0/1 window, as packed bits:
    bit j of word w is the window whose pixel i is bit i of 64 * w + j."""
    cells = size * size
    words = np.arange(max(1, (1 << cells) >> 6), dtype=np.uint64)
    low = np.arange(64, dtype=np.uint64)[: 1 << cells]

    def leaf(i: int) -> np.ndarray:
        if i < 6:
            pattern = ((low >> np.uint64(i)) & np.uint64(1)) << low
            return np.full_like(words, np.bitwise_or.reduce(pattern))
        return np.where((words >> np.uint64(i - 6)) & np.uint64(1), ~np.uint64(0), np.uint64(0))

    nodes, root = selection._median_plan(size)
    memo: dict[tuple, np.ndarray] = {}

    def value(key: int, at: tuple[int, int]) -> np.ndarray:
        if (key, at) not in memo:
            node = nodes[key]
            if node[0] == "leaf":
                memo[(key, at)] = leaf(at[0] * size + at[1])
            else:
                name, a, b, shift = node
                first, second = value(a, at), value(b, (at[0] + shift[0], at[1] + shift[1]))
                memo[(key, at)] = first & second if name == "min" else first | second
        return memo[(key, at)]

    got = value(*root)
    ones_low = np.array([bin(int(j)).count("1") for j in low])
    ones_word = np.array([bin(int(w)).count("1") for w in range(len(words))])
    tables = [
        np.bitwise_or.reduce(np.where(ones_low + high > cells // 2, np.uint64(1) << low, 0))
        for high in range(ones_word.max() + 1)
    ]
    expected = np.asarray(tables, dtype=np.uint64)[ones_word]
    return got, expected


@pytest.mark.parametrize("size", [3, 5])
def test_median_network_selects_the_median_of_every_zero_one_window(size):
    got, expected = _zero_one_median(size)
    assert np.array_equal(got, expected)


@pytest.mark.parametrize("size", [3, 5])
def test_median_of_window_matches_torch_median_with_ties(size):
    rng = np.random.default_rng(size)
    height, width = 7, 9
    padded = torch.from_numpy(rng.integers(0, 4, (height + size - 1, width + size - 1, 2)))
    windows = padded.unfold(0, size, 1).unfold(1, size, 1).reshape(height, width, 2, -1)
    expected = windows.median(dim=-1).values  # odd count: the middle value
    got = selection.median_of_window(padded, size, height, width)
    assert torch.equal(got, expected)


def test_the_networks_are_cheaper_than_a_pruned_sort():
    """Shared images: far fewer minima and maxima than a pruned sort (202 for 25 values)."""
    nodes, root = selection._median_plan(5)
    assert len(selection._needed(nodes, root)) - 1 <= 90
    nodes, root = selection._median_plan(3)  # and 18 instead of 40 for 3x3
    assert len(selection._needed(nodes, root)) - 1 <= 18


def test_each_network_reads_few_shifted_copies():
    """Every min/max reads one operand in place and a shifted copy of the other; where
    the images are kept decides how many distinct copies (one Pad each) there are: 8 for
    3x3 (the column sort's two row shifts and two column shifts of each sorted rank),
    at most 31 for 5x5."""
    assert selection._layout(3)[1] == 8
    assert selection._layout(5)[1] <= 31


@pytest.mark.parametrize("size", [3, 5])
def test_median_of_window_on_a_window_sized_image(size):
    """One output pixel: every kept image is the padded image's size, nothing to spare."""
    rng = np.random.default_rng(size + 10)
    padded = torch.from_numpy(rng.integers(0, 256, (size, size, 3), dtype=np.uint8))
    expected = padded.reshape(-1, 3).median(dim=0).values.reshape(1, 1, 3)
    assert torch.equal(selection.median_of_window(padded, size, 1, 1), expected)
