"""NumPy-style indexing recorded as torch: reads, and writes recorded functionally.

Torch indexing follows NumPy's rules except that it has no negative-step slices; those
dimensions are flipped first and indexed with the equivalent positive slice.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch


def index_put(base: torch.Tensor, index: Any, value: Any) -> torch.Tensor:
    """Return a copy of ``base`` with ``base[index] = value`` (NumPy casting to base dtype)."""
    out = base.clone()
    if isinstance(value, torch.Tensor):
        value = value.to(out.dtype)
    out[index] = value
    return out


def _expand_index(index: Any, ndim: int) -> tuple:
    """Return the index as a tuple with any Ellipsis replaced by full slices."""
    items = index if isinstance(index, tuple) else (index,)
    used = 0
    for item in items:
        if item is None or item is Ellipsis:
            continue
        if isinstance(item, (np.ndarray, torch.Tensor)) and item.dtype in (np.bool_, torch.bool):
            used += item.ndim
        else:
            used += 1
    out: list[Any] = []
    seen_ellipsis = False
    for item in items:
        if item is Ellipsis and not seen_ellipsis:
            out.extend([slice(None)] * (ndim - used))
            seen_ellipsis = True
        else:
            out.append(item)
    return tuple(out)


def split_negative_steps(index: Any, shape: tuple[int, ...]) -> tuple[Any, tuple[int, ...]]:
    """Rewrite negative-step slices for torch: return (index on flipped data, dims to flip)."""
    items = index if isinstance(index, tuple) else (index,)
    if not any(type(i) is slice and i.step is not None and i.step < 0 for i in items):
        return index, ()
    items = _expand_index(index, len(shape))
    dim = 0
    flips: list[int] = []
    out: list[Any] = []
    for item in items:
        if item is None:
            out.append(item)
            continue
        if type(item) is slice and item.step is not None and item.step < 0:
            n = shape[dim]
            start, stop, step = item.indices(n)
            # position p in the original is n-1-p once the dimension is flipped
            out.append(slice(n - 1 - start, n - 1 - stop, -step))
            flips.append(dim)
            dim += 1
            continue
        is_mask = getattr(item, "dtype", None) in (np.bool_, torch.bool)
        dim += item.ndim if is_mask else 1
        out.append(item)
    return tuple(out), tuple(flips)
