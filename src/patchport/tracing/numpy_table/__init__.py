"""The one NumPy -> torch table: how each NumPy ufunc, function and method is recorded.

Every entry appends torch operations whose result has exactly the dtype and shape of the
eager NumPy result (``call.result``), so that the graph reproduces NumPy on fresh inputs.
By job: ``targets`` (the ``np_*`` graph targets), ``ufuncs`` (ufunc calls and their dtype
plan), ``reductions``, ``shape``, ``indexing``, ``linalg``, ``elementwise``, ``creation``,
``signal`` (convolution, FFTs, histograms, sliding windows...), and ``registry`` (NumPy
function or method -> handler), all sharing ``calls.Call``.
"""

from .calls import Call
from .indexing import record_ufunc_at
from .reductions import ACCUMULATORS, REDUCERS, record_ufunc_method
from .registry import (
    FUNCTIONS,
    INPLACE_FUNCTIONS,
    LOSS_METHODS,
    LOSS_REASONS,
    METADATA_FUNCTIONS,
    METHOD_FUNCTIONS,
    SILENT_METHODS,
    VARARG_METHODS,
)
from .targets import np_argsort, np_sort
from .ufuncs import UFUNCS, record_ufunc

__all__ = [
    "ACCUMULATORS",
    "FUNCTIONS",
    "INPLACE_FUNCTIONS",
    "LOSS_METHODS",
    "LOSS_REASONS",
    "METADATA_FUNCTIONS",
    "METHOD_FUNCTIONS",
    "REDUCERS",
    "SILENT_METHODS",
    "UFUNCS",
    "VARARG_METHODS",
    "Call",
    "np_argsort",
    "np_sort",
    "record_ufunc",
    "record_ufunc_at",
    "record_ufunc_method",
]
