"""The table mapping NumPy functions and ndarray methods to their handlers.

Job modules each hold the handlers of their functions; this module merges them and lists
the methods and the functions that are answered eagerly or are a trace loss.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from . import creation, elementwise, indexing, linalg, reductions, shape, signal

# NumPy function -> handler(call, *args, **kwargs) giving the result's node (None: unmapped)
FUNCTIONS: dict[Callable, Callable] = {
    **shape.HANDLERS,
    **reductions.HANDLERS,
    **indexing.HANDLERS,
    **linalg.HANDLERS,
    **elementwise.HANDLERS,
    **creation.HANDLERS,
    **signal.HANDLERS,
}


# NumPy functions left unmapped on purpose -> why (said in their trace-loss warning)
LOSS_REASONS: dict[Callable, str] = {**linalg.LOSS_REASONS}


# functions that only read metadata: answered eagerly, nothing recorded, no warning
METADATA_FUNCTIONS: set[Callable] = {
    np.shape,
    np.ndim,
    np.size,
    np.result_type,
    np.iscomplexobj,
    np.isrealobj,
    np.may_share_memory,
    np.shares_memory,
}


# ndarray methods that are the NumPy function of the same meaning (self first)
METHOD_FUNCTIONS: dict[str, Callable] = {
    "sum": np.sum,
    "mean": np.mean,
    "std": np.std,
    "var": np.var,
    "min": np.min,
    "max": np.max,
    "argmin": np.argmin,
    "argmax": np.argmax,
    "prod": np.prod,
    "cumsum": np.cumsum,
    "cumprod": np.cumprod,
    "all": np.all,
    "any": np.any,
    "clip": np.clip,
    "round": np.round,
    "take": np.take,
    "repeat": np.repeat,
    "squeeze": np.squeeze,
    "swapaxes": np.swapaxes,
    "diagonal": np.diagonal,
    "trace": np.trace,
    "nonzero": np.nonzero,
    "argsort": np.argsort,
    "argpartition": np.argpartition,
    "searchsorted": np.searchsorted,
    "dot": np.dot,
    "conj": np.conjugate,
    "conjugate": np.conjugate,
    "ravel": np.ravel,
    "ptp": np.ptp,
    "copy": np.copy,
}


# functions writing their first argument in place -> handler giving its new node (or None)
INPLACE_FUNCTIONS: dict[Callable, Callable] = {
    **indexing.INPLACE_HANDLERS,
}


# methods taking a shape or axes as varargs: a.reshape(2, 3), a.transpose(1, 0)
VARARG_METHODS: dict[str, Callable] = {"reshape": np.reshape, "transpose": np.transpose}


# methods that only read metadata or format for display: no recording, no warning
SILENT_METHODS = {
    "__repr__",
    "__str__",
    "__format__",
    "__len__",
    "__sizeof__",
    "__reduce__",
    "__reduce_ex__",
    "__setstate__",
    "__array_namespace__",
    "__dlpack_device__",
    "__class_getitem__",
    "__init_subclass__",
    "__subclasshook__",
    "__getstate__",
    "__array_finalize__",
    "__array_wrap__",
    "__array_priority__",
    "__dir__",
    "__getattribute__",
    "__setattr__",
    "__delattr__",
    "__init__",
    "__new__",
    "__hash__",
    "__eq__",
    "__ne__",
    "__lt__",
    "__le__",
    "__gt__",
    "__ge__",
    "__array_ufunc__",
    "__array_function__",
}


# methods that turn traced data into Python values or raw memory: trace loss
LOSS_METHODS = {
    "item",
    "tolist",
    "tobytes",
    "tostring",
    "tofile",
    "dump",
    "dumps",
    "__float__",
    "__int__",
    "__bool__",
    "__index__",
    "__complex__",
    "__iter__",
    "__dlpack__",
    "__contains__",
}
