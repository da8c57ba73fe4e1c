"""Traced Rotation replacements against SciPy: conversions, composition, apply, Slerp."""

from __future__ import annotations

import pytest

pytest.importorskip("scipy")  # SciPy is an optional dependency: these tests need it

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation, Slerp

from patchport.patches.scipy import rotation as R

from .scipy_helpers import PROPERTY, assert_declared, assert_exact

seeds = st.integers(0, 2**32 - 1)
counts = st.sampled_from([None, 1, 2, 5])  # None: a single rotation


def _quats(seed: int, count: int | None) -> np.ndarray:
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(4,) if count is None else (count, 4))
    if seed % 5 == 0:  # exact zeros and signs: the canonical-form and branch cases
        q = np.round(q)
        q[..., 3] = np.where(np.all(q == 0, axis=-1), 1.0, q[..., 3])
    return q


def _plain(q: np.ndarray) -> Rotation:
    return Rotation.from_quat(q)


@PROPERTY
@given(seeds, counts, st.booleans())
def test_from_quat_and_as_quat(seed, count, scalar_first):
    q = _quats(seed, count)
    got, want = (
        R.from_quat(q, scalar_first=scalar_first),
        Rotation.from_quat(q, scalar_first=scalar_first),
    )
    assert type(got) is Rotation and got.single == want.single
    name = "spatial.transform.Rotation.from_quat"
    assert_declared(name, want.as_quat(), got.as_quat())
    for canonical in (False, True):
        for first in (False, True):
            expected = want.as_quat(canonical=canonical, scalar_first=first)
            assert_exact(expected, R.as_quat(want, canonical=canonical, scalar_first=first))


@PROPERTY
@given(seeds, counts)
def test_as_matrix_inv_mul_getitem_are_exact(seed, count):
    r = _plain(_quats(seed, count))
    other = _plain(_quats(seed + 1, count))
    assert_exact(r.as_matrix(), R.as_matrix(r))
    assert_exact(r.inv().as_quat(), R.inv(r).as_quat())
    product = R.__mul__(r, other).as_quat()
    assert_declared("spatial.transform.Rotation.__mul__", (r * other).as_quat(), product)
    if count is not None:
        assert_exact(r[1:].as_quat(), R.__getitem__(r, slice(1, None)).as_quat())
        assert_exact(r[0].as_quat(), R.__getitem__(r, 0).as_quat())
        index = np.arange(count)[::-1]
        assert_exact(r[index].as_quat(), R.__getitem__(r, index).as_quat())


@PROPERTY
@given(seeds, counts, st.booleans())
def test_rotvec_round_trip(seed, count, degrees):
    rng = np.random.default_rng(seed)
    scale = [1e-5, 1e-3, 0.5, 3.0][seed % 4]  # the Taylor branch below 1e-3 rad, and pi
    v = rng.normal(size=(3,) if count is None else (count, 3)) * scale
    v = np.degrees(v) if degrees else v
    name = "spatial.transform.Rotation.from_rotvec"
    assert_declared(
        name, Rotation.from_rotvec(v, degrees).as_quat(), R.from_rotvec(v, degrees).as_quat()
    )
    r = Rotation.from_rotvec(v, degrees)
    assert_declared(
        "spatial.transform.Rotation.as_rotvec", r.as_rotvec(degrees), R.as_rotvec(r, degrees)
    )
    assert_declared("spatial.transform.Rotation.magnitude", r.magnitude(), R.magnitude(r))


SEQUENCES = ["xyz", "ZYX", "zxz", "XYX", "yzx", "xy", "Z", "zyx"]


@PROPERTY
@given(seeds, counts, st.sampled_from(SEQUENCES), st.booleans())
def test_from_euler(seed, count, seq, degrees):
    rng = np.random.default_rng(seed)
    angles = rng.uniform(-np.pi, np.pi, size=(len(seq),) if count is None else (count, len(seq)))
    angles = np.degrees(angles) if degrees else angles
    want = Rotation.from_euler(seq, angles, degrees).as_quat()
    assert_declared(
        "spatial.transform.Rotation.from_euler", want, R.from_euler(seq, angles, degrees).as_quat()
    )


@PROPERTY
@given(seeds, counts, st.sampled_from([s for s in SEQUENCES if len(s) == 3]), st.booleans())
def test_as_euler(seed, count, seq, degrees):
    r = _plain(_quats(seed, count))
    with np.errstate(all="ignore"):
        want = r.as_euler(seq, degrees=degrees, suppress_warnings=True)
    got = R.as_euler(r, seq, degrees=degrees, suppress_warnings=True)
    assert_declared(
        "spatial.transform.Rotation.as_euler", want, got, scale=180.0 if degrees else 1.0
    )


def test_as_euler_gimbal_lock_takes_scipy_s_branch():
    for seq in ("xyz", "ZYZ", "zxy"):
        angles = np.array([[0.3, 0.0, -0.2], [0.3, np.pi / 2, 0.1], [0.1, np.pi, 0.4]])
        r = (
            Rotation.from_euler(seq, angles)
            if seq[0] != seq[2]
            else Rotation.from_euler(seq, angles)
        )
        with pytest.warns(UserWarning, match="Gimbal lock"):
            want = r.as_euler(seq)
        with pytest.warns(UserWarning, match="Gimbal lock"):
            got = R.as_euler(r, seq)
        assert_declared("spatial.transform.Rotation.as_euler", want, got)


@PROPERTY
@given(seeds, counts, st.booleans(), st.sampled_from([0, 1, 2, 3]))
def test_from_matrix(seed, count, assume_valid, perturb):
    r = _plain(_quats(seed, count))
    m = r.as_matrix()
    rng = np.random.default_rng(seed)
    m = m + rng.normal(size=m.shape) * [0.0, 1e-14, 1e-6, 0.05][perturb]  # SciPy's SVD branch
    want = Rotation.from_matrix(m, assume_valid=assume_valid).as_quat()
    got = R.from_matrix(m, assume_valid=assume_valid).as_quat()
    assert_declared("spatial.transform.Rotation.from_matrix", want, got)


@PROPERTY
@given(seeds, counts, st.sampled_from([None, 1, 3]), st.booleans())
def test_apply(seed, count, vectors, inverse):
    r = _plain(_quats(seed, count))
    rng = np.random.default_rng(seed)
    if count not in (None, 1) and vectors not in (None, 1):
        vectors = count
    v = rng.normal(size=(3,) if vectors is None else (vectors, 3)) * 10
    assert_declared(
        "spatial.transform.Rotation.apply", r.apply(v, inverse), R.apply(r, v, inverse), scale=10
    )


def test_concatenate_and_refusals():
    a, b = _plain(_quats(1, 2)), _plain(_quats(2, None))
    assert_exact(Rotation.concatenate([a, b]).as_quat(), R.concatenate([a, b]).as_quat())
    with pytest.raises(ValueError, match="Found zero norm"):
        R.from_quat(np.zeros(4))
    with pytest.raises(ValueError, match=r"argument quat.shape=\(2, 2, 4\)"):
        R.from_quat(np.ones((2, 2, 4)))
    with pytest.raises(TypeError, match="Single rotation is not subscriptable"):
        R.__getitem__(b, 0)


def test_traced_rotation_is_a_scipy_rotation_and_slerp_runs_on_it(tmp_path):
    """Slerp is SciPy's own Python code: on a TracedRotation it records the graph."""
    import patchport
    from patchport import annotate

    rotvecs = np.random.default_rng(3).uniform(-1, 1, size=(4, 3))
    times, query = [0.0, 0.5, 1.2, 2.0], np.linspace(0, 2, 9)
    with patchport.session("slerp", tmp_path, patching=["scipy"], verify=True):
        traced = annotate.input_tensors("n", {"rotvecs": rotvecs})
        key = Rotation.from_rotvec(traced)
        assert isinstance(key, Rotation) and type(key) is R.TracedRotation
        assert [type(k) for k in key] == [R.TracedRotation] * 4
        out = Slerp(times, key)(query).as_quat()
        annotate.output_tensors("n", {"q": out}, export_with="onnx")
    np.testing.assert_allclose(
        out, Slerp(times, Rotation.from_rotvec(rotvecs))(query).as_quat(), atol=1e-14
    )
    result = patchport.compile_graph(visualize=False)
    fresh = np.random.default_rng(4).uniform(-1, 1, size=(4, 3))
    got = patchport.InferenceManager(result.yaml_path).run_policy({"n/rotvecs": fresh})
    want = Slerp(times, Rotation.from_rotvec(fresh))(query).as_quat()
    np.testing.assert_allclose(got["n/q"].numpy(), want, atol=1e-6)
