"""LEAPP's ``leapp.leapp_graph.datatypes.traced_data`` path: the common traced base."""

from __future__ import annotations

from . import TracedData

__all__ = ["TracedData"]
