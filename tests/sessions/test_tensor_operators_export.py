"""Every torch.Tensor operator form (forward, reflected, in-place; float, integer, bool,
uint8) exported by each backend and replayed on fresh inputs: ``q ** 2`` failed in jit,
``7 // b`` was wrong in TorchScript (its int overload took the tensor as a number) and
failed in ONNX, ``m & True`` came back int64 from TorchScript, ``i << j`` had no ONNX."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import patchport
from patchport import annotate

from ..tracing.tensor_operators import BOOL_AND_UINT8, FLOAT, INTEGER, operands

NAMES = ("a", "b", "i", "j", "m", "u")
FAMILIES = {"float": FLOAT, "integer": INTEGER, "bool_uint8": BOOL_AND_UINT8}


@pytest.mark.parametrize("backend", ["onnx", "pt2", "jit"])
@pytest.mark.parametrize("family", list(FAMILIES))
def test_tensor_operators_export_and_replay(tmp_path, backend, family) -> None:  # noqa: ANN001
    cases = FAMILIES[family]
    with patchport.session("ops", save_path=tmp_path):
        traced = annotate.input_tensors("n", dict(zip(NAMES, operands(1))))
        outputs = {name: fn(*traced) for name, fn in cases}
        annotate.output_tensors("n", outputs, export_with=backend)
    result = patchport.compile_graph(visualize=False)
    manager = patchport.InferenceManager(result.yaml_path)
    fresh = operands(2)
    got = manager.run_policy({f"n/{k}": v for k, v in zip(NAMES, fresh)})
    wrong = []
    for name, fn in cases:
        want, have = fn(*fresh), got[f"n/{name}"]
        same = have.dtype == want.dtype and have.shape == want.shape
        if not same or not torch.allclose(have.double(), want.double(), atol=1e-5):
            wrong.append(f"{name}: {have.dtype} {have.flatten()[:3].tolist()} != "
                         f"{want.dtype} {want.flatten()[:3].tolist()}")  # fmt: skip
    assert not wrong, "\n".join(wrong)
    assert np.isfinite(fresh[0].numpy()).all()
