"""cv2.dnn.blobFromImage / blobFromImages: a network's NCHW float input from images.

OpenCV's steps, reproduced with the replacements of the steps it calls: resize to ``size``
(or, with ``crop``, scale by ``max(size / image size)`` in float32 and cut the centre,
its offset truncated), convert to float32, subtract ``mean`` (its first and third numbers
swapped with ``swapRB``), multiply by ``scalefactor``, then lay the channels out in
planes (B and R exchanged with ``swapRB`` for 3- and 4-channel images). With
``ddepth=CV_8U`` the blob keeps the uint8 values (OpenCV then takes neither a mean nor a
scale).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from . import elementwise, geometry, layout
from ._base import as_tensor, constant_name, cv2, refuse, replaces, scalar4, tuple_of_ints

_DTYPES = ("uint8", "float32", "float64")
_CHANNELS = (1, 3, 4)
_INTERPOLATIONS = ("INTER_NEAREST", "INTER_LINEAR", "INTER_AREA", "INTER_CUBIC")
_CASES = {
    "size": ("(0, 0): the image's own size", "(width, height)"),
    "crop": ("False: resize to size", "True: scale to cover size, cut the centre"),
    "ddepth": ("CV_32F", "CV_8U (scalefactor 1, mean 0)"),
    "interpolation": _INTERPOLATIONS,
}
_NOTES = (
    "each step goes through the replacement of the OpenCV function blobFromImage calls "
    "(resize, subtract, multiply), so the blob is as exact as those. float64 images are "
    "converted to float32 first, as OpenCV does."
)


def _checked_image(function: str, image: Any, argument: str) -> np.ndarray:
    """An image argument checked like OpenCV's blob code (uint8 or float, 1/3/4 channels)."""
    as_tensor(function, image, _DTYPES, _CHANNELS, argument)
    return image


def _resized(
    function: str, image: np.ndarray, size: tuple[int, int], crop: bool, interpolation: int
) -> np.ndarray:
    """The image at ``size`` (w, h): resized, or scaled to cover it and its centre cut."""
    height, width = image.shape[:2]
    if size == (width, height):
        return image
    if not crop:
        return geometry.resize(image, size, interpolation=interpolation)
    factor = max(np.float32(size[0]) / np.float32(width), np.float32(size[1]) / np.float32(height))
    scaled = geometry.resize(
        image, None, fx=float(factor), fy=float(factor), interpolation=interpolation
    )
    left = int(0.5 * (scaled.shape[1] - size[0]))  # cv::Point(double, double): truncated
    top = int(0.5 * (scaled.shape[0] - size[1]))
    return scaled[top : top + size[1], left : left + size[0]]


def _planes(
    function: str,
    image: np.ndarray,
    scalefactor: float,
    size: tuple[int, int],
    mean: Any,
    swap_rb: bool,
    crop: bool,
    ddepth: int,
    interpolation: int,
) -> torch.Tensor:
    """One image as a (C, H, W) tensor of the blob."""
    resized = _resized(function, image, size, crop, interpolation)
    channels = 1 if resized.ndim == 2 else resized.shape[2]
    if ddepth == cv2.CV_8U:
        t = as_tensor(function, resized, ("uint8",), _CHANNELS, "image")
    else:
        values = list(scalar4(mean))
        if swap_rb and channels >= 3:
            values[0], values[2] = values[2], values[0]
        floats = as_tensor(function, resized, _DTYPES, _CHANNELS, "image").to(torch.float32)
        floats = floats.numpy() if channels > 1 else floats.squeeze(-1).numpy()
        shifted = elementwise.subtract(
            floats, tuple(values[:channels]) if channels > 1 else values[0]
        )
        scaled = elementwise.multiply(
            shifted, (float(scalefactor),) * 4 if channels > 1 else scalefactor
        )
        t = as_tensor(function, scaled, ("float32",), _CHANNELS, "image")
    if swap_rb and channels >= 3:
        t = layout.reorder(t, [2, 1, 0, *range(3, channels)])  # TorchScript takes no t[..., list]
    return t.permute(2, 0, 1)


def _arguments(
    function: str, scalefactor: Any, size: Any, mean: Any, ddepth: int, interpolation: int
) -> tuple[tuple[int, int], int]:
    """The checked size and interpolation; the CV_8U rules OpenCV asserts."""
    width, height = tuple_of_ints(function, "size", size)
    if width < 0 or height < 0 or (width == 0) != (height == 0):
        raise refuse(function, "size", (width, height), "(0, 0) or positive (width, height)")
    codes = {getattr(cv2, name): name for name in _INTERPOLATIONS}
    if interpolation not in codes:
        shown = constant_name(interpolation, "INTER_")
        raise refuse(function, "interpolation", shown, ", ".join(_INTERPOLATIONS))
    if ddepth not in (cv2.CV_32F, cv2.CV_8U):
        raise refuse(function, "ddepth", ddepth, "CV_32F (5) or CV_8U (0)")
    if ddepth == cv2.CV_8U and (float(scalefactor) != 1.0 or any(scalar4(mean))):
        raise refuse(
            function,
            "scalefactor/mean",
            (scalefactor, mean),
            "scalefactor 1 and mean 0 with ddepth=CV_8U (OpenCV asserts it)",
        )
    return (width, height), interpolation


@replaces(
    "dnn.blobFromImage",
    family="dnn",
    dtypes=_DTYPES,
    channels=_CHANNELS,
    accuracy="as resize, subtract and multiply (uint8 INTER_LINEAR, INTER_NEAREST, INTER_AREA: "
    "exact)",
    arguments=_CASES,
    notes=_NOTES,
)
def blobFromImage(
    image: np.ndarray,
    scalefactor: float = 1.0,
    size: Any = (0, 0),
    mean: Any = (0, 0, 0, 0),
    swapRB: bool = False,
    crop: bool = False,
    ddepth: int = 5,
    interpolation: int = 1,
) -> Any:
    """Traceable ``cv2.dnn.blobFromImage``: a (1, C, H, W) blob, OpenCV's steps in order."""
    function = "dnn.blobFromImage"
    image = _checked_image(function, image, "image")
    size, interpolation = _arguments(function, scalefactor, size, mean, ddepth, interpolation)
    if size == (0, 0):
        size = (image.shape[1], image.shape[0])
    planes = _planes(
        function, image, scalefactor, size, mean, bool(swapRB), bool(crop), ddepth, interpolation
    )
    return planes.unsqueeze(0).contiguous().numpy()


@replaces(
    "dnn.blobFromImages",
    family="dnn",
    dtypes=_DTYPES,
    channels=_CHANNELS,
    accuracy="as blobFromImage",
    arguments={**_CASES, "images": ("a non-empty list of images of one channel count",)},
    notes="with size (0, 0) every image is resized to the first image's size, as in OpenCV.",
)
def blobFromImages(
    images: Any,
    scalefactor: float = 1.0,
    size: Any = (0, 0),
    mean: Any = (0, 0, 0, 0),
    swapRB: bool = False,
    crop: bool = False,
    ddepth: int = 5,
    interpolation: int = 1,
) -> Any:
    """Traceable ``cv2.dnn.blobFromImages``: an (N, C, H, W) blob of N images."""
    function = "dnn.blobFromImages"
    if not isinstance(images, (list, tuple)) or not images:
        raise refuse(function, "images", type(images).__name__, "a non-empty list of images")
    checked = [_checked_image(function, im, f"images[{i}]") for i, im in enumerate(images)]
    channels = {1 if im.ndim == 2 else im.shape[2] for im in checked}
    if len(channels) > 1:
        raise refuse(function, "images", sorted(channels), "images of one channel count")
    size, interpolation = _arguments(function, scalefactor, size, mean, ddepth, interpolation)
    if size == (0, 0):
        size = (checked[0].shape[1], checked[0].shape[0])
    blobs = [
        _planes(
            function, im, scalefactor, size, mean, bool(swapRB), bool(crop), ddepth, interpolation
        )
        for im in checked
    ]
    return torch.stack(blobs).contiguous().numpy()
