"""A transformers decoder to a verified ONNX file in one call, then greedy generation from it.

``patchport.torch.to_onnx`` exports a tiny LLaMA (random weights, built from a config,
nothing downloaded) with a cache, converts it to ONNX, and runs ONNX Runtime against eager
on new shapes: the decode step (one new token after a past), batch 1, a longer sequence
than traced and another batch. The cache goes in as ``past_key_values.N.key/value`` and
comes out as ``present.N.key/value``. A greedy loop then feeds the file its own cache for
20 new tokens and must give the tokens of ``model.generate(do_sample=False)``.

    python examples/onnx_generation.py [output_dir]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import onnxruntime
import torch
import transformers

import patchport.torch
from patchport.torch.onnx_generation import greedy_onnx

VOCAB = 128
NEW_TOKENS = 20


def build_model() -> torch.nn.Module:
    """LLaMA, 2 layers, random weights."""
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=VOCAB,
        max_position_embeddings=128,
    )
    return transformers.AutoModelForCausalLM.from_config(config).eval()


def inputs(model: torch.nn.Module, batch: int, seq: int, past: int, seed: int) -> dict:
    """Tokens, the mask over past + new tokens, and a cache filled with ``past`` positions."""
    config = model.config
    generator = torch.Generator().manual_seed(seed)
    shape = (batch, config.num_key_value_heads, past, config.hidden_size // 4)
    layers = range(config.num_hidden_layers)
    return {
        "input_ids": torch.randint(1, VOCAB, (batch, seq), generator=generator),
        "attention_mask": torch.ones(batch, past + seq, dtype=torch.int64),
        "cache": patchport.torch.make_dynamic_cache(
            config,
            [torch.randn(shape, generator=generator) for _ in layers],
            [torch.randn(shape, generator=generator) for _ in layers],
        ),
    }


def main(folder: Path) -> None:
    model = build_model()
    layers = model.config.num_hidden_layers
    per_layer = [{0: "batch", 2: "past"} for _ in range(layers)]
    dynamic_shapes = {
        "input_ids": {0: "batch", 1: "seq"},
        "attention_mask": {0: "batch", 1: "past+seq"},
        "cache": [per_layer, [dict(d) for d in per_layer]],
    }
    checks = [
        inputs(model, 1, 1, 9, seed=2),  # batch 1, one new token after a past: the decode step
        inputs(model, 2, 24, 5, seed=3),  # longer than traced
        inputs(model, 3, 2, 2, seed=4),  # another batch
    ]
    path, report = patchport.torch.to_onnx(
        model,
        (),
        inputs(model, 2, 5, 7, seed=1),
        dynamic_shapes=dynamic_shapes,
        path=folder / "tiny_llama.onnx",
        check_shapes=checks,
        check_generation=NEW_TOKENS,
    )
    print(report.to_text())
    # the same loop by hand: the file alone, fed its own cache
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    prompt = torch.randint(1, VOCAB, (1, 6), generator=torch.Generator().manual_seed(7))
    tokens = greedy_onnx(session, prompt.numpy(), NEW_TOKENS)
    with torch.no_grad():
        expected = model.generate(
            input_ids=prompt,
            attention_mask=torch.ones_like(prompt),
            max_new_tokens=NEW_TOKENS,
            do_sample=False,
        )[:, prompt.shape[1] :]
    same = tokens[:, : expected.shape[1]].tolist() == expected.tolist()
    print(f"greedy ONNX loop on a new prompt: {tokens[0].tolist()}")
    print(f"model.generate(do_sample=False):  {expected[0].tolist()}")
    print(f"same tokens: {'yes' if same else 'no'}")
    if not (report.ok and same):
        raise SystemExit("the ONNX file does not match the eager model")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp()))
