"""Interop replacements: NumPy <-> torch conversions keep traced data traced."""

from __future__ import annotations

import numpy as np
import torch

from patchport.tracing import Recorder, finish, interop_patches, trace_input


def test_interop_keeps_trace_and_restores() -> None:
    originals = (torch.from_numpy, torch.as_tensor, torch.tensor, np.asarray, np.array)
    rec = Recorder("interop", strict=True)
    x = trace_input(rec, "x", np.arange(6, dtype=np.uint8).reshape(2, 3))
    with interop_patches():
        t = torch.from_numpy(x).flip((-1,))
        a = t.numpy()
        b = np.asarray(torch.as_tensor(a, dtype=torch.float32)) / 2
        c = np.array(torch.tensor(x)) + np.ascontiguousarray(x.T).T
        plain = np.asarray([1, 2, 3])
    assert (torch.from_numpy, torch.as_tensor, torch.tensor, np.asarray, np.array) == originals
    assert type(plain) is np.ndarray
    gm = finish(rec, (a, b, c))
    fresh = np.random.default_rng(3).integers(0, 200, (2, 3)).astype(np.uint8)
    got = gm(torch.from_numpy(fresh))
    np.testing.assert_array_equal(got[0].numpy(), fresh[:, ::-1])
    np.testing.assert_allclose(got[1].numpy(), fresh[:, ::-1].astype(np.float32) / 2)
    assert got[1].dtype == torch.float32
    np.testing.assert_array_equal(got[2].numpy(), fresh + fresh)


def test_lists_of_traced_values_are_stacked_by_the_interop_patches() -> None:
    rec = Recorder("lists", strict=True)
    x = trace_input(rec, "x", np.linspace(0.0, 1.0, 6).reshape(2, 3))
    t = trace_input(rec, "t", torch.arange(3, dtype=torch.int64))
    with interop_patches():
        stats = np.array([x.mean(), x.max(), 2.0])  # NumPy scalars of the trace
        rows = np.asarray([x[0], [5.0, 6.0, 7.0]], dtype=np.float32)
        mixed = torch.tensor([t.sum(), 4])  # a 0-d traced tensor and a number
        back = torch.tensor([[x[1, 0], 1.0]])
    gm = finish(rec, (stats, rows, mixed, back))
    fresh_x = np.linspace(2.0, 5.0, 6).reshape(2, 3)
    fresh_t = torch.tensor([4, 5, 6])
    got = gm(torch.from_numpy(fresh_x), fresh_t)
    np.testing.assert_allclose(got[0].numpy(), [fresh_x.mean(), fresh_x.max(), 2.0])
    assert got[1].dtype == torch.float32 and got[1][1].tolist() == [5.0, 6.0, 7.0]
    np.testing.assert_allclose(got[1][0].numpy(), fresh_x[0].astype(np.float32))
    assert got[2].tolist() == [15, 4] and got[2].dtype == torch.int64
    untraced = torch.tensor([[fresh_x[1, 0], 1.0]])  # a NumPy float64 scalar: float64
    assert got[3].dtype == untraced.dtype == torch.float64 and torch.equal(got[3], untraced)


def test_buffers_of_traced_arrays_stay_traced() -> None:
    """np.frombuffer / np.asarray of a traced array's memory (itself, a memoryview of it,
    ``x.data``) reinterpret the same bytes: recorded, not frozen."""
    rec = Recorder("buffers", strict=True)
    x = trace_input(rec, "x", np.linspace(0.5, 3.0, 12).reshape(3, 4))
    with interop_patches():
        flat = np.frombuffer(x, dtype=np.float64)
        halves = np.frombuffer(x * 2, dtype=np.float32, count=4, offset=8)
        view = np.asarray(memoryview(x))
        raw = np.asarray(memoryview(x).cast("B"))
        data = np.array(x.data)
    gm = finish(rec, (flat * 2, halves, view + 1, raw, data))
    fresh = np.random.default_rng(5).normal(size=(3, 4))
    got = gm(torch.from_numpy(fresh.copy()))
    np.testing.assert_array_equal(got[0].numpy(), fresh.ravel() * 2)
    np.testing.assert_array_equal(got[1].numpy(), (fresh * 2).ravel().view(np.float32)[2:6])
    np.testing.assert_array_equal(got[2].numpy(), fresh + 1)
    np.testing.assert_array_equal(got[3].numpy(), fresh.view(np.uint8).ravel())
    np.testing.assert_array_equal(got[4].numpy(), fresh)


def test_object_arrays_of_traced_data_warn_instead_of_failing() -> None:
    import pytest

    from patchport.errors import TraceLossWarning

    rec = Recorder("objects")
    x = trace_input(rec, "x", np.linspace(0.5, 3.0, 4))
    with interop_patches(), pytest.warns(TraceLossWarning, match="object"):
        boxed = np.array(x, dtype=object)
    assert type(boxed) is np.ndarray and boxed.dtype == object
    assert list(boxed) == list(np.linspace(0.5, 3.0, 4))


def test_ndmin_adds_leading_axes_to_the_traced_value() -> None:
    """np.array(x, ndmin=k) (and NumPy's own np.r_, which converts each item so) prepends
    axes of size one: the graph's value gets them too, not only the eager one."""
    rec = Recorder("ndmin", strict=True)
    x = trace_input(rec, "x", np.arange(6.0))
    with interop_patches():
        scalar = np.array(x[2], ndmin=1)
        row = np.array(x, ndmin=2)
        listed = np.array([x[1], x[2]], ndmin=3, copy=True)
    assert (scalar.shape, row.shape, listed.shape) == ((1,), (1, 6), (1, 1, 2))
    gm = finish(rec, (scalar, row, listed))
    fresh = np.arange(6.0)[::-1].copy()
    got = gm(torch.from_numpy(fresh))
    assert [tuple(g.shape) for g in got] == [(1,), (1, 6), (1, 1, 2)]
    np.testing.assert_array_equal(got[0].numpy(), [fresh[2]])
    np.testing.assert_array_equal(got[1].numpy(), fresh[None])
    np.testing.assert_array_equal(got[2].numpy(), fresh[None, None, 1:3])


def test_as_tensor_of_a_list_of_traced_arrays_is_stacked() -> None:
    """torch.as_tensor([a, b]) of NumPy arrays works in plain torch; with traced arrays it
    failed inside a session ("len() of unsized object") and must be traced instead."""
    rec = Recorder("as_tensor_list", strict=True)
    x = trace_input(rec, "x", np.linspace(1.0, 2.0, 6).astype(np.float32))
    with interop_patches():
        pair = torch.as_tensor([x[:3], x[3:]])
        scalars = torch.as_tensor((x[0], x[5]), dtype=torch.float64)
    assert pair.dtype == torch.float32 and scalars.dtype == torch.float64
    gm = finish(rec, (pair, scalars))
    fresh = np.linspace(3.0, 7.0, 6).astype(np.float32)
    got = gm(torch.from_numpy(fresh))
    torch.testing.assert_close(got[0], torch.as_tensor([fresh[:3], fresh[3:]]))
    torch.testing.assert_close(got[1], torch.as_tensor((fresh[0], fresh[5]), dtype=torch.float64))
