"""LEAPP's ``leapp.inference_manager`` module path: :class:`InferenceManager`."""

from __future__ import annotations

from .bundle import InferenceManager

__all__ = ["InferenceManager"]
