"""Watching native functions: which are wrapped, warnings, and exact restoration."""

from __future__ import annotations

import math
import warnings

import cv2
import numpy as np
import pytest
import torch

from patchport.errors import PatchRestoreWarning, TraceLossWarning
from patchport.tracing import Recorder, finish, trace_input, watch_natives
from patchport.tracing.native import watchable_names


def test_only_public_functions_of_cv2_are_wrapped_and_all_are_restored() -> None:
    before = dict(vars(cv2))
    with watch_natives() as wrapped:
        names = {name for _, name in wrapped}
        assert {"cvtColor", "resize", "GaussianBlur"} <= names
        assert "COLOR_BGR2RGB" not in names and "VideoCapture" not in names
        assert cv2.resize is not before["resize"]
    assert all(vars(cv2)[k] is v for k, v in before.items())


def test_a_later_assignment_is_kept_on_restore_and_reported() -> None:
    original = cv2.flip
    # the same PatchInfo install path as a session: the kept value is reported
    with pytest.warns(PatchRestoreWarning, match=r"cv2\.flip"), watch_natives():
        mine = lambda *a, **k: "someone else's"  # noqa: E731
        cv2.flip = mine
    try:
        assert cv2.flip is mine
    finally:
        cv2.flip = original


def test_user_named_module_is_watched() -> None:
    rec = Recorder("native")
    x = trace_input(rec, "x", np.array(4.0))
    assert "sqrt" in watchable_names(math)
    with watch_natives([math]), pytest.warns(TraceLossWarning, match=r"math\.sqrt"):
        root = math.sqrt(x)
    assert root == 2.0 and not hasattr(math.sqrt, "_pp_watcher")
    rec.close()


def test_plain_calls_while_watching_do_not_warn_and_are_cheap() -> None:
    frame = np.zeros((8, 8, 3), np.uint8)
    rec = Recorder("native")  # active, so the watcher cannot skip its check
    trace_input(rec, "x", frame)
    with watch_natives(), warnings.catch_warnings():
        warnings.simplefilter("error", TraceLossWarning)
        out = cv2.cvtColor(frame, cv2.COLOR_BGR2RGB)
    assert out.shape == frame.shape
    rec.close()


def test_native_result_reaching_graph_is_a_constant_with_native_origin() -> None:
    rec = Recorder("native")
    x = trace_input(rec, "x", np.ones((4, 4), np.float32))
    with watch_natives([cv2]), pytest.warns(TraceLossWarning):
        small = cv2.resize(x, (2, 2))
    y = x[:2, :2] + small
    gm = finish(rec, y)
    (const,) = rec.constants()
    assert "native cv2.resize()" in const.origin and const.shape == (2, 2)
    fresh = np.full((4, 4), 3.0, np.float32)
    np.testing.assert_array_equal(gm(torch.from_numpy(fresh)).numpy(), fresh[:2, :2] + small)


def test_native_write_into_traced_buffer_is_frozen_and_reported() -> None:
    rec = Recorder("native")
    x = trace_input(rec, "x", np.arange(12, dtype=np.uint8).reshape(3, 4))
    dst = x * 2  # traced
    with watch_natives([cv2]), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cv2.flip(x, 1, dst=dst)  # writes into traced memory
    messages = [str(w.message) for w in caught if issubclass(w.category, TraceLossWarning)]
    assert any("cv2.flip() without a patch" in m for m in messages)
    assert any("wrote into traced data" in m for m in messages)
    gm = finish(rec, dst + 1)
    (const,) = rec.constants()
    assert "data written by native cv2.flip()" in const.origin
    # the graph replays what the program computed (the frozen flip), not a stale dst
    np.testing.assert_array_equal(gm(torch.zeros(3, 4, dtype=torch.uint8)).numpy(), dst + 1)
