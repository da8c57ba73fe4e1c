"""examples/export_transformers_model.py runs offline and proves its export on new shapes."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ..script_runs import Script

pytest.importorskip("transformers")
pytest.importorskip("onnxscript")
pytest.importorskip("onnxruntime")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "export_transformers_model.py"
RUN = Script("export_transformers_model", lambda folder: [sys.executable, EXAMPLE, folder])
BACKGROUND = [RUN]  # started in the background: tests/script_runs.py


@pytest.mark.slow
def test_example_exports_dynamic_rope_llama_to_onnx_and_matches_eager():
    done = RUN.result()
    out, tmp_path = done.output(), done.folder
    assert "plain torch.export.export: failed with GuardOnDataDependentSymNode" in out
    assert "narrowed: nothing" in out
    assert "transformers.models.llama.modeling_llama.LlamaRotaryEmbedding.forward" in out
    assert "nodes produced by rotary_forward_without_state" in out
    assert "aten.where.self" in out  # the frequencies are chosen in the graph, not in Python
    assert out.count("onnxruntime vs eager") == 2
    assert "all right on new shapes: yes" in out
    assert (tmp_path / "llama_dynamic_rope.onnx").stat().st_size > 0
