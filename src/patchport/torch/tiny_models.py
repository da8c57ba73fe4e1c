"""Tiny models with random weights that reproduce real export problems, for tests and docs."""

from __future__ import annotations

from typing import Any

import torch


class TinyBroadcastAddModel(torch.nn.Module):
    """``x + y`` with ``x: (batch, d1)`` and ``y: (batch, d2)``, all four dims dynamic.

    The example input has ``d2 == 1``, so the output's second dimension is ``max(d1, d2)``
    symbolically. Plain ``torch.export`` specializes ``d2`` to 1; with
    ``backed_size_oblivious=True`` it fails; with ``patch_torch=True`` as well it exports a
    program that accepts every broadcastable ``(d1, d2)`` pair (the two batch sizes, traced
    equal, stay one size as in torch).
    """

    @staticmethod
    def _export_inputs() -> dict[str, torch.Tensor]:
        return {"x": torch.randn(2, 5), "y": torch.randn(2, 1)}

    @staticmethod
    def _dynamic_shapes() -> dict[str, Any]:
        return {"x": {0: "batch", 1: "d1"}, "y": {0: "batch", 1: "d2"}}

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + y
