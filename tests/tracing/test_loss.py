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

import patchport
from patchport.errors import TraceLossError, TraceLossWarning
from patchport.tracing import Recorder, finish, trace_input, watch_natives

from .helpers import conform

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


@pytest.mark.parametrize(
    ("culprit", "call"),
    [
        ("np.fft.rfft2", lambda x: np.fft.rfft2(x)),
        ("np.linalg.eigvals", lambda x: np.linalg.eigvals(x[:, :3])),
        ("np.lib.stride_tricks.sliding_window_view", lambda x: _windows_writeable(x)),
    ],
)
def test_unmapped_function_is_named_by_its_public_path(arr, culprit: str, call) -> None:  # noqa: ANN001
    rec, x = arr
    found, _ = caught_loss(lambda: (call(x), lineno())[1])
    assert found and f"{culprit} (not mapped" in str(found[0].message), found


def _windows_writeable(x):  # noqa: ANN001, ANN202
    from numpy.lib.stride_tricks import sliding_window_view

    return sliding_window_view(x, (2, 2), writeable=True)


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
        where = "np.where" if isinstance(x, np.ndarray) else "torch.where"
        assert "keeps only that branch" in message and where in message


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
    found, line = caught_loss(lambda: (x.compress([True, False, True], axis=0), lineno())[1])
    assert_points_here(found, "ndarray.compress", line)


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


@pytest.mark.parametrize(
    ("source", "value", "fix"),
    [
        ("arr", lambda x: 1 if x.mean() > 0 else 0, "np.where"),  # a branch: select instead
        ("arr", lambda x: int(x.max()), "keep it an array"),
        ("ten", lambda t: t.mean() > 0 and 1, "torch.where"),
    ],
)
def test_python_values_say_how_to_keep_them_traced(request, source, value, fix) -> None:  # noqa: ANN001
    """A branch or number taken from traced data is loud with the fix, not only the cause."""
    rec, x = request.getfixturevalue(source)
    found, _ = caught_loss(lambda: (value(x), lineno())[1])
    assert found and fix in str(found[0].message), found and str(found[0].message)


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


def test_numpy_reading_a_list_of_traced_values_names_the_call_and_the_fix(arr) -> None:  # noqa: ANN001
    """np.square / np.diag of a list holding traced numbers (a tracker's ``std`` list) read
    each element with float() inside NumPy's C code: the warning names the user's call and
    says to build the array first, not to avoid a float() the user never wrote."""
    rec, x = arr

    def act():  # noqa: ANN202
        np.square([x[0, 0] * 0.05, 1e-1])
        return lineno() - 1

    found, line = caught_loss(act)
    assert_points_here(found, "np.square([x[0, 0] * 0.05, 1e-1])", line)
    assert "np.array([...])" in str(found[0].message)

    def direct():  # noqa: ANN202
        float(x.sum())
        return lineno() - 1

    found, line = caught_loss(direct)
    assert_points_here(found, "__float__", line)
    assert "np.array([...])" not in str(found[0].message)


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
    # the library function the user's line called is named, so the cause is clear (a PIL
    # Image.fromarray reads the array's bytes: "ndarray.tobytes() ... inside PIL.Image...")
    assert "inside statistics.fmean()" in str(found[0].message)


@pytest.mark.parametrize(
    "cast",
    [np.float32, np.float64, np.int32, np.int64, np.uint8, np.int16, np.bool_, np.float16],
    ids=lambda c: c.__name__,
)
def test_scalar_type_call_on_a_traced_array_is_a_recorded_cast(cast) -> None:  # noqa: ANN001
    """``np.float32(x)`` on an array copies without any NumPy hook (Gymnasium's
    NormalizeObservation returns one): it is recorded as ``x.astype(np.float32)``."""

    def fn(x):  # noqa: ANN001, ANN202
        return cast(x * 40.0 - 20.0) + cast(1)

    conform(fn, np.linspace(-1.0, 1.0, 12).reshape(3, 4), fresh=[np.linspace(0.9, -0.7, 12)
                                                                 .reshape(3, 4)])  # fmt: skip


@pytest.mark.parametrize("cast", [np.float32, np.int64, np.uint8])
def test_scalar_type_call_on_a_0d_traced_array_warns_at_its_line(arr, cast) -> None:  # noqa: ANN001
    """``np.float32(q[0])`` gives a NumPy scalar (a Unitree deploy script's gravity from the
    IMU quaternion, written one line differently): no trace, so it is reported there."""
    rec, x = arr

    def act():  # noqa: ANN202
        g = cast(x[0, 1])  # a NumPy scalar: no trace
        made = lineno() - 1
        _ = x * g  # the plain number reaches a traced operation: frozen
        return made

    found, line = caught_loss(act)
    assert_points_here(found, "made a plain number", line)


def test_scalar_type_call_on_a_vector_tries_no_float_conversion_loss(arr) -> None:  # noqa: ANN001
    """``tuple(np.float64(q))``: NumPy first tries ``float(q)``, which fails on a vector;
    that attempt took nothing out of the trace and is not reported."""
    rec, x = arr
    found, _ = caught_loss(lambda: (tuple(np.float64(x[0])), lineno())[1])
    assert not found, [str(w.message) for w in found]


def test_unhooked_array_that_is_no_cast_warns_at_its_line(arr) -> None:  # noqa: ANN001
    """An unbound ndarray method on traced data (NumPy's C code, no dispatch) makes an array
    of the same shape that is no cast of it: it was taken for one, and is reported at the
    line that made it when the pass ends."""
    rec, x = arr

    def act():  # noqa: ANN202
        order = np.ndarray.argsort(x[::-1] * 1.0)  # noqa: F841
        made = lineno() - 1
        finish(rec, x + 1)
        return made

    found, line = caught_loss(act)
    assert_points_here(found, "not a cast", line)


def test_unhooked_array_of_another_shape_warns_at_the_line_that_made_it(arr) -> None:  # noqa: ANN001
    """An unbound ndarray method that changes the shape (NumPy's C code, no dispatch) makes
    an orphan: it is reported at the line that made it, naming where it was first used."""
    rec, x = arr
    flat = np.ndarray.flatten(x)  # C code, no hook: unrecorded
    made = lineno() - 1

    def act():  # noqa: ANN202
        _ = flat + 1
        return lineno() - 1

    found, used = caught_loss(act)
    assert_points_here(found, "without being recorded", made)
    assert f"first used at {HERE}:{used}" in str(found[0].message)


@pytest.mark.parametrize("convert", ["float32", "float16", "int64", "float(np.float32)"])
def test_numpy_scalar_made_from_a_traced_value_is_reported_at_the_conversion(
    arr,  # noqa: ANN001
    convert: str,
) -> None:
    rec, x = arr
    total = x.sum() * 1.37  # a traced 0-d value (not a whole number)
    scalar_type = getattr(np, convert, np.float32)

    def act():  # noqa: ANN202
        s = scalar_type(total) if convert in dir(np) else float(np.float32(total))  # no hook
        line = lineno() - 1
        _ = x * s  # the plain number reaches a traced operation: frozen
        return line

    found, line = caught_loss(act)
    assert_points_here(found, "made a plain number", line)
    assert len(found) == 1


@pytest.mark.parametrize("text", ["format", "str", "repr"])
def test_number_parsed_back_from_the_text_of_a_traced_value_is_reported(
    arr,  # noqa: ANN001
    text: str,
) -> None:
    rec, x = arr
    mean = x.mean() * 1.37
    assert repr(mean) == repr(np.asarray(mean)[()])  # shows as the NumPy scalar it stands for
    written = {"format": lambda v: f"{v:.4f}", "str": str, "repr": repr}[text]

    def act():  # noqa: ANN202
        act.s = float(written(mean).removeprefix("np.float64(").removesuffix(")"))
        return lineno() - 1

    found, line = caught_loss(act)
    assert not found  # text alone (printing, logging) loses nothing
    found, _ = caught_loss(lambda: (x - act.s, lineno())[1])
    assert found and "formatted as text" in str(found[0].message)
    assert HERE in str(found[0].message)


def test_conversions_without_a_traced_use_and_unrelated_numbers_stay_quiet(arr) -> None:  # noqa: ANN001
    rec, x = arr
    total = x.sum() * 1.37
    with warnings.catch_warnings():
        warnings.simplefilter("error", TraceLossWarning)
        shown = f"{total:.3f} {total} {np.float32(total)}"  # display only
        y = x * 2.0 + np.float32(0.125) - 1.5 + np.int64(3)
        z = y * np.float32(1.37)  # a NumPy scalar that no traced value was turned into
    assert shown and z.shape == (3, 4)
    finish(rec, y)


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


# ------------------------------------------------------- exits with no NumPy-level hook
def test_traced_numpy_scalars_hash_like_numpy_scalars_and_warn(arr) -> None:  # noqa: ANN001
    rec, x = arr
    plain = {v: i for i, v in enumerate(np.asarray(x)[0])}

    def act():  # noqa: ANN202
        act.seen = {v: i for i, v in enumerate(x[0])}
        return lineno() - 1

    found, line = caught_loss(act)
    assert_points_here(found, "hash()", line)
    assert list(act.seen.values()) == list(plain.values())
    assert [float(np.asarray(k)) for k in act.seen] == [float(k) for k in plain]
    with pytest.raises(TypeError, match="unhashable"):
        hash(x[0])  # a 1-d array stays unhashable, as in NumPy


def test_pickling_traced_data_warns_and_unpickles_plain_data(arr) -> None:  # noqa: ANN001
    import pickle

    rec, x = arr

    def act():  # noqa: ANN202
        act.again = pickle.loads(pickle.dumps(x * 2))
        return lineno() - 1

    found, line = caught_loss(act)
    assert_points_here(found, "pickl", line)
    assert type(act.again) is np.ndarray
    np.testing.assert_array_equal(act.again, np.asarray(x) * 2)


@pytest.mark.parametrize("name", ["__array__", "ctypes", "__array_interface__"])
def test_raw_access_to_traced_data_warns(arr, name: str) -> None:  # noqa: ANN001
    rec, x = arr
    access = {
        "__array__": lambda: x.__array__(),
        "ctypes": lambda: x.ctypes.data,
        "__array_interface__": lambda: x.__array_interface__["data"],
    }[name]
    found, line = caught_loss(lambda: (access(), lineno())[1])
    message = str(found[0].message) if found else ""
    assert name in message and HERE in message, message
    plain = np.ones(3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TraceLossWarning)
        assert plain.__array__() is plain and plain.ctypes.data  # untraced: untouched


def test_object_dtype_of_traced_data_warns_instead_of_failing(arr) -> None:  # noqa: ANN001
    rec, x = arr
    found, line = caught_loss(lambda: (x.astype(object), lineno())[1])
    assert_points_here(found, "object", line)
    boxed = x.astype(object)
    assert boxed.dtype == object and type(boxed) is np.ndarray
    assert boxed[0, 0] == np.asarray(x)[0, 0]


def test_resize_of_traced_data_in_place(arr) -> None:  # noqa: ANN001
    rec, x = arr
    y = x * 2
    y.resize((2, 6), refcheck=False)  # same size: a reshape in place, recorded
    assert y.shape == (2, 6)
    with pytest.raises(patchport.PatchportError, match=r"ndarray.resize.*np.resize"):
        (x * 3).resize((5, 5), refcheck=False)
    gm = finish(rec, y)
    fresh = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
    np.testing.assert_allclose(gm(torch.from_numpy(fresh)).numpy(), (fresh * 2).reshape(2, 6))


def test_ufunc_where_without_an_out_buffer_says_why(arr) -> None:  # noqa: ANN001
    """``np.divide(a, b, where=m)`` leaves the masked-out places uninitialised: nothing to
    record there, and the warning says so (and the fix) at the user's line."""
    rec, x = arr

    def act():  # noqa: ANN202
        np.divide(1.0, x, where=x > 1.0)
        return lineno() - 1

    found, line = caught_loss(act)
    assert_points_here(found, "np.divide", line)
    assert "where= without an out= buffer" in str(found[0].message), found[0].message
