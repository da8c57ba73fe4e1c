"""Conversions between NumPy arrays and torch tensors for the runners (CPU, no copy where
possible)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch


def as_tensor(value: Any) -> torch.Tensor:
    """A plain CPU tensor for a NumPy array or tensor (no copy where possible)."""
    kind = type(value)
    if kind is torch.Tensor:
        return value
    if kind is np.ndarray and value.flags.c_contiguous:  # the common case, on the hot path
        return torch.from_numpy(value)
    if isinstance(value, torch.Tensor):
        return value.as_subclass(torch.Tensor)
    return numpy_tensor(value)


def numpy_tensor(value: Any) -> torch.Tensor:
    """``torch.from_numpy`` for any array or NumPy scalar: 0-d stays 0-d (unlike
    ``ascontiguousarray``), a strided view is copied, and uint64 that NumPy hands out as
    ``numpy.ulonglong`` (ONNX Runtime does) is read under its canonical dtype, same bytes."""
    array = value if type(value) is np.ndarray else np.asarray(value)
    if not array.flags.c_contiguous:  # a 0-d array always is, so this keeps its shape
        array = np.ascontiguousarray(array)
    canonical = _CANONICAL.get(array.dtype)
    if canonical is None:
        canonical = _CANONICAL.setdefault(array.dtype, np.dtype(array.dtype.name))
    if array.dtype.char != canonical.char:
        array = array.view(canonical)
    return torch.from_numpy(array)


_CANONICAL: dict[np.dtype, np.dtype] = {}  # dtype -> the dtype its name gives (run hot path)


def as_numpy(value: Any) -> np.ndarray:
    """A NumPy array for a tensor or array-like output."""
    if type(value) is torch.Tensor and not value.requires_grad and value.device.type == "cpu":
        return value.numpy()  # the common case, on the hot path
    if isinstance(value, torch.Tensor):
        return value.detach().as_subclass(torch.Tensor).cpu().numpy()
    return np.asarray(value)
