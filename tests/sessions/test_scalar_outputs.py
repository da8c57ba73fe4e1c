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
