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


def test_object_methods_and_submodule_functions_are_watched_at_the_users_line() -> None:
    gray = np.tile(np.arange(64, dtype=np.uint8) * 3, (32, 1))
    calls = {
        "cv2.CLAHE.apply": lambda g: cv2.createCLAHE(2.0, (4, 4)).apply(g),
        "cv2.StereoMatcher.compute": lambda g: cv2.StereoSGBM.create(0, 16, 3).compute(g, g),
        "cv2.fisheye.undistortPoints": lambda g: cv2.fisheye.undistortPoints(
            g[:1, :4].reshape(1, 2, 2).astype(np.float32), np.eye(3), np.zeros(4)
        ),
    }
    for qualname, call in calls.items():
        rec = Recorder("native")
        x = trace_input(rec, "x", gray)
        with watch_natives(), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = call(x)
        rec.close()
        found = [w for w in caught if issubclass(w.category, TraceLossWarning)]
        assert found and f"native {qualname}()" in str(found[0].message), qualname
        # the lambda's line is the user's line: the warning points into this file
        assert found[0].filename == __file__, (qualname, found[0].filename)
        assert found[0].lineno == call.__code__.co_firstlineno, (qualname, found[0].lineno)
        np.testing.assert_array_equal(got, call(gray))  # the eager value is OpenCV's


def test_watched_methods_and_submodules_are_restored_and_plain_calls_unchanged() -> None:
    methods = dict(vars(cv2.CLAHE)), dict(vars(cv2.StereoMatcher)), dict(vars(cv2.fisheye))
    gray = np.tile(np.arange(64, dtype=np.uint8), (16, 1))
    want = cv2.createCLAHE(3.0, (2, 2)).apply(gray)
    with watch_natives() as wrapped:
        owners = {(getattr(owner, "__name__", ""), name) for owner, name in wrapped}
        assert {("CLAHE", "apply"), ("StereoMatcher", "compute")} <= owners
        assert ("cv2.fisheye", "undistortImage") in owners
        with warnings.catch_warnings():
            warnings.simplefilter("error", TraceLossWarning)
            np.testing.assert_array_equal(cv2.createCLAHE(3.0, (2, 2)).apply(gray), want)
    for before, owner in zip(methods, (cv2.CLAHE, cv2.StereoMatcher, cv2.fisheye)):
        assert all(vars(owner)[k] is v for k, v in before.items())


def test_an_alias_that_is_a_watched_slot_itself_gets_one_watcher() -> None:
    """OpenCV 4's alias search reports cv2.dnn.NMSBoxes, a watched slot itself; two
    watchers on one slot made every session start fail ("targeted twice")."""
    from patchport.patching import PatchDetails
    from patchport.tracing.native import watch_patch_infos

    def aliases(originals):  # the slot itself, then a real alias module
        yield cv2.dnn, "NMSBoxes", cv2.dnn.NMSBoxes

    infos = watch_patch_infos([cv2], aliases=aliases)
    slots = [(id(info.owner), info.attribute) for info in infos]
    assert len(slots) == len(set(slots))
    PatchDetails(infos).validate()


def test_watchers_are_reused_across_blocks_and_remade_for_a_new_original() -> None:
    # start() builds one watcher per native callable; a later session reuses them, and
    # each still warns with its own name, is marked by its own PatchInfo, and is restored
    original = cv2.resize
    rec = Recorder("native")
    x = trace_input(rec, "x", np.ones((4, 4), np.float32))
    installed = []
    for _ in range(2):
        with watch_natives([cv2]) as wrapped, pytest.warns(TraceLossWarning, match="cv2.resize"):
            installed.append(cv2.resize)
            assert cv2.resize.__patchport_patch__.owner is cv2  # marked by this block's patch
            cv2.resize(x, (2, 2))
        assert ("resize" in {name for _, name in wrapped}) and cv2.resize is original
    assert installed[0] is installed[1]
    mine = lambda *args, **kwargs: original(*args, **kwargs)  # noqa: E731
    cv2.resize = mine
    try:
        with watch_natives([cv2]), pytest.warns(TraceLossWarning, match="cv2.resize"):
            assert cv2.resize is not installed[0] and cv2.resize.__wrapped__ is mine
            cv2.resize(x, (2, 2))
        assert cv2.resize is mine
    finally:
        cv2.resize = original
    rec.close()
