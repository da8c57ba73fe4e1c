"""Export a corpus of tiny real transformers models, without and with patchport, and check
each program against eager on five new shapes.

Every (model, cache, mode) export runs in its own process, so no patch, registration or
state of one case can help or hurt another. Not part of the tests: run it by hand.

    python bench/export_corpus.py            # the whole table
    python bench/export_corpus.py --one llama 1 patchport   # one case, prints JSON
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from typing import Any

MODELS = ("llama", "llama_dynamic_rope", "qwen2", "mistral", "phi3_longrope", "gpt2", "gemma2")
MODES = ("plain", "patchport")
TRACED = (2, 5, 7)  # batch, seq, past
# batch=1; decode (seq=1) with a past; longer than traced (and past the models' original
# context of 16 positions and Gemma-2's window of 8); other sizes; decode from a 1-token past
NEW_SHAPES = ((1, 5, 7), (2, 1, 12), (2, 24, 7), (3, 3, 2), (1, 1, 1))
VOCAB = 100


def build_model(name: str) -> Any:
    """A tiny random model of the family, built from a config (no download)."""
    import torch
    import transformers as tr

    torch.manual_seed(0)
    common = dict(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=VOCAB,
        max_position_embeddings=16,
    )
    if name == "llama":
        config = tr.LlamaConfig(**common)
    elif name == "llama_dynamic_rope":
        rope = {"rope_type": "dynamic", "factor": 2.0, "rope_theta": 10000.0}
        config = tr.LlamaConfig(**common, rope_parameters=rope)
    elif name == "qwen2":
        config = tr.Qwen2Config(**common)
    elif name == "mistral":
        config = tr.MistralConfig(**common, sliding_window=None)
    elif name == "phi3_longrope":
        common["max_position_embeddings"] = 64
        rope = {
            "rope_type": "longrope",
            "rope_theta": 10000.0,
            "short_factor": [1.0, 1.1, 1.2, 1.3],
            "long_factor": [2.0, 2.5, 3.0, 4.0],
            "original_max_position_embeddings": 16,
        }
        config = tr.Phi3Config(**common, rope_parameters=rope, pad_token_id=0)
    elif name == "gpt2":
        config = tr.GPT2Config(
            n_embd=32,
            n_layer=2,
            n_head=4,
            vocab_size=VOCAB,
            n_positions=64,
            bos_token_id=0,
            eos_token_id=0,
        )
    elif name == "gemma2":
        config = tr.Gemma2Config(**common, head_dim=8, sliding_window=8)
    else:
        raise ValueError(f"unknown model {name!r}; choose from {MODELS}")
    return tr.AutoModelForCausalLM.from_config(config).eval()


def make_inputs(model: Any, batch: int, seq: int, past: int, cache: bool, seed: int) -> dict:
    """Keyword inputs: token ids, a mask over past + new tokens, and a filled cache."""
    import torch

    from patchport.torch import make_dynamic_cache

    generator = torch.Generator().manual_seed(seed)
    inputs: dict[str, Any] = {
        "input_ids": torch.randint(0, VOCAB, (batch, seq), generator=generator),
        "attention_mask": torch.ones(batch, seq + (past if cache else 0), dtype=torch.int64),
    }
    if not cache:
        inputs["use_cache"] = False
        return inputs
    config = model.config
    layers = config.num_hidden_layers
    heads = getattr(config, "num_key_value_heads", None) or config.num_attention_heads
    dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    keys = [torch.randn(batch, heads, past, dim, generator=generator) for _ in range(layers)]
    values = [torch.randn(batch, heads, past, dim, generator=generator) for _ in range(layers)]
    inputs["cache"] = make_dynamic_cache(config, keys, values, full_sliding_layers=True)
    return inputs


def dynamic_shapes(model: Any, cache: bool) -> dict:
    """batch, seq and past dynamic, named for the report."""
    shapes: dict[str, Any] = {
        "input_ids": {0: "batch", 1: "seq"},
        "attention_mask": {0: "batch", 1: "past+seq" if cache else "seq"},
    }
    if cache:
        layers = model.config.num_hidden_layers
        per_layer = [{0: "batch", 2: "past"} for _ in range(layers)]
        shapes["cache"] = [per_layer, [dict(d) for d in per_layer]]
    else:
        shapes["use_cache"] = None
    return shapes


def run_one(name: str, cache: bool, mode: str) -> dict:
    """Export one case and check it on the new shapes; return a JSON-able row."""
    import torch

    from patchport.torch import register_cache_pytrees, use_dyn_not_str
    from patchport.torch.export_check import check_program
    from patchport.torch.export_select import export

    register_cache_pytrees()  # both modes need it to pass a cache in or out
    model = build_model(name)
    traced = make_inputs(model, *TRACED, cache=cache, seed=1)
    checks = [
        make_inputs(model, *shape, cache=cache, seed=10 + i) for i, shape in enumerate(NEW_SHAPES)
    ]
    row: dict[str, Any] = {"model": name, "cache": cache, "mode": mode}
    start = time.perf_counter()
    try:
        if mode == "plain":
            shapes = use_dyn_not_str(dynamic_shapes(model, cache))
            program = torch.export.export(model, (), kwargs=traced, dynamic_shapes=shapes)
            report = check_program(
                program,
                model,
                (),
                traced,
                dynamic_shapes=dynamic_shapes(model, cache),
                check_shapes=checks,
            )
            results = report.shape_checks
            row["narrowings"] = [n.text for n in report.narrowings]
        else:
            program, report = export(
                model, (), traced, dynamic_shapes=dynamic_shapes(model, cache), check_shapes=checks
            )
            results = report.shape_checks
            row["narrowings"] = [n.text for n in report.narrowings]
            row["exercised"] = sorted({p.name for p in report.patches.exercised()})
    except Exception as exc:
        row.update(exported=False, error=f"{type(exc).__name__}: {str(exc).strip()[:300]}")
        row["seconds"] = round(time.perf_counter() - start, 1)
        return row
    row["exported"] = True
    row["seconds"] = round(time.perf_counter() - start, 1)
    row["checks"] = [
        {"label": c.label, "ok": c.ok, "diff": c.max_abs_diff, "error": c.error} for c in results
    ]
    row["all_ok"] = all(c.ok for c in results)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--one", nargs=3, metavar=("MODEL", "CACHE", "MODE"))
    parser.add_argument("--models", nargs="*", default=list(MODELS))
    options = parser.parse_args()
    if options.one:
        name, cache, mode = options.one
        print("RESULT " + json.dumps(run_one(name, cache == "1", mode)))
        return
    rows = []
    for name in options.models:
        for cache in (False, True):
            for mode in MODES:
                command = [sys.executable, __file__, "--one", name, str(int(cache)), mode]
                done = subprocess.run(
                    command, capture_output=True, text=True, env={**os.environ}, timeout=900
                )
                lines = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")]
                if lines:
                    row = json.loads(lines[-1][len("RESULT ") :])
                else:
                    tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
                    row = {"model": name, "cache": cache, "mode": mode, "exported": False}
                    row["error"] = f"process failed: {tail[:200]}"
                rows.append(row)
                print(_line(row), flush=True)
    print()
    for mode in MODES:
        right = sum(1 for r in rows if r["mode"] == mode and r.get("all_ok"))
        total = sum(1 for r in rows if r["mode"] == mode)
        print(f"{mode:>9}: {right}/{total} exports right on all {len(NEW_SHAPES)} new shapes")


def _line(row: dict) -> str:
    head = f"{row['model']:<19} cache={int(row['cache'])} {row['mode']:<9}"
    if not row.get("exported"):
        return f"{head} export FAILED: {row.get('error', '')[:160]}"
    marks = " ".join("ok" if c["ok"] else "X" for c in row["checks"])
    text = f"{head} exported {row['seconds']:>5}s  shapes: {marks}"
    bad = [(shape, c) for shape, c in zip(NEW_SHAPES, row["checks"]) if not c["ok"]]
    if bad:
        shape, first = bad[0]
        problem = first["error"] or f"mismatch, max|diff| {first['diff']:.1e}"
        text += f"  first failure (batch, seq, past)={shape}: {problem[:90]}"
    if row.get("narrowings"):
        text += f"  narrowed: {'; '.join(row['narrowings'])}"
    return text


if __name__ == "__main__":
    main()
