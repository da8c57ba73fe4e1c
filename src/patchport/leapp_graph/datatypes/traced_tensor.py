"""LEAPP's ``leapp.leapp_graph.datatypes.traced_tensor`` path: the traced tensor type."""

from __future__ import annotations

from . import TracedTensor

__all__ = ["TracedTensor"]
