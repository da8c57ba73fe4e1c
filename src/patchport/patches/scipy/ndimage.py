"""Traced ``scipy.ndimage`` filters and resampling, in the order SciPy's C code computes.

SciPy's filters copy each line into a float64 buffer extended by the boundary mode, run
the 1-D kernel, and cast the line back to the output dtype (integers truncated) before
the next axis; the replacements do the same with torch operations: extension by constant
index tables (so the graph holds no data-dependent shapes), taps summed in SciPy's
order. Resampling (``zoom``, ``map_coordinates``, orders 0 and 1) maps coordinates,
picks neighbours and weights as ``NI_GeometricTransform`` does.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from ._base import describe, no_output, refuse, replaces, to_tensor

FAMILY = "ndimage"
_FILTER_MODES = ("reflect", "constant", "nearest", "mirror", "wrap")
_GRID_ALIASES = {"grid-mirror": "reflect", "grid-constant": "constant", "grid-wrap": "wrap"}
_DTYPES = ("float32", "float64", "uint8", "uint16", "int16", "int32")
_EPS = float(np.finfo(np.float64).eps)
_LINEAR = "bit-exact (SciPy's float64 line buffers, taps summed in its order)"
_SELECT = "exact (a selection of input values); NaN inputs: see the notes"


def _name(function: str) -> str:
    return f"ndimage.{function}"


def _image(function: str, value: Any, dtypes: Sequence[str] = _DTYPES) -> torch.Tensor:
    """The input array as a tensor (traced data stays traced), dtype checked."""
    if isinstance(value, torch.Tensor):
        raise refuse(_name(function), "input", describe(value), "a NumPy array")
    array = np.asarray(value)
    if array.dtype.name not in dtypes:
        raise refuse(_name(function), "input.dtype", array.dtype.name, ", ".join(dtypes))
    if array.ndim == 0:
        raise refuse(_name(function), "input.ndim", 0, "1 or more dimensions")
    tensor = to_tensor(array)
    return tensor.to(torch.int32) if array.dtype == np.uint16 else tensor


def _out(t: torch.Tensor, dtype: np.dtype) -> torch.Tensor:
    """A float64 line result cast to the output dtype as SciPy's C cast does (truncation)."""
    if dtype.kind == "f":
        return t.to(torch.float32 if dtype == np.float32 else torch.float64)
    whole = t.to(torch.int64)  # C's cast: truncation toward zero, then the dtype's wrap
    info = np.iinfo(dtype)
    span = int(info.max) - int(info.min) + 1
    if span < 2**32:
        whole = torch.remainder(whole - int(info.min), span) + int(info.min)
    return whole.to(torch.int32 if dtype == np.uint16 else _TORCH[dtype.name])


_TORCH = {
    "uint8": torch.uint8,
    "int16": torch.int16,
    "int32": torch.int32,
    "float32": torch.float32,
    "float64": torch.float64,
}


def _finish(t: torch.Tensor, dtype: np.dtype) -> np.ndarray:
    """The result as a fresh NumPy array of the input's dtype."""
    if dtype == np.uint16:
        t = t.to(torch.uint16)
    return t.clone(memory_format=torch.contiguous_format).numpy()


def _mode(function: str, mode: Any, allowed: Sequence[str] = _FILTER_MODES) -> str:
    """A boundary mode, with SciPy's grid aliases resolved for filters."""
    if not isinstance(mode, str):
        raise refuse(_name(function), "mode", describe(mode), "one mode string for every axis")
    resolved = _GRID_ALIASES.get(mode, mode)
    if resolved not in allowed:
        raise refuse(_name(function), "mode", repr(mode), ", ".join(map(repr, allowed)))
    return resolved


def _per_axis(function: str, argument: str, value: Any, ndim: int) -> list[Any]:
    """SciPy's _normalize_sequence: one value for every axis."""
    if isinstance(value, (str, numbers.Number)) or np.ndim(value) == 0:
        return [value] * ndim
    values = list(value)
    if len(values) != ndim:
        raise RuntimeError("sequence argument must have length equal to input rank")
    return values


def _axes(function: str, axes: Any, ndim: int) -> list[int]:
    if axes is None:
        return list(range(ndim))
    items = [axes] if isinstance(axes, numbers.Integral) else list(axes)
    found = [int(a) % ndim if -ndim <= int(a) < ndim else None for a in items]
    if None in found or len(set(found)) != len(found):
        raise refuse(_name(function), "axes", repr(axes), "distinct axes of the input")
    return found  # type: ignore[return-value]


def _extension(length: int, before: int, after: int, mode: str) -> np.ndarray:
    """Source index of each extended position of a line (-1: the constant value)."""
    positions = np.arange(-before, length + after)
    if mode == "constant":
        return np.where((positions >= 0) & (positions < length), positions, -1)
    if mode == "nearest":
        return np.clip(positions, 0, length - 1)
    if mode == "wrap":
        return np.mod(positions, length)
    if length == 1:
        return np.zeros_like(positions)
    if mode == "reflect":  # d c b a | a b c d | d c b a
        period = np.mod(positions, 2 * length)
        return np.where(period < length, period, 2 * length - 1 - period)
    period = np.mod(positions, 2 * length - 2)  # mirror: d c b | a b c d | c b a
    return np.where(period < length, period, 2 * length - 2 - period)


def _extend(
    t: torch.Tensor, axis: int, before: int, after: int, mode: str, cval: float
) -> torch.Tensor:
    """``t`` extended along ``axis`` as SciPy's line buffers extend it."""
    if before == 0 and after == 0:
        return t
    index = _extension(t.shape[axis], before, after, mode)
    if mode != "constant":
        return t.index_select(axis, torch.from_numpy(index.astype(np.int64)))
    parts = []
    for size in (before, None, after):
        if size is None:
            parts.append(t)
        elif size:
            shape = list(t.shape)
            shape[axis] = size
            parts.append(torch.full(shape, float(cval), dtype=t.dtype))
    return torch.cat(parts, dim=axis)


def _correlate1d(
    x: torch.Tensor, axis: int, weights: np.ndarray, mode: str, cval: float, origin: int
) -> torch.Tensor:
    """SciPy's NI_Correlate1D on a float64 tensor: symmetric kernels sum pairs first."""
    w = [float(v) for v in weights]
    size = len(w)
    size1 = size // 2
    size2 = size - size1 - 1
    padded = _extend(x, axis, size1 + origin, size2 - origin, mode, cval)
    n = x.shape[axis]

    def tap(k: int) -> torch.Tensor:
        return padded.narrow(axis, k, n)

    symmetric = 0
    if size & 1:
        if all(abs(w[size1 + i] - w[size1 - i]) <= _EPS for i in range(1, size1 + 1)):
            symmetric = 1
        elif all(abs(w[size1 + i] + w[size1 - i]) <= _EPS for i in range(1, size1 + 1)):
            symmetric = -1
    if symmetric:
        acc = tap(size1) * w[size1]
        for jj in range(-size1, 0):
            pair = tap(size1 + jj) + tap(size1 - jj) if symmetric > 0 else None
            if pair is None:
                pair = tap(size1 + jj) - tap(size1 - jj)
            acc = acc + pair * w[size1 + jj]
        return acc
    acc = tap(size - 1) * w[size - 1]
    for jj in range(-size1, size2):
        acc = acc + tap(size1 + jj) * w[size1 + jj]
    return acc


def _check_origin(function: str, origin: int, size: int) -> None:
    if not isinstance(origin, numbers.Integral):
        raise refuse(_name(function), "origin", repr(origin), "an integer")
    if size // 2 + origin < 0 or size // 2 + origin >= size:
        raise ValueError("invalid origin")


# ------------------------------------------------------------------ Gaussian
def _gaussian_weights(sigma: float, order: int, radius: int) -> np.ndarray:
    """SciPy's kernel for correlate1d (its _gaussian_kernel1d, reversed)."""
    from scipy.ndimage import _filters

    return _filters._gaussian_kernel1d(sigma, order, radius)[::-1]


def _radius(sigma: float, truncate: float, radius: Any) -> int:
    lw = int(truncate * float(sigma) + 0.5)
    if radius is not None:
        lw = radius
    if not isinstance(lw, numbers.Integral) or lw < 0:
        raise ValueError("Radius must be a nonnegative integer.")
    return int(lw)


def _constant(function: str, argument: str, value: Any) -> None:
    """Filter parameters are constants of the exported graph: refuse traced ones."""
    from ._base import is_traced

    if is_traced(value):
        raise refuse(_name(function), argument, "traced data", "a constant (an untraced number)")


@replaces(
    "ndimage.gaussian_filter1d",
    family=FAMILY,
    dtypes=_DTYPES,
    accuracy=_LINEAR,
    arguments={
        "order": ("0", "1", "2", "3"),
        "mode": _FILTER_MODES + tuple(_GRID_ALIASES),
        "output": ("None",),
    },
)
def gaussian_filter1d(
    input: Any,  # noqa: A002 - SciPy's name
    sigma: float,
    axis: int = -1,
    order: int = 0,
    output: Any = None,
    mode: str = "reflect",
    cval: float = 0.0,
    truncate: float = 4.0,
    *,
    radius: Any = None,
) -> np.ndarray:
    """Traced ``scipy.ndimage.gaussian_filter1d``."""
    function = "gaussian_filter1d"
    no_output(_name(function), output)
    for name, value in (("sigma", sigma), ("cval", cval), ("truncate", truncate)):
        _constant(function, name, value)
    dtype = np.asarray(input).dtype
    x = _image(function, input)
    mode = _mode(function, mode)
    axis = _axes(function, axis, x.ndim)[0]
    weights = _gaussian_weights(sigma, int(order), _radius(sigma, truncate, radius))
    line = _correlate1d(x.to(torch.float64), axis, weights, mode, float(cval), 0)
    return _finish(_out(line, dtype), dtype)


@replaces(
    "ndimage.gaussian_filter",
    family=FAMILY,
    dtypes=_DTYPES,
    accuracy=_LINEAR,
    arguments={
        "order": ("0", "1", "2", "3", "per axis"),
        "mode": _FILTER_MODES + tuple(_GRID_ALIASES) + ("per axis",),
        "output": ("None",),
    },
)
def gaussian_filter(
    input: Any,  # noqa: A002 - SciPy's name
    sigma: Any,
    order: Any = 0,
    output: Any = None,
    mode: Any = "reflect",
    cval: float = 0.0,
    truncate: float = 4.0,
    *,
    radius: Any = None,
    axes: Any = None,
) -> np.ndarray:
    """Traced ``scipy.ndimage.gaussian_filter``: one 1-D pass per axis, cast between passes."""
    function = "gaussian_filter"
    no_output(_name(function), output)
    for name, value in (("sigma", sigma), ("cval", cval), ("truncate", truncate)):
        _constant(function, name, value)
    dtype = np.asarray(input).dtype
    x = _image(function, input)
    chosen = _axes(function, axes, x.ndim)
    count = len(chosen)
    sigmas = _per_axis(function, "sigma", sigma, count)
    orders = _per_axis(function, "order", order, count)
    modes = [_mode(function, m) for m in _per_axis(function, "mode", mode, count)]
    radii = _per_axis(function, "radius", radius, count)
    result = x
    for axis, s, o, m, r in zip(chosen, sigmas, orders, modes, radii):
        if s > 1e-15:
            weights = _gaussian_weights(s, int(o), _radius(s, truncate, r))
            line = _correlate1d(result.to(torch.float64), axis, weights, m, float(cval), 0)
            result = _out(line, dtype)
    return _finish(result.clone() if result is x else result, dtype)


# ------------------------------------------------------------------ uniform
def _uniform1d(x: torch.Tensor, axis: int, size: int, mode: str, cval: float, origin: int):
    """SciPy's NI_UniformFilter1D: the first window's sum, a running sum updated by the
    entering minus the leaving value, each divided by the size."""
    size1 = size // 2
    size2 = size - size1 - 1
    padded = _extend(x, axis, size1 + origin, size2 - origin, mode, cval)
    n = x.shape[axis]
    first = padded.narrow(axis, 0, 1)
    for k in range(1, size):
        first = first + padded.narrow(axis, k, 1)
    if n == 1:
        return first / float(size)
    steps = padded.narrow(axis, size, n - 1) - padded.narrow(axis, 0, n - 1)
    return torch.cumsum(torch.cat([first, steps], dim=axis), dim=axis) / float(size)


@replaces(
    "ndimage.uniform_filter1d",
    family=FAMILY,
    dtypes=_DTYPES,
    accuracy="bit-exact (SciPy's running sum in float64, cast to the input dtype)",
    arguments={"mode": _FILTER_MODES + tuple(_GRID_ALIASES), "output": ("None",)},
)
def uniform_filter1d(
    input: Any,  # noqa: A002 - SciPy's name
    size: int,
    axis: int = -1,
    output: Any = None,
    mode: str = "reflect",
    cval: float = 0.0,
    origin: int = 0,
) -> np.ndarray:
    """Traced ``scipy.ndimage.uniform_filter1d``."""
    function = "uniform_filter1d"
    no_output(_name(function), output)
    _constant(function, "cval", cval)
    dtype = np.asarray(input).dtype
    x = _image(function, input)
    axis = _axes(function, axis, x.ndim)[0]
    if size < 1:
        raise RuntimeError("incorrect filter size")
    _check_origin(function, origin, int(size))
    line = _uniform1d(x.to(torch.float64), axis, int(size), _mode(function, mode), cval, origin)
    return _finish(_out(line, dtype), dtype)


@replaces(
    "ndimage.uniform_filter",
    family=FAMILY,
    dtypes=_DTYPES,
    accuracy="bit-exact (SciPy's running sum in float64, cast to the input dtype)",
    arguments={
        "mode": _FILTER_MODES + tuple(_GRID_ALIASES) + ("per axis",),
        "output": ("None",),
    },
)
def uniform_filter(
    input: Any,  # noqa: A002 - SciPy's name
    size: Any = 3,
    output: Any = None,
    mode: Any = "reflect",
    cval: float = 0.0,
    origin: Any = 0,
    *,
    axes: Any = None,
) -> np.ndarray:
    """Traced ``scipy.ndimage.uniform_filter``: one running mean per axis."""
    function = "uniform_filter"
    no_output(_name(function), output)
    _constant(function, "cval", cval)
    dtype = np.asarray(input).dtype
    x = _image(function, input)
    chosen = _axes(function, axes, x.ndim)
    count = len(chosen)
    sizes = _per_axis(function, "size", size, count)
    origins = _per_axis(function, "origin", origin, count)
    modes = [_mode(function, m) for m in _per_axis(function, "mode", mode, count)]
    result = x
    for axis, s, o, m in zip(chosen, sizes, origins, modes):
        if s > 1:
            _check_origin(function, o, int(s))
            line = _uniform1d(result.to(torch.float64), axis, int(s), m, cval, o)
            result = _out(line, dtype)
    return _finish(result.clone() if result is x else result, dtype)


# ------------------------------------------------------------------ min / max / median
def _footprint(
    function: str, size: Any, footprint: Any, ndim: int, axes: list[int]
) -> tuple[np.ndarray | None, list[int]]:
    """(footprint over ``axes`` or None when separable, sizes per axis) as SciPy picks them."""
    if footprint is None:
        if size is None:
            raise RuntimeError("no footprint or filter size provided")
        return None, [int(s) for s in _per_axis(function, "size", size, len(axes))]
    shape_ok = np.asarray(footprint).ndim == len(axes)
    if not shape_ok:
        raise RuntimeError("footprint array has incorrect shape.")
    mask = np.asarray(footprint, dtype=bool)
    if not mask.any():
        raise ValueError("All-zero footprint is not supported.")
    if mask.all():
        return None, list(mask.shape)
    return mask, list(mask.shape)


def _window_taps(
    x: torch.Tensor,
    axes: list[int],
    shape: list[int],
    mask: np.ndarray | None,
    origins: list[int],
    mode: str,
    cval: float,
) -> list[torch.Tensor]:
    """Every footprint position's shifted copy of ``x`` (C order of the footprint)."""
    padded = x
    for axis, size, origin in zip(axes, shape, origins):
        before = size // 2 + origin
        padded = _extend(padded, axis, before, size - 1 - before, mode, cval)
    taps = []
    for position in np.ndindex(*shape):
        if mask is not None and not mask[position]:
            continue
        tap = padded
        for axis, offset in zip(axes, position):
            tap = tap.narrow(axis, offset, x.shape[axis])
        taps.append(tap)
    return taps


def _sorting_network(n: int) -> list[tuple[int, int]]:
    """Batcher's odd-even merge sort for ``n`` values: compare-exchange pairs, in order."""
    pairs = []
    p = 1
    while p < n:
        k = p
        while k >= 1:
            for j in range(k % p, n - k, 2 * k):
                for i in range(min(k, n - j - k)):
                    if (i + j) // (p * 2) == (i + j + k) // (p * 2):
                        pairs.append((i + j, i + j + k))
            k //= 2
        p *= 2
    return pairs


def select_rank(values: list[torch.Tensor], rank: int) -> torch.Tensor:
    """The ``rank``-th smallest of ``values`` elementwise, by the compare-exchanges of a
    sorting network that reach it. Minimum/maximum only: exact, the direct ONNX translator
    writes it (a sort of stacked taps sent the graph to torch.onnx), and it costs a fraction
    of torch.sort's time (bench/median_selection.py). Every value reaches the result, so a
    window holding NaN gives NaN (SciPy's result there depends on its selection order)."""
    needed, kept = {rank}, []
    for a, b in reversed(_sorting_network(len(values))):
        if a in needed or b in needed:
            needed.update((a, b))
            kept.append((a, b))
    values = list(values)
    for a, b in reversed(kept):
        values[a], values[b] = (
            torch.minimum(values[a], values[b]),
            torch.maximum(values[a], values[b]),
        )
    return values[rank]


def _rank_like(
    function: str,
    input: Any,
    size: Any,
    footprint: Any,
    output: Any,
    mode: Any,
    cval: float,
    origin: Any,
    axes: Any,
    reduce: str,
) -> np.ndarray:
    """Minimum, maximum or median over the footprint (separable per axis when SciPy is)."""
    no_output(_name(function), output)
    _constant(function, "cval", cval)
    dtype = np.asarray(input).dtype
    x = _image(function, input)
    chosen = _axes(function, axes, x.ndim)
    mask, shape = _footprint(function, size, footprint, x.ndim, chosen)
    origins = [int(o) for o in _per_axis(function, "origin", origin, len(chosen))]
    for o, s in zip(origins, shape):
        _check_origin(function, o, s)
    if reduce == "median":
        modes = [_mode(function, mode)]
        work = x.to(torch.float64)
        taps = _window_taps(work, chosen, shape, mask, origins, modes[0], cval)
        picked = select_rank(taps, len(taps) // 2)
        return _finish(_out(picked, dtype), dtype)
    modes = [_mode(function, m) for m in _per_axis(function, "mode", mode, len(chosen))]
    work = x.to(torch.float64)
    if mask is None:  # separable: one pass per axis, as SciPy's minimum_filter1d
        for axis, s, o, m in zip(chosen, shape, origins, modes):
            if s > 1:
                taps = _window_taps(work, [axis], [s], None, [o], m, cval)
                stacked = torch.stack(taps, dim=0)
                work = stacked.amax(dim=0) if reduce == "max" else stacked.amin(dim=0)
        return _finish(_out(work, dtype), dtype)
    if len(set(modes)) != 1:
        raise RuntimeError("A sequence of modes is not supported for non-separable footprints")
    taps = _window_taps(work, chosen, shape, mask, origins, modes[0], cval)
    stacked = torch.stack(taps, dim=0)
    work = stacked.amax(dim=0) if reduce == "max" else stacked.amin(dim=0)
    return _finish(_out(work, dtype), dtype)


_NAN_NOTE = (
    "NaN inputs: SciPy's result depends on its scan order; the replacement's is NaN "
    "wherever the window holds one (a trace-time mismatch warning says where they differ)."
)


def _rank_spec(function: str, note: str = _NAN_NOTE) -> Any:
    return replaces(
        f"ndimage.{function}",
        family=FAMILY,
        dtypes=_DTYPES,
        accuracy=_SELECT,
        arguments={
            "size": ("int", "per axis"),
            "footprint": ("boolean array",),
            "mode": _FILTER_MODES + tuple(_GRID_ALIASES),
            "output": ("None",),
        },
        notes=note,
    )


@_rank_spec("maximum_filter")
def maximum_filter(
    input: Any,  # noqa: A002 - SciPy's name
    size: Any = None,
    footprint: Any = None,
    output: Any = None,
    mode: Any = "reflect",
    cval: float = 0.0,
    origin: Any = 0,
    *,
    axes: Any = None,
) -> np.ndarray:
    """Traced ``scipy.ndimage.maximum_filter``."""
    return _rank_like(
        "maximum_filter", input, size, footprint, output, mode, cval, origin, axes, "max"
    )


@_rank_spec("minimum_filter")
def minimum_filter(
    input: Any,  # noqa: A002 - SciPy's name
    size: Any = None,
    footprint: Any = None,
    output: Any = None,
    mode: Any = "reflect",
    cval: float = 0.0,
    origin: Any = 0,
    *,
    axes: Any = None,
) -> np.ndarray:
    """Traced ``scipy.ndimage.minimum_filter``."""
    return _rank_like(
        "minimum_filter", input, size, footprint, output, mode, cval, origin, axes, "min"
    )


@_rank_spec("median_filter")
def median_filter(
    input: Any,  # noqa: A002 - SciPy's name
    size: Any = None,
    footprint: Any = None,
    output: Any = None,
    mode: str = "reflect",
    cval: float = 0.0,
    origin: Any = 0,
    *,
    axes: Any = None,
) -> np.ndarray:
    """Traced ``scipy.ndimage.median_filter``: the middle of each sorted window."""
    return _rank_like(
        "median_filter", input, size, footprint, output, mode, cval, origin, axes, "median"
    )


# ------------------------------------------------------------------ correlate / convolve
def _correlate_nd(
    function: str,
    input: Any,
    weights: Any,
    output: Any,
    mode: Any,
    cval: float,
    origin: Any,
    axes: Any,
    convolution: bool,
) -> np.ndarray:
    no_output(_name(function), output)
    _constant(function, "cval", cval)
    _constant(function, "weights", weights)
    dtype = np.asarray(input).dtype
    x = _image(function, input)
    chosen = _axes(function, axes, x.ndim)
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != len(chosen):
        raise RuntimeError(f"weights.ndim ({w.ndim}) must match len(axes) ({len(chosen)})")
    origins = [int(o) for o in _per_axis(function, "origin", origin, len(chosen))]
    if convolution:
        w = w[tuple([slice(None, None, -1)] * w.ndim)]
        origins = [-o - (0 if s & 1 else 1) for o, s in zip(origins, w.shape)]
    for o, s in zip(origins, w.shape):
        if not (-(s // 2) <= o <= (s - 1) // 2):
            raise ValueError(
                "Invalid origin; origin must satisfy -(weights.shape[k] // 2) <= origin[k] <= "
                "(weights.shape[k]-1) // 2"
            )
    mode = _mode(function, mode)
    mask = np.abs(w) > _EPS
    taps = _window_taps(x.to(torch.float64), chosen, list(w.shape), mask, origins, mode, cval)
    values = [float(v) for v in w[mask]]
    acc = None
    for tap, weight in zip(taps, values):
        term = tap * weight
        acc = term if acc is None else acc + term
    if acc is None:
        acc = torch.zeros(x.shape, dtype=torch.float64)
    return _finish(_out(acc, dtype), dtype)


def _correlate_spec(function: str) -> Any:
    return replaces(
        f"ndimage.{function}",
        family=FAMILY,
        dtypes=_DTYPES,
        accuracy="bit-exact (weights above float64 epsilon summed in C order, as SciPy)",
        arguments={
            "weights": ("an untraced array, one axis per input axis",),
            "mode": _FILTER_MODES + tuple(_GRID_ALIASES),
            "output": ("None",),
        },
    )


@_correlate_spec("correlate")
def correlate(
    input: Any,  # noqa: A002 - SciPy's name
    weights: Any,
    output: Any = None,
    mode: str = "reflect",
    cval: float = 0.0,
    origin: Any = 0,
    *,
    axes: Any = None,
) -> np.ndarray:
    """Traced ``scipy.ndimage.correlate``."""
    return _correlate_nd("correlate", input, weights, output, mode, cval, origin, axes, False)


@_correlate_spec("convolve")
def convolve(
    input: Any,  # noqa: A002 - SciPy's name
    weights: Any,
    output: Any = None,
    mode: str = "reflect",
    cval: float = 0.0,
    origin: Any = 0,
    *,
    axes: Any = None,
) -> np.ndarray:
    """Traced ``scipy.ndimage.convolve``: correlation with the flipped kernel."""
    return _correlate_nd("convolve", input, weights, output, mode, cval, origin, axes, True)


# ------------------------------------------------------------------ resampling
_MAP_MODES = ("constant", "grid-constant", "nearest", "mirror")
_ZOOM_MODES = _MAP_MODES + ("reflect", "grid-mirror")  # zoom's coordinates stay inside


def _map_coordinate(c: torch.Tensor, length: int, mode: str) -> torch.Tensor:
    """SciPy's map_coordinate: a coordinate outside the data mapped by the mode (-1: the
    constant value); float64 in and out."""
    if mode == "nearest":
        return c  # each neighbour is clamped to the data (see _resample)
    if mode == "constant":
        return torch.where((c < 0) | (c > length - 1), torch.full_like(c, -1.0), c)
    if mode == "grid-constant":
        return c  # each neighbour outside the data is the constant (see _gather)
    if length <= 1:
        return torch.zeros_like(c)
    if mode == "mirror":
        sz2 = float(2 * length - 2)
        low = sz2 * torch.trunc(-c / sz2) + c
        low = torch.where(low <= 1 - length, low + sz2, -low)
        high = c - sz2 * torch.trunc(c / sz2)
        high = torch.where(high >= length, sz2 - high, high)
    else:  # reflect, grid-mirror
        sz2 = float(2 * length)
        low = torch.where(c < -sz2, sz2 * torch.trunc(-c / sz2) + c, c)
        low = torch.where(low < -length, low + sz2, torch.where(low > -1e-15, 1e-15, -low) - 1)
        high = c - sz2 * torch.trunc(c / sz2)
        high = torch.where(high >= length, sz2 - high - 1, high)
    return torch.where(c < 0, low, torch.where(c > length - 1, high, c))


def _mirror_index(idx: torch.Tensor, length: int) -> torch.Tensor:
    """A neighbour index beyond the data, mirrored as SciPy's spline border does."""
    if length <= 1:
        return torch.zeros_like(idx)
    s2 = 2 * length - 2
    low = s2 * torch.div(-idx, s2, rounding_mode="trunc") + idx
    low = torch.where(low <= 1 - length, low + s2, -low)
    high = idx - s2 * torch.div(idx, s2, rounding_mode="trunc")
    high = torch.where(high >= length, s2 - high, high)
    return torch.where(idx < 0, low, torch.where(idx >= length, high, idx))


def _resample(
    data: torch.Tensor,
    coords: list[torch.Tensor],
    order: int,
    mode: str,
    cval: float,
    dtype: np.dtype,
) -> torch.Tensor:
    """Values of ``data`` at float64 ``coords`` (one per axis, broadcastable), order 0/1."""
    shape = data.shape
    flat = data.reshape(-1).to(torch.float64)
    outside = None
    starts: list[torch.Tensor] = []
    weights: list[tuple[torch.Tensor, torch.Tensor]] = []
    for axis, c in enumerate(coords):
        cc = _map_coordinate(c, shape[axis], mode)
        out = cc <= -1.0 if mode in ("constant", "mirror", "reflect") else cc != cc  # NaN only
        outside = out if outside is None else outside | out
        safe = torch.where(out, torch.zeros_like(cc), cc)
        start = torch.floor(safe + 0.5) if order == 0 else torch.floor(safe)
        starts.append(start.to(torch.int64))
        # SciPy's spline weights of order 1: 1 - |start - x + k| for the k-th neighbour
        weights.append((1.0 - torch.abs(start - safe), 1.0 - torch.abs(start - safe + 1.0)))
    corners = np.ndindex(*([order + 1] * len(coords)))
    total = None
    for corner in corners:
        index = None
        inside = None
        factors = []
        for axis, step in enumerate(corner):
            idx = starts[axis] + step
            if mode == "grid-constant":
                ok = (idx >= 0) & (idx < shape[axis])
                inside = ok if inside is None else inside & ok
                idx = torch.clamp(idx, 0, shape[axis] - 1)
            elif mode == "nearest":
                idx = torch.clamp(idx, 0, shape[axis] - 1)
            else:
                idx = _mirror_index(idx, shape[axis])
            stride = int(np.prod(shape[axis + 1 :], dtype=np.int64))
            term = idx * stride
            index = term if index is None else index + term
            if order:
                factors.append(weights[axis][step])
        value = flat[index]
        if inside is not None:
            value = torch.where(inside, value, torch.full_like(value, float(cval)))
        for factor in factors:
            value = value * factor
        total = value if total is None else total + value
    total = torch.where(outside, torch.full_like(total, float(cval)), total)
    if dtype.kind == "f":
        return total.to(torch.float32 if dtype == np.float32 else torch.float64)
    if dtype.kind == "u":
        rounded = torch.floor(torch.where(total > 0, total + 0.5, torch.zeros_like(total)))
        return torch.clamp(rounded, 0, float(np.iinfo(dtype).max)).to(torch.int64)
    info = np.iinfo(dtype)
    rounded = torch.trunc(torch.where(total > 0, total + 0.5, total - 0.5))
    return torch.clamp(rounded, float(info.min), float(info.max)).to(torch.int64)


def _resample_dtype(result: torch.Tensor, dtype: np.dtype) -> np.ndarray:
    """A resampled result (float, or rounded int64) as a fresh array of ``dtype``."""
    if dtype.kind != "f":
        result = result.to(torch.int32 if dtype == np.uint16 else _TORCH[dtype.name])
    return _finish(result, dtype)


def _order(function: str, order: Any, prefilter: bool) -> int:
    if order not in (0, 1):
        raise refuse(_name(function), "order", repr(order), "0 (nearest) or 1 (linear)")
    return int(order)


@replaces(
    "ndimage.map_coordinates",
    family=FAMILY,
    dtypes=_DTYPES,
    accuracy="bit-exact (SciPy's neighbours, weights and products, in its order)",
    arguments={"order": ("0", "1"), "mode": _MAP_MODES, "output": ("None",)},
    notes=(
        "`map_coordinates` and `zoom` (orders 0 and 1): image and coordinates may both be "
        "traced; integer results are rounded as SciPy rounds them."
    ),
)
def map_coordinates(
    input: Any,  # noqa: A002 - SciPy's name
    coordinates: Any,
    output: Any = None,
    order: int = 3,
    mode: str = "constant",
    cval: float = 0.0,
    prefilter: bool = True,
) -> np.ndarray:
    """Traced ``scipy.ndimage.map_coordinates`` (orders 0 and 1)."""
    function = "map_coordinates"
    no_output(_name(function), output)
    _constant(function, "cval", cval)
    order = _order(function, order, prefilter)
    if mode not in _MAP_MODES:
        raise refuse(_name(function), "mode", repr(mode), ", ".join(map(repr, _MAP_MODES)))
    dtype = np.asarray(input).dtype
    x = _image(function, input)
    if isinstance(coordinates, torch.Tensor):
        raise refuse(_name(function), "coordinates", describe(coordinates), "a NumPy array")
    array = np.asarray(coordinates)
    if array.dtype.kind not in "fiu":
        raise refuse(_name(function), "coordinates.dtype", array.dtype.name, "numbers")
    if array.ndim < 2:
        raise RuntimeError("input and output rank must be > 0")
    if array.shape[0] != x.ndim:
        raise RuntimeError("invalid shape for coordinate array")
    c = to_tensor(array).to(torch.float64)
    coords = [c[axis] for axis in range(x.ndim)]
    result = _resample(x, coords, order, mode, float(cval), dtype)
    return _resample_dtype(result, dtype)


@replaces(
    "ndimage.zoom",
    family=FAMILY,
    dtypes=_DTYPES,
    accuracy="bit-exact (SciPy's neighbours, weights and products, in its order)",
    arguments={
        "order": ("0", "1"),
        "mode": _ZOOM_MODES,
        "grid_mode": ("False",),
        "output": ("None",),
    },
)
def zoom(
    input: Any,  # noqa: A002 - SciPy's name
    zoom: Any,
    output: Any = None,
    order: int = 3,
    mode: str = "constant",
    cval: float = 0.0,
    prefilter: bool = True,
    *,
    grid_mode: bool = False,
) -> np.ndarray:
    """Traced ``scipy.ndimage.zoom`` (orders 0 and 1): SciPy's output size and coordinates."""
    function = "zoom"
    no_output(_name(function), output)
    _constant(function, "zoom", zoom)
    _constant(function, "cval", cval)
    order = _order(function, order, prefilter)
    if grid_mode:
        raise refuse(_name(function), "grid_mode", True, "False")
    if mode not in _ZOOM_MODES:
        raise refuse(_name(function), "mode", repr(mode), ", ".join(map(repr, _ZOOM_MODES)))
    dtype = np.asarray(input).dtype
    x = _image(function, input)
    zooms = [float(z) for z in _per_axis(function, "zoom", zoom, x.ndim)]
    out_shape = tuple(int(round(n * z)) for n, z in zip(x.shape, zooms))
    if all(z == 1 for z in zooms) and prefilter:
        return _finish(x.clone(), dtype)
    div = np.array(out_shape) - 1
    num = np.array(x.shape) - 1
    factors = np.divide(num, div, out=np.ones(len(out_shape)), where=div != 0)
    coords = []
    for axis, (size, factor) in enumerate(zip(out_shape, factors)):
        c = np.arange(size, dtype=np.float64) * factor
        shape = [1] * len(out_shape)
        shape[axis] = size
        coords.append(torch.from_numpy(c.reshape(shape)))
    result = _resample(x, coords, order, mode, float(cval), dtype)
    return _resample_dtype(result, dtype)
