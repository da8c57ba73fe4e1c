"""Traced ``scipy.interpolate.interp1d`` (linear, nearest, previous, next).

SciPy's ``interp1d`` copies ``y`` with NumPy's original ``np.array`` (a from-import in
SciPy's module), which drops the trace. The replaced ``__init__`` keeps SciPy's own
construction on the concrete data (every attribute, check and error as SciPy makes them)
and, when ``x`` or ``y`` is traced, makes the object a :class:`TracedInterp1d` carrying
the traced arrays. The replaced ``__call__`` evaluates with the NumPy operations SciPy's
own ``_call_linear`` / ``_call_nearest`` / ``_call_previousnext`` use, on traced data, so
results are SciPy's bit for bit; a plain ``interp1d`` called on traced points is traced.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...patching import original_of
from ...tracing.values import find_recorder, plain_tree
from ._base import describe, is_traced, refuse, replaces

try:
    from scipy.interpolate import interp1d
except ImportError as error:  # pragma: no cover - SciPy without interpolate
    raise ImportError("patchport.patches.scipy needs scipy.interpolate") from error

FAMILY = "interpolate"
_KINDS = ("linear", "nearest", "nearest-up", "previous", "next")


class TracedInterp1d(interp1d):
    """An ``interp1d`` built from traced data: SciPy's state holds the concrete arrays,
    ``_pp_x`` and ``_pp_y`` the traced ones (``_pp_y`` as SciPy's (n, -1) ``_y``)."""

    def __pp_traced__(self) -> tuple[Any, ...]:
        """The traced values this object carries (patchport's dispatch looks for them)."""
        return (self.__dict__.get("_pp_x"), self.__dict__.get("_pp_y"))


@replaces(
    "interpolate.interp1d.__init__",
    family=FAMILY,
    dtypes=("float32", "float64", "integers"),
    accuracy="SciPy's own construction (on the concrete data)",
    arguments={
        "kind": _KINDS,
        "fill_value": ("an untraced value", "'extrapolate'", "a pair of them"),
    },
    float_atol=0.0,
    rtol=0.0,
)
def __init__(  # noqa: N807 - the method SciPy's class has
    self: interp1d,
    x: Any,
    y: Any,
    kind: Any = "linear",
    axis: int = -1,
    copy: bool = True,
    bounds_error: Any = None,
    fill_value: Any = np.nan,
    assume_sorted: bool = False,
) -> None:
    """Traced ``interp1d.__init__``: SciPy's object, carrying traced ``x`` / ``y``."""
    function = "interpolate.interp1d.__init__"
    if kind not in _KINDS:
        raise refuse(function, "kind", repr(kind), ", ".join(map(repr, _KINDS)))
    if is_traced(fill_value):
        raise refuse(function, "fill_value", "traced data", "an untraced value")
    if is_traced(x) and kind in ("previous", "next"):
        raise refuse(function, "x", "traced data with kind=" + repr(kind), "an untraced x")
    original = original_of(interp1d, "__init__")
    original(
        self, plain_tree(x), plain_tree(y), kind, axis, copy, bounds_error, fill_value,
        assume_sorted,
    )  # fmt: skip
    xs, ys = np.asarray(x), np.asarray(y)
    if not assume_sorted:
        order = np.argsort(xs, kind="mergesort")
        xs, ys = xs[order], np.take(ys, order, axis=axis)
    if not issubclass(ys.dtype.type, np.inexact):
        ys = ys.astype(np.float64)
    moved = np.moveaxis(ys, self._y_axis, 0)
    self.__class__ = TracedInterp1d
    self._pp_x = xs
    self._pp_y = moved.reshape((moved.shape[0], -1))
    self._pp_y_plain = ys  # for SciPy's 1-D np.interp path


@replaces(
    "interpolate.interp1d.__call__",
    family=FAMILY,
    dtypes=("float32", "float64", "integers"),
    accuracy="bit-exact (SciPy's own NumPy operations, on traced data)",
    arguments={"kind": _KINDS},
    notes=(
        "`interp1d`: `x`, `y` and the points may be traced; points outside the data take "
        "`fill_value` (NaN by default) where SciPy would raise, since an exported model "
        "cannot raise (the trace-time call raises as SciPy does)."
    ),
    float_atol=0.0,
    rtol=0.0,
)
def __call__(self: interp1d, x: Any) -> np.ndarray:  # noqa: N807 - SciPy's method name
    """Traced ``interp1d.__call__``: ``interp1d(...)(x_new)``."""
    function = "interpolate.interp1d.__call__"
    kind = self._kind
    if kind not in _KINDS:
        raise refuse(function, "kind", repr(kind), ", ".join(map(repr, _KINDS)))
    traced_self = isinstance(self, TracedInterp1d) and find_recorder(self) is not None
    xs = self._pp_x if traced_self else self.x
    ys = self._pp_y if traced_self else self._y
    if isinstance(x, (list, tuple)):
        x = np.asarray(x)
    x_new = np.asarray(x)
    if x_new.dtype.kind not in "fiu":
        raise refuse(function, "x.dtype", describe(x), "real numbers")
    if x_new.dtype.kind != "f":
        x_new = x_new.astype(np.float64)
    x_shape = x_new.shape
    flat = x_new.ravel()
    if kind == "linear" and self._call.__name__ == "_call_linear_np":
        plain_y = self._pp_y_plain if traced_self else self.y
        y_new = np.interp(flat, xs, plain_y)
    elif kind == "linear":
        index = np.clip(np.searchsorted(xs, flat), 1, len(self.x) - 1).astype(int)
        lo, hi = index - 1, index
        x_lo, x_hi = xs[lo], xs[hi]
        y_lo, y_hi = ys[lo], ys[hi]
        slope = (y_hi - y_lo) / (x_hi - x_lo)[:, None]
        y_new = slope * (flat - x_lo)[:, None] + y_lo
    elif kind in ("nearest", "nearest-up"):
        bounds = xs / 2.0
        bounds = bounds[1:] + bounds[:-1]
        index = np.clip(np.searchsorted(bounds, flat, side=self._side), 0, len(self.x) - 1)
        y_new = ys[index.astype(np.intp)]
    else:  # previous, next: SciPy's shifted copy of the (untraced) x
        index = np.searchsorted(self._x_shift, flat, side=self._side)
        index = np.clip(index, 1 - self._ind, len(self.x) - self._ind).astype(np.intp)
        y_new = ys[index + self._ind - 1]
    if not self._extrapolate:
        below, above = flat < xs[0], flat > xs[-1]
        if self.bounds_error:
            self._check_bounds(np.asarray(plain_tree(flat)))  # SciPy's error, at trace time
        if y_new.ndim == 1:
            fill_below = np.asarray(self._fill_value_below).reshape(())
            fill_above = np.asarray(self._fill_value_above).reshape(())
            y_new = np.where(below, fill_below, np.where(above, fill_above, y_new))
        else:
            fill_below = np.asarray(self._fill_value_below).reshape(1, -1)
            fill_above = np.asarray(self._fill_value_above).reshape(1, -1)
            y_new = np.where(below[:, None], fill_below, y_new)
            y_new = np.where(above[:, None], fill_above, y_new)
        y_new = y_new.astype(np.result_type(y_new.dtype, self.dtype), copy=False)
    result = y_new.reshape(x_shape + self._y_extra_shape)
    if self._y_axis != 0 and x_shape != ():
        nx, ny = len(x_shape), len(self._y_extra_shape)
        axes = (
            list(range(nx, nx + self._y_axis))
            + list(range(nx))
            + list(range(nx + self._y_axis, nx + ny))
        )
        result = result.transpose(axes)
    return np.ascontiguousarray(result) if result.ndim else result.copy()
