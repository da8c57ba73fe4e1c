"""``ufunc.at`` scatters (histograms, height maps, segment sums) replay on fresh inputs.

Every combining ufunc (add, subtract, multiply, maximum, minimum) records a scatter with
repeated cells combining every value; the rest warn at the user's line.
"""

import numpy as np
import pytest

import patchport

from .pipeline_check import export_and_replay

RNG = np.random.default_rng(3)
UFUNCS = [np.add, np.subtract, np.multiply, np.maximum, np.minimum]


def _inputs(seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        "z": rng.normal(size=12).astype(np.float32),
        "cell": rng.integers(-6, 6, size=12).astype(np.int64),  # repeats and negatives
    }


@pytest.mark.parametrize("export_with", ["onnx", "pt2"])
@pytest.mark.parametrize("ufunc", UFUNCS, ids=lambda u: u.__name__)
def test_ufunc_at_into_fresh_and_traced_targets(ufunc, export_with, tmp_path):
    def scatter(z, cell):
        grid = np.full(6, 0.5, np.float32)  # a fresh buffer
        ufunc.at(grid, cell, z)  # a traced index
        traced = z[:6] * 2.0
        ufunc.at(traced, [0, 2, 2, -1], 1.5)  # a traced target, a constant index
        plane = np.ones((3, 4), np.float32)
        ufunc.at(plane, (cell % 3, np.abs(cell) % 4), z)  # a tuple of index arrays
        rows = np.zeros((3, 2), np.float32)
        ufunc.at(rows, cell % 3, z[:, None] * np.ones(2, np.float32))  # whole rows
        return {"grid": grid, "traced": traced, "plane": plane, "rows": rows}

    replay, warned = export_and_replay(scatter, _inputs(0), _inputs(1), tmp_path, export_with)
    assert not warned, [str(w.message) for w in warned]
    expected = scatter(**_inputs(1))
    for key, value in expected.items():
        np.testing.assert_allclose(replay[key], value, rtol=1e-5, err_msg=key)


def test_ufunc_at_integer_histogram(tmp_path):
    def histogram(cell):
        counts = np.zeros(6, np.int64)
        np.add.at(counts, cell, 1)
        return {"counts": counts}

    first, second = {"cell": _inputs(0)["cell"]}, {"cell": _inputs(1)["cell"]}
    replay, warned = export_and_replay(histogram, first, second, tmp_path)
    assert not warned, [str(w.message) for w in warned]
    np.testing.assert_array_equal(replay["counts"], histogram(**second)["counts"])


@pytest.mark.filterwarnings("ignore:.*does not depend on the node's inputs")  # the frozen buf
@pytest.mark.parametrize("case", ["slice", "unary", "unmapped"])
def test_ufunc_at_not_mapped_warns_at_the_line(case):
    with patchport.session("at"):
        x = patchport.annotate.input_tensors("n", {"x": np.arange(6, dtype=np.int64)})
        buf = x * 1
        with pytest.warns(patchport.TraceLossWarning, match=r"np\.\w+\.at") as record:
            if case == "slice":
                np.add.at(buf, slice(0, 3), 1)
            elif case == "unary":
                np.negative.at(buf, [0, 1])
            else:
                np.bitwise_or.at(buf, [0, 1], 3)
        patchport.annotate.output_tensors("n", {"y": buf})
    assert record[0].filename == __file__


@pytest.mark.parametrize("export_with", ["onnx", "pt2"])
def test_weighted_bincount_is_a_scatter_add(export_with, tmp_path):
    def segment_sums(z, cell):
        return {"sums": np.bincount(cell % 6, weights=z, minlength=6)}

    replay, warned = export_and_replay(segment_sums, _inputs(0), _inputs(1), tmp_path, export_with)
    assert not warned, [str(w.message) for w in warned]
    np.testing.assert_allclose(replay["sums"], segment_sums(**_inputs(1))["sums"], rtol=1e-6)
