"""Ready, verified traceable replacements, usable by name in ``start(patching=[...])``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def _opencv() -> list[Any]:
    from . import opencv

    return opencv.all()


def _opencv_fast() -> list[Any]:
    from . import opencv

    return opencv.all(level="fast")


def _scipy() -> list[Any]:
    from . import scipy  # raises an ImportError naming the fix when SciPy is missing

    return scipy.all()


def _pil() -> list[Any]:
    from . import pil  # raises an ImportError naming the fix when Pillow is missing

    return pil.all()


def named_patch_sets() -> dict[str, Callable[[], list[Any]]]:
    """Shipped patch sets by name; each value returns a fresh list of FunctionPatch.
    ``opencv:fast`` is ``opencv`` with the faster replacements of its opt-in level."""
    return {"opencv": _opencv, "opencv:fast": _opencv_fast, "scipy": _scipy, "pil": _pil}
