"""Traced ``Image.convert`` between L, RGB and RGBA, in Pillow's integer arithmetic.

Pillow's luma is ``(R * 19595 + G * 38470 + B * 7471 + 0x8000) >> 16`` (ITU-R 601-2 in
16-bit fixed point, alpha ignored); L becomes RGB by repeating it, RGB(A) gains an opaque
alpha, RGBA loses its alpha. The premultiplied RGBa round trip that Pillow's resize of
RGBA images takes lives here too: ``c * a / 255`` as Pillow's MULDIV255, back with
``min(255, 255 * c // a)`` except where alpha is 0 or 255.
"""

from __future__ import annotations

from typing import Any

import torch

from ._base import MODES, refuse, replaces
from .image import image_state, make_image

FAMILY = "color"


def luma(rgb: torch.Tensor) -> torch.Tensor:
    """(H, W, >=3) uint8 pixels -> (H, W, 1) uint8 luma, as Pillow's rgb2l."""
    c = rgb.to(torch.int32)
    total = c[..., 0:1] * 19595 + c[..., 1:2] * 38470 + c[..., 2:3] * 7471 + 0x8000
    return torch.div(total, 65536, rounding_mode="floor").to(torch.uint8)


def with_alpha(rgb: torch.Tensor) -> torch.Tensor:
    """(H, W, 3) -> (H, W, 4) with an opaque alpha."""
    opaque = torch.full_like(rgb[..., :1], 255)
    return torch.cat([rgb, opaque], dim=-1)


def premultiply(rgba: torch.Tensor) -> torch.Tensor:
    """RGBA -> RGBa (uint8): each colour times alpha / 255, as Pillow's MULDIV255."""
    c = rgba.to(torch.int32)
    alpha = c[..., 3:4]
    t = c[..., :3] * alpha + 128
    colour = torch.div(torch.div(t, 256, rounding_mode="floor") + t, 256, rounding_mode="floor")
    return torch.cat([colour, alpha], dim=-1).to(torch.uint8)


def unpremultiply(rgba: torch.Tensor) -> torch.Tensor:
    """RGBa -> RGBA (uint8): ``min(255, 255 * c // a)``, colours kept where a is 0 or 255."""
    c = rgba.to(torch.int32)
    alpha = c[..., 3:4]
    keep = (alpha == 0) | (alpha == 255)
    divided = torch.div(255 * c[..., :3], torch.where(keep, 255, alpha), rounding_mode="floor")
    colour = torch.where(keep, c[..., :3], torch.clamp(divided, max=255))
    return torch.cat([colour, alpha], dim=-1).to(torch.uint8)


def convert_pixels(pixels: torch.Tensor, source: str, target: str) -> torch.Tensor:
    """(H, W, C) uint8 pixels of mode ``source`` as mode ``target`` (L, RGB, RGBA)."""
    if source == target:
        return pixels.clone()
    if target == "L":
        return luma(pixels)
    if source == "L":
        rgb = pixels.expand(-1, -1, 3)
        return rgb.clone() if target == "RGB" else with_alpha(rgb)
    if target == "RGB":
        return pixels[..., :3].clone()
    return with_alpha(pixels)


@replaces(
    "Image.Image.convert",
    family=FAMILY,
    dtypes=("uint8",),
    channels=(1, 3, 4),
    accuracy="bit-exact (Pillow's integer arithmetic)",
    arguments={"mode": MODES, "self.mode": MODES, "matrix": ("None",)},
    notes=(
        "`convert` to L is Pillow's `(R * 19595 + G * 38470 + B * 7471 + 0x8000) >> 16` "
        "(alpha ignored); L to RGB repeats the luma; RGB to RGBA adds an opaque alpha; "
        "RGBA to RGB drops it. Other modes (P, 1, LA, CMYK, YCbCr, HSV, F, I) and "
        "`matrix=` are refused."
    ),
)
def convert(
    self: Any,
    mode: str | None = None,
    matrix: Any = None,
    dither: Any = None,
    palette: Any = None,
    colors: int = 256,
) -> Any:
    """Traced ``Image.convert`` between L, RGB and RGBA (dither, palette and colors only
    matter for P and 1 targets, which are refused)."""
    function = "Image.Image.convert"
    pixels, source = image_state(function, self)
    if matrix is not None:
        raise refuse(function, "matrix", "a matrix", "None (compute the matrix in NumPy)")
    target = source if mode is None else mode
    if target not in MODES:
        raise refuse(function, "mode", repr(mode), ", ".join(map(repr, MODES)))
    return make_image(convert_pixels(pixels, source, target), target)
