"""LEAPP's ``leapp.export_manager`` module path: :class:`ExportManager`."""

from __future__ import annotations

from .export import ExportManager

__all__ = ["ExportManager"]
