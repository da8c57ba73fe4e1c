"""The traced PIL image: ``Image.fromarray`` of traced pixels, and reading them back.

``Image.fromarray(x)`` with ``x`` a traced uint8 array returns a :class:`TracedImage`: a
subclass of Pillow's ``Image`` whose Pillow state holds the concrete pixels (so ``size``,
``mode``, ``isinstance`` checks and Pillow's own code behave as they would) and which also
carries the traced pixels. ``np.asarray(img)`` / ``np.array(img)`` give the traced array
back (read-only for ``asarray``, as Pillow's is); the replaced methods (resize, convert,
crop, transpose, copy) compute from the traced pixels. Anything else that reads the pixels
goes through Pillow's ``Image.im`` core: on a traced image that read warns
(``TraceLossWarning``) at the user's line, naming the Pillow function, and the image turns
into the plain image it holds, so every later result is Pillow's own. Plain arrays never
meet any of this: ``Image.fromarray(plain)`` is Pillow's own call.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ...patching.comparison import register_comparison
from ...tracing.loss import report_loss
from ...tracing.values import find_recorder, plain
from ._base import CHANNELS, MODES, Image, refuse, replaces

FAMILY = "image"
_EXACT = "bit-exact (the pixels themselves)"
_ORIGINAL_FROMARRAY = Image.fromarray  # Pillow's own, as imported (before any session)
_PIXEL_CORE = vars(Image.Image)["im"]  # Pillow's property holding the C image core


class TracedImage(Image.Image):
    """A Pillow image made from traced pixels (see the module docstring).

    ``_pp_pixels`` is the traced (H, W, C) uint8 tensor; where Pillow shares the array's
    memory (``fromarray`` of a C-contiguous L or RGBA array), ``_pp_source`` is that traced
    array instead, read at each use so later writes to it show as they do in Pillow.
    """

    _pp_pixels: torch.Tensor | None = None
    _pp_source: np.ndarray | None = None

    def __pp_traced__(self) -> tuple[Any, ...]:
        """The traced values this image carries (patchport's dispatch looks for them)."""
        state = self.__dict__
        return (state.get("_pp_pixels"), state.get("_pp_source"))

    def __pp_array__(self) -> np.ndarray | None:
        """What ``np.asarray(self)`` reads: the traced pixels as a fresh read-only array
        shaped like Pillow's ((H, W) for L), or None once the image holds no traced data."""
        pixels = traced_pixels(self)
        if pixels is None:
            return None
        array = to_numpy(pixels)
        np.ndarray.setflags(array, write=False)  # read-only as Pillow's (no trace event)
        return array

    def __pp_plain__(self) -> Image.Image:
        """The plain Pillow image this one stands in for (a copy of its concrete pixels):
        what the originals of the replaced methods are checked on."""
        return _ORIGINAL_FROMARRAY(np.array(concrete_pixels(self), copy=True), self.mode)

    @property
    def im(self) -> Any:
        """Pillow's pixel core. Reading it is how every Pillow function without a
        replacement reaches the pixels: on a traced image that loses the trace (warned at
        the user's line), and the image stays the plain one it holds from then on."""
        recorder = find_recorder(self)
        if recorder is not None:
            report_loss(
                recorder,
                "Pillow reads the pixels of a traced PIL image (a function or method with no "
                'patchport replacement in patching=["pil"])',
                "it computes on the concrete pixels, so its result is no longer traced and "
                "would be frozen as a constant; use the replaced calls (resize, convert, crop, "
                "transpose) or np.asarray(img) and NumPy/torch instead",
            )
            self.__dict__.pop("_pp_pixels", None)
            self.__dict__.pop("_pp_source", None)
        return _PIXEL_CORE.fget(self)

    @im.setter
    def im(self, core: Any) -> None:
        _PIXEL_CORE.fset(self, core)

    def copy(self) -> Image.Image:
        """A copy: traced as this image is (no Pillow call: the pixels are not mutable here)."""
        pixels = traced_pixels(self)
        if pixels is None:
            return Image.Image.copy(self)
        return make_image(pixels.clone(), self.mode)

    __copy__ = copy

    def __deepcopy__(self, memo: dict) -> Image.Image:
        return self.copy()

    def __repr__(self) -> str:
        return (
            f"<PIL.Image.Image image mode={self.mode} size={self.size[0]}x{self.size[1]} "
            f"at 0x{id(self):X}>"
        )


def traced_pixels(image: Any) -> torch.Tensor | None:
    """The traced (H, W, C) uint8 pixels of a TracedImage of an active session, else None."""
    state = getattr(image, "__dict__", {})
    source = state.get("_pp_source")
    if source is not None and find_recorder(source) is not None:
        return as_hwc(to_tensor(source))
    pixels = state.get("_pp_pixels")
    if pixels is not None and find_recorder(pixels) is not None:
        return pixels
    return None


def concrete_pixels(image: Any) -> np.ndarray:
    """The eager pixels of a TracedImage, shaped like ``np.asarray`` of it (no recording)."""
    pixels = traced_pixels(image)
    if pixels is None:
        return np.array(image)
    eager = plain(pixels).detach().numpy()
    return eager[..., 0] if image.mode == "L" else eager


def to_tensor(array: np.ndarray) -> torch.Tensor:
    """``torch.from_numpy`` of any array (traced stays traced): a copy first where the
    strides are negative or the memory is not C-contiguous (torch takes neither)."""
    if any(s < 0 for s in array.strides) or not array.flags.c_contiguous:
        array = array.copy()
    return torch.from_numpy(array)


def as_hwc(pixels: torch.Tensor) -> torch.Tensor:
    """(H, W) pixels as (H, W, 1); (H, W, C) as they are."""
    return pixels.unsqueeze(-1) if pixels.ndim == 2 else pixels


def to_numpy(pixels: torch.Tensor) -> np.ndarray:
    """(H, W, C) pixels as a fresh array shaped like Pillow's: (H, W) for one channel."""
    if pixels.shape[-1] == 1:
        pixels = pixels.squeeze(-1)
    return pixels.clone(memory_format=torch.contiguous_format).numpy()


def make_image(pixels: torch.Tensor, mode: str) -> Image.Image:
    """The image a replacement returns for (H, W, C) uint8 ``pixels``: a TracedImage when
    they are traced, else Pillow's own image of them."""
    eager = np.ascontiguousarray(plain(pixels).detach().numpy())
    concrete = _ORIGINAL_FROMARRAY((eager[..., 0] if mode == "L" else eager).copy(), mode)
    if find_recorder(pixels) is None:
        return concrete
    concrete.__class__ = TracedImage
    concrete._pp_pixels = pixels
    return concrete


def image_state(function: str, image: Any) -> tuple[torch.Tensor, str]:
    """(H, W, C) uint8 pixels of an image (traced or Pillow's own) and its mode; images of
    other modes than L, RGB and RGBA are refused."""
    if not isinstance(image, Image.Image):
        raise refuse(function, "self", f"a {type(image).__name__}", "a PIL Image")
    if image.mode not in MODES:
        raise refuse(function, "self.mode", repr(image.mode), ", ".join(map(repr, MODES)))
    pixels = traced_pixels(image)
    if pixels is None:  # Pillow's own image (e.g. a plain one pasted with a traced one)
        pixels = torch.from_numpy(np.array(image, dtype=np.uint8, copy=True))
        pixels = as_hwc(pixels)
    return pixels, image.mode


_TYPE_MODES = {1: "L", 3: "RGB", 4: "RGBA"}  # Pillow's mode for uint8 (H, W[, C]) arrays


@replaces(
    "Image.fromarray",
    family=FAMILY,
    dtypes=("uint8",),
    channels=(1, 3, 4),
    accuracy=_EXACT,
    arguments={"obj": ("(H, W) -> L", "(H, W, 3) -> RGB", "(H, W, 4) -> RGBA"), "mode": MODES},
    notes=(
        "`Image.fromarray` of a traced array returns a `TracedImage` (a subclass of "
        "`PIL.Image.Image`); where Pillow shares the array's memory (L and RGBA from a "
        "C-contiguous array), the traced image reads the array at each use, as Pillow does."
    ),
)
def fromarray(obj: Any, mode: str | None = None) -> Image.Image:
    """Traced ``Image.fromarray``: an image carrying the traced pixels (traced stay traced)."""
    function = "Image.fromarray"
    if not isinstance(obj, np.ndarray):
        raise refuse(function, "obj", f"a {type(obj).__name__}", "a NumPy uint8 array")
    if obj.dtype != np.uint8:
        raise refuse(
            function,
            "obj.dtype",
            obj.dtype.name,
            "uint8 (modes L, RGB, RGBA); convert with .astype(np.uint8) or keep the step "
            "in NumPy/torch",
        )
    channels = 1 if obj.ndim == 2 else obj.shape[-1] if obj.ndim == 3 else 0
    typemode = _TYPE_MODES.get(channels)
    if typemode is None or obj.ndim not in (2, 3):
        raise refuse(function, "obj.shape", tuple(obj.shape), "(H, W), (H, W, 3), (H, W, 4)")
    if mode is not None and mode != typemode:
        raise refuse(function, "mode", repr(mode), f"None or {typemode!r} for this array")
    if 0 in obj.shape[:2]:
        raise refuse(function, "obj.shape", tuple(obj.shape), "a non-empty image")
    concrete = _ORIGINAL_FROMARRAY(plain(obj), mode)
    shared = bool(concrete.readonly)  # Pillow maps the array's memory: reads see its writes
    concrete.__class__ = TracedImage
    if shared:
        concrete._pp_source = obj
    else:
        concrete._pp_pixels = as_hwc(to_tensor(obj)).clone()
    assert CHANNELS[typemode] == channels
    return concrete


def _comparable(image: Image.Image) -> tuple[Any, ...]:
    """An image's mode, size and concrete pixels (what trace-time checks compare)."""
    if traced_pixels(image) is not None:
        return (image.mode, image.size, concrete_pixels(image))
    return (image.mode, image.size, np.array(image))


register_comparison(Image.Image, _comparable)
