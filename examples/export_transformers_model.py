"""Export a real transformers model with patchport, prove it on new shapes, run it in ONNX Runtime.

A tiny LLaMA with random weights (built from a config, nothing downloaded) uses dynamic
RoPE: its rotary embedding branches in Python on the largest position id, so plain
``torch.export.export`` fails. With patchport's patches it exports; the report says which
dimensions (if any) the program narrowed, which patches were exercised, and what they
changed; the program then goes to ONNX and ONNX Runtime matches eager on shapes the
export never saw, including one longer than the model's original context.

    python examples/export_transformers_model.py [output_dir]
"""

from __future__ import annotations

import contextlib
import io
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch
import transformers

import patchport.torch

VOCAB = 128


def build_model() -> torch.nn.Module:
    """LLaMA, 2 layers, dynamic RoPE with an original context of 16 positions."""
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=VOCAB,
        max_position_embeddings=16,
        rope_parameters={"rope_type": "dynamic", "factor": 2.0, "rope_theta": 10000.0},
    )
    return transformers.AutoModelForCausalLM.from_config(config).eval()


def make_inputs(batch: int, seq: int, seed: int) -> dict:
    generator = torch.Generator().manual_seed(seed)
    return {
        "input_ids": torch.randint(0, VOCAB, (batch, seq), generator=generator),
        "attention_mask": torch.ones(batch, seq, dtype=torch.int64),
        "use_cache": False,
    }


def main(output_dir: str | None = None) -> int:
    model = build_model()
    traced = make_inputs(2, 5, seed=0)
    new_shapes = [make_inputs(1, 1, seed=1), make_inputs(3, 24, seed=2)]  # 24 > 16 positions
    dynamic_shapes = {
        "input_ids": {0: "batch", 1: "seq"},
        "attention_mask": {0: "batch", 1: "seq"},
        "use_cache": None,
    }

    plain_shapes = patchport.torch.use_dyn_not_str(dynamic_shapes)
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # torch prints the partial graph
            torch.export.export(model, (), kwargs=traced, dynamic_shapes=plain_shapes)
        print("plain torch.export.export: succeeded")
    except Exception as exc:
        print(f"plain torch.export.export: failed with {type(exc).__name__}")

    program, report = patchport.torch.export(
        model, (), traced, dynamic_shapes=dynamic_shapes, check_shapes=new_shapes
    )
    print("\n== generality report ==")
    print(report.to_text())

    print("\n== exercised patches: diff and the nodes they produced ==")
    involved = report.patches.patches_involved_in_graph(program.graph)
    print(report.patches.make_report(involved, format="raw"))

    print("== ONNX ==")
    onnx_program = torch.onnx.export(program, (), kwargs=traced, dynamo=True, verbose=False)
    folder = Path(output_dir or tempfile.mkdtemp(prefix="patchport_"))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "llama_dynamic_rope.onnx"
    onnx_program.save(str(path))
    import onnxruntime

    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    names = [item.name for item in session.get_inputs()]
    print(f"saved {path}; inputs {names}")
    worst = 0.0
    for inputs in new_shapes:
        feed = {name: inputs[name].numpy() for name in names}
        logits = session.run(None, feed)[0]
        with torch.no_grad():
            expected = model(**inputs).logits.numpy()
        diff = float(np.abs(logits - expected).max())
        worst = max(worst, diff)
        shape = tuple(inputs["input_ids"].shape)
        print(f"onnxruntime vs eager, input_ids {shape}: max|diff| {diff:.2e}")
    ok = report.is_general and worst < 1e-4
    print(f"\nall right on new shapes: {'yes' if ok else 'no'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else None))
