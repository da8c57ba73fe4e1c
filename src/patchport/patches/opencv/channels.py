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
