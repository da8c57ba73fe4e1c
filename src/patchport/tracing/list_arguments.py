"""NumPy's own code handed a Python list of traced arrays: ``np.mean([a, b], axis=0)``.

NumPy dispatches ``__array_function__`` on the list object, not on its items, so such a call
runs NumPy's implementation, whose conversion (``asarray`` / ``asanyarray`` or a reduction
helper handing the list to a ufunc) is C code that reads the items' memory with no hook: the
result would be a constant of the sample, exported silently. Inside a session those
conversion points of NumPy's implementation modules are entries that first turn a list,
tuple or deque holding traced data into one traced array (the traced ``np.asarray``);
every other argument goes to NumPy untouched. Public functions (``np.mean`` itself) are not
replaced, so ``func is np.mean`` inside a user's ``__array_function__`` still holds.
"""

from __future__ import annotations

import sys
from collections import deque
from collections.abc import Callable
from typing import Any

import numpy as np

from ..patching import PatchFamily, PatchInfo
from ..patching.source_diff import wraps_original
from .interop import _ORIGINALS as INTEROP_ORIGINALS
from .interop import _first_parameter
from .interop import array as traced_array
from .interop import asarray as traced_asarray
from .values import active_recorder, find_recorder

# NumPy's implementation modules whose functions convert a user's array-like with their
# module-level conversion names and then compute through calls that dispatch on a traced
# array (reductions, statistics, norms, polynomials, np.r_ / np.c_, np.isclose, np.tile).
# Modules whose functions mostly write into buffers of their own (np.diag) are not listed:
# there a traced array would meet plain buffers where a list is refused loudly today.
_IMPLEMENTATION_MODULES = (
    "numpy._core.fromnumeric",
    "numpy._core._methods",
    "numpy._core.numeric",
    "numpy.linalg._linalg",
    "numpy.lib._function_base_impl",
    "numpy.lib._nanfunctions_impl",
    "numpy.lib._polynomial_impl",
    "numpy.lib._shape_base_impl",
)
_CONVERSIONS = ("asarray", "asanyarray", "array")
# helpers that hand their first argument straight to a method or a ufunc's reduce
_HELPERS = (
    ("numpy._core.fromnumeric", "_wrapreduction"),
    ("numpy._core.fromnumeric", "_wrapreduction_any_all"),
    ("numpy._core.fromnumeric", "_wrapfunc"),
    ("numpy._core._methods", "_ptp"),
)


def holds_traced(value: Any) -> bool:
    """Whether ``value`` is a list, tuple or deque (recent frames) with active traced data
    somewhere inside."""
    kind = type(value)
    return (kind is list or kind is tuple or kind is deque) and find_recorder(value) is not None


def _converting_first(original: Callable[..., Any]) -> Callable[..., Any]:
    """``original`` whose first argument, when a list holding traced data, is first made
    one traced array; any other call is ``original``'s own."""

    first = _first_parameter(original)

    def replacement(*args: Any, **kwargs: Any) -> Any:
        if args:
            if holds_traced(args[0]):
                args = (traced_asarray(args[0]), *args[1:])
        elif holds_traced(kwargs.get(first)):
            kwargs[first] = traced_asarray(kwargs[first])
        return original(*args, **kwargs)

    return wraps_original(original)(replacement)


# what NumPy's modules hold while no session runs (np.asarray / np.array are patched in one)
_NUMPY_ORIGINALS = {
    "asarray": INTEROP_ORIGINALS["np.asarray"],
    "asanyarray": np.asanyarray,
    "array": INTEROP_ORIGINALS["np.array"],
}


@wraps_original(_NUMPY_ORIGINALS["asanyarray"])
def _asanyarray(a: Any, *args: Any, **kwargs: Any) -> Any:
    """``np.asanyarray`` that keeps traced data traced (a list holding traced values, a traced
    array given a new dtype), as ``np.asarray`` does in a session; anything else, a masked
    array or a matrix included, is NumPy's own (its subclass kept)."""
    if active_recorder(a) is not None or holds_traced(a):
        return traced_asarray(a, *args, **kwargs)
    return _NUMPY_ORIGINALS["asanyarray"](a, *args, **kwargs)


def replacements() -> dict[tuple[Any, str], Callable[..., Any]]:
    """(module, name) -> entry for each conversion point found in the NumPy installed;
    names a NumPy version does not have are skipped."""
    traced_of = {"asarray": traced_asarray, "asanyarray": _asanyarray, "array": traced_array}
    found: dict[tuple[Any, str], Callable[..., Any]] = {}
    for module_name in _IMPLEMENTATION_MODULES:
        module = sys.modules.get(module_name)
        for name in _CONVERSIONS if module is not None else ():
            if getattr(module, name, None) is _NUMPY_ORIGINALS[name]:
                # the full traced entry: once one conversion made the list a traced array,
                # the implementation's next conversion (np.cov's array(m, ndmin=2)) keeps it
                found[(module, name)] = traced_of[name]
    index_tricks = sys.modules.get(type(np.r_).__module__)
    if getattr(index_tricks, "array", None) is _NUMPY_ORIGINALS["array"]:
        # np.r_ / np.c_ convert each item (a list, or a traced array with ndmin=) by this name
        found[(index_tricks, "array")] = traced_array
    for module_name, name in _HELPERS:
        original = getattr(sys.modules.get(module_name), name, None)
        if callable(original):
            found[(sys.modules[module_name], name)] = _converting_first(original)
    # function_base and nanfunctions also convert through the public name (np.asanyarray)
    found[(np, "asanyarray")] = _asanyarray
    return found


def list_argument_patch_infos() -> list[PatchInfo]:
    """The entries as PatchInfo objects (family ``interop``) for a session; NumPy's own calls
    pass through them, so they are not counted (as cheap as NumPy's)."""
    return [
        PatchInfo(
            replacement,
            module,
            name,
            family=PatchFamily.INTEROP,
            description="keeps a list of traced arrays handed to NumPy traced",
            count_calls=False,
        )
        for (module, name), replacement in replacements().items()
    ]
