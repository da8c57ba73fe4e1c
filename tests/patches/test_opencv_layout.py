"""Channel moves through the (W, C, H) view give what the plain (H, W, C) indexing gives,
for every dtype: values are copied, never computed."""

from __future__ import annotations

import pytest
import torch

from patchport.patches.opencv import layout


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int16, torch.float32, torch.float64])
def test_columns_and_image_are_inverse_views(dtype):
    t = (torch.arange(5 * 7 * 3) % 251).to(dtype).reshape(5, 7, 3)
    cols = layout.columns(t)
    assert cols.shape == (7, 3, 5)
    assert torch.equal(cols[4, 2, 1], t[1, 4, 2])
    assert torch.equal(layout.image(cols), t)


@pytest.mark.parametrize(
    ("channels", "order", "fill"),
    [
        (3, (2, 1, 0), None),  # BGR <-> RGB
        (4, (2, 1, 0, 3), None),  # BGRA -> RGBA
        (4, (0, 1, 2), None),  # drop alpha
        (3, (2, 1, 0), 255),  # add alpha
        (1, (0, 0, 0), None),  # gray -> BGR
        (1, (0, 0, 0), 255),  # gray -> BGRA
        (3, (0, 1, 2), None),  # unchanged
    ],
)
def test_reorder_is_indexing_the_channels(channels, order, fill):
    t = torch.randint(0, 256, (6, 9, channels), dtype=torch.uint8)
    expected = t[..., list(order)]
    if fill is not None:
        expected = torch.cat([expected, torch.full_like(expected[..., :1], fill)], dim=-1)
    got = layout.reorder(t, order, fill)
    assert got.shape == expected.shape and torch.equal(got, expected)
