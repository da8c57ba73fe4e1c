"""A 0-d output (a full reduction) stays 0-d through every backend and InferenceManager;
ONNX Runtime's outputs were once made 1-d by ``ascontiguousarray``."""

import numpy as np
import pytest
import torch

import patchport
from patchport import annotate


@pytest.mark.parametrize("backend", ["onnx", "jit"])
def test_a_full_reduction_replays_as_a_0d_tensor(tmp_path, backend):
    rng = np.random.default_rng(0)
    with patchport.session("scalar", save_path=tmp_path):
        x = annotate.input_tensors("stats", {"x": rng.random((3, 4)).astype(np.float32)})
        annotate.output_tensors("stats", {"total": np.sum(x)}, export_with=backend)
    result = patchport.compile_graph(visualize=False)
    manager = patchport.InferenceManager(result.yaml_path)
    fresh = rng.random((3, 4)).astype(np.float32)
    total = manager.run_policy({"stats/x": fresh})["stats/total"]
    assert isinstance(total, torch.Tensor) and total.shape == ()
    np.testing.assert_allclose(total.numpy(), fresh.sum(), rtol=1e-6)
    scalar = manager.run_policy({"stats/x": torch.from_numpy(fresh)})["stats/total"]
    assert scalar.shape == ()


@pytest.mark.parametrize("backend", ["onnx", "pt2"])
def test_a_numpy_scalar_output_that_lost_its_trace_warns_and_exports_its_value(tmp_path, backend):
    rng = np.random.default_rng(0)
    with patchport.session("scalar", save_path=tmp_path):
        x = annotate.input_tensors("stats", {"x": rng.random((3, 4)).astype(np.float32)})
        count = np.int64(7)  # a plain NumPy scalar (np.float32(x.sum()) gives one too)
        with pytest.warns(
            patchport.TraceLossWarning, match=r"'count'.*does not depend.*np\.float32\(x\)"
        ):
            annotate.output_tensors("stats", {"y": x * 2, "count": count}, export_with=backend)
    result = patchport.compile_graph(visualize=False)
    manager = patchport.InferenceManager(result.yaml_path)
    got = manager.run_policy({"stats/x": rng.random((3, 4)).astype(np.float32)})["stats/count"]
    assert np.asarray(got).dtype == np.int64 and int(np.asarray(got)) == 7
