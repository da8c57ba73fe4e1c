"""Shared machinery of the SciPy replacements: the registry, refusals, conversions.

SciPy stays optional: importing this module without SciPy raises an ImportError that
names the fix, which ``start(patching=["scipy"])`` passes on before anything changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from ...errors import UnsupportedCaseError
from ...tracing.values import active_recorder, find_recorder
from ..contract import Registry

try:
    import scipy
except ImportError as error:  # pragma: no cover - exercised in a subprocess without SciPy
    raise ImportError(
        "patchport.patches.scipy needs SciPy >= 1.16: pip install 'patchport[scipy]' "
        "(or pip install scipy)."
    ) from error

SCIPY = Registry("scipy", "scipy")  # the shared contract (patches/contract.py), for scipy
REGISTRY = SCIPY.entries
replaces = SCIPY.replaces

__all__ = ["REGISTRY", "SCIPY", "UnsupportedCaseError", "replaces", "scipy"]


def refuse(function: str, argument: str, got: Any, supported: str) -> UnsupportedCaseError:
    """The error for an unsupported argument value (to raise)."""
    return SCIPY.refuse(function, argument, got, supported)


def no_output(function: str, output: Any, name: str = "output") -> None:
    """Refuse destination buffers and dtype requests: traced calls return new arrays."""
    if output is not None:
        shown = output if isinstance(output, (str, type, np.dtype)) else type(output).__name__
        raise refuse(function, name, shown, f"{name}=None (use the return value)")


def is_traced(value: Any) -> bool:
    """Whether ``value`` holds traced data of an active session (arrays, lists, objects)."""
    return active_recorder(value) is not None or find_recorder(value) is not None


def describe(value: Any) -> str:
    """A short description of an argument for a refusal: ``float64[3, 4]``, ``a list``."""
    if isinstance(value, np.ndarray):
        return f"{value.dtype.name}[{', '.join(map(str, value.shape))}]"
    if isinstance(value, torch.Tensor):
        return f"{str(value.dtype).removeprefix('torch.')}[{', '.join(map(str, value.shape))}]"
    return f"a {type(value).__name__}"


def as_float64(function: str, argument: str, value: Any) -> torch.Tensor:
    """An array-like argument (traced or not) as a float64 tensor, as SciPy promotes it;
    traced data stays traced (NumPy arrays, torch tensors, lists of traced scalars)."""
    if isinstance(value, torch.Tensor):
        return value.to(torch.float64)
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise refuse(function, argument, describe(value), "an array of numbers") from None
    if array.dtype != np.float64:  # pragma: no cover - asarray(dtype=) guarantees it
        raise refuse(function, argument, describe(value), "an array of numbers")
    return to_tensor(array)


def as_real(
    function: str, argument: str, value: Any, dtypes: Sequence[str] = ("float32", "float64")
) -> tuple[torch.Tensor, np.dtype]:
    """An array argument as a tensor in its own float dtype (integers become float64, as
    SciPy's filters compute them); returns ``(tensor, numpy dtype of the input)``."""
    if isinstance(value, torch.Tensor):
        raise refuse(function, argument, describe(value), "a NumPy array")
    array = np.asarray(value)
    if array.dtype.kind == "b" or array.dtype.kind not in "fiu":
        raise refuse(function, f"{argument}.dtype", array.dtype.name, "floating or integer")
    if array.dtype.kind == "f" and array.dtype.name not in dtypes:
        raise refuse(function, f"{argument}.dtype", array.dtype.name, ", ".join(dtypes))
    return to_tensor(array), array.dtype


def to_tensor(array: np.ndarray) -> torch.Tensor:
    """``torch.from_numpy`` of any array (traced stays traced): a copy where the strides are
    negative or the memory is not C-contiguous (torch takes neither)."""
    if any(s < 0 for s in array.strides) or not array.flags.c_contiguous:
        array = array.copy()
    return torch.from_numpy(array)


def to_numpy(result: torch.Tensor) -> np.ndarray:
    """A fresh contiguous NumPy array of ``result`` (traced when the tensor is)."""
    return result.clone(memory_format=torch.contiguous_format).numpy()
