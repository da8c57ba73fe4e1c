"""NumPy <-> torch dtypes and the rules for holding NumPy data in a torch graph.

torch has few kernels for uint16/uint32/uint64, so NumPy data of those dtypes is held as
int64 in the graph: arithmetic results are masked back into range (NumPy's wraparound)
and the data is cast back to its own dtype where torch itself receives it. The node rules take
the recorder (anything with ``cast`` and ``call``) as an argument: this module is a leaf
of ``tracing``. The NumPy <-> torch map itself is :mod:`patchport.dtype_table`'s.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ..dtype_table import numpy_to_torch

NP_TO_TORCH: dict[np.dtype, torch.dtype] = dict(numpy_to_torch())
TORCH_TO_NP: dict[torch.dtype, np.dtype] = {v: k for k, v in NP_TO_TORCH.items()}

# NumPy dtypes held as int64 in the graph -> the mask that wraps a result back into range
# (uint64 keeps its bits: no mask)
HELD_AS_INT64: dict[np.dtype, int | None] = {
    np.dtype(np.uint16): 0xFFFF,
    np.dtype(np.uint32): 0xFFFFFFFF,
    np.dtype(np.uint64): None,
}
_COMPUTE_AS = {dtype: np.dtype(np.int64) for dtype in HELD_AS_INT64}


def dtype_instance(dtype: Any) -> Any:
    """The dtype NumPy means by ``dtype=``: a DType class (``np.dtypes.Float32DType``, which
    NumPy's own quantile passes as ``type(arr.dtype)``) stands for its instance, while
    ``np.dtype()`` of the class would say object; anything else is returned as given."""
    if isinstance(dtype, type) and issubclass(dtype, np.dtype):
        try:
            return dtype()
        except TypeError:  # a parametric DType (strings): no single instance
            return dtype
    return dtype


def torch_dtype(dtype: Any) -> torch.dtype:
    """Torch dtype that NumPy data of ``dtype`` has in the graph (uint16/32/64: int64)."""
    dt = np.dtype(dtype)
    if dt in HELD_AS_INT64:
        return torch.int64
    try:
        return NP_TO_TORCH[dt]
    except KeyError:
        raise TypeError(f"NumPy dtype {dt} has no torch equivalent") from None


def real_torch_dtype(dtype: Any) -> torch.dtype:
    """The torch dtype with the same name as a NumPy dtype (for handing data to torch)."""
    try:
        return NP_TO_TORCH[np.dtype(dtype)]
    except KeyError:
        raise TypeError(f"NumPy dtype {np.dtype(dtype)} has no torch equivalent") from None


def compute_dtype(dtype: Any) -> np.dtype:
    """Dtype torch computes in for a NumPy dtype (int64 for uint16/32/64, few torch kernels)."""
    dtype = np.dtype(dtype)
    return _COMPUTE_AS.get(dtype, dtype)


def dtype_of(value: Any) -> np.dtype:
    """NumPy dtype of an array, tensor, NumPy scalar or Python scalar."""
    if isinstance(value, torch.Tensor):
        return TORCH_TO_NP[value.dtype]
    if isinstance(value, (np.ndarray, np.generic)):
        return value.dtype
    return np.asarray(value).dtype


def to_torch_side(rec: Any, node: Any, dtype: Any) -> Any:
    """Node of NumPy data as torch sees it (held uint16/32/64 cast back to their dtype)."""
    dt = np.dtype(dtype)
    return rec.cast(node, NP_TO_TORCH[dt]) if dt in HELD_AS_INT64 else node


def to_numpy_side(rec: Any, node: Any, dtype: Any) -> Any:
    """Node of torch data handed to NumPy (uint16/32/64 held as int64)."""
    return rec.cast(node, torch.int64) if np.dtype(dtype) in HELD_AS_INT64 else node


def wrap_unsigned(rec: Any, node: Any, dtype: Any) -> Any:
    """Mask a held uint16/uint32 result back into its range (NumPy's wraparound)."""
    mask = HELD_AS_INT64.get(np.dtype(dtype))
    return rec.call(torch.bitwise_and, (node, mask)) if mask else node


def numpy_cast(rec: Any, node: Any, have: Any, want: Any) -> Any:
    """``node`` (NumPy dtype ``have``) cast as ``astype(want)`` casts: the torch cast, and
    uint16/uint32 wrapped back into range."""
    have, want = np.dtype(have), np.dtype(want)
    if want == have:
        return node
    if torch_dtype(want) != torch_dtype(have):
        node = rec.cast(node, torch_dtype(want))
    return wrap_unsigned(rec, node, want)
