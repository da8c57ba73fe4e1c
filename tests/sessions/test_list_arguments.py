"""NumPy functions given a Python list of traced arrays: ``np.mean([a, b], axis=0)``.

NumPy dispatches on the list, not on its items, and its C code reads the items' memory
with no hook: without the session's help the result is a constant of the sample frame,
exported silently. Each case here is replayed on fresh inputs against plain NumPy.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import patchport

from .pipeline_check import export_and_replay


def keypoints(seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        "left_hip": rng.uniform(0, 640, 2).astype(np.float32),
        "right_hip": rng.uniform(0, 640, 2).astype(np.float32),
        "frames": rng.uniform(0, 1, (3, 4, 5)).astype(np.float32),
    }


def pose_statistics(left_hip, right_hip, frames):
    """The idioms of pose and sensor post-processing that hand NumPy a list."""
    centre = np.mean([left_hip, right_hip], axis=0)
    span = np.linalg.norm([left_hip[0] - right_hip[0], left_hip[1] - right_hip[1]])
    lengths = np.linalg.norm([left_hip, right_hip], axis=1)
    return {
        "centre": centre,
        "span": span,
        "lengths": lengths,
        "box_max": np.max([left_hip, right_hip], axis=0),
        "box_min": np.min([left_hip, right_hip], axis=0),
        "total": np.sum([frames[0], frames[1], frames[2]], axis=0),
        "spread": np.std([frames[0], frames[2]], axis=0),
        "weighted": np.average([frames[0], frames[1]], axis=0, weights=[0.25, 0.75]),
        "brightest": np.argmax([frames[0].sum(), frames[1].sum(), frames[2].sum()]),
        "any_hot": np.any([frames[0] > 0.9, frames[1] > 0.9], axis=0),
        "clipped": np.clip([left_hip, right_hip], 10.0, 600.0),
        "ranked": np.sort([frames[0, 0], frames[1, 0]], axis=0),
        "trend": np.diff([frames[0, 0], frames[1, 0], frames[2, 0]], axis=0),
        "curve": np.polyval([left_hip[0] / 640, right_hip[0] / 640, 1.0], frames[0, 0]),
        "near": np.isclose([frames[0], frames[1]], 0.5, atol=0.2),
        "spread_span": np.ptp([frames[0], frames[1]], axis=0),
        "stacked_r": np.r_[[left_hip[0] * 0.05, 1e-2], right_hip],
    }


@pytest.mark.parametrize("export_with", ["onnx", "pt2"])
def test_lists_of_traced_arrays_are_traced_not_frozen(tmp_path: Path, export_with: str) -> None:
    sample, fresh = keypoints(0), keypoints(1)
    replay, warned = export_and_replay(pose_statistics, sample, fresh, tmp_path, export_with)
    assert not warned, [str(w.message) for w in warned]
    want = pose_statistics(**fresh)
    for name, value in want.items():
        np.testing.assert_allclose(replay[name], value, rtol=1e-5, atol=1e-4, err_msg=name)


def test_plain_lists_in_a_session_are_untouched(tmp_path: Path) -> None:
    """Ordinary data inside a session: the same values and types, no warning."""
    plain = keypoints(2)
    want = pose_statistics(**plain)
    masked = np.ma.masked_array([1.0, 2.0, 30.0], mask=[False, False, True])
    masked_mean = float(np.average(masked))
    with patchport.session("plain", save_path=tmp_path):
        got = pose_statistics(**plain)
        # public names keep their identity (an __array_function__ comparing func is np.mean)
        assert type(np.mean).__name__ == "_ArrayFunctionDispatcher"
        assert type(np.asanyarray(masked)) is np.ma.MaskedArray
        assert float(np.average(masked)) == masked_mean
    for name, value in want.items():
        assert isinstance(got[name], np.ndarray) == isinstance(value, np.ndarray), name
        assert np.asarray(got[name]).dtype == np.asarray(value).dtype, name
        np.testing.assert_array_equal(got[name], value, err_msg=name)


def test_a_list_numpy_cannot_trace_inside_is_loud_at_the_users_line(tmp_path: Path) -> None:
    """np.median of a list runs NumPy's own NaN check on the data: loud, at this file's
    line, instead of a silent constant (np.median(np.stack(...)) is the traced spelling)."""
    frames = keypoints(0)["frames"]
    with pytest.warns(patchport.TraceLossWarning) as caught:
        with patchport.session("median", save_path=tmp_path):
            traced = patchport.annotate.input_tensors("n", {"frames": frames})
            np.median([traced[0], traced[1]], axis=0)
    assert any(Path(w.filename).name == Path(__file__).name for w in caught)
