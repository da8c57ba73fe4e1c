"""Shared machinery of the OpenCV replacements: declared cases, refusals, conversions.

Every replacement is registered with :func:`replaces`, which records the cases it
supports in a machine-readable :class:`Support` (read by docs, the CLI and the tests);
the registry and the contract are those of every shipped set (:mod:`..contract`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from ...errors import UnsupportedCaseError
from ..contract import Registry, Support

try:
    import cv2
except ImportError as error:  # pragma: no cover - the opencv extra is not installed
    raise ImportError(
        "patchport.patches.opencv needs OpenCV: pip install 'patchport[opencv]' "
        "(opencv-python-headless)."
    ) from error


# families whose float results are sums over neighbourhoods (filters, pyramids, warps,
# matrix transforms): values that cancel near zero carry the rounding of what was summed
_SUMMING_FAMILIES = frozenset({"filters", "convolution", "pyramids", "geometry", "transforms"})

OPENCV = Registry("cv2", "opencv")  # the shared contract (patches/contract.py), for cv2
OPENCV.levels["fast"] = {}
REGISTRY: dict[str, Support] = OPENCV.entries
# opt-in accuracy levels: level -> function -> the replacement used at that level instead
# of REGISTRY's (faster lowering, a declared and verified accuracy)
LEVELS: dict[str, dict[str, Support]] = OPENCV.levels


def replaces(
    function: str,
    *,
    family: str,
    dtypes: Sequence[str],
    channels: Sequence[int],
    accuracy: str,
    arguments: dict[str, Sequence[str]] | None = None,
    notes: str = "",
    uint8_units: int = 0,
    float_atol: float = 1e-6,
    uint16_units: int | None = None,
    level: str | None = None,
    magnitude_rtol: float | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated function as the traceable replacement of ``cv2.<function>``
    (at an opt-in accuracy ``level`` of :data:`LEVELS` when given). Families that sum
    neighbourhoods keep OpenCV's float promise, 1e-5 of the data's magnitude, unless
    ``magnitude_rtol`` says otherwise (0: per value only)."""
    if magnitude_rtol is None:
        magnitude_rtol = 1e-5 if family in _SUMMING_FAMILIES else 0.0
    return OPENCV.replaces(
        function,
        family=family,
        dtypes=dtypes,
        channels=channels,
        accuracy=accuracy,
        arguments=arguments,
        notes=notes,
        uint8_units=uint8_units,
        float_atol=float_atol,
        uint16_units=uint16_units,
        level=level,
        magnitude_rtol=magnitude_rtol,
    )


def constant_name(value: Any, prefix: str) -> str:
    """OpenCV's name of an integer constant (``COLOR_BGR2RGB``) or its repr when unknown."""
    if isinstance(value, (int, np.integer)):
        names = sorted(n for n in dir(cv2) if n.startswith(prefix) and getattr(cv2, n) == value)
        if names:
            return f"{names[0]} ({int(value)})"
    return repr(value)


def refuse(function: str, argument: str, got: Any, supported: str) -> UnsupportedCaseError:
    """The error for an unsupported argument value (to raise)."""
    return OPENCV.refuse(function, argument, got, supported)


def output_buffer(replacement: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a replacement whose binding requires ``dst`` (``cv2.normalize(src, dst, ...)``)
    as taking it as an output buffer: the session then accepts the in-place idiom, dst
    being the traced first argument itself, and refuses any other dst."""
    replacement.__pp_buffers__ = ("dst",)  # type: ignore[attr-defined]
    return replacement


def no_dst(function: str, dst: Any, name: str = "dst") -> None:
    """Refuse destination buffers: traced calls must return new arrays."""
    if dst is not None:
        raise refuse(function, name, type(dst).__name__, f"{name}=None (use the return value)")


def as_tensor(
    function: str, src: Any, dtypes: Sequence[str], channels: Sequence[int], argument: str = "src"
) -> torch.Tensor:
    """Check an image argument and return it as a tensor of shape (H, W, C)."""
    if not isinstance(src, np.ndarray):
        raise refuse(function, argument, f"a {type(src).__name__}", "a NumPy array")
    if src.dtype.name not in dtypes:
        raise refuse(function, f"{argument}.dtype", src.dtype.name, ", ".join(dtypes))
    if src.ndim not in (2, 3):
        raise refuse(function, f"{argument}.ndim", src.ndim, "2 (H, W) or 3 (H, W, C)")
    cn = 1 if src.ndim == 2 else src.shape[2]
    if cn not in channels:
        raise refuse(function, f"{argument} channels", cn, ", ".join(map(str, channels)))
    if src.shape[0] == 0 or src.shape[1] == 0:
        raise refuse(function, f"{argument}.shape", src.shape, "a non-empty image")
    if any(s < 0 for s in src.strides):
        src = np.ascontiguousarray(src)
    tensor = torch.from_numpy(src)
    if src.dtype == np.uint16:  # few torch ops take uint16: compute in int32 (exact)
        tensor = tensor.to(torch.int32)
    return tensor if src.ndim == 3 else tensor.unsqueeze(-1)


def to_numpy(result: torch.Tensor, dtype: Any = None) -> np.ndarray:
    """An (H, W, C) result as a fresh array shaped like OpenCV's: (H, W) when C is 1;
    ``dtype`` casts it first (e.g. uint16 images computed in int32)."""
    if result.ndim == 3 and result.shape[2] == 1:
        result = result.squeeze(-1)
    if dtype is not None and np.dtype(dtype) == np.uint16 and result.dtype != torch.uint16:
        result = result.to(torch.uint16)  # values already in range: the cast is exact
    return result.clone(memory_format=torch.contiguous_format).numpy()


def integer_limits(dtype: Any) -> tuple[int, int] | None:
    """(min, max) of an integer NumPy dtype, None for floating point."""
    kind = np.dtype(dtype)
    return None if kind.kind == "f" else (int(np.iinfo(kind).min), int(np.iinfo(kind).max))


def saturate(values: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Round half to even and clamp to ``dtype``'s range, like OpenCV's saturate_cast."""
    if dtype.is_floating_point:
        return values.to(dtype)
    info = torch.iinfo(dtype)
    return torch.clamp(torch.round(values), info.min, info.max).to(dtype)


def tuple_of_ints(function: str, argument: str, value: Any, length: int = 2) -> tuple[int, ...]:
    """A size or point argument as a tuple of Python ints."""
    try:
        items = tuple(int(v) for v in value)
    except TypeError:
        raise refuse(function, argument, repr(value), f"a tuple of {length} ints") from None
    if len(items) != length:
        raise refuse(function, argument, repr(value), f"a tuple of {length} ints")
    return items


def scalar4(value: Any) -> tuple[float, float, float, float]:
    """An OpenCV Scalar (number or up to 4 numbers) as four floats."""
    if isinstance(value, (int, float, np.integer, np.floating)):
        return (float(value), 0.0, 0.0, 0.0)
    items = [float(v) for v in value][:4]
    return tuple(items + [0.0] * (4 - len(items)))  # type: ignore[return-value]


def border_index(length: int, before: int, after: int, border: int) -> np.ndarray:
    """Source index of each padded position, as OpenCV's borderInterpolate (-1: constant)."""
    positions = np.arange(-before, length + after)
    if border == cv2.BORDER_CONSTANT:
        return np.where((positions >= 0) & (positions < length), positions, -1)
    if border == cv2.BORDER_REPLICATE:
        return np.clip(positions, 0, length - 1)
    if border == cv2.BORDER_WRAP:
        return np.mod(positions, length)
    delta = 1 if border == cv2.BORDER_REFLECT_101 else 0
    if length == 1:
        return np.zeros_like(positions)
    out = []
    for p in positions.tolist():
        while not 0 <= p < length:
            p = -p - 1 + delta if p < 0 else length - 1 - (p - length) - delta
        out.append(p)
    return np.asarray(out, dtype=np.int64)


_MIRRORED = (cv2.BORDER_REFLECT_101, cv2.BORDER_REFLECT, cv2.BORDER_REPLICATE)
# dtypes ONNX Runtime's Pad runs, and the borders F.pad draws as OpenCV does
_ONE_PASS_PAD = (torch.uint8, torch.int8, torch.int32, torch.float32, torch.float64)
_ONE_PASS_MODES = {cv2.BORDER_REPLICATE: "replicate", cv2.BORDER_REFLECT_101: "reflect"}


def _mirror(t: torch.Tensor, dim: int, before: int, after: int, border: int) -> torch.Tensor:
    """Mirror (or replicate) borders by slicing from the ends (no indices computed from
    the size, so the same graph holds at every image size: dynamic axes stay dynamic)."""
    if border == cv2.BORDER_REPLICATE:
        first, last = t.narrow(dim, 0, 1), t.narrow(dim, t.shape[dim] - 1, 1)
        return torch.cat([first] * before + [t] + [last] * after, dim)
    skip = 1 if border == cv2.BORDER_REFLECT_101 else 0
    parts = [t.narrow(dim, skip, before).flip(dim)] if before else []
    parts.append(t)
    if after:
        end = t.shape[dim] - skip
        parts.append(t.narrow(dim, end - after, after).flip(dim))
    return torch.cat(parts, dim) if len(parts) > 1 else t


def pad(
    t: torch.Tensor,
    top: int,
    bottom: int,
    left: int,
    right: int,
    border: int,
    value: tuple[float, ...] = (0.0, 0.0, 0.0, 0.0),
) -> torch.Tensor:
    """Pad an (H, W, C) tensor like cv2.copyMakeBorder (constant value per channel).

    Where ONNX Runtime's Pad has a kernel for the dtype, a constant border of one value,
    a replicated or a BORDER_REFLECT_101 border is one F.pad (one Pad node, one pass);
    otherwise border strips are sliced and concatenated."""
    one_pass = t.dtype in _ONE_PASS_PAD and (top or bottom or left or right)
    inside = max(top, bottom) < t.shape[0] and max(left, right) < t.shape[1]
    if one_pass and inside and border in _ONE_PASS_MODES:
        widths = (0, 0, left, right, top, bottom)
        return F.pad(t.unsqueeze(0), widths, mode=_ONE_PASS_MODES[border]).squeeze(0)
    if border in _MIRRORED and inside:
        return _mirror(_mirror(t, 0, top, bottom, border), 1, left, right, border)
    height, width, channels = t.shape
    if border == cv2.BORDER_CONSTANT:  # fill rows and columns concatenated: no gather
        values = [value[c] if c < 4 else 0.0 for c in range(channels)]
        fill = saturate(torch.tensor(values, dtype=torch.float64), t.dtype)
        if one_pass and bool((fill == fill[0]).all()):
            return F.pad(t, (0, 0, left, right, top, bottom), value=float(fill[0]))
        fill = fill.reshape(1, 1, channels)
        if top or bottom:
            parts = [fill.expand(top, width, channels)] if top else []
            parts += [t] + ([fill.expand(bottom, width, channels)] if bottom else [])
            t = torch.cat(parts, 0)
        if left or right:
            size = t.shape[0]
            parts = [fill.expand(size, left, channels)] if left else []
            parts += [t] + ([fill.expand(size, right, channels)] if right else [])
            t = torch.cat(parts, 1)
        return t
    rows = border_index(height, top, bottom, border)
    cols = border_index(width, left, right, border)
    if not (len(rows) == t.shape[0] and (rows == np.arange(t.shape[0])).all()):
        t = t.index_select(0, torch.from_numpy(rows.astype(np.int64)))
    if not (len(cols) == t.shape[1] and (cols == np.arange(t.shape[1])).all()):
        t = t.index_select(1, torch.from_numpy(cols.astype(np.int64)))
    return t


def vector_pixels() -> int:
    """Pixels per block of OpenCV's widest vector loop on this CPU (4 float vectors): 64
    with AVX-512, 32 with AVX2, 16 otherwise, from the dispatched features cv2 reports
    (``*`` dispatched, ``?`` missing on this CPU)."""
    features = cv2.getCPUFeaturesLine().split()
    usable = {f.lstrip("*") for f in features if not f.endswith("?")}
    if "AVX512-SKX" in usable:
        return 64
    return 32 if "AVX2" in usable else 16
