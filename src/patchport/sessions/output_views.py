"""Which node output a value handed to ``input_tensors`` is: the object itself, or a
zero-copy view of its memory (``torch.from_numpy``, ``.numpy()``, ``np.asarray``).

A view holds the same bytes in the same layout, so wiring it as the output's edge is
exact. A copy with equal values is not wired (equal data may be a coincidence); the
caller warns so that the user learns why the port became a pipeline input.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np
import torch

from ..tracing.dtypes import TORCH_TO_NP
from .state import Session

MemoryKey = tuple[int, tuple[int, ...], tuple[int, ...], str]


def memory_key(value: Any) -> MemoryKey | None:
    """(address, shape, byte strides, dtype) of a CPU array or tensor; else None."""
    if isinstance(value, np.ndarray):
        address = np.ndarray.view(value, np.ndarray).__array_interface__["data"][0]
        return address, value.shape, value.strides, value.dtype.str
    if isinstance(value, torch.Tensor):
        # a traced tensor answers each of these reads through __torch_function__: skip it
        with torch._C.DisableTorchFunctionSubclass():
            if value.device.type != "cpu" or value.is_sparse:
                return None
            dtype = TORCH_TO_NP.get(value.dtype)
            if dtype is None:  # bfloat16 and others NumPy has no dtype for
                return None
            strides = tuple(step * value.element_size() for step in value.stride())
            return value.data_ptr(), tuple(value.shape), strides, dtype.str
    return None


def remember_output(session: Session, value: Any, port: str) -> None:
    """Record ``value`` as the data of output ``port`` (by identity and by memory) for as
    long as the user holds it: a loop of many passes must not keep every output alive."""
    key = memory_key(value)
    if key is not None and (key[0] == 0 or 0 in key[1]):
        key = None
    ident = id(value)

    def forget(_dead: Any) -> None:
        if session.output_owner.get(ident, (None,))[0] is reference:
            del session.output_owner[ident]
        if key is not None and session.output_views.get(key, (None,))[0] is reference:
            del session.output_views[key]

    try:
        reference: Any = weakref.ref(value, forget)
    except TypeError:  # not weak-referenceable: hold it (identity stays unique)
        reference = _Strong(value)
    session.output_owner[ident] = (reference, port)
    if key is not None:
        session.output_views[key] = (reference, port)


def mark_port(value: Any, port: str) -> None:
    """Note on a traced ``value`` the output name it was handed to (its ``output_port``)."""
    state = getattr(value, "_pp", None)
    if state is not None:
        state.port = port


def output_source(session: Session, value: Any) -> str | None:
    """The output port ``value`` is (or views without copying), else None."""
    owner = session.output_owner.get(id(value))
    if owner is not None and owner[0]() is value:
        return owner[1]
    key = memory_key(value)
    view = session.output_views.get(key) if key is not None else None
    return view[1] if view is not None and view[0]() is not None else None


def equal_output(session: Session, value: Any) -> str | None:
    """An output port holding equal values in other memory (a copy), else None."""
    data = _as_numpy(value)
    if data is None:
        return None
    for reference, port in list(session.output_views.values()):
        other = _as_numpy(reference())
        if other is not None and other.shape == data.shape and other.dtype == data.dtype:
            if np.array_equal(other, data):
                return port
    return None


class _Strong:
    """A reference that always resolves, for values ``weakref`` cannot point at."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __call__(self) -> Any:
        return self.value


def _as_numpy(value: Any) -> np.ndarray | None:
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, torch.Tensor) and value.device.type == "cpu":
        try:
            return value.detach().numpy()
        except TypeError:
            return None
    return None
