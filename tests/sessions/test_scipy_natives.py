"""SciPy's compiled code reached with traced data and no SciPy patch set: a warning at the
user's line, never a silent constant.

``Rotation.from_rotvec(traced)`` hands the array to SciPy's Cython backend, which reads its
memory with no hook; so do ``ndimage`` filters and ``signal.lfilter`` (C). Without
``patching=["scipy"]`` each was exported as the sample's constant with no warning."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.ndimage
import scipy.signal
import scipy.spatial.transform._rotation_cy as rotation_cy
from scipy.spatial.transform import Rotation

import patchport
from patchport import annotate

CALLS = {
    "from_rotvec": lambda v: Rotation.from_rotvec(v[:3]).as_matrix(),
    "correlate1d": lambda v: scipy.ndimage.gaussian_filter(v.reshape(2, 3), 1.0),
    "_linear_filter": lambda v: scipy.signal.lfilter([0.2, 0.3], [1.0, -0.5], v),
}


@pytest.mark.parametrize("native", sorted(CALLS))
def test_scipy_native_call_on_traced_data_warns_at_the_users_line(native, tmp_path) -> None:  # noqa: ANN001
    call = CALLS[native]
    sample = np.random.default_rng(0).uniform(-1, 1, 6)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with patchport.session("scipy_native", save_path=tmp_path):
            v = annotate.input_tensors("n", {"v": sample})
            got = call(v)
            annotate.output_tensors("n", {"out": np.asarray(got) + v[0]}, export_with=None)
    lost = [w for w in caught if issubclass(w.category, patchport.TraceLossWarning)]
    assert any(f"{native}()" in str(w.message) for w in lost), [str(w.message) for w in lost]
    first = next(w for w in lost if f"{native}()" in str(w.message))
    assert first.filename == __file__ and first.lineno == call.__code__.co_firstlineno
    np.testing.assert_array_equal(np.asarray(got), call(sample))  # SciPy's own value


def test_scipy_natives_are_given_back_and_plain_calls_stay_quiet(tmp_path) -> None:  # noqa: ANN001
    before = rotation_cy.from_rotvec
    plain = np.array([0.1, -0.2, 0.3])
    with warnings.catch_warnings():
        warnings.simplefilter("error", patchport.TraceLossWarning)
        with patchport.session("scipy_plain", save_path=tmp_path):
            assert rotation_cy.from_rotvec is not before  # watched while the session runs
            want = Rotation.from_rotvec(plain).as_matrix()
            smooth = scipy.ndimage.gaussian_filter(np.eye(4), 1.0)
    assert rotation_cy.from_rotvec is before
    np.testing.assert_array_equal(want, Rotation.from_rotvec(plain).as_matrix())
    np.testing.assert_array_equal(smooth, scipy.ndimage.gaussian_filter(np.eye(4), 1.0))
