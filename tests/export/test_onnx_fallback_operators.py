"""Every torch.Tensor operator form through the torch.onnx path (graphs the direct
translator does not write, e.g. with dynamic dimensions), replayed in ONNX Runtime:
torch.onnx itself fails on ``7 // j`` (an int with no dtype), ``2.5 - u`` (no overload for
a number first) and ``i << j`` (no decomposition), and on ``clip(x, -1, 1.0)``."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from patchport.export.backends import _onnx_export_patches, load_runner
from patchport.export.onnx.decompositions import decompose_for_onnx
from patchport.export.onnx.kernels import fit_to_onnx_runtime
from patchport.tracing import Recorder, finish, trace_input

from ..tracing.tensor_operators import BOOL_AND_UINT8, FLOAT, INTEGER, operands

NAMES = ["a", "b", "i", "j", "m", "u"]
FAMILIES = {"float": FLOAT, "integer": INTEGER, "bool_uint8": BOOL_AND_UINT8}
CLAMPS = [
    ("clip_int_float", lambda a, b, i, j, m, u: torch.clip(a, -1, 1.0)),
    ("clamp_float_int", lambda a, b, i, j, m, u: a.clamp(min=-0.5, max=1)),
    ("clamp_int_tensor_float", lambda a, b, i, j, m, u: torch.clamp(i, -2.5, 3)),
]


def _export_and_replay(cases: list, tmp_path) -> list[str]:  # noqa: ANN001
    rec = Recorder("fallback", strict=True)
    traced = [trace_input(rec, n, t) for n, t in zip(NAMES, operands(1))]
    module = finish(rec, tuple(fn(*traced) for _, fn in cases))
    args = operands(1)
    path = tmp_path / "ops.onnx"
    with warnings.catch_warnings(), _onnx_export_patches():
        warnings.simplefilter("ignore")
        program = torch.onnx.export(decompose_for_onnx(module, args), args, str(path),
                                    dynamo=True, optimize=False, external_data=False,
                                    input_names=NAMES)  # fmt: skip
    fit_to_onnx_runtime(path, program)
    fresh = operands(2)
    got = load_runner("onnx", path, NAMES)(list(fresh))
    wrong = []
    for (name, fn), have in zip(cases, got):
        want = fn(*fresh)
        have = torch.as_tensor(np.asarray(have))
        if have.dtype != want.dtype or not torch.allclose(have.double(), want.double(), atol=1e-5):
            wrong.append(f"{name}: {have.flatten()[:3].tolist()} != {want.flatten()[:3].tolist()}")
    return wrong


@pytest.mark.slow  # four torch.onnx exports
@pytest.mark.parametrize("family", [*FAMILIES, "clamps"])
def test_operators_through_torch_onnx(tmp_path, family) -> None:  # noqa: ANN001
    cases = CLAMPS if family == "clamps" else FAMILIES[family]
    assert _export_and_replay(cases, tmp_path) == []
