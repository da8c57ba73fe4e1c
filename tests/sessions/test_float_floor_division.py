"""Float ``//``, ``%`` and ``np.divmod`` replay NumPy's rule (fmod-based), not Floor(Div).

Voxel and grid binning divide coordinates by a cell size; near a cell border
``floor(a / b)`` and NumPy's ``a // b`` differ by one, which moves a point to the next cell.
"""

import numpy as np
import pytest

from .pipeline_check import export_and_replay

CELL = np.float32(0.05)


def _voxel(pts):
    return {
        "fd": pts // CELL,
        "np_fd": np.floor_divide(pts, -CELL),
        "mod": pts % CELL,
        "np_rem": np.remainder(pts, -CELL),
        "q": np.divmod(pts, CELL)[0],
        "r": np.divmod(pts, CELL)[1],
        "by_zero": pts // np.zeros_like(pts),
    }


def _voxel_after_nan_handling(pts):
    clean = np.nan_to_num(np.where(pts > 2.5, np.nan, pts), nan=0.0)
    out = _voxel(clean)
    out["mean"] = np.nanmean(np.where(pts > 2.5, np.nan, pts))
    return out


def _grid(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.round(rng.integers(-60, 60, size=(40,)) * 0.05, 2).astype(np.float32)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # x // 0.0 is NumPy's inf / nan
@pytest.mark.parametrize("fn", [_voxel, _voxel_after_nan_handling])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_floor_division_matches_numpy_on_cell_borders(fn, dtype, tmp_path):
    first = {"pts": _grid(0).astype(dtype)}
    second = {"pts": _grid(1).astype(dtype)}
    with np.errstate(all="ignore"):
        replay, warned = export_and_replay(fn, first, second, tmp_path)
        expected = fn(**second)
    assert not warned, [str(w.message) for w in warned]
    for key, value in expected.items():
        np.testing.assert_allclose(replay[key], value, rtol=1e-6, atol=1e-7, err_msg=key)
