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


@pytest.mark.slow
def test_program_with_a_cache_converts_to_onnx_and_runs_the_decode_step(tmp_path):
    # the cache is rebuilt from its inputs inside the program; transformers starts each
    # layer as torch.tensor([]), a lifted constant that torch.onnx's decomposition loses
    import copy

    import transformers
    from torch.utils import _pytree as pytree

    from patchport.torch import apply_patches_for_model, make_dynamic_cache, use_dyn_not_str

    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=64,
    )
    model = transformers.AutoModelForCausalLM.from_config(config).eval()

    def inputs(batch, seq, past):
        shape = (batch, 2, past, 8)
        return {
            "input_ids": torch.randint(0, 64, (batch, seq)),
            "attention_mask": torch.ones(batch, past + seq, dtype=torch.int64),
            "cache": make_dynamic_cache(config, [torch.randn(shape)], [torch.randn(shape)]),
        }

    traced = inputs(2, 5, 7)
    shapes = {
        "input_ids": {0: "b", 1: "s"},
        "attention_mask": {0: "b", 1: "t"},
        "cache": [[{0: "b", 2: "p"}], [{0: "b", 2: "p"}]],
    }
    with (
        torch.fx.experimental._config.patch(backed_size_oblivious=True),
        apply_patches_for_model(patch_torch=True, patch_transformers=True, model=model) as d,
    ):
        program = torch.export.export(
            model, (), kwargs=copy.deepcopy(traced), dynamic_shapes=use_dyn_not_str(shapes)
        )
    assert d.find("lazy_initialization_without_constants").calls > 0
    assert not [name for name in program.constants if "lifted" in name]
    with apply_patches_for_model(patch_transformers=True):
        onnx_program = torch.onnx.export(program, (), kwargs=traced, dynamo=True, verbose=False)
    onnx_program.save(str(tmp_path / "llama.onnx"))
    session = onnxruntime.InferenceSession(
        str(tmp_path / "llama.onnx"), providers=["CPUExecutionProvider"]
    )
    decode = inputs(1, 1, 9)
    leaves = [x for x in pytree.tree_leaves(copy.deepcopy(decode)) if torch.is_tensor(x)]
    names = [item.name for item in session.get_inputs()]
    logits = session.run(None, {n: t.numpy() for n, t in zip(names, leaves)})[0]
    with torch.no_grad():
        expected = model(**copy.deepcopy(decode)).logits
    torch.testing.assert_close(torch.from_numpy(logits), expected, rtol=1e-4, atol=1e-4)
