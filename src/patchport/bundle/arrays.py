"""The array types a bundle runs on: NumPy always, torch tensors when torch is there.

Nothing here imports torch at module level. A conversion *to* torch imports it (the
caller holds a tensor or runs a torch model, so it is loaded already); a check whether a
value *is* a tensor reads ``sys.modules``, since no tensor exists before torch is imported.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

# dtype names torch accepts that NumPy spells otherwise (LEAPP's YAML may hold them)
_NUMPY_NAMES = {
    "bool": "bool_",
    "half": "float16",
    "float": "float32",
    "double": "float64",
    "short": "int16",
    "int": "int32",
    "long": "int64",
}


def is_tensor(value: Any) -> bool:
    """Whether ``value`` is a torch tensor, without importing torch."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def as_tensor(value: Any) -> Any:
    """A plain CPU tensor for a NumPy array or tensor (no copy where possible)."""
    import torch

    kind = type(value)
    if kind is torch.Tensor:
        return value
    flags = value.flags if kind is np.ndarray else None
    if flags is not None and flags.c_contiguous and flags.writeable:  # the hot path
        return torch.from_numpy(value)
    if isinstance(value, torch.Tensor):
        return value.as_subclass(torch.Tensor)
    return numpy_tensor(value)


def numpy_tensor(value: Any) -> Any:
    """``torch.from_numpy`` for any array or NumPy scalar: 0-d stays 0-d (unlike
    ``ascontiguousarray``), a strided view is copied, and uint64 that NumPy hands out as
    ``numpy.ulonglong`` (ONNX Runtime does) is read under its canonical dtype, same bytes."""
    import torch

    array = value if type(value) is np.ndarray else np.asarray(value)
    if not array.flags.c_contiguous:  # a 0-d array always is, so this keeps its shape
        array = np.ascontiguousarray(array)
    elif not array.flags.writeable:  # torch warns on read-only memory: give it a copy
        array = array.copy()
    canonical = _CANONICAL.get(array.dtype)
    if canonical is None:
        canonical = _CANONICAL.setdefault(array.dtype, np.dtype(array.dtype.name))
    if array.dtype.char != canonical.char:
        array = array.view(canonical)
    return torch.from_numpy(array)


_CANONICAL: dict[np.dtype, np.dtype] = {}  # dtype -> the dtype its name gives (run hot path)


def as_numpy(value: Any) -> np.ndarray:
    """A NumPy array for a tensor or array-like output."""
    if type(value) is np.ndarray:  # the common case, on the hot path
        return value
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        if type(value) is torch.Tensor and not value.requires_grad and value.device.type == "cpu":
            return value.numpy()
        return value.detach().as_subclass(torch.Tensor).cpu().numpy()
    return np.asarray(value)


def numpy_dtype(name: str) -> np.dtype:
    """The NumPy dtype of a YAML dtype name (``float32``, ``torch.float32``, ``float``)."""
    plain = str(name).removeprefix("torch.")
    try:
        return np.dtype(_NUMPY_NAMES.get(plain, plain))
    except TypeError:
        raise ValueError(
            f"dtype {name!r} in the pipeline description has no NumPy equivalent; run this "
            f"bundle with torch installed and imported (InferenceManager(..., arrays='torch'))."
        ) from None


class TorchArrays:
    """Buffers, inputs and outputs as CPU torch tensors: LEAPP's runtime contract."""

    name = "torch"

    def __init__(self) -> None:
        import torch

        self.torch = torch
        self.native = torch.Tensor
        self.copy = torch.Tensor.clone
        self.output = numpy_tensor  # a runner's output that is not a tensor: ONNX Runtime's

    def dtype(self, name: str) -> Any:
        dtype = getattr(self.torch, str(name).replace("torch.", ""), None)
        if not isinstance(dtype, self.torch.dtype):
            raise ValueError(f"unknown dtype {name!r} in the pipeline description")
        return dtype

    def zeros(self, shape: tuple[int, ...], dtype: str) -> Any:
        return self.torch.zeros(shape, dtype=self.dtype(dtype))

    def convert(self, key: str, value: Any) -> Any:
        """A CPU tensor for an input (models run on CPU; a CUDA tensor is copied over)."""
        if isinstance(value, self.torch.Tensor):
            return value.cpu()
        if isinstance(value, (np.ndarray, np.generic)):
            return numpy_tensor(value)
        raise TypeError(
            f"InferenceManager: input {key!r} must be a torch tensor or a NumPy array, got "
            f"{type(value).__name__}."
        )

    def stored(self, value: Any, like: Any) -> Any:
        """A new buffer holding ``value`` in ``like``'s dtype (``set_input_value``)."""
        with self.torch.no_grad():  # a new tensor: the old one may be an output the caller holds
            if value.shape == like.shape:
                return self.torch.empty_like(like).copy_(value)
            return value.to(like.dtype, copy=True)  # a dynamic axis at another size

    def mock(self, shape: tuple[int, ...], dtype_name: str) -> Any:
        """Random values: normal floats, integers in [0, 256), booleans."""
        torch, dtype = self.torch, self.dtype(dtype_name)
        if dtype.is_floating_point:
            return torch.randn(shape, dtype=dtype)
        if dtype == torch.bool:
            return torch.randint(0, 2, shape).to(torch.bool)
        return torch.randint(0, 256, shape).to(dtype)

    def loads(self, data: bytes) -> dict[str, Any]:
        """A safetensors file's tensors, from its bytes."""
        from safetensors.torch import load

        return load(data)


class NumpyArrays:
    """Buffers, inputs and outputs as NumPy arrays: an ONNX bundle run without torch."""

    name = "numpy"

    def __init__(self) -> None:
        self.native = np.ndarray
        self.copy = np.ndarray.copy
        self.output = as_numpy  # a runner's output that is not an array: torch's

    def dtype(self, name: str) -> np.dtype:
        return numpy_dtype(name)

    def zeros(self, shape: tuple[int, ...], dtype: str) -> np.ndarray:
        return np.zeros(shape, dtype=self.dtype(dtype))

    def convert(self, key: str, value: Any) -> np.ndarray:
        """A NumPy array for an input (a tensor, if one is given, is copied to the CPU)."""
        if isinstance(value, (np.ndarray, np.generic)) or is_tensor(value):
            return as_numpy(value)
        raise TypeError(
            f"InferenceManager: input {key!r} must be a NumPy array (or a torch tensor), got "
            f"{type(value).__name__}."
        )

    def stored(self, value: np.ndarray, like: np.ndarray) -> np.ndarray:
        return np.array(value, dtype=like.dtype, copy=True)

    def mock(self, shape: tuple[int, ...], dtype_name: str) -> np.ndarray:
        dtype = self.dtype(dtype_name)
        if dtype.kind == "f":
            return np.random.standard_normal(shape).astype(dtype)
        if dtype.kind == "b":
            return np.random.randint(0, 2, shape).astype(dtype)
        return np.random.randint(0, 256, shape).astype(dtype)

    def loads(self, data: bytes) -> dict[str, Any]:
        """A safetensors file's arrays, from its bytes."""
        from safetensors.numpy import load

        return load(data)


def arrays_for(choice: str | None) -> TorchArrays | NumpyArrays:
    """The array type a manager runs on: ``"torch"``, ``"numpy"``, or by default torch
    exactly when it is imported already (by the caller, or by a ``.pt``/``.pt2`` model)."""
    if choice is None:
        choice = "torch" if "torch" in sys.modules else "numpy"
    return TorchArrays() if choice == "torch" else NumpyArrays()
