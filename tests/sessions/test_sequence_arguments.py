"""Traced arrays kept in a sequence other than a list or tuple: ``collections.deque``.

Video code keeps the last frames in ``deque(maxlen=n)`` and hands the deque itself to
NumPy (``np.asarray(history)``, ``np.mean(history, axis=0)``). NumPy reads a deque as it
reads a list, in C with no hook on the items, so a deque of traced frames must be traced
as the list of them is, never frozen into a constant of the sample frames.
"""

from __future__ import annotations

from collections import deque
from pathlib import Path

import numpy as np
import pytest

import patchport

from .pipeline_check import export_and_replay


def frames(seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {f"f{i}": rng.uniform(0, 255, (4, 5)).astype(np.float32) for i in range(3)}


def history_as_array(f0, f1, f2):
    """The conversions that build an array from the deque itself."""
    history = deque(maxlen=3)
    for f in (f0, f1, f2):
        history.append(f)
    return {
        "asarray": np.asarray(history),
        "array": np.array(history, dtype=np.float32),
        "stacked": np.stack(history),  # dispatches on the items already
    }


def history_mean(f0, f1, f2):
    """NumPy functions handed the deque (converted inside NumPy's implementation)."""
    history = deque([f0, f1, f2], maxlen=3)
    return {"mean": np.mean(history, axis=0), "max": np.max(history, axis=0)}


@pytest.mark.parametrize("export_with", ["onnx", "pt2"])
def test_np_asarray_of_a_deque_of_traced_frames_is_traced(tmp_path: Path, export_with: str):
    sample, fresh = frames(0), frames(1)
    replay, warned = export_and_replay(history_as_array, sample, fresh, tmp_path, export_with)
    assert not warned, [str(w.message) for w in warned]
    for name, value in history_as_array(**fresh).items():
        np.testing.assert_allclose(replay[name], value, rtol=1e-6, err_msg=name)


def test_numpy_functions_given_a_deque_of_traced_frames_are_traced(tmp_path: Path):
    sample, fresh = frames(0), frames(1)
    replay, _ = export_and_replay(history_mean, sample, fresh, tmp_path, "onnx")
    for name, value in history_mean(**fresh).items():
        np.testing.assert_allclose(replay[name], value, rtol=1e-6, err_msg=name)


def test_plain_deques_in_a_session_are_untouched(tmp_path: Path):
    plain = frames(2)
    want = history_as_array(**plain)
    with patchport.session("plain", save_path=tmp_path):
        got = history_as_array(**plain)
    for name, value in want.items():
        assert isinstance(got[name], np.ndarray) and got[name].dtype == value.dtype, name
        np.testing.assert_array_equal(got[name], value, err_msg=name)


def combined_masks(f0, f1, f2):
    """Masks and maps combined by a ufunc method over a list: NumPy converts the list in
    C before any override is looked up (the list has no __array_ufunc__)."""
    valid = np.logical_and.reduce([f0 > 50, f1 > 50, f2 < 200])
    brightest = np.maximum.reduce((f0, f1, f2))
    return {"valid": valid, "brightest": brightest}


@pytest.mark.xfail(
    strict=True,
    reason="ufunc.reduce / accumulate of a list of traced arrays gives Python no hook "
    "(the ufunc object's methods cannot be patched); the result is a silent constant",
)
def test_ufunc_reduce_of_a_list_of_traced_arrays_is_traced_or_loud(tmp_path: Path):
    sample, fresh = frames(0), frames(1)
    replay, warned = export_and_replay(combined_masks, sample, fresh, tmp_path, "onnx")
    if any(Path(w.filename).name == Path(__file__).name for w in warned):
        return  # loud at the line that lost the trace is acceptable
    for name, value in combined_masks(**fresh).items():
        np.testing.assert_array_equal(replay[name], value, err_msg=name)
