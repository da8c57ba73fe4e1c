"""``a.flat`` of a traced array: a flat iterator whose reads, unpacking and writes are traced.

Real code unpacks matrices with it (transforms3d: ``Qxx, Qyx, ..., Qzz = M.flat``), reads
``M.flat[k]`` and writes diagonals with ``M.flat[::n + 1] = v``. Each is the same operation
on ``np.ravel(a)``: a read of the raveled array, or a write through it when it is a view of
``a`` (C-contiguous data), which the view machinery carries back to ``a``. What has no such
equivalent (a write into a copy, NumPy's cyclic repetition of a shorter value, conversion
to a plain array) is a reported loss that still does what NumPy does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .loss import report_loss
from .recorder import Recorder
from .values import plain_tree
from .views import rebind


class TracedFlat:
    """What ``a.flat`` returns for traced ``a`` (``np.flatiter``'s reading and writing API)."""

    __slots__ = ("_base", "_rec", "_position")

    def __init__(self, base: Any, rec: Recorder) -> None:
        self._base = base
        self._rec = rec
        self._position = 0

    @property
    def base(self) -> Any:
        return self._base

    def __len__(self) -> int:
        return int(self._base.size)

    def _raveled(self) -> Any:
        return np.ravel(self._base)

    def __iter__(self) -> Any:
        return iter(self._raveled())

    def __next__(self) -> Any:
        if self._position >= len(self):
            raise StopIteration
        self._position += 1
        return self._raveled()[self._position - 1]

    def __getitem__(self, index: Any) -> Any:
        return self._raveled()[index]

    def copy(self) -> Any:
        return self._raveled().copy()

    def __setitem__(self, index: Any, value: Any) -> None:
        base = self._base
        selected = np.ndarray.view(base, np.ndarray).reshape(-1)[plain_tree(index)]
        repeats = np.size(value) not in (1, np.size(selected))
        if base.flags.c_contiguous and not repeats:
            self._raveled()[index] = value  # a view of base: the write reaches it
            return
        why = "repeats a shorter value" if repeats else "writes into non-contiguous data"
        report_loss(self._rec, f"ndarray.flat[...] = value that {why}")
        np.ndarray.view(base, np.ndarray).flat[plain_tree(index)] = plain_tree(value)
        data = np.array(np.ndarray.view(base, np.ndarray), copy=True)
        rebind(base, self._rec.constant(data, origin="data written through ndarray.flat"))

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        report_loss(self._rec, "np.asarray(a.flat) of traced data", "use np.ravel(a)")
        flat = np.ndarray.view(self._base, np.ndarray).reshape(-1).copy()
        return flat if dtype is None else flat.astype(dtype)
