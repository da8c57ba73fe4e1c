"""Check a replacement against the original function on the same concrete values.

Every traced call of a replacement is checked by default (a warning beyond the declared
accuracy; ``verify=True`` raises): a wrong adapter otherwise exports a wrong model
silently, and the trace-time comparison says exactly where they differ.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from ..errors import PatchMismatchError
from ..patching.comparison import compared_view
from ..tracing.values import plain


def plain_copy(value: Any) -> Any:
    """A plain (untraced) copy of an array or tensor; other values are returned as is."""
    data = plain(value)
    if isinstance(data, np.ndarray):
        return np.ndarray.copy(np.ndarray.view(data, np.ndarray))
    if isinstance(data, torch.Tensor):
        with torch._C.DisableTorchFunctionSubclass():
            return data.detach().clone().as_subclass(torch.Tensor)
    return data


def _as_numpy(value: Any) -> np.ndarray:
    """A NumPy view of an array or tensor's data, for reading only (no copy: the
    comparison below never writes, and a call's results are compared once)."""
    data = plain(value)
    if isinstance(data, np.ndarray):
        return np.ndarray.view(data, np.ndarray)
    if isinstance(data, torch.Tensor):
        with torch._C.DisableTorchFunctionSubclass():
            return data.detach().cpu().numpy()
    return np.asarray(data)


def _leaves(obj: Any, path: str = "output") -> list[tuple[str, Any]]:
    obj = compared_view(obj)
    if isinstance(obj, (tuple, list)):
        return [leaf for i, item in enumerate(obj) for leaf in _leaves(item, f"{path}[{i}]")]
    if isinstance(obj, dict):
        return [leaf for k, item in obj.items() for leaf in _leaves(item, f"{path}[{k!r}]")]
    return [(path, obj)]


def _structure(obj: Any) -> Any:
    obj = compared_view(obj)
    if isinstance(obj, (tuple, list)):
        return (type(obj).__name__, [_structure(item) for item in obj])
    if isinstance(obj, dict):
        return ("dict", sorted(map(str, obj)), [_structure(v) for v in obj.values()])
    if isinstance(obj, (np.ndarray, torch.Tensor, np.generic, float)) or (
        type(obj) is int  # a bool stays a bool
    ):
        return "array"  # a traced 0-d array stands for a NumPy scalar or a Python number
    return type(obj).__name__


def compare_results(
    target: str, replacement: str, expected: Any, actual: Any, rtol: float, atol: float
) -> None:
    """Raise PatchMismatchError naming the first difference in structure, shape, dtype or
    values (with the largest difference and where it is)."""
    _, problem = check_results(target, replacement, expected, actual, rtol, atol)
    if problem is not None:
        raise PatchMismatchError(problem)


def check_results(
    target: str,
    replacement: str,
    expected: Any,
    actual: Any,
    rtol: float,
    atol: float,
    magnitude_rtol: float = 0.0,
    scale: float = 0.0,
) -> tuple[float, str | None]:
    """The largest absolute difference between the results (``inf`` when structure, shape
    or dtype differ) and, beyond ``rtol``/``atol``, a message describing the first
    difference (with where it is); ``None`` when within tolerance. Float results may also
    differ by ``magnitude_rtol`` times the data's magnitude: the larger of ``scale`` (the
    source's) and the result's largest finite value."""
    prefix = f"{replacement} disagrees with {target}"
    expected_structure, actual_structure = _structure(expected), _structure(actual)
    if expected_structure != actual_structure:
        return math.inf, (
            f"{prefix}: structure differs (original returns {expected_structure}, replacement "
            f"returns {actual_structure})."
        )
    largest, problem = 0.0, None
    for (path, want), (_, got) in zip(_leaves(expected), _leaves(actual)):
        number = isinstance(want, float) or type(want) is int  # 0-d arrays stand for them
        if not (number or isinstance(want, (np.ndarray, torch.Tensor, np.generic))):
            if want != got:
                return math.inf, f"{prefix} on {path}: {got!r} instead of {want!r}."
            continue
        want_np, got_np = _as_numpy(want), _as_numpy(got)
        if want_np.shape != got_np.shape:
            return math.inf, (
                f"{prefix} on {path}: shape {got_np.shape} instead of {want_np.shape}."
            )
        if want_np.dtype != got_np.dtype:
            return math.inf, (
                f"{prefix} on {path}: dtype {got_np.dtype} instead of {want_np.dtype}."
            )
        if want_np.size == 0 or _identical(want_np, got_np):
            continue
        a = want_np.astype(np.float64) if want_np.dtype != np.bool_ else want_np.astype(np.int8)
        b = got_np.astype(np.float64) if got_np.dtype != np.bool_ else got_np.astype(np.int8)
        equal = (a == b) | (np.isnan(a) & np.isnan(b))  # equal infinities differ by 0
        with np.errstate(invalid="ignore"):  # inf - inf where they are not equal: inf
            diff = np.where(equal, 0.0, np.abs(b - a))
        diff = np.where(np.isnan(diff), math.inf, diff)
        largest = max(largest, float(diff.max()))
        slack, declared = atol, f"atol={atol}"
        if magnitude_rtol and want_np.dtype.kind in "fc":
            magnitude = max(scale, _largest_finite(a))
            slack += magnitude_rtol * magnitude
            declared += f", magnitude_rtol={magnitude_rtol} of {magnitude:g}"
        close = np.isclose(b, a, rtol=rtol, atol=slack, equal_nan=True)
        span = float(a.max() - a.min()) if want_np.dtype.kind in "biu" else math.inf
        if problem is None and close.all() and 0 < atol and span <= atol:
            where = np.unravel_index(int(np.argmax(diff)), diff.shape)
            problem = (  # a 0/1 mask off by one unit is off entirely
                f"{prefix} on {path}: {int((diff > 0).sum())} of {diff.size} values differ by "
                f"up to {float(diff.max()):g}, the whole range of these integer values "
                f"({a.min():g} to {a.max():g}), which the declared atol={atol} cannot cover "
                f"(at index {tuple(map(int, where))}: original {a[where]!r}, replacement "
                f"{b[where]!r})."
            )
        if problem is None and not close.all():
            off = np.where(close, 0.0, diff)
            where = np.unravel_index(int(np.argmax(off)), off.shape)
            problem = (
                f"{prefix} on {path}: {int((~close).sum())} of {close.size} values differ; "
                f"largest difference {float(off[where]):g} at index {tuple(map(int, where))} "
                f"(original {a[where]!r}, replacement {b[where]!r}; rtol={rtol}, {declared})."
            )
    return largest, problem


def _largest_finite(values: np.ndarray) -> float:
    """The largest finite absolute value (0 when there is none)."""
    finite = np.abs(values[np.isfinite(values)])
    return float(finite.max()) if finite.size else 0.0


def data_magnitude(args: tuple, kwargs: dict) -> float:
    """The largest finite absolute value of a call's first array argument (its source
    image), 0 when it has none: the scale a filter's float rounding follows."""
    for value in (*args, *kwargs.values()):
        if isinstance(value, (np.ndarray, torch.Tensor)):
            data = _as_numpy(value)
            if data.dtype.kind not in "biufc" or data.size == 0:
                return 0.0
            return _largest_finite(data.astype(np.float64))
    return 0.0


def _identical(want: np.ndarray, got: np.ndarray) -> bool:
    """Exactly equal values (NaN where both are NaN, equal infinities): difference 0
    everywhere, so the full comparison below has nothing to report."""
    if same_bytes(want, got):  # the common case, one memory comparison
        return True
    if want.dtype.kind in "biu":
        return bool(np.array_equal(want, got))
    return want.dtype.kind == "f" and bool(np.array_equal(want, got, equal_nan=True))


def same_bytes(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two arrays of one plain numeric dtype and shape hold the same bytes: then
    their values are equal (NaN where both are NaN), so an exact comparison is skipped.
    False says nothing (other dtypes, or -0.0 against 0.0): compare values then."""
    return (
        a.dtype == b.dtype
        and a.dtype.kind in "biuf"
        and a.shape == b.shape
        and a.tobytes() == b.tobytes()
    )
