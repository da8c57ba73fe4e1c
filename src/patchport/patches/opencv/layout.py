"""Channel moves of (H, W, C) images through the transposed (W, C, H) view, and their
channels as transposed planes.

ONNX Runtime copies a channel reorder, an added or dropped channel or a broadcast gray
channel element by element when it works on the (H, W, C) layout (Slice/Concat/Expand
with runs of 1 to 4 values: 0.5 to 5 ms at 480x640). Permuted to (W, C, H) (the
transpose of the (H, W*C) view, which ONNX Runtime runs as one fast 2-D transpose) each
channel of each column is a row of H values: there the same move copies whole rows,
0.19 ms in all at 480x640x3 uint8. Every value is copied, never computed: exact for any
dtype.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch


def columns(t: torch.Tensor) -> torch.Tensor:
    """The (W, C, H) view of an (H, W, C) image: ``columns(t)[x, c, y] == t[y, x, c]``."""
    return t.permute(1, 2, 0)


def image(cols: torch.Tensor) -> torch.Tensor:
    """The (H, W, C) image of a (W, C, H) view (the inverse of :func:`columns`)."""
    return cols.permute(2, 0, 1)


def moved(t: torch.Tensor, move: Callable[[torch.Tensor], torch.Tensor]) -> torch.Tensor:
    """``move`` applied to the channel axis (1) of the (W, C, H) view of ``t``."""
    return image(move(columns(t)))


def reorder(t: torch.Tensor, order: Sequence[int], fill: float | None = None) -> torch.Tensor:
    """The channels of ``t`` in ``order`` (repeats and drops allowed), and a last
    channel of ``fill`` where given (an alpha channel). The picked channels are always a
    Gather: ONNX Runtime's transpose optimiser moves the transposes through a Concat or a
    Slice, back to the (H, W, C) layout where they copy value by value."""

    def pick(cols: torch.Tensor) -> torch.Tensor:
        if fill is None and list(order) == list(range(cols.shape[1])):
            return cols
        if fill is None and len(set(order)) == 1 and cols.shape[1] == 1:
            return cols.expand(-1, len(order), -1)
        out = cols.index_select(1, torch.tensor(list(order), dtype=torch.int64))
        if fill is None:
            return out
        alpha = cols.new_full((cols.shape[0], 1, cols.shape[2]), fill)
        return torch.cat([out, alpha], dim=1)

    return moved(t, pick)


def planes(t: torch.Tensor) -> list[torch.Tensor]:
    """The channels of an (H, W, C) image as (W, H) planes (transposed: element-wise
    work on them is the same, and :func:`from_planes` puts them back). Each is picked
    from the (W, C, H) view by a Gather of whole rows, where ONNX Runtime's Split of the
    (H, W, C) layout copies value by value (0.26 ms at 480x640x3 against 0.1 ms); a
    Slice there would be moved back before the transpose by ONNX Runtime's optimiser."""
    cols = columns(t)
    return [cols.index_select(1, torch.tensor([c])).squeeze(1) for c in range(cols.shape[1])]


def from_planes(planes: Sequence[torch.Tensor]) -> torch.Tensor:
    """The (H, W, C) image of (W, H) planes (the inverse of :func:`planes`): stacked as
    (W, C, H), rows of H values, then one transpose."""
    return image(torch.stack(list(planes), dim=1))
