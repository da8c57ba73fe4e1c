"""split and merge: moving between one (H, W, C) image and C single-channel images."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ._base import as_tensor, no_dst, refuse, replaces, to_numpy

_DTYPES = ("uint8", "int8", "uint16", "int16", "int32", "float32", "float64")
_CHANNELS = (1, 2, 3, 4)


@replaces("split", family="channels", dtypes=_DTYPES, channels=_CHANNELS, accuracy="exact")
def split(m: np.ndarray, mv: Any = None) -> Any:
    """Traceable ``cv2.split``: a tuple of (H, W) copies, one per channel (exact)."""
    no_dst("split", mv, "mv")
    t = as_tensor("split", m, _DTYPES, _CHANNELS, "m")
    return tuple(to_numpy(t[..., c : c + 1], m.dtype) for c in range(t.shape[2]))


@replaces("merge", family="channels", dtypes=_DTYPES, channels=_CHANNELS, accuracy="exact")
def merge(mv: Any, dst: Any = None) -> Any:
    """Traceable ``cv2.merge``: stacks same-sized, same-typed images along channels (exact)."""
    no_dst("merge", dst)
    if not isinstance(mv, (list, tuple)) or not mv:
        raise refuse("merge", "mv", type(mv).__name__, "a non-empty list or tuple of arrays")
    parts = [as_tensor("merge", a, _DTYPES, _CHANNELS, f"mv[{i}]") for i, a in enumerate(mv)]
    first = mv[0]
    for i, a in enumerate(mv):
        if a.shape[:2] != first.shape[:2] or a.dtype != first.dtype:
            raise refuse(
                "merge",
                f"mv[{i}]",
                f"{a.dtype}{list(a.shape)}",
                f"the size and dtype of mv[0] ({first.dtype}{list(first.shape)})",
            )
    total = sum(p.shape[2] for p in parts)
    if total > 4:
        raise refuse("merge", "mv", f"{total} channels in all", "at most 4 channels")
    return to_numpy(torch.cat(parts, dim=-1), first.dtype)


def _concat(function: str, src: Any, dim: int) -> np.ndarray:
    """Arrays of one dtype and channel count joined along rows (0) or columns (1)."""
    if not isinstance(src, (list, tuple)) or not src:
        raise refuse(function, "src", type(src).__name__, "a non-empty list or tuple of arrays")
    parts = [as_tensor(function, a, _DTYPES, _CHANNELS, f"src[{i}]") for i, a in enumerate(src)]
    first, keep = src[0], 1 - dim  # the axis that must agree
    for i, (a, p) in enumerate(zip(src, parts)):
        if (
            a.dtype != first.dtype
            or p.shape[2] != parts[0].shape[2]
            or (p.shape[keep] != parts[0].shape[keep])
        ):
            side = "rows" if dim == 1 else "columns"
            raise refuse(
                function,
                f"src[{i}]",
                f"{a.dtype}{list(a.shape)}",
                f"the dtype, channels and {side} of src[0] ({first.dtype}{list(first.shape)})",
            )
    return to_numpy(torch.cat(parts, dim=dim), first.dtype)


@replaces("hconcat", family="channels", dtypes=_DTYPES, channels=_CHANNELS, accuracy="exact")
def hconcat(src: Any, dst: Any = None) -> Any:
    """Traceable ``cv2.hconcat``: images of equal height side by side (exact)."""
    no_dst("hconcat", dst)
    return _concat("hconcat", src, 1)


@replaces("vconcat", family="channels", dtypes=_DTYPES, channels=_CHANNELS, accuracy="exact")
def vconcat(src: Any, dst: Any = None) -> Any:
    """Traceable ``cv2.vconcat``: images of equal width stacked top to bottom (exact)."""
    no_dst("vconcat", dst)
    return _concat("vconcat", src, 0)
