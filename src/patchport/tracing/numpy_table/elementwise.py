"""Element-wise functions that are not ufuncs: clip, round, nan_to_num, interp, ..."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from ..dtypes import dtype_of, torch_dtype
from .calls import Call, as_python, handler_table, is_array
from .targets import np_interp, np_nan_to_num, np_round

HANDLERS: dict[Callable, Callable] = {}
implements = handler_table(HANDLERS)


@implements(np.clip)
def _clip(
    call: Call, a: Any, a_min: Any = None, a_max: Any = None, out: Any = None, **kw: Any
) -> Any:
    lo = kw.get("min", a_min)
    hi = kw.get("max", a_max)
    if set(kw) - {"min", "max"}:
        return None
    x = call.t(a)
    kind = call.result.dtype
    if kind.kind in "iu":  # NumPy ignores Python-int bounds beyond the integer range
        info = np.iinfo(kind)
        if isinstance(lo, int) and lo <= info.min:
            lo = None
        if isinstance(hi, int) and hi >= info.max:
            hi = None
    lo = None if lo is None else call.t(lo)
    hi = None if hi is None else call.t(hi)
    if lo is not None and hi is not None:
        return call.rec.call(torch.minimum, (call.rec.call(torch.maximum, (x, lo)), hi))
    if lo is not None:
        return call.rec.call(torch.maximum, (x, lo))
    if hi is not None:
        return call.rec.call(torch.minimum, (x, hi))
    return x


@implements(np.round, np.around)
def _round(call: Call, a: Any, decimals: int = 0, out: Any = None) -> Any:
    return call.op(np_round, a, int(decimals))


@implements(np.nan_to_num)
def _nan_to_num(
    call: Call, x: Any, copy: bool = True, nan: float = 0.0, posinf: Any = None, neginf: Any = None
) -> Any:
    if not np.issubdtype(dtype_of(x), np.floating):
        return call.n(x)
    return call.op(np_nan_to_num, x, float(nan), _float_or_none(posinf), _float_or_none(neginf))


@implements(np.isclose)
def _isclose(
    call: Call, a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> Any:
    common = np.result_type(dtype_of(a), dtype_of(b), np.float64 if not is_array(b) else bool)
    if not np.issubdtype(common, np.inexact):
        common = np.dtype(np.float64)
    return call.rec.call(
        torch.isclose,
        (call.t(a, common), call.t(b, common)),
        {"rtol": float(rtol), "atol": float(atol), "equal_nan": bool(equal_nan)},
    )


@implements(np.copy)
def _copy(call: Call, a: Any, order: str = "K", subok: bool = False) -> Any:
    return call.n(a)


@implements(np.fix)
def _fix(call: Call, x: Any, out: Any = None) -> Any:
    if call.result.dtype.kind in "biu":  # integers are whole already (ONNX has no int Floor)
        return call.t(x)
    return call.done(call.rec.call(torch.trunc, (call.t(x),)), call.result.dtype)


@implements(np.real)
def _real(call: Call, val: Any) -> Any:
    if np.iscomplexobj(val):  # an FFT's spectrum
        return call.rec.call(torch.real, (call.n(val),))
    return call.n(val)


@implements(np.imag)
def _imag(call: Call, val: Any) -> Any:
    if np.iscomplexobj(val):
        return call.rec.call(torch.imag, (call.n(val),))
    res = call.result
    return call.rec.call(torch.zeros, (tuple(res.shape),), {"dtype": torch_dtype(res.dtype)})


@implements(np.angle)
def _angle(call: Call, z: Any, deg: bool = False) -> Any:
    """The phase: atan2(imag, real) as NumPy computes it (real input: 0 or pi)."""
    res = call.result.dtype
    rec = call.rec
    if np.iscomplexobj(z):
        node = call.n(z)
        parts = (rec.call(torch.imag, (node,)), rec.call(torch.real, (node,)))
        node = rec.call(torch.atan2, parts)
    else:  # atan2(0, x): pi where x's sign bit is set (-0 too), NaN stays NaN
        real = call.t(z, res)
        half_turn = rec.call(torch.full_like, (real, float(np.pi)))
        node = rec.call(torch.where, (rec.call(torch.signbit, (real,)), half_turn, 0.0))
        node = rec.call(torch.where, (rec.call(torch.isnan, (real,)), real, node))
    if deg:
        node = rec.call(torch.mul, (node, 180 / np.pi))
    return node


@implements(np.interp)
def _interp(
    call: Call, x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None, period: Any = None
) -> Any:
    if period is not None or np.iscomplexobj(call.result):
        return None
    f = np.float64
    xs = call.t(x if is_array(x) else np.asarray(x), f)
    return call.rec.call(
        np_interp, (xs, call.t(xp, f), call.t(fp, f), _float_or_none(left), _float_or_none(right))
    )


@implements(np.diff)
def _diff(call: Call, a: Any, n: int = 1, axis: int = -1, **kw: Any) -> Any:
    if kw:
        return None
    return call.op(torch.diff, a, int(n), int(axis))


def _float_or_none(value: Any) -> float | None:
    """A bound as the float the scripted target takes (NumPy casts it to the float dtype)."""
    return None if value is None else float(as_python(value))
