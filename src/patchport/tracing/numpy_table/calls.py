"""What every NumPy handler shares: the ``Call`` being recorded and argument normalizers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import fx

from ..dtypes import compute_dtype, dtype_of, torch_dtype
from ..recorder import Recorder
from ..values import arg_of

Node = fx.Node


class Call:
    """One NumPy call being recorded: the recorder and the eager result."""

    __slots__ = ("rec", "result")

    def __init__(self, rec: Recorder, result: Any) -> None:
        self.rec = rec
        self.result = result

    def n(self, value: Any) -> Any:
        """Graph argument for ``value`` (node for arrays, literal for Python values)."""
        return arg_of(self.rec, value)

    def op(self, target: Any, *args: Any, **kwargs: Any) -> Node:
        """Record ``target(*args, **kwargs)``; arrays inside args become nodes."""
        rec = self.rec
        return rec.call(target, arg_of(rec, args), arg_of(rec, kwargs) if kwargs else None)

    def meth(self, name: str, *args: Any, **kwargs: Any) -> Node:
        """Record the tensor method ``args[0].name(*args[1:], **kwargs)``."""
        rec = self.rec
        return rec.call(
            name, arg_of(rec, args), arg_of(rec, kwargs) if kwargs else None, "call_method"
        )

    def cast(self, node: Any, have: Any, want: Any = None) -> Any:
        """Cast ``node`` (of NumPy dtype ``have``) to ``want`` (default: the result dtype)."""
        want = np.dtype(self.result.dtype if want is None else want)
        if np.dtype(have) == want:
            return node
        return self.rec.cast(node, torch_dtype(want))

    def t(self, value: Any, dtype: Any = None) -> Any:
        """Node of ``value`` as a tensor of ``dtype`` (default: the result dtype)."""
        if dtype is None:
            dtype = compute_dtype(self.result.dtype)
        dtype = np.dtype(dtype)
        if isinstance(value, (list, tuple)):
            value = np.asarray(value)
        if isinstance(value, (np.ndarray, torch.Tensor)):
            return self.cast(self.n(value), dtype_of(value), dtype)
        return self.rec.call(torch.full, ((), as_python(value)), {"dtype": torch_dtype(dtype)})

    def done(self, node: Any, have: Any) -> Any:
        """Finish a handler: cast ``node`` of dtype ``have`` to the result dtype."""
        return self.cast(node, have)


def as_python(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def is_array(value: Any) -> bool:
    """True for arrays and tensors (traced or not)."""
    return isinstance(value, (np.ndarray, torch.Tensor))


def normalize_axes(axis: Any, ndim: int) -> tuple[int, ...] | None:
    """Normalize a NumPy ``axis`` argument to a tuple of non-negative dims (None: all)."""
    if axis is None:
        return None
    if isinstance(axis, (tuple, list)):
        return tuple(int(a) % max(ndim, 1) for a in axis)
    return (int(axis) % max(ndim, 1),)


def all_dims(axis: Any, ndim: int) -> tuple[int, ...]:
    dims = normalize_axes(axis, ndim)
    return tuple(range(ndim)) if dims is None else dims


def plain_data(value: Any) -> Any:
    """Eager data of a possibly traced value, as a plain NumPy array."""
    if isinstance(value, torch.Tensor):
        return value.detach().as_subclass(torch.Tensor).cpu().numpy()
    return np.asarray(
        np.ndarray.view(value, np.ndarray) if isinstance(value, np.ndarray) else value
    )


def handler_table(table: dict[Callable, Callable]) -> Callable:
    """A decorator registering a handler in ``table`` for NumPy functions (and aliases)."""

    def implements(*functions: Callable) -> Callable:
        def register(handler: Callable) -> Callable:
            for fn in functions:
                table[fn] = handler
            return handler

        return register

    return implements
