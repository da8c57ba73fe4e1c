"""Shared machinery of the Pillow replacements: the registry, refusals, the Pillow check.

Pillow stays optional: importing this module without it (or with a Pillow whose ``Image``
keeps its pixel core in a plain attribute, before 11) raises an ImportError naming the fix,
which ``start(patching=["pil"])`` passes on before anything changes.
"""

from __future__ import annotations

from typing import Any

from ...errors import UnsupportedCaseError
from ..contract import Registry

try:
    import PIL
    from PIL import Image
except ImportError as error:  # pragma: no cover - exercised in a subprocess without Pillow
    raise ImportError(
        "patchport.patches.pil needs Pillow >= 11: pip install 'patchport[pil]' "
        "(or pip install pillow)."
    ) from error

if not isinstance(vars(Image.Image).get("im"), property):  # pragma: no cover - Pillow < 11
    raise ImportError(
        "patchport.patches.pil needs Pillow >= 11 (Image.im as a property): pip install -U pillow"
    )

PILLOW = Registry("PIL", "pil")  # the shared contract (patches/contract.py), for Pillow
REGISTRY = PILLOW.entries
replaces = PILLOW.replaces
MODES = ("L", "RGB", "RGBA")  # the uint8 modes the replacements compute
CHANNELS = {"L": 1, "RGB": 3, "RGBA": 4}

__all__ = ["CHANNELS", "MODES", "PIL", "PILLOW", "REGISTRY", "Image", "UnsupportedCaseError"]


def refuse(function: str, argument: str, got: Any, supported: str) -> UnsupportedCaseError:
    """The error for an unsupported argument value (to raise)."""
    return PILLOW.refuse(function, argument, got, supported)
