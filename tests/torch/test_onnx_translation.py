"""transformers' MoE grouped_mm_fallback translated to ONNX and run in ONNX Runtime."""

from __future__ import annotations

import pytest
import torch

pytest.importorskip("transformers")
pytest.importorskip("onnxscript")
onnxruntime = pytest.importorskip("onnxruntime")

import transformers.integrations.moe  # noqa: E402, F401 - registers the op

from patchport.torch import onnx_translation_table  # noqa: E402


class Experts(torch.nn.Module):
    """Three experts; rows sorted by expert, ``offs`` the cumulative row counts."""

    def __init__(self) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(3, 4, 5))

    def forward(self, rows: torch.Tensor, offs: torch.Tensor) -> torch.Tensor:
        return torch.ops.transformers.grouped_mm_fallback(rows, self.weight, offs)


def test_grouped_mm_fallback_runs_in_onnx_runtime_like_eager(tmp_path):
    torch.manual_seed(0)
    model = Experts().eval()
    rows, offs = torch.randn(6, 4), torch.tensor([2, 2, 6])
    program = torch.export.export(
        model, (rows, offs), dynamic_shapes=({0: torch.export.Dim.DYNAMIC}, None)
    )
    table = onnx_translation_table()
    assert torch.ops.transformers.grouped_mm_fallback.default in table
    onnx_program = torch.onnx.export(
        program, (rows, offs), dynamo=True, custom_translation_table=table, verbose=False
    )
    onnx_program.save(str(tmp_path / "experts.onnx"))
    session = onnxruntime.InferenceSession(
        str(tmp_path / "experts.onnx"), providers=["CPUExecutionProvider"]
    )
    names = [item.name for item in session.get_inputs()]
    for new_rows, new_offs in ((torch.randn(9, 4), [0, 4, 9]), (torch.randn(1, 4), [1, 1, 1])):
        offsets = torch.tensor(new_offs)
        got = session.run(None, dict(zip(names, (new_rows.numpy(), offsets.numpy()))))[0]
        with torch.no_grad():
            expected = model(new_rows, offsets)
        torch.testing.assert_close(torch.from_numpy(got), expected, rtol=1e-5, atol=1e-5)
