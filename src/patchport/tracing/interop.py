"""NumPy <-> torch conversions that keep traced data traced.

``torch.from_numpy``, ``torch.as_tensor``, ``torch.tensor``, ``np.asarray``, ``np.array``
and ``np.ascontiguousarray`` are C functions that would silently drop the trace. This
module provides traced replacements (``REPLACEMENTS``) for a session to install as
patches; :func:`interop_patches` is a minimal install/restore used by the engine's tests
(issue 4's session should install the same replacements through ``patchport.patching``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import torch

from .values import (
    TracedArray,
    TracedTensor,
    active_recorder,
    find_recorder,
    make_traced,
    plain,
    real_torch_dtype,
    to_numpy_side,
    to_torch_side,
    torch_dtype,
    wrap_unsigned,
)

_ORIGINALS: dict[str, Callable] = {
    "torch.from_numpy": torch.from_numpy,
    "torch.as_tensor": torch.as_tensor,
    "torch.tensor": torch.tensor,
    "np.asarray": np.asarray,
    "np.array": np.array,
    "np.ascontiguousarray": np.ascontiguousarray,
}


def _traced_to_tensor(rec: Any, value: Any, result: torch.Tensor) -> torch.Tensor:
    node = value._pp_node
    if isinstance(value, torch.Tensor):
        source = value.dtype
    else:
        node = to_torch_side(rec, node, value.dtype)
        source = real_torch_dtype(value.dtype)
    if result.dtype != source:
        node = rec.cast(node, result.dtype)
    return make_traced(rec, result, node)


def from_numpy(array: Any) -> torch.Tensor:
    """``torch.from_numpy`` that keeps a traced array traced (shares memory, like the original)."""
    rec = active_recorder(array)
    if rec is None or type(array) is not TracedArray:
        return _ORIGINALS["torch.from_numpy"](array)
    result = _ORIGINALS["torch.from_numpy"](np.ndarray.view(array, np.ndarray))
    return make_traced(rec, result, to_torch_side(rec, array._pp_node, array.dtype))


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> torch.Tensor:
    """``torch.as_tensor`` that keeps traced arrays and tensors traced."""
    rec = active_recorder(data)
    original = _ORIGINALS["torch.as_tensor"]
    if rec is None:
        return original(data, dtype=dtype, device=device)
    with torch._C.DisableTorchFunctionSubclass():
        result = original(plain(data), dtype=dtype, device=device)
    return _traced_to_tensor(rec, data, result)


def tensor(data: Any, *args: Any, **kwargs: Any) -> torch.Tensor:
    """``torch.tensor`` (a copy) that keeps traced arrays and tensors traced."""
    rec = active_recorder(data)
    original = _ORIGINALS["torch.tensor"]
    if rec is None:
        if find_recorder(data) is not None:
            from .loss import report_loss

            report_loss(find_recorder(data), "torch.tensor() of a list holding traced values")
        return original(data, *args, **kwargs)
    with torch._C.DisableTorchFunctionSubclass():
        result = original(plain(data), *args, **kwargs)
    return _traced_to_tensor(rec, data, result)


def _numpy_entry(name: str) -> Callable:
    original = _ORIGINALS[name]

    def replacement(a: Any, *args: Any, **kwargs: Any) -> Any:
        rec = active_recorder(a)
        if rec is None:
            if isinstance(a, (list, tuple)) and find_recorder(a) is not None:
                from .loss import report_loss

                report_loss(find_recorder(a), f"{name}() of a list holding traced values")
            return original(a, *args, **kwargs)
        data = np.ndarray.view(a, np.ndarray) if type(a) is TracedArray else _tensor_numpy(a)
        result = original(data, *args, **kwargs)
        if not isinstance(result, np.ndarray):
            return result
        node = a._pp_node
        if type(a) is TracedArray:
            if torch_dtype(result.dtype) != torch_dtype(a.dtype):
                node = rec.cast(node, torch_dtype(result.dtype))
            if result.dtype != a.dtype:
                node = wrap_unsigned(rec, node, result.dtype)
        else:
            if real_torch_dtype(result.dtype) != a.dtype:
                node = rec.cast(node, real_torch_dtype(result.dtype))
            node = to_numpy_side(rec, node, result.dtype)
        return make_traced(rec, result, node)

    replacement.__name__ = name.split(".")[-1]
    replacement.__doc__ = f"``{name}`` that keeps traced arrays and tensors traced."
    return replacement


def _tensor_numpy(t: TracedTensor) -> np.ndarray:
    with torch._C.DisableTorchFunctionSubclass():
        return t.detach().numpy()


asarray = _numpy_entry("np.asarray")
array = _numpy_entry("np.array")
ascontiguousarray = _numpy_entry("np.ascontiguousarray")

# (module, attribute) -> traced replacement; what a session installs as interop patches
REPLACEMENTS: dict[tuple[Any, str], Callable] = {
    (torch, "from_numpy"): from_numpy,
    (torch, "as_tensor"): as_tensor,
    (torch, "tensor"): tensor,
    (np, "asarray"): asarray,
    (np, "array"): array,
    (np, "ascontiguousarray"): ascontiguousarray,
}


@contextlib.contextmanager
def interop_patches() -> Iterator[None]:
    """Install the interop replacements for the block; restore what we replaced on exit."""
    installed: list[tuple[Any, str, Callable, Callable]] = []
    try:
        for (module, attr), replacement in REPLACEMENTS.items():
            installed.append((module, attr, getattr(module, attr), replacement))
            setattr(module, attr, replacement)
        yield
    finally:
        for module, attr, original, replacement in reversed(installed):
            if getattr(module, attr) is replacement:
                setattr(module, attr, original)
