"""Conformance harness: trace on one input, replay the GraphModule on a fresh input."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from patchport.errors import TraceLossWarning
from patchport.tracing import Recorder, finish, trace_input
from patchport.tracing.dtypes import TORCH_TO_NP

RNG_TRACE = 1234
RNG_FRESH = 98765


def make(
    shape: tuple[int, ...], dtype: Any, seed: int, *, low: float = -3.0, high: float = 3.0
) -> np.ndarray:
    """Deterministic random array of ``dtype`` (ints in [low, high], floats in [low, high))."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo, hi = max(int(low), info.min), min(int(high), info.max)
        return rng.integers(lo, hi, size=shape, dtype=dtype, endpoint=True)
    return rng.uniform(low, high, size=shape).astype(dtype)


def to_numpy(value: Any) -> np.ndarray:
    """Graph outputs are tensors; compare them as NumPy arrays."""
    if isinstance(value, torch.Tensor):
        return value.detach().numpy()
    return np.asarray(value)


def assert_same(got: Any, expected: Any, rtol: float | None = None) -> None:
    """Same structure, same dtype, same values (exact for ints/bools, close for floats)."""
    if isinstance(expected, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(expected)
        for g, e in zip(got, expected):
            assert_same(g, e, rtol)
        return
    exp = np.asarray(expected)
    if isinstance(got, torch.Tensor):
        assert TORCH_TO_NP[got.dtype] == exp.dtype, f"dtype {got.dtype} != {exp.dtype}"
    g = to_numpy(got)
    assert g.dtype == exp.dtype, f"dtype {g.dtype} != {exp.dtype}"
    assert g.shape == exp.shape, f"shape {g.shape} != {exp.shape}"
    if exp.dtype.kind in "fc":
        floor = {2: 2e-3, 4: 2e-5, 8: 1e-9}[exp.dtype.itemsize]  # float16 is coarse
        rtol = floor if rtol is None else max(rtol, floor)
        np.testing.assert_allclose(g, exp, rtol=rtol, atol=rtol, equal_nan=True)
    else:
        np.testing.assert_array_equal(g, exp)


def conform(
    fn: Callable,
    *inputs: np.ndarray,
    fresh: list | None = None,
    rtol: float | None = None,
    allow_loss: bool = False,
) -> torch.fx.GraphModule:
    """Trace ``fn`` on ``inputs`` and check eager and replayed-on-fresh results against NumPy."""
    rec = Recorder("conformance", strict=not allow_loss)
    originals = [np.array(a, copy=True) for a in inputs]
    traced = [trace_input(rec, f"x{i}", a) for i, a in enumerate(inputs)]
    with warnings.catch_warnings():
        if not allow_loss:
            warnings.simplefilter("error", TraceLossWarning)
        out = fn(*traced)
    # tracing never changes what the program computes, and never touches inputs
    assert_same(_plain(out), fn(*[a.copy() for a in originals]), rtol=1e-12)
    for a, o in zip(inputs, originals):
        assert type(a) is type(o) and np.array_equal(a, o, equal_nan=True)
    gm = finish(rec, out)
    if fresh is None:
        fresh = [fresh_like(a, i) for i, a in enumerate(originals)]
    expected = fn(*[np.array(f, copy=True) for f in fresh])
    got = gm(*[torch.from_numpy(np.array(f, copy=True)) for f in fresh])
    assert_same(got, expected, rtol)
    return gm


def fresh_like(a: np.ndarray, i: int = 0) -> np.ndarray:
    """Another array of the same shape/dtype and value range, with different values."""
    a = np.asarray(a)
    if a.dtype == np.bool_:
        return make(a.shape, a.dtype, RNG_FRESH + i)
    if a.size == 0:
        return a.copy()
    lo, hi = float(a.min()), float(a.max())
    if a.dtype.kind in "iu":
        return make(a.shape, a.dtype, RNG_FRESH + i, low=lo, high=hi)
    return make(a.shape, a.dtype, RNG_FRESH + i, low=lo, high=hi + 1e-3 * (hi - lo))


def _plain(value: Any) -> Any:
    if isinstance(value, (tuple, list)):
        return type(value)(_plain(v) for v in value)
    if isinstance(value, torch.Tensor):
        return value.detach().as_subclass(torch.Tensor).numpy()
    if isinstance(value, np.ndarray):
        return np.ndarray.view(value, np.ndarray)
    return value
