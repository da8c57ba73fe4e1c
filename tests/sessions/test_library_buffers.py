"""A buffer a library made while handed traced data, filled by its C code, is not a silent
constant.

``scipy.ndimage.maximum_filter(heatmap, 3)`` (OpenPose's peak finding) allocates its
output with ``np.zeros`` inside SciPy, a frame holding the traced heatmap, and fills it in
C with no hook. Without SciPy's patch set, the output read by a traced op entered the graph
as a constant of the traced sample's filter, silently: every fresh heatmap was compared
with the first one's maxima.
"""

import numpy as np
from scipy.ndimage import maximum_filter

import patchport

from .pipeline_check import export_and_replay


def _hm(seed: int) -> dict[str, np.ndarray]:
    return {"hm": np.random.default_rng(seed).normal(size=(6, 5))}


def peaks(hm):
    local_max = maximum_filter(hm, size=3) == hm
    return {"peaks": local_max & (hm > 0.3)}


def test_a_library_buffer_filled_without_a_hook_is_loud(tmp_path):
    _, warned = export_and_replay(peaks, _hm(0), _hm(1), tmp_path)
    ours = [w for w in warned if "maximum_filter" in str(w.message)]
    assert ours, [str(w.message) for w in warned]
    assert all(issubclass(w.category, patchport.TraceLossWarning) for w in ours)
    assert all(w.filename == __file__ for w in ours)


def test_a_table_user_code_builds_stays_quiet(tmp_path):
    """User code's own buffers are tables the graph holds as constants, as before."""

    def weighted(hm):
        ramp = np.linspace(0.0, 1.0, hm.shape[1])
        grid = np.zeros_like(hm)
        grid[:, 0] = 1.0
        return {"y": hm * ramp + grid}

    replay, warned = export_and_replay(weighted, _hm(0), _hm(1), tmp_path)
    np.testing.assert_allclose(replay["y"], weighted(**_hm(1))["y"])
    assert not warned, [str(w.message) for w in warned]
