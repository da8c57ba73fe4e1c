"""Traced ``scipy.signal`` filters: linear ones as the matrix SciPy itself computes.

``lfilter``, ``filtfilt``, ``sosfilt``, ``sosfiltfilt``, ``savgol_filter``, ``detrend`` and
``decimate`` are linear in the signal (and in the initial state ``zi``) for fixed
coefficients and length. At trace time the replacement runs SciPy's own function on the
unit basis of the traced length, which gives the exact linear map SciPy applies; the graph
holds one matrix product with it (ONNX MatMul, any backend). Only the order of the sums
differs from SciPy's recursion, so results agree within a few float64 roundings of the
signal's magnitude; every traced call is checked against SciPy at trace time. ``medfilt``
is a zero-padded sorted-window selection (exact).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from ..._stack import user_stacklevel
from ...patching import original_of
from ._base import describe, is_traced, refuse, replaces, to_tensor

try:
    import scipy.signal as _signal
except ImportError as error:  # pragma: no cover - SciPy without signal
    raise ImportError("patchport.patches.scipy needs scipy.signal") from error

FAMILY = "signal"
MAX_LENGTH = 4096  # the linear map is length x length: longer signals are refused
_LINEAR = (
    "float64: within 1e-12 relative to the signal's magnitude (SciPy's own linear map, "
    "applied as one matrix product: only the order of the sums differs); float32 signals: "
    "within float32 rounding (SciPy rounds some steps to float32)"
)
_RTOL, _ATOL = 1e-5, 1e-5  # what the trace-time check allows (float32 steps in SciPy)


def _original(name: str) -> Callable[..., Any]:
    return original_of(_signal, name)


def _constants(function: str, **arguments: Any) -> None:
    """Coefficients and sizes are constants of the graph: refuse traced ones, naming them."""
    for name, value in arguments.items():
        if is_traced(value):
            raise refuse(f"signal.{function}", name, "traced data", "an untraced (constant) value")


def _signal_tensor(function: str, argument: str, value: Any) -> tuple[torch.Tensor, np.ndarray]:
    """``(float64 tensor, plain zeros of the same shape and dtype)`` of a signal argument."""
    if isinstance(value, torch.Tensor):
        raise refuse(f"signal.{function}", argument, describe(value), "a NumPy array")
    array = np.asarray(value)
    if array.dtype.kind not in "fiu" or array.dtype.kind == "b":
        raise refuse(f"signal.{function}", f"{argument}.dtype", array.dtype.name, "real numbers")
    return to_tensor(array).to(torch.float64), np.zeros(array.shape, array.dtype)


def _axis(function: str, axis: Any, ndim: int) -> int:
    if not isinstance(axis, (int, np.integer)) or not -ndim <= int(axis) < ndim:
        raise refuse(f"signal.{function}", "axis", repr(axis), f"an axis of the {ndim}-D input")
    return int(axis) % ndim


def _length(function: str, n: int) -> None:
    if n > MAX_LENGTH:
        raise refuse(
            f"signal.{function}",
            "x.shape[axis]",
            n,
            f"at most {MAX_LENGTH} samples (the traced linear map is length x length)",
        )


def _basis(n: int) -> np.ndarray:
    return np.eye(n, dtype=np.float64)


def _along(t: torch.Tensor, matrix: np.ndarray, axis: int) -> torch.Tensor:
    """``matrix`` (out x in) applied along ``axis`` of ``t``."""
    moved = t.movedim(axis, -1)
    result = moved @ torch.from_numpy(np.ascontiguousarray(matrix.T))
    return result.movedim(-1, axis)


def _as(result: torch.Tensor, like: np.ndarray) -> np.ndarray:
    """A fresh array with SciPy's result dtype."""
    kind = torch.float32 if like.dtype == np.float32 else torch.float64
    if like.dtype.kind == "c":
        raise refuse("signal", "x", "complex results", "real signals")
    return result.to(kind).clone(memory_format=torch.contiguous_format).numpy()


def _linear(
    function: str, x: Any, axis: Any, call: Callable[[np.ndarray, int], np.ndarray]
) -> np.ndarray:
    """A linear SciPy function of one signal: ``call(plain_signal, axis)`` is SciPy's."""
    signal, zeros = _signal_tensor(function, "x", x)
    axis = _axis(function, axis, signal.ndim)
    n = signal.shape[axis]
    _length(function, n)
    like = call(zeros, axis)  # SciPy's dtype, shape and argument checks, on zeros
    matrix = call(_basis(n), 0)  # column j: SciPy's result for the unit signal e_j
    if matrix.ndim != 2 or matrix.shape[1] != n:
        raise refuse(f"signal.{function}", "x", describe(x), "a signal SciPy filters sample-wise")
    result = _along(signal, matrix, axis)
    if tuple(result.shape) != like.shape:  # pragma: no cover - SciPy's own map disagrees
        raise refuse(f"signal.{function}", "x", describe(x), "a signal of fixed length")
    return _as(result, like)


_SPEC = {
    "family": FAMILY,
    "dtypes": ("float32", "float64", "integers"),
    "accuracy": _LINEAR,
    "float_atol": _ATOL,
    "rtol": _RTOL,
}
_NOTE_LINEAR = (
    "linear filters (`lfilter`, `filtfilt`, `sosfilt`, `sosfiltfilt`, `savgol_filter`, "
    "`detrend`, `decimate`): coefficients, window sizes and `axis` are constants; the "
    f"traced length is at most {MAX_LENGTH} samples (the graph holds a length x length "
    "matrix); `zi` may be traced."
)


@replaces(
    "signal.lfilter",
    arguments={"b, a": ("untraced coefficients",), "zi": ("None", "an array (traced or not)")},
    notes=_NOTE_LINEAR,
    **_SPEC,
)
def lfilter(b: Any, a: Any, x: Any, axis: int = -1, zi: Any = None) -> Any:
    """Traced ``scipy.signal.lfilter`` (with ``zi``: the final state too)."""
    _constants("lfilter", b=b, a=a)
    original = _original("lfilter")
    if zi is None:
        return _linear("lfilter", x, axis, lambda s, ax: original(b, a, s, axis=ax))
    return _with_state(
        "lfilter",
        x,
        zi,
        axis,
        lambda s, z, ax: original(b, a, s, axis=ax, zi=z),
        state_axis=lambda ax: ax,
    )


@replaces(
    "signal.sosfilt",
    arguments={"sos": ("untraced sections",), "zi": ("None", "an array (traced or not)")},
    **_SPEC,
)
def sosfilt(sos: Any, x: Any, axis: int = -1, zi: Any = None) -> Any:
    """Traced ``scipy.signal.sosfilt`` (with ``zi``: the final state too)."""
    _constants("sosfilt", sos=sos)
    original = _original("sosfilt")
    if zi is None:
        return _linear("sosfilt", x, axis, lambda s, ax: original(sos, s, axis=ax))
    return _with_state(
        "sosfilt",
        x,
        zi,
        axis,
        lambda s, z, ax: original(sos, s, axis=ax, zi=z),
        state_axis=lambda ax: ax + 1,
        sections=True,
    )


def _with_state(
    function: str,
    x: Any,
    zi: Any,
    axis: Any,
    call: Callable[[np.ndarray, np.ndarray, int], tuple[np.ndarray, np.ndarray]],
    state_axis: Callable[[int], int],
    sections: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """A filter with initial state: (y, zf) both linear in (x, zi)."""
    signal, zeros = _signal_tensor(function, "x", x)
    state, state_zeros = _signal_tensor(function, "zi", zi)
    axis = _axis(function, axis, signal.ndim)
    n = signal.shape[axis]
    _length(function, n)
    like_y, like_zf = call(zeros, state_zeros, axis)  # SciPy's checks and dtypes
    z_axis = state_axis(axis)
    width = state.shape[z_axis]
    count = width * (state.shape[0] if sections else 1)
    # states of a one-channel signal: (count,) per channel, flattened as C order does

    def state_of(flat: np.ndarray) -> np.ndarray:  # (count, batch) -> SciPy's zi layout
        batch = flat.shape[1]
        if sections:
            return flat.reshape(state.shape[0], width, batch)
        return flat.reshape(width, batch)

    y_x, zf_x = call(_basis(n), state_of(np.zeros((count, n))), 0)
    y_z, zf_z = call(np.zeros((n, count)), state_of(_basis(count)), 0)
    zf_x = zf_x.reshape(count, n)
    zf_z = zf_z.reshape(count, count)

    moved_state = state.movedim(z_axis, -1)
    if sections:
        moved_state = moved_state.movedim(0, -2).reshape(*moved_state.shape[1:-1], count)
    moved_signal = signal.movedim(axis, -1)
    y = moved_signal @ _t(y_x) + moved_state @ _t(y_z)
    zf = moved_signal @ _t(zf_x) + moved_state @ _t(zf_z)
    y = y.movedim(-1, axis)
    if sections:
        zf = zf.reshape(*zf.shape[:-1], state.shape[0], width).movedim(-2, 0)
    zf = zf.movedim(-1, z_axis)
    return _as(y, like_y), _as(zf, like_zf)


def _t(matrix: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(matrix.T))


@replaces(
    "signal.filtfilt",
    arguments={
        "b, a": ("untraced coefficients",),
        "padtype": ("'odd'", "'even'", "'constant'", "None"),
        "method": ("'pad'",),
    },
    **_SPEC,
)
def filtfilt(
    b: Any,
    a: Any,
    x: Any,
    axis: int = -1,
    padtype: Any = "odd",
    padlen: Any = None,
    method: str = "pad",
    irlen: Any = None,
) -> np.ndarray:
    """Traced ``scipy.signal.filtfilt`` (forward-backward, SciPy's padding and state)."""
    _constants("filtfilt", b=b, a=a, padlen=padlen)
    if method != "pad":
        raise refuse("signal.filtfilt", "method", repr(method), "'pad'")
    original = _original("filtfilt")
    return _linear(
        "filtfilt",
        x,
        axis,
        lambda s, ax: original(b, a, s, axis=ax, padtype=padtype, padlen=padlen, irlen=irlen),
    )


@replaces(
    "signal.sosfiltfilt",
    arguments={"sos": ("untraced sections",), "padtype": ("'odd'", "'even'", "'constant'", "None")},
    **_SPEC,
)
def sosfiltfilt(
    sos: Any, x: Any, axis: int = -1, padtype: Any = "odd", padlen: Any = None
) -> np.ndarray:
    """Traced ``scipy.signal.sosfiltfilt``."""
    _constants("sosfiltfilt", sos=sos, padlen=padlen)
    original = _original("sosfiltfilt")
    return _linear(
        "sosfiltfilt",
        x,
        axis,
        lambda s, ax: original(sos, s, axis=ax, padtype=padtype, padlen=padlen),
    )


@replaces(
    "signal.savgol_filter",
    arguments={
        "mode": ("'interp'", "'mirror'", "'nearest'", "'constant'", "'wrap'"),
        "deriv": ("any",),
    },
    **_SPEC,
)
def savgol_filter(
    x: Any,
    window_length: int,
    polyorder: int,
    deriv: int = 0,
    delta: float = 1.0,
    axis: int = -1,
    mode: str = "interp",
    cval: float = 0.0,
) -> np.ndarray:
    """Traced ``scipy.signal.savgol_filter`` (edges fitted as SciPy fits them)."""
    _constants("savgol_filter", delta=delta, cval=cval)
    original = _original("savgol_filter")
    if mode == "constant" and cval != 0:
        raise refuse("signal.savgol_filter", "cval", cval, "0 (a non-zero fill is affine)")
    return _linear(
        "savgol_filter",
        x,
        axis,
        lambda s, ax: original(
            s, window_length, polyorder, deriv=deriv, delta=delta, axis=ax, mode=mode, cval=cval
        ),
    )


@replaces(
    "signal.detrend",
    arguments={"type": ("'linear'", "'constant'"), "overwrite_data": ("False",)},
    **_SPEC,
)
def detrend(
    data: Any, axis: int = -1, type: str = "linear", bp: Any = 0, overwrite_data: bool = False
) -> np.ndarray:
    """Traced ``scipy.signal.detrend``."""
    _constants("detrend", bp=bp)
    if overwrite_data:
        raise refuse("signal.detrend", "overwrite_data", True, "False (the input is traced)")
    original = _original("detrend")
    return _linear("detrend", data, axis, lambda s, ax: original(s, axis=ax, type=type, bp=bp))


@replaces(
    "signal.decimate",
    arguments={"ftype": ("'iir'", "'fir'", "a filter object"), "zero_phase": ("True", "False")},
    **_SPEC,
)
def decimate(
    x: Any, q: int, n: Any = None, ftype: Any = "iir", axis: int = -1, zero_phase: bool = True
) -> np.ndarray:
    """Traced ``scipy.signal.decimate``: filter and downsample, as one linear map."""
    original = _original("decimate")
    return _linear(
        "decimate",
        x,
        axis,
        lambda s, ax: original(s, q, n=n, ftype=ftype, axis=ax, zero_phase=zero_phase),
    )


@replaces(
    "signal.medfilt",
    family=FAMILY,
    dtypes=("float32", "float64"),
    accuracy="exact (a selection of input values, zero padded as SciPy pads)",
    arguments={"kernel_size": ("None (3)", "odd int", "odd int per axis")},
    notes="`medfilt`: NaN inputs give NaN where the window holds one.",
)
def medfilt(volume: Any, kernel_size: Any = None) -> np.ndarray:
    """Traced ``scipy.signal.medfilt``: the median of each zero-padded window."""
    from .ndimage import _window_taps, select_rank

    if isinstance(volume, torch.Tensor):
        raise refuse("signal.medfilt", "volume", describe(volume), "a NumPy array")
    array = np.asarray(volume)
    if array.dtype.name not in ("float32", "float64"):
        raise refuse("signal.medfilt", "volume.dtype", array.dtype.name, "float32, float64")
    _constants("medfilt", kernel_size=kernel_size)
    sizes = [3] * array.ndim if kernel_size is None else np.broadcast_to(kernel_size, array.ndim)
    sizes = [int(k) for k in sizes]
    for k in sizes:
        if k % 2 != 1:
            raise ValueError("Each element of kernel_size should be odd.")
    if any(k > n for k, n in zip(sizes, array.shape)):
        warnings.warn(
            "kernel_size exceeds volume extent: the volume will be zero-padded.",
            stacklevel=user_stacklevel(),
        )
    x = to_tensor(array)
    taps = _window_taps(
        x.to(torch.float64), list(range(x.ndim)), sizes, None, [0] * x.ndim, "constant", 0.0
    )
    picked = select_rank(taps, len(taps) // 2)
    kind = torch.float32 if array.dtype == np.float32 else torch.float64
    return picked.to(kind).clone(memory_format=torch.contiguous_format).numpy()
