"""Sorting traced data with tied values: which of the tied elements NumPy's unstable sorts
(argsort's quicksort, argpartition's introselect) put first is their implementation's
choice, which the exported sort does not make the same way; an index chosen among ties
is warned about at the user's line, a stable sort is exported exactly."""

from __future__ import annotations

import sys
import warnings

import cv2
import numpy as np
import pytest

import patchport
from patchport import annotate
from patchport.errors import TraceLossError, TraceLossWarning
from patchport.tracing import Recorder, trace_input

HERE = __file__


def lineno() -> int:
    return sys._getframe(1).f_lineno


def _dark_channel(rng: np.random.Generator) -> np.ndarray:
    """A dark channel as dehazing code makes it: an erosion, so long runs of tied values."""
    img = cv2.resize(rng.random((6, 8, 3)), (64, 48)).astype(np.float32)
    return cv2.erode(np.min(img, axis=2), np.ones((7, 7), np.uint8)).ravel()


def _losses(action):  # noqa: ANN001, ANN202
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = action()
    return [w for w in caught if issubclass(w.category, TraceLossWarning)], line


@pytest.mark.parametrize(
    "select",
    [
        lambda d: np.argpartition(d, -4)[-4:],
        lambda d: d.argpartition(-4)[-4:],
        lambda d: np.argsort(d)[-4:],
        lambda d: d.argsort()[::-1][:4],
        lambda d: np.argsort(-d, kind="quicksort")[:4],
    ],
    ids=["argpartition", "method-argpartition", "argsort", "method-argsort", "quicksort"],
)
def test_indices_chosen_among_ties_warn_at_the_users_line(select) -> None:  # noqa: ANN001
    rec = Recorder("ties")
    dark = trace_input(rec, "dark", _dark_channel(np.random.default_rng(0)))

    def act() -> int:
        select(dark)
        return lineno() - 1

    found, _ = _losses(act)
    assert found, "no warning for an unstable sort of tied values"
    message = str(found[0].message)
    assert "tied" in message and 'kind="stable"' in message, message
    assert found[0].filename == HERE, (found[0].filename, message)


def test_a_strict_session_refuses_indices_chosen_among_ties() -> None:
    rec = Recorder("ties", strict=True)
    dark = trace_input(rec, "dark", _dark_channel(np.random.default_rng(0)))
    with pytest.raises(TraceLossError, match="tied"):
        np.argpartition(dark, -4)


@pytest.mark.parametrize(
    "select",
    [
        lambda d: np.argsort(d, kind="stable")[-4:],
        lambda d: np.argsort(d, stable=True)[-4:],
        lambda d: np.sort(d)[-4:],
        lambda d: np.partition(d, -4)[-4:],
    ],
    ids=["stable", "stable-keyword", "sort", "partition-values"],
)
def test_stable_sorts_and_sorted_values_of_ties_do_not_warn(select) -> None:  # noqa: ANN001
    rec = Recorder("ties")
    dark = trace_input(rec, "dark", _dark_channel(np.random.default_rng(0)))
    found, _ = _losses(lambda: (select(dark), 0)[1])
    assert not found, [str(w.message) for w in found]


def test_distinct_values_do_not_warn() -> None:
    rec = Recorder("ties")
    x = trace_input(rec, "x", np.random.default_rng(1).random(300))
    found, _ = _losses(lambda: (np.argpartition(x, -4)[-4:], np.argsort(x)[:5], 0)[2])
    assert not found, [str(w.message) for w in found]


def test_short_axes_with_ties_away_from_the_boundary_do_not_warn() -> None:
    """NumPy selects and sorts a short axis by insertion: ties keep their index order, as
    in the export; ties inside a partition do not change which indices it holds."""
    rec = Recorder("ties")
    x = trace_input(rec, "x", np.concatenate([np.zeros(6), np.arange(1.0, 6.0)]))
    found, _ = _losses(lambda: (np.argpartition(x, -4)[-4:], np.argsort(x)[:3], 0)[2])
    assert not found, [str(w.message) for w in found]


def test_a_long_tied_axis_warns_where_this_samples_boundary_is_no_tie() -> None:
    """An eroded dark channel whose 4 largest values are distinct on this sample: new
    images bring ties to the boundary (the probe's atmospheric light), so it warns."""
    dark = _dark_channel(np.random.default_rng(0))
    dark[np.argsort(dark, kind="stable")[-4:]] += np.arange(1.0, 5.0, dtype=np.float32)
    rec = Recorder("ties")
    traced = trace_input(rec, "dark", dark)
    found, _ = _losses(lambda: (np.argpartition(traced, -4)[-4:], 0)[1])
    assert found and "kth=" in str(found[0].message), [str(w.message) for w in found]


def atmospheric_light(img: np.ndarray) -> dict[str, np.ndarray]:
    dark = cv2.erode(np.min(img, axis=2), np.ones((7, 7), np.uint8)).ravel()
    top = np.argsort(-dark, kind="stable")[:4]
    return {"atmo": img.reshape(-1, 3)[top].max(axis=0)}


def test_a_stable_argsort_of_ties_replays_like_numpy(tmp_path) -> None:  # noqa: ANN001
    """The fix the warning names: kind="stable" orders ties by index, as the export does."""
    rng = np.random.default_rng(2)
    images = [cv2.resize(rng.random((6, 8, 3)), (64, 48)).astype(np.float32) for _ in range(3)]
    backends = ("onnx", "pt2")
    with (
        warnings.catch_warnings(),
        patchport.session("stable", str(tmp_path), patching=["opencv"], strict=True),
    ):
        warnings.simplefilter("error", patchport.PatchportWarning)
        for backend in backends:
            img = annotate.input_tensors(backend, {"img": images[0]})
            annotate.output_tensors(backend, atmospheric_light(img), export_with=backend)
    manager = patchport.InferenceManager(patchport.compile_graph(visualize=False).yaml_path)
    for img in images[1:]:
        got = manager.run_policy({f"{b}/img": img for b in backends})
        for backend in backends:
            np.testing.assert_array_equal(
                got[f"{backend}/atmo"].numpy(), atmospheric_light(img)["atmo"]
            )
