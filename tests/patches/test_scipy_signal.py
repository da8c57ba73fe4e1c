"""scipy.signal, scipy.special, scipy.linalg and interp1d replacements against SciPy."""

from __future__ import annotations

import pytest

pytest.importorskip("scipy")  # SciPy is an optional dependency: these tests need it

import numpy as np
import scipy.linalg as sla
import scipy.signal as ss
import scipy.special as ssp
from hypothesis import given
from hypothesis import strategies as st
from scipy.interpolate import interp1d

from patchport.patches.scipy import interpolate as I
from patchport.patches.scipy import linalg as L
from patchport.patches.scipy import signal as S
from patchport.patches.scipy import special as P

from .scipy_helpers import PROPERTY, assert_declared, assert_exact

seeds = st.integers(0, 2**32 - 1)
dtypes = st.sampled_from(["float64", "float32"])


def _signal(seed: int, shape: tuple, dtype: str = "float64") -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.normal(size=shape) * [1.0, 100.0, 1e-3][seed % 3]).astype(dtype)


@PROPERTY
@given(seeds, dtypes, st.sampled_from([(40,), (33, 3), (2, 50)]), st.sampled_from([1, 2, 4]))
def test_linear_filters(seed, dtype, shape, order):
    x = _signal(seed, shape, dtype)
    axis = 0 if len(shape) == 2 and shape[0] > shape[1] else -1
    scale = float(np.abs(x).max())
    b, a = ss.butter(order, 0.2 + 0.05 * (seed % 5))
    sos = ss.butter(order, [0.1, 0.4], btype="band", output="sos")
    cases = [
        ("signal.lfilter", ss.lfilter(b, a, x, axis=axis), S.lfilter(b, a, x, axis=axis)),
        ("signal.filtfilt", ss.filtfilt(b, a, x, axis=axis), S.filtfilt(b, a, x, axis=axis)),
        ("signal.sosfilt", ss.sosfilt(sos, x, axis=axis), S.sosfilt(sos, x, axis=axis)),
        (
            "signal.sosfiltfilt",
            ss.sosfiltfilt(sos, x, axis=axis, padlen=5),
            S.sosfiltfilt(sos, x, axis=axis, padlen=5),
        ),
        (
            "signal.savgol_filter",
            ss.savgol_filter(x, 7, 2, deriv=seed % 2, axis=axis),
            S.savgol_filter(x, 7, 2, deriv=seed % 2, axis=axis),
        ),
        ("signal.detrend", ss.detrend(x, axis=axis), S.detrend(x, axis=axis)),
        ("signal.decimate", ss.decimate(x, 2, axis=axis), S.decimate(x, 2, axis=axis)),
    ]
    for name, want, got in cases:
        assert_declared(name, want, got, scale=scale)


@PROPERTY
@given(seeds, st.sampled_from([(30,), (24, 2)]))
def test_filters_with_state(seed, shape):
    x = _signal(seed, shape)
    b, a = ss.butter(3, 0.3)
    zi = ss.lfilter_zi(b, a).reshape(-1, *([1] * (len(shape) - 1))) * x[0]
    want = ss.lfilter(b, a, x, axis=0, zi=zi)
    assert_declared("signal.lfilter", want, S.lfilter(b, a, x, axis=0, zi=zi), scale=100.0)
    sos = ss.butter(4, 0.25, output="sos")
    zi = ss.sosfilt_zi(sos).reshape(sos.shape[0], 2, *([1] * (len(shape) - 1))) * x[0]
    want = ss.sosfilt(sos, x, axis=0, zi=zi)
    assert_declared("signal.sosfilt", want, S.sosfilt(sos, x, axis=0, zi=zi), scale=100.0)


@PROPERTY
@given(seeds, dtypes, st.sampled_from([(15,), (8, 9)]), st.sampled_from([None, 3, 5, 7]))
def test_medfilt(seed, dtype, shape, size):
    x = _signal(seed, shape, dtype)
    assert_exact(ss.medfilt(x, size), S.medfilt(x, size))


@PROPERTY
@given(seeds, st.sampled_from(["float64", "float32", "int64", "uint8", "bool"]))
def test_expit_logit(seed, dtype):
    rng = np.random.default_rng(seed)
    x = (rng.normal(size=(3, 5)) * 10).astype(dtype)
    assert_declared("special.expit", ssp.expit(x), P.expit(x))
    p = rng.random((4,)).astype(dtype if dtype in ("float32", "float64") else "float64")
    assert_declared("special.logit", ssp.logit(p), P.logit(p))


@PROPERTY
@given(seeds, st.sampled_from([2, 3, 4, 6]))
def test_linalg(seed, n):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(n, n)) + n * np.eye(n)
    spd = a @ a.T + np.eye(n)
    b = rng.normal(size=(n, 2))
    for assume_a in (None, "pos", "sym"):
        want = sla.solve(spd, b, assume_a=assume_a)
        assert_declared("linalg.solve", want, L.solve(spd, b, assume_a=assume_a), scale=1.0)
    assert_declared(
        "linalg.solve", sla.solve(a, b[:, 0], transposed=True), L.solve(a, b[:, 0], transposed=True)
    )
    assert_declared("linalg.inv", sla.inv(a), L.inv(a))
    for assume_a in ("pos", "upper triangular", "diagonal"):
        assert_declared(
            "linalg.inv", sla.inv(spd, assume_a=assume_a), L.inv(spd, assume_a=assume_a)
        )
    assert_declared(
        "linalg.solve",
        sla.solve(spd, b, assume_a="pos", lower=True),
        L.solve(spd, b, assume_a="pos", lower=True),
    )
    assert_declared(
        "linalg.det", np.asarray(sla.det(a)), np.asarray(L.det(a)), scale=abs(sla.det(a))
    )
    for lower in (False, True):
        assert_declared(
            "linalg.cholesky", sla.cholesky(spd, lower=lower), L.cholesky(spd, lower=lower)
        )
    for scale in (1e-3, 0.5, 3.0, 40.0):
        m = rng.normal(size=(n, n)) * scale
        want = sla.expm(m)
        assert_declared("linalg.expm", want, L.expm(m), scale=float(np.abs(want).max()))


KINDS = ["linear", "nearest", "nearest-up", "previous", "next"]


@PROPERTY
@given(seeds, st.sampled_from(KINDS), st.sampled_from([(6,), (6, 2), (3, 6)]), st.booleans())
def test_interp1d(seed, kind, shape, extrapolate):
    rng = np.random.default_rng(seed)
    axis = -1 if shape[-1] == 6 else 0
    x = np.sort(rng.uniform(0, 10, 6)) if seed % 2 else rng.permutation(np.arange(6.0))
    y = rng.normal(size=shape)
    fill = "extrapolate" if extrapolate and kind in ("linear", "nearest") else np.nan
    new = rng.uniform(x.min(), x.max(), size=(4, 2)) if not extrapolate else rng.uniform(-2, 12, 5)
    kwargs = {"kind": kind, "axis": axis, "fill_value": fill, "bounds_error": False}
    want = interp1d(x, y, **kwargs)(new)
    made = interp1d.__new__(interp1d)
    I.__init__(made, x, y, **kwargs)
    assert_exact(want, I.__call__(made, new))


@pytest.mark.parametrize(
    ("call", "named", "argument"),
    [
        (
            lambda: S.filtfilt([1, 1], [1], np.ones(30), method="gust"),
            "signal.filtfilt",
            "method='gust'",
        ),
        (
            lambda: S.lfilter([1], [1], np.ones(S.MAX_LENGTH + 1)),
            "signal.lfilter",
            "x.shape[axis]=",
        ),
        (
            lambda: S.detrend(np.ones(9), overwrite_data=True),
            "signal.detrend",
            "overwrite_data=True",
        ),
        (lambda: P.expit(np.ones(3), out=np.ones(3)), "special.expit", "out=ndarray"),
        (lambda: L.inv(np.eye(2), overwrite_a=True), "linalg.inv", "overwrite_a=True"),
        (
            lambda: I.__init__(interp1d.__new__(interp1d), [0, 1, 2], [1, 2, 3], kind="cubic"),
            "interpolate.interp1d.__init__",
            "kind='cubic'",
        ),
    ],
)
def test_unsupported_cases_are_refused_naming_the_argument(call, named, argument):
    with pytest.raises(ValueError, match="supported: ") as caught:
        call()
    assert str(caught.value).startswith(
        f"scipy.{named} (patchport replacement): argument {argument}"
    )
