"""Catalogue of every way traced data leaves the trace: each warns, names the culprit, and
points at the user's own line (this file), or raises in a strict recorder."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable

import cv2
import numpy as np
import pytest
import torch

from patchport.errors import TraceLossError, TraceLossWarning
from patchport.tracing import Recorder, finish, trace_input, watch_natives

HERE = __file__


def lineno() -> int:
    """Line number of the caller (the statement that loses the trace is on the same line)."""
    return sys._getframe(1).f_lineno


def caught_loss(action: Callable[[], int]) -> tuple[list[warnings.WarningMessage], int]:
    """Run ``action`` (which returns its own line) and collect TraceLossWarnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = action()
    return [w for w in caught if issubclass(w.category, TraceLossWarning)], line


def assert_points_here(found: list, culprit: str, line: int) -> None:
    assert found, f"no TraceLossWarning for {culprit}"
    message = str(found[0].message)
    assert culprit in message, message
    assert f"{HERE}:{line}" in message, message
    assert found[0].filename == HERE and found[0].lineno == line  # the warning's own location


@pytest.fixture
def arr():  # noqa: ANN201
    rec = Recorder("loss")
    return rec, trace_input(rec, "x", np.linspace(0.5, 3.0, 12).reshape(3, 4))


@pytest.fixture
def ten():  # noqa: ANN201
    rec = Recorder("loss")
    return rec, trace_input(rec, "t", torch.linspace(0.5, 3.0, 12).reshape(3, 4))


def test_unmapped_numpy_function(arr) -> None:  # noqa: ANN001
    rec, x = arr

    def act():  # noqa: ANN202
        np.unique(x)
        return lineno() - 1

    found, line = caught_loss(act)
    assert_points_here(found, "np.unique", line)


def test_unmappable_linalg_says_why_and_what_is_traced(arr) -> None:  # noqa: ANN001
    rec, x = arr
    sym = x[:, :3] + x[:, :3].T
    for culprit, reason in (("np.linalg.eigh", "eigvalsh"), ("np.linalg.svd", "compute_uv=False")):
        call = getattr(np.linalg, culprit.rsplit(".", 1)[1])
        found, line = caught_loss(lambda: (call(sym), lineno())[1])  # noqa: B023
        assert_points_here(found, culprit, line)
        message = str(found[0].message)
        assert "LAPACK" in message and reason in message, message


def test_flat_writes_without_a_traced_equivalent_warn_and_do_what_numpy_does(arr) -> None:  # noqa: ANN001
    rec, x = arr
    m = x * 1.0
    found, line = caught_loss(lambda: (m.T.flat.__setitem__(slice(0, 2), x[0, :2]), lineno())[1])
    assert_points_here(found, "non-contiguous", line)
    found, line = caught_loss(lambda: (m.flat.__setitem__([0, 1, 2], x[1, :2]), lineno())[1])
    assert_points_here(found, "repeats a shorter value", line)
    want = np.asarray(x).copy() * 1.0
    want.T.flat[0:2] = np.asarray(x)[0, :2]
    want.flat[[0, 1, 2]] = np.asarray(x)[1, :2]
    np.testing.assert_array_equal(np.asarray(m), want)


def test_a_branch_on_traced_data_says_what_it_freezes_and_the_fix(arr, ten) -> None:  # noqa: ANN001
    for x in (arr[1], ten[1]):
        found, line = caught_loss(lambda: (1 if x.sum() > 0 else 0, lineno())[1])  # noqa: B023
        assert_points_here(found, "__bool__", line)
        message = str(found[0].message)
        assert "keeps only that branch" in message and "np.where / torch.where" in message


def test_unmapped_ufunc_method(arr) -> None:  # noqa: ANN001
    rec, x = arr
    found, line = caught_loss(lambda: (np.add.outer(x[0], x[1]), lineno())[1])
    assert_points_here(found, "np.add.outer", line)


def test_ufunc_at_into_plain_data_warns_and_into_traced_data_is_recorded(arr) -> None:  # noqa: ANN001
    rec, x = arr
    rows = np.array([0, 2, 0])

    def numpy_side(data: np.ndarray, into: np.ndarray) -> np.ndarray:
        cols = (data[0] > 1).astype(np.int64)[:3]
        np.maximum.at(into, (rows, cols), data[1, :3])
        return into

    cols = (x[0] > 1).astype(np.int64)[:3]
    expected = numpy_side(np.asarray(x).copy(), np.zeros((3, 4)))
    plain = np.zeros((3, 4))
    found, line = caught_loss(lambda: (np.maximum.at(plain, (rows, cols), x[1, :3]), lineno())[1])
    assert_points_here(found, "np.maximum.at", line)
    np.testing.assert_array_equal(plain, expected)
    traced = x * 0
    found, _ = caught_loss(lambda: (np.maximum.at(traced, (rows, cols), x[1, :3]), lineno())[1])
    assert not found, [str(w.message) for w in found]
    np.testing.assert_array_equal(np.asarray(traced), expected)
    fresh = np.linspace(3.0, -2.0, 12).reshape(3, 4)
    out = finish(rec, traced)(torch.from_numpy(fresh))  # recomputed from the fresh input
    out = out[0] if isinstance(out, (tuple, list)) else out
    np.testing.assert_array_equal(np.asarray(out), numpy_side(fresh, fresh * 0))


def test_unmapped_ndarray_method(arr) -> None:  # noqa: ANN001
    rec, x = arr
    found, line = caught_loss(lambda: (x.argpartition(1), lineno())[1])
    assert_points_here(found, "ndarray.argpartition", line)


@pytest.mark.parametrize(
    ("culprit", "action"),
    [
        ("ndarray.item", lambda x: x[0, 0].item()),
        ("ndarray.tolist", lambda x: x.tolist()),
        ("ndarray.__float__", lambda x: float(x.sum())),
        ("ndarray.__int__", lambda x: int(x.max())),
        ("ndarray.__bool__", lambda x: bool(x.min() > 1)),
        ("ndarray.__bool__", lambda x: 1 if x.mean() > 0 else 0),
        ("ndarray.__index__", lambda x: [1, 2, 3][x.astype(np.int64).min()]),
        ("ndarray.__contains__", lambda x: 1.0 in x),
    ],
)
def test_python_values_from_numpy(arr, culprit: str, action: Callable) -> None:  # noqa: ANN001
    rec, x = arr
    found, line = caught_loss(lambda: (action(x), lineno())[1])
    # the lambda inside the parametrize list is user code too: accept either line
    message = str(found[0].message) if found else ""
    assert culprit in message, message
    assert HERE in message, message


@pytest.mark.parametrize(
    ("culprit", "action"),
    [
        ("Tensor.item", lambda t: t[0, 0].item()),
        ("Tensor.tolist", lambda t: t.tolist()),
        ("Tensor.__float__", lambda t: float(t.sum())),
        ("Tensor.__int__", lambda t: int(t.max())),
        ("Tensor.__bool__", lambda t: 1 if t.mean() > 0 else 0),
        ("torch.equal", lambda t: torch.equal(t, t)),
    ],
)
def test_python_values_from_torch(ten, culprit: str, action: Callable) -> None:  # noqa: ANN001
    rec, t = ten
    found, _ = caught_loss(lambda: (action(t), lineno())[1])
    message = str(found[0].message) if found else ""
    assert culprit in message, message
    assert HERE in message, message


def test_tensor_iteration_stays_traced(ten) -> None:  # noqa: ANN001
    rec, t = ten
    with warnings.catch_warnings():
        warnings.simplefilter("error", TraceLossWarning)
        rows = [row * 2 for row in t]  # torch iterates through unbind(): recorded
    gm = finish(rec, torch.stack(rows))
    fresh = torch.rand(3, 4)
    torch.testing.assert_close(gm(fresh), fresh * 2)


def test_float_points_at_exact_line(arr) -> None:  # noqa: ANN001
    rec, x = arr

    def act():  # noqa: ANN202
        float(x.sum())
        return lineno() - 1

    found, line = caught_loss(act)
    assert_points_here(found, "__float__", line)


def test_item_on_tensor_points_at_exact_line(ten) -> None:  # noqa: ANN001
    rec, t = ten

    def act():  # noqa: ANN202
        t.sum().item()
        return lineno() - 1

    found, line = caught_loss(act)
    assert_points_here(found, "Tensor.item", line)


def test_native_opencv_call_warns_and_origin_is_kept(arr) -> None:  # noqa: ANN001
    rec, x = arr
    img = x.astype(np.float32)
    with watch_natives() as wrapped:
        assert (cv2, "GaussianBlur") in wrapped

        def act():  # noqa: ANN202
            act.blurred = cv2.GaussianBlur(img, (3, 3), 0)
            return lineno() - 1

        found, line = caught_loss(act)
        plain_call = cv2.GaussianBlur(np.ones((4, 4), np.float32), (3, 3), 0)  # no warning
    assert cv2.GaussianBlur.__name__ == "GaussianBlur" and not hasattr(
        cv2.GaussianBlur, "_pp_watcher"
    )
    assert_points_here(found, "cv2.GaussianBlur", line)
    assert type(act.blurred) is np.ndarray and plain_call.shape == (4, 4)
    out = img + act.blurred
    finish(rec, out)
    (const,) = rec.constants()
    assert "cv2.GaussianBlur" in const.origin and f"{HERE}:{line}" in const.origin


def test_plain_arrays_become_constants_with_origin(arr) -> None:  # noqa: ANN001
    rec, x = arr
    mean = np.array([1.0, 2.0, 3.0, 4.0])
    y = x - mean
    line = lineno() - 1
    z = y * torch.ones(4).numpy()
    finish(rec, z)
    consts = rec.constants()
    assert len(consts) == 2
    assert consts[0].shape == (4,) and consts[0].nbytes == 32 and consts[0].dtype == "float64"
    assert consts[0].origin.endswith(f"{HERE}:{line}")
    assert str(consts[0]).startswith("_const_0: float64[4] (32 bytes) from entered the graph")


def test_unmapped_result_becomes_constant_with_origin(arr) -> None:  # noqa: ANN001
    rec, x = arr
    with pytest.warns(TraceLossWarning, match="np.unique"):
        u = np.unique(x)
    line = lineno() - 1
    out = x[0, :2] * u[:2]
    finish(rec, out)
    (const,) = rec.constants()
    assert "np.unique" in const.origin and f"{HERE}:{line}" in const.origin


def test_out_into_plain_array_warns(arr) -> None:  # noqa: ANN001
    rec, x = arr
    buf = np.zeros((3, 4))
    with pytest.warns(TraceLossWarning, match="plain out= array"):
        np.add(x, 1, out=buf)
    with pytest.warns(TraceLossWarning, match="plain out= array"):
        buf += x


def test_strict_recorder_raises() -> None:
    rec = Recorder("strict", strict=True)
    x = trace_input(rec, "x", np.ones((2, 2)))
    with pytest.raises(TraceLossError, match="np.unique"):
        np.unique(x)
    with pytest.raises(TraceLossError, match="__float__"):
        float(x.sum())
    with pytest.raises(TraceLossError, match="cv2.flip"), watch_natives():
        cv2.flip(x, 0)
    assert len(rec.losses) == 3


def test_unrecorded_view_of_traced_data_warns_when_used(arr) -> None:  # noqa: ANN001
    rec, x = arr
    from numpy.lib.stride_tricks import as_strided

    window = as_strided(x, shape=(2, 2), strides=x.strides, subok=True)  # numpy internals
    with pytest.warns(TraceLossWarning, match="unrecorded view"):
        out = window + x[:2, :2]
    finish(rec, out)
    (const,) = rec.constants()
    assert "without being recorded" in const.origin


def test_loss_inside_a_pure_python_library_names_the_users_line(arr) -> None:  # noqa: ANN001
    import statistics  # pure Python: its fsum() calls float() on each traced element

    rec, x = arr
    found, line = caught_loss(lambda: (statistics.fmean(x[0]), lineno())[1])
    assert_points_here(found, "ndarray.__float__()", line)


@pytest.mark.parametrize("use", ["ufunc", "function"])
def test_scalar_type_cast_of_traced_array_warns_where_it_is_used(arr, use) -> None:  # noqa: ANN001
    rec, x = arr
    cast = np.float32(x)  # NumPy's scalar-type call copies without any hook: unrecorded

    def act():  # noqa: ANN202
        _ = cast + 1 if use == "ufunc" else np.sum(cast)
        return lineno() - 1

    found, line = caught_loss(act)
    assert_points_here(found, "without being recorded", line)
    assert "np.float32(x)" in str(found[0].message)


def test_bincount_length_read_from_traced_data_warns(arr) -> None:  # noqa: ANN001
    rec, x = arr
    cells = (x * 2).astype(np.int64).ravel()

    def act():  # noqa: ANN202
        np.bincount(cells)
        return lineno() - 1

    found, line = caught_loss(act)
    assert_points_here(found, "np.bincount", line)
    assert "minlength" in str(found[0].message)
    found, _ = caught_loss(lambda: (np.bincount(cells, minlength=8), lineno())[1])
    assert not found  # the bins are stated: nothing depends on the data
