"""Sizes decided by the data (a boolean selection, nonzero) read in Python stay computed.

``e = x[x > 0]`` has as many rows as the sample has positive values; ``e.shape[0]`` and
``e.size`` read that count. Used as an operand of traced arithmetic the graph must compute
it from ``e`` (a fresh input has another count); turned into a Python number (``float()``,
``len()``, a comparison, iteration) it is frozen, and patchport says so at the user's
line. COCO's OKS (``np.sum(np.exp(-e)) / e.shape[0]`` over the visible joints) was
exported with the sample's count of visible joints, silently.
"""

import cv2
import numpy as np
import pytest
import torch

import patchport

from .pipeline_check import export_and_replay


def _x(seed: int) -> dict[str, np.ndarray]:
    return {"x": np.random.default_rng(seed).normal(size=16)}


WEIGHTS = np.array([0.5, 1.0, 2.0])


def count_reads(x):
    e = x[x > 0]
    idx = np.where(x > 0.5)[0]
    return {
        "by_shape": np.sum(np.exp(-e)) / e.shape[0],
        "by_size": e.sum() / e.size,
        "by_where": x[:3] * idx.shape[0],
        "by_fresh": np.ones(3) * idx.shape[0],  # a buffer made in the session
        "by_table": WEIGHTS * e.shape[0],  # a module's table
        "sliced": x[: e.shape[0] // 4 + 1].sum(keepdims=True),
    }


def torch_count_reads(x):
    t = torch.from_numpy(x)
    e = t[t > 0]
    nz = torch.nonzero(t > 0.5)
    return {"by_shape": (e.sum() / e.shape[0]).numpy(), "by_size": (t[:3] * nz.size(0)).numpy()}


@pytest.mark.parametrize("export_with", ["onnx", "pt2"])
@pytest.mark.parametrize("fn", [count_reads, torch_count_reads], ids=lambda f: f.__name__)
def test_sizes_of_selections_are_computed_in_the_graph(fn, export_with, tmp_path):
    fresh = _x(1)
    assert np.sum(fresh["x"] > 0) != np.sum(_x(0)["x"] > 0)  # another count
    replay, warned = export_and_replay(fn, _x(0), fresh, tmp_path, export_with)
    want = fn(**fresh)
    for key, value in want.items():
        np.testing.assert_allclose(replay[key], value, rtol=1e-6, err_msg=key)
    assert not warned, [str(w.message) for w in warned]


def frozen_float(x):
    e = x[x > 0]
    return {"y": np.full(3, float(e.shape[0])) * x[:3]}


def frozen_len(x):
    t = torch.from_numpy(x)
    return {"y": (t[:3] * len(t[t > 0])).numpy(), "z": x[:3] * len(x[x > 0.5])}


def frozen_branch(x):
    e = x[x > 0]
    if e.shape[0] > 4:  # a branch on the count: this sample's side only
        return {"y": e.sum(keepdims=True)}
    return {"y": -e.sum(keepdims=True)}


def frozen_iteration(x):
    return {"y": sum(v for v in x[x > 0]) * np.ones(1)}


def frozen_by_numpy(x):
    idx = np.where(x > 0)[0]
    kernel = cv2.getGaussianKernel(3, 0).ravel()  # plain data from C code
    return {"y": kernel * idx.shape[0] + x[:3]}  # NumPy's C code reads the count


def frozen_range_loop(x):
    e = x[x > 0]
    total = np.zeros(1)
    for i in range(e.shape[0]):  # range() takes the size with no hook
        total = total + e[i]
    return {"y": total}


def frozen_range_loop_torch(x):
    t = torch.from_numpy(x)
    idx = torch.nonzero(t > 0, as_tuple=True)[0]
    total = torch.zeros(1, dtype=t.dtype)
    for i in range(idx.shape[0]):
        total = total + t[idx[i]]
    return {"y": total.numpy()}


FROZEN = [
    frozen_float,
    frozen_len,
    frozen_branch,
    frozen_iteration,
    frozen_by_numpy,
    frozen_range_loop,
    frozen_range_loop_torch,
]


@pytest.mark.parametrize("fn", FROZEN, ids=lambda f: f.__name__)
def test_a_selection_size_frozen_as_a_number_is_loud(fn, tmp_path):
    """``len()`` always answers a plain int (Python converts it), so it is a loss too."""
    _, warned = export_and_replay(fn, _x(0), _x(1), tmp_path)
    ours = [w for w in warned if "decided by the traced data" in str(w.message)]
    assert ours and all(w.filename == __file__ for w in ours), [str(w.message) for w in warned]
    assert all(issubclass(w.category, patchport.TraceLossWarning) for w in ours)


def test_static_sizes_stay_plain_ints(tmp_path):
    """Without a data-sized value, shape reads are plain ints (no tracking cost)."""
    seen = []

    def plain(x):
        seen.append(type(x.shape[0]))
        return {"y": x * x.shape[0]}

    replay, warned = export_and_replay(plain, _x(0), _x(1), tmp_path)
    assert seen == [int]
    np.testing.assert_allclose(replay["y"], _x(1)["x"] * 16)
