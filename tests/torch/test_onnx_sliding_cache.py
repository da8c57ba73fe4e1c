"""A ``DynamicCache`` with sliding-window layers (Gemma2, Gemma3) as an export input.

transformers' pytree unflattening rebuilds a sliding layer through
``torch.tensor([window]).item()``; torch.onnx traces the exported program again under
fake tensors, where that ``item()`` is data-dependent and the conversion failed.
patchport's registration keeps the window as a Python int of the context."""

from __future__ import annotations

import pytest
import torch

transformers = pytest.importorskip("transformers")

from torch.utils import _pytree as pytree  # noqa: E402

from patchport.torch import make_dynamic_cache, register_cache_pytrees  # noqa: E402

from .test_export_families import ONE_LAYER, _tokens  # noqa: E402

GEMMA2 = dict(ONE_LAYER, num_hidden_layers=2, head_dim=8, sliding_window=8)


def _cache(config, batch: int, past: int, seed: int):
    generator = torch.Generator().manual_seed(seed)
    shape = (batch, config.num_key_value_heads, past, config.head_dim)
    layers = config.num_hidden_layers
    keys = [torch.randn(shape, generator=generator) for _ in range(layers)]
    values = [torch.randn(shape, generator=generator) for _ in range(layers)]
    return make_dynamic_cache(config, keys, values, full_sliding_layers=True)


def _inputs(config, batch: int, seq: int, past: int, seed: int) -> dict:
    return {
        "input_ids": _tokens(batch, seq, seed),
        "attention_mask": torch.ones(batch, seq + past, dtype=torch.int64),
        "cache": _cache(config, batch, past, seed),
    }


def test_a_sliding_cache_unflattens_with_its_window_as_an_int():
    register_cache_pytrees()
    config = transformers.Gemma2Config(**GEMMA2)
    leaves, spec = pytree.tree_flatten(_cache(config, 2, 3, 0))
    assert spec.context[1] == [8, None]  # Gemma2 alternates sliding and full layers
    rebuilt = pytree.tree_unflatten(leaves, spec)
    sliding, full = rebuilt.layers
    assert type(sliding) is transformers.cache_utils.DynamicSlidingWindowLayer
    assert type(full) is transformers.cache_utils.DynamicLayer
    assert type(sliding.sliding_window) is int and sliding.sliding_window == 8
    assert all(torch.equal(a, b) for a, b in zip(pytree.tree_leaves(rebuilt), leaves, strict=True))


def test_a_cache_without_sliding_layers_unflattens_as_transformers_builds_it():
    register_cache_pytrees()
    config = transformers.LlamaConfig(**ONE_LAYER)
    leaves, spec = pytree.tree_flatten(_cache_llama(config))
    assert spec.context[1] == [None]
    rebuilt = pytree.tree_unflatten(leaves, spec)
    assert [type(layer) for layer in rebuilt.layers] == [transformers.cache_utils.DynamicLayer]
    assert all(torch.equal(a, b) for a, b in zip(pytree.tree_leaves(rebuilt), leaves, strict=True))


def _cache_llama(config):
    heads, dim = config.num_key_value_heads, config.hidden_size // config.num_attention_heads
    key, value = torch.randn(2, heads, 3, dim), torch.randn(2, heads, 3, dim)
    return make_dynamic_cache(config, [key], [value])


@pytest.mark.slow
def test_gemma2_with_a_cache_converts_and_generates_in_onnx_runtime(tmp_path):
    pytest.importorskip("onnxscript")
    pytest.importorskip("onnxruntime")
    from patchport.torch import to_onnx

    torch.manual_seed(0)
    config = transformers.Gemma2Config(**GEMMA2)
    model = transformers.AutoModelForCausalLM.from_config(config).eval()
    per_layer = [{0: "batch", 2: "past"} for _ in range(config.num_hidden_layers)]
    shapes = {
        "input_ids": {0: "batch", 1: "seq"},
        "attention_mask": {0: "batch", 1: "past+seq"},
        "cache": [per_layer, [dict(d) for d in per_layer]],
    }
    # batch 1; decode with a past longer than the window; a prefill past the window;
    # decode from a 1-token past
    checks = [
        _inputs(config, 1, 5, 7, 2),
        _inputs(config, 2, 1, 12, 3),
        _inputs(config, 2, 24, 7, 4),
        _inputs(config, 1, 1, 1, 5),
    ]
    path, report = to_onnx(
        model,
        (),
        _inputs(config, 2, 5, 7, 1),
        dynamic_shapes=shapes,
        path=tmp_path / "gemma2.onnx",
        check_shapes=checks,
        check_generation=20,
    )
    assert path.exists()
    assert len(report.checks) == 4 and all(c.ok for c in report.checks), report.to_text()
    assert report.generation_ok, report.generation
    assert "20 greedy tokens" in report.generation
    assert report.ok
