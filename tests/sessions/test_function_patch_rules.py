"""FunctionPatch validation, all-or-nothing install, restore, and the replacement rules."""

import sys
import threading
import types
import warnings

import cv2
import numpy as np
import pytest
import torch

import patchport
from patchport import annotate
from patchport.errors import PatchMismatchError, PatchRestoreWarning, TraceLossWarning
from patchport.sessions.lifecycle import current_session

from . import alias_user


def flip_channels(src, code, dst=None, dstCn=0):
    return torch.from_numpy(src).flip((-1,)).numpy()


def test_seed_contract_traced_calls_use_the_replacement_ordinary_calls_use_opencv(frame):
    original = cv2.cvtColor
    with patchport.session(
        "rules", patching=[patchport.FunctionPatch(cv2, "cvtColor", flip_channels)]
    ):
        assert cv2.cvtColor is not original
        traced = annotate.input_tensors("n", {"bgr": frame})
        rgb = cv2.cvtColor(traced, cv2.COLOR_BGR2RGB)
        np.testing.assert_array_equal(
            np.asarray(cv2.cvtColor(frame, cv2.COLOR_BGR2RGB)), frame[..., ::-1]
        )
        annotate.output_tensors("n", {"rgb": rgb})
        patch = patchport.session_patches().find("cv2.cvtColor")
        assert patch.calls == 1 and patch.family == "user"
    assert cv2.cvtColor is original
    from patchport.sessions.lifecycle import last_session

    assert [n.startswith("flip") for n in last_session().nodes_of(patch)] == [True]
    report = last_session().report()
    assert "[user] cv2.cvtColor -> flip_channels: 1 call(s); nodes: flip" in report
    assert "[interop] torch.from_numpy" in report
    assert patch.calls == 1
    assert "flip_channels" in patch.format_diff()


def test_the_report_names_exactly_the_nodes_each_replacement_call_appended(frame):
    patch = patchport.FunctionPatch(cv2, "cvtColor", flip_channels)
    with patchport.session("nodes", patching=[patch]):
        traced = annotate.input_tensors("n", {"bgr": frame})
        shifted = traced + 1  # nodes before, between and after the replacement calls
        first = cv2.cvtColor(shifted, cv2.COLOR_BGR2RGB)
        second = cv2.cvtColor(first * 2, cv2.COLOR_BGR2RGB)
        annotate.output_tensors("n", {"out": second - 3})
        installed = patchport.session_patches().find("cv2.cvtColor")
    from patchport.sessions.lifecycle import last_session

    names = last_session().nodes_of(installed)
    assert len(names) == 2 and all(name.startswith("flip") for name in names), names


@pytest.mark.parametrize(
    "patching, error, message",
    [
        (["not a patch"], ValueError, "unknown patch set 'not a patch'"),
        ([42], TypeError, "item 0 is a int, not a FunctionPatch"),
        (
            [patchport.FunctionPatch("cv2", "cvtColor", flip_channels)],
            TypeError,
            "expected a module",
        ),
        (
            [patchport.FunctionPatch(np.ndarray, "sum", flip_channels)],
            TypeError,
            "numpy.ndarray.sum cannot be patched: numpy.ndarray is an immutable type",
        ),
        ([patchport.FunctionPatch(cv2, "", flip_channels)], ValueError, "non-empty attribute"),
        (
            [patchport.FunctionPatch(cv2, "cvtColour", flip_channels)],
            ValueError,
            "cv2.cvtColour does not exist",
        ),
        (
            [patchport.FunctionPatch(cv2, "COLOR_BGR2RGB", flip_channels)],
            TypeError,
            "cv2.COLOR_BGR2RGB is not callable",
        ),
        ([patchport.FunctionPatch(cv2, "cvtColor", "fn")], TypeError, "expected a function"),
        (
            [patchport.FunctionPatch(cv2, "cvtColor", flip_channels)] * 2,
            ValueError,
            "cv2.cvtColor is patched twice",
        ),
        (patchport.FunctionPatch(cv2, "cvtColor", flip_channels), TypeError, "expects a list"),
    ],
)
def test_bad_declarations_are_refused_before_anything_changes(patching, error, message):
    original = cv2.cvtColor, np.asarray, torch.from_numpy
    with pytest.raises(error, match=message):
        patchport.start("bad", patching=patching)
    assert (cv2.cvtColor, np.asarray, torch.from_numpy) == original


def test_patching_needs_global_patching():
    with pytest.raises(TypeError, match="global_patching=False forbids"):
        patchport.start(
            "g",
            patching=[patchport.FunctionPatch(cv2, "cvtColor", flip_channels)],
            global_patching=False,
        )


def test_start_inside_a_session_block_is_refused():
    with patchport.session("first"):
        with pytest.raises(RuntimeError, match="session 'first' is still active"):
            patchport.start("second")
    with pytest.raises(RuntimeError, match="no tracing session is active"):
        patchport.stop()


def test_start_after_an_unstopped_start_replaces_it_as_leapp_does(tmp_path):
    """LEAPP's start() warns and begins a new graph when the last one was never stopped (a
    failed test, a re-run notebook cell); the abandoned session's patches are restored
    first, so nothing of it stays patched and no patches mix."""
    original = cv2.cvtColor
    patch = patchport.FunctionPatch(cv2, "cvtColor", flip_channels)
    abandoned = patchport.start("abandoned", save_path=tmp_path, patching=[patch])
    annotate.input_tensors("n", {"x": np.zeros((2, 2, 3), np.uint8)})  # never finished
    with pytest.warns(patchport.PatchportWarning, match="'abandoned' was still active.*stop"):
        patchport.start("fresh", save_path=tmp_path)
    try:
        assert not abandoned.active and current_session().name == "fresh"
        assert list(patchport.ExportManager().nodes) == []
        frame = annotate.input_tensors("n", {"x": np.zeros((2, 2, 3), np.uint8)})
        with pytest.warns(TraceLossWarning, match="cvtColor"):  # watched, not flipped
            cv2.cvtColor(frame, cv2.COLOR_BGR2RGB)
        annotate.output_tensors("n", {"y": frame + 1})
    finally:
        patchport.stop()
    assert cv2.cvtColor is original


class FrozenModule(types.ModuleType):
    """A module refusing assignment to one attribute, as some extension modules do."""

    def __setattr__(self, name, value):
        if name == "frozen" and hasattr(self, "frozen"):
            raise AttributeError("frozen is read-only")
        super().__setattr__(name, value)


def test_failed_install_rolls_back_everything():
    frozen = FrozenModule("frozen_module")
    frozen.frozen = lambda x: x
    before = cv2.cvtColor, cv2.resize, np.asarray, torch.from_numpy
    with pytest.raises(AttributeError, match="read-only"):
        patchport.start(
            "rollback",
            patching=[
                patchport.FunctionPatch(cv2, "cvtColor", flip_channels),
                patchport.FunctionPatch(frozen, "frozen", lambda x: x),
            ],
        )
    assert (cv2.cvtColor, cv2.resize, np.asarray, torch.from_numpy) == before


def test_a_method_of_a_native_class_is_patched_on_the_class_and_restored(frame):
    def inverted(self, src, dst=None):  # receives the CLAHE object first
        return (255 - torch.from_numpy(src)).numpy()

    original = vars(cv2.CLAHE)["apply"]
    declared = patchport.FunctionPatch(cv2.CLAHE, "apply", inverted, verify=False)
    assert declared.target_name == "cv2.CLAHE.apply"
    gray = np.ascontiguousarray(frame[..., 0])
    with patchport.session("method", patching=[declared], strict=True):
        traced = annotate.input_tensors("n", {"gray": gray})
        out = cv2.createCLAHE(2.0, (2, 2)).apply(traced)  # strict: no watcher warning
        np.testing.assert_array_equal(
            cv2.createCLAHE().apply(gray), original(cv2.createCLAHE(), gray)
        )
        annotate.output_tensors("n", {"out": out})
        patch = patchport.session_patches().find("cv2.CLAHE.apply")
        assert patch.family == "user" and patch.calls == 1
    assert vars(cv2.CLAHE)["apply"] is original
    from patchport.sessions.lifecycle import last_session

    graph_module = last_session().nodes["n"].graph_module
    (replayed,) = graph_module(torch.from_numpy(gray))
    np.testing.assert_array_equal(replayed.numpy(), 255 - gray)


def test_reassignment_during_the_session_is_kept():
    def theirs(*args, **kwargs):
        return "theirs"

    original = cv2.cvtColor
    try:
        with pytest.warns(PatchRestoreWarning, match="cv2.cvtColor"):
            with patchport.session(
                "keep", patching=[patchport.FunctionPatch(cv2, "cvtColor", flip_channels)]
            ):
                cv2.cvtColor = theirs
        assert cv2.cvtColor is theirs
    finally:
        cv2.cvtColor = original


@pytest.mark.parametrize("interrupt", [ValueError("boom"), KeyboardInterrupt()])
def test_exceptions_inside_the_session_restore_everything(interrupt, frame):
    before = cv2.cvtColor, cv2.resize, np.asarray, torch.from_numpy
    with pytest.raises(type(interrupt)):
        with patchport.session(
            "boom", patching=[patchport.FunctionPatch(cv2, "cvtColor", flip_channels)]
        ):
            annotate.input_tensors("n", {"bgr": frame})
            raise interrupt
    assert (cv2.cvtColor, cv2.resize, np.asarray, torch.from_numpy) == before


def test_torchscript_state_is_left_as_it_was():
    torch.jit._state.disable()
    try:
        with patchport.session("ts"):
            pass
        assert not torch.jit._state._enabled.enabled
    finally:
        torch.jit._state.enable()
    with patchport.session("ts"):
        pass
    assert torch.jit._state._enabled.enabled


def test_other_threads_with_ordinary_data_get_opencv(frame):
    results = []
    with patchport.session(
        "threads", patching=[patchport.FunctionPatch(cv2, "cvtColor", flip_channels)]
    ):
        traced = annotate.input_tensors("n", {"bgr": frame})  # a node is being traced meanwhile
        worker = threading.Thread(
            target=lambda: results.append(cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY))
        )
        worker.start()
        worker.join()
        annotate.output_tensors("n", {"bgr": traced + 1})
    np.testing.assert_array_equal(results[0], cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY))


def test_from_import_alias_is_patched_and_listed(frame):
    original = alias_user.cvtColor
    with patchport.session(
        "alias", patching=[patchport.FunctionPatch(cv2, "cvtColor", flip_channels)]
    ):
        traced = annotate.input_tensors("n", {"bgr": frame})
        rgb = alias_user.to_rgb(traced)
        annotate.output_tensors("n", {"rgb": rgb})
        alias = patchport.session_patches().find("tests.sessions.alias_user.cvtColor")
        assert alias is not None and alias.family == "alias" and alias.calls == 1
    assert alias_user.cvtColor is original
    from patchport.sessions.lifecycle import last_session

    graph_module = last_session().nodes["n"].graph_module
    out = graph_module(torch.from_numpy(frame[::-1].copy()))
    out = out[0] if isinstance(out, (list, tuple)) else out
    np.testing.assert_array_equal(np.asarray(out), frame[::-1][..., ::-1])


def test_alias_left_alone_is_named_in_a_warning(frame):
    original = cv2.cvtColor
    with pytest.warns(
        TraceLossWarning, match="tests.sessions.alias_user.cvtColor is a from-import"
    ) as record:
        with patchport.session(
            "alias",
            patch_aliases=False,
            patching=[patchport.FunctionPatch(cv2, "cvtColor", flip_channels)],
        ):
            assert cv2.cvtColor is not original and alias_user.cvtColor is original
            assert patchport.session_patches().find("tests.sessions.alias_user.cvtColor") is None
    assert {w.filename for w in record} == {__file__}  # each warning points at this test


def mutating(src, code, dst=None, dstCn=0):
    src[0, 0, 0] = 7
    return torch.from_numpy(src).flip((-1,)).numpy()


def aliasing(src, code, dst=None, dstCn=0):
    return src


def recursive(src, code, dst=None, dstCn=0):
    return cv2.cvtColor(src, code)


@pytest.mark.parametrize(
    "replacement, call, message",
    [
        (mutating, lambda t: cv2.cvtColor(t, cv2.COLOR_BGR2RGB), "modified traced input #0"),
        (aliasing, lambda t: cv2.cvtColor(t, cv2.COLOR_BGR2RGB), "returns its input"),
        (recursive, lambda t: cv2.cvtColor(t, cv2.COLOR_BGR2RGB), "must not call the function"),
        (
            flip_channels,
            lambda t: cv2.cvtColor(t, cv2.COLOR_BGR2RGB, dst=np.empty_like(t)),
            "a dst= buffer",
        ),
        (
            flip_channels,
            lambda t: cv2.cvtColor(t, cv2.COLOR_BGR2RGB, np.empty((6, 8, 3))),
            "a dst= buffer",
        ),
    ],
)
def test_replacement_rules_are_enforced(replacement, call, message, frame):
    with patchport.session(
        "rules", patching=[patchport.FunctionPatch(cv2, "cvtColor", replacement)]
    ):
        traced = annotate.input_tensors("n", {"bgr": frame})
        with pytest.raises(patchport.PatchRuleError, match=message) as info:
            call(traced)
        assert "cv2.cvtColor" in str(info.value)


def wrong_order(src, code, dst=None, dstCn=0):
    return torch.from_numpy(src).numpy().copy()  # forgets to flip the channels


def test_verify_reports_the_largest_difference(frame):
    with patchport.session(
        "verify", patching=[patchport.FunctionPatch(cv2, "cvtColor", wrong_order, verify=True)]
    ):
        traced = annotate.input_tensors("n", {"bgr": frame})
        with pytest.raises(
            PatchMismatchError,
            match=r"wrong_order disagrees with cv2.cvtColor "
            r"on output: \d+ of 144 values differ; "
            r"largest difference",
        ):
            cv2.cvtColor(traced, cv2.COLOR_BGR2RGB)


def test_verify_passes_a_right_replacement_and_session_switch(frame):
    with patchport.session(
        "verify", verify=True, patching=[patchport.FunctionPatch(cv2, "cvtColor", flip_channels)]
    ):
        traced = annotate.input_tensors("n", {"bgr": frame})
        rgb = cv2.cvtColor(traced, cv2.COLOR_BGR2RGB)
        annotate.output_tensors("n", {"rgb": rgb})


def test_unpatched_native_call_warns_at_the_user_line(frame):
    with patchport.session("loss"):
        traced = annotate.input_tensors("n", {"bgr": frame})
        with pytest.warns(TraceLossWarning, match="cv2.GaussianBlur") as record:
            cv2.GaussianBlur(traced, (3, 3), 0)
        assert record[0].filename == __file__


def test_strict_session_raises_on_trace_loss(frame):
    with patchport.session("strict", strict=True):
        traced = annotate.input_tensors("n", {"bgr": frame})
        with pytest.raises(patchport.TraceLossError, match="cv2.GaussianBlur"):
            cv2.GaussianBlur(traced, (3, 3), 0)


def test_an_error_inside_a_replacement_names_it_and_the_users_call(tmp_path):
    """The replacement's own exception propagates unchanged (type and message), with a
    note naming the replacement, what it replaces and the user's line that called it."""
    if sys.version_info < (3, 11):
        pytest.skip("exception notes need Python 3.11")

    def broken(src, code, dst=None, dstCn=0):
        raise ValueError("unsupported code")

    def too_few(src):
        return src

    for replacement, kind, phrase in (
        (broken, ValueError, "unsupported code"),
        (too_few, TypeError, "positional argument"),
    ):
        with patchport.session(
            "err",
            save_path=tmp_path,
            patching=[patchport.FunctionPatch(cv2, "cvtColor", replacement)],
        ):
            x = annotate.input_tensors("n", {"x": np.zeros((2, 2, 3), np.uint8)})
            with pytest.raises(kind, match=phrase) as caught:
                cv2.cvtColor(x, cv2.COLOR_BGR2RGB)
            annotate.output_tensors("n", {"y": x + 1})
        (note,) = caught.value.__notes__
        assert f"{replacement.__name__}, the replacement of cv2.cvtColor" in note
        assert f"{__file__}:" in note


def test_an_exception_leaving_a_session_block_is_not_buried_in_warnings(tmp_path):
    """`with session(...)` left by an exception: the exception is the report; no extra
    'node was never finished' warning for the node it interrupted."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", TraceLossWarning)
        with pytest.raises(ZeroDivisionError):
            with patchport.session("abort", save_path=tmp_path):
                annotate.input_tensors("n", {"x": np.zeros(3)})
                1 / 0  # noqa: B018
