"""Ready, verified traceable replacements, usable by name in ``start(patching=[...])``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def _opencv() -> list[Any]:
    from . import opencv

    return opencv.all()


def named_patch_sets() -> dict[str, Callable[[], list[Any]]]:
    """Shipped patch sets by name; each value returns a fresh list of FunctionPatch."""
    return {"opencv": _opencv}
