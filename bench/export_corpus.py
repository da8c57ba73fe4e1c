"""Export a corpus of tiny real transformers models, one or more per architecture family,
with plain ``torch.export.export`` and with ``patchport.torch.export``, check each program
against eager on new shapes (batch 1, the decode step, longer, other sizes), and convert
patchport's program to ONNX and run it in ONNX Runtime on the same shapes.

Every (model, cache) case runs in its own process, so no patch, registration or state of
one case can help or hurt another. Not part of the tests: run it by hand.

    python bench/export_corpus.py                     # the whole table
    python bench/export_corpus.py --models t5 whisper # some models
    python bench/export_corpus.py --one llama 1       # one case, prints JSON
    python bench/export_corpus.py --jobs 8            # cases in parallel
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

VOCAB = 100
# (batch, seq, past): traced, then batch 1; decode (seq 1) with a past; longer than traced
# (past the original context of 16 positions and Gemma's window of 8); other sizes;
# decode from a 1-token past
TRACED = (2, 5, 7)
NEW_SHAPES = ((1, 5, 7), (2, 1, 12), (2, 24, 7), (3, 3, 2), (1, 1, 1))
# (batch,) for vision models
VISION_TRACED = (2,)
VISION_NEW = ((1,), (3,))
# greedy tokens the ONNX file generates fed its own cache, against model.generate
NEW_TOKENS = 20


@dataclass(frozen=True)
class Case:
    """One model of the corpus: its family, how it is built and what inputs it takes."""

    name: str
    family: str
    kind: str  # "decoder", "encoder", "seq2seq", "speech2seq", "vision"
    caches: tuple[bool, ...] = (False, True)


CASES = (
    Case("llama", "dense decoder", "decoder"),
    Case("llama_dynamic_rope", "dense decoder", "decoder"),
    Case("qwen2", "dense decoder", "decoder"),
    Case("mistral", "dense decoder", "decoder"),
    Case("phi3_longrope", "dense decoder", "decoder"),
    Case("gpt2", "dense decoder", "decoder"),
    Case("falcon", "dense decoder", "decoder"),
    Case("gemma2", "dense decoder", "decoder"),
    Case("gemma3", "dense decoder", "decoder"),
    Case("mixtral", "MoE decoder", "decoder"),
    Case("qwen2_moe", "MoE decoder", "decoder"),
    Case("bert", "encoder", "encoder", (False,)),
    Case("t5", "encoder-decoder (text)", "seq2seq"),
    Case("whisper", "encoder-decoder (speech)", "speech2seq"),
    Case("vit", "vision transformer", "vision", (False,)),
    Case("siglip_vision", "vision transformer", "vision", (False,)),
    Case("convnext", "convolutional vision", "vision", (False,)),
    Case("swin", "windowed vision", "vision", (False,)),
    Case("mamba", "state-space", "decoder", (False,)),
    Case("mamba2", "state-space", "decoder", (False,)),
    Case("bamba", "hybrid", "decoder", (False,)),
)
BY_NAME = {case.name: case for case in CASES}


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
    lm = tr.AutoModelForCausalLM.from_config
    if name == "llama":
        return lm(tr.LlamaConfig(**common)).eval()
    if name == "llama_dynamic_rope":
        rope = {"rope_type": "dynamic", "factor": 2.0, "rope_theta": 10000.0}
        return lm(tr.LlamaConfig(**common, rope_parameters=rope)).eval()
    if name == "qwen2":
        return lm(tr.Qwen2Config(**common)).eval()
    if name == "mistral":
        return lm(tr.MistralConfig(**common, sliding_window=None)).eval()
    if name == "phi3_longrope":
        common["max_position_embeddings"] = 64
        rope = {
            "rope_type": "longrope",
            "rope_theta": 10000.0,
            "short_factor": [1.0, 1.1, 1.2, 1.3],
            "long_factor": [2.0, 2.5, 3.0, 4.0],
            "original_max_position_embeddings": 16,
        }
        return lm(tr.Phi3Config(**common, rope_parameters=rope, pad_token_id=0)).eval()
    if name == "gpt2":
        config = tr.GPT2Config(
            n_embd=32, n_layer=2, n_head=4, vocab_size=VOCAB, n_positions=64, bos_token_id=0
        )
        return lm(config).eval()
    if name == "falcon":
        config = tr.FalconConfig(
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=4,
            vocab_size=VOCAB,
            new_decoder_architecture=True,
            num_kv_heads=2,
        )
        return lm(config).eval()
    if name == "gemma2":
        return lm(tr.Gemma2Config(**common, head_dim=8, sliding_window=8)).eval()
    if name == "gemma3":
        config = tr.Gemma3TextConfig(
            **common, head_dim=8, sliding_window=8, layer_types=["sliding_attention"] * 2
        )
        return lm(config).eval()
    if name == "mixtral":
        return lm(tr.MixtralConfig(**common, num_local_experts=4, num_experts_per_tok=2)).eval()
    if name == "qwen2_moe":
        config = tr.Qwen2MoeConfig(
            **common,
            num_experts=4,
            num_experts_per_tok=2,
            moe_intermediate_size=32,
            shared_expert_intermediate_size=32,
        )
        return lm(config).eval()
    if name == "bert":
        config = tr.BertConfig(
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=4,
            intermediate_size=64,
            vocab_size=VOCAB,
            max_position_embeddings=64,
        )
        return tr.BertModel(config).eval()
    if name == "t5":
        config = tr.T5Config(
            d_model=32,
            d_kv=8,
            d_ff=64,
            num_layers=2,
            num_heads=4,
            vocab_size=VOCAB,
            decoder_start_token_id=0,
        )
        return tr.T5ForConditionalGeneration(config).eval()
    if name == "whisper":
        config = tr.WhisperConfig(
            d_model=32,
            encoder_layers=1,
            decoder_layers=2,
            encoder_attention_heads=4,
            decoder_attention_heads=4,
            encoder_ffn_dim=64,
            decoder_ffn_dim=64,
            num_mel_bins=8,
            max_source_positions=16,
            max_target_positions=64,
            vocab_size=VOCAB,
            decoder_start_token_id=0,
            pad_token_id=0,
        )
        return tr.WhisperForConditionalGeneration(config).eval()
    if name == "vit":
        config = tr.ViTConfig(
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=4,
            intermediate_size=64,
            image_size=32,
            patch_size=8,
        )
        return tr.ViTModel(config).eval()
    if name == "siglip_vision":
        config = tr.SiglipVisionConfig(
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=4,
            intermediate_size=64,
            image_size=32,
            patch_size=8,
        )
        return tr.SiglipVisionModel(config).eval()
    if name == "convnext":
        config = tr.ConvNextConfig(
            hidden_sizes=[8, 16], depths=[1, 1], num_stages=2, image_size=32, num_labels=3
        )
        return tr.ConvNextForImageClassification(config).eval()
    if name == "swin":
        config = tr.SwinConfig(
            image_size=32,
            patch_size=4,
            embed_dim=16,
            depths=[1, 1],
            num_heads=[2, 2],
            window_size=4,
            num_labels=3,
        )
        return tr.SwinForImageClassification(config).eval()
    if name == "mamba":
        config = tr.MambaConfig(
            hidden_size=32, state_size=4, num_hidden_layers=2, vocab_size=VOCAB, time_step_rank=4
        )
        return lm(config).eval()
    if name == "mamba2":
        config = tr.Mamba2Config(
            hidden_size=32,
            state_size=8,
            num_heads=4,
            head_dim=16,
            n_groups=1,
            num_hidden_layers=2,
            vocab_size=VOCAB,
            chunk_size=4,
            time_step_rank=4,
        )
        return lm(config).eval()
    if name == "bamba":
        config = tr.BambaConfig(
            **common,
            attn_layer_indices=[1],
            mamba_n_heads=4,
            mamba_d_head=16,
            mamba_d_state=8,
            mamba_n_groups=1,
            mamba_chunk_size=4,
            mamba_expand=2,
        )
        return lm(config).eval()
    raise ValueError(f"unknown model {name!r}; choose from {list(BY_NAME)}")


def _filled_cache(config: Any, batch: int, past: int, generator: Any) -> Any:
    import torch

    from patchport.torch import make_dynamic_cache

    text = config.get_text_config(decoder=True)
    layers = text.num_hidden_layers
    heads = getattr(text, "num_key_value_heads", None) or text.num_attention_heads
    dim = getattr(text, "head_dim", None) or text.hidden_size // text.num_attention_heads
    keys = [torch.randn(batch, heads, past, dim, generator=generator) for _ in range(layers)]
    values = [torch.randn(batch, heads, past, dim, generator=generator) for _ in range(layers)]
    return make_dynamic_cache(text, keys, values, full_sliding_layers=True)


def _seq2seq_cache(model: Any, batch: int, past: int, encoded: int, generator: Any) -> Any:
    """A decoder cache: self-attention over ``past`` tokens, cross-attention over the
    ``encoded`` encoder positions."""
    import torch
    from transformers import DynamicCache, EncoderDecoderCache

    config = model.config
    layers = getattr(config, "num_decoder_layers", None) or config.decoder_layers
    heads = getattr(config, "decoder_attention_heads", None) or config.num_heads
    dim = getattr(config, "d_kv", None) or config.d_model // heads

    def filled(length: int) -> Any:
        cache = DynamicCache()
        for layer in range(layers):
            shape = (batch, heads, length, dim)
            cache.update(
                torch.randn(shape, generator=generator),
                torch.randn(shape, generator=generator),
                layer,
            )
        return cache

    return EncoderDecoderCache(filled(past), filled(encoded))


def make_inputs(model: Any, case: Case, shape: tuple, cache: bool, seed: int) -> dict:
    """Keyword inputs of one case at one (batch, seq, past) or (batch,) shape."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    if case.kind == "vision":
        size = model.config.image_size
        channels = getattr(model.config, "num_channels", 3)
        return {"pixel_values": torch.randn(shape[0], channels, size, size, generator=generator)}
    batch, seq, past = shape
    past = past if cache else 0
    tokens = torch.randint(1, VOCAB, (batch, seq), generator=generator)
    if case.kind == "encoder":
        return {"input_ids": tokens, "attention_mask": torch.ones(batch, seq, dtype=torch.int64)}
    if case.kind in ("seq2seq", "speech2seq"):
        if case.kind == "seq2seq":
            encoded = 6
            inputs = {
                "input_ids": torch.randint(1, VOCAB, (batch, encoded), generator=generator),
                "attention_mask": torch.ones(batch, encoded, dtype=torch.int64),
            }
        else:
            config = model.config
            frames = 2 * config.max_source_positions
            encoded = config.max_source_positions
            inputs = {
                "input_features": torch.randn(
                    batch, config.num_mel_bins, frames, generator=generator
                )
            }
        inputs["decoder_input_ids"] = tokens
        if cache:
            inputs["cache"] = _seq2seq_cache(model, batch, past, encoded, generator)
        else:
            inputs["use_cache"] = False
        return inputs
    inputs = {"input_ids": tokens, "attention_mask": torch.ones(batch, seq + past, dtype=int)}
    if cache:
        inputs["cache"] = _filled_cache(model.config, batch, past, generator)
    else:
        inputs["use_cache"] = False
    return inputs


def dynamic_shapes(model: Any, case: Case, cache: bool) -> dict:
    """batch, seq and past dynamic, named for the report."""
    if case.kind == "vision":
        return {"pixel_values": {0: "batch"}}
    if case.kind == "encoder":
        return {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}}
    if case.kind in ("seq2seq", "speech2seq"):
        shapes: dict[str, Any] = {"decoder_input_ids": {0: "batch", 1: "seq"}}
        if case.kind == "seq2seq":
            shapes["input_ids"] = {0: "batch"}
            shapes["attention_mask"] = {0: "batch"}
        else:
            shapes["input_features"] = {0: "batch"}
        if cache:
            config = model.config
            layers = getattr(config, "num_decoder_layers", None) or config.decoder_layers
            own = [{0: "batch", 2: "past"} for _ in range(layers)]
            cross = [{0: "batch"} for _ in range(layers)]
            shapes["cache"] = [[own, [dict(d) for d in own]], [cross, [dict(d) for d in cross]]]
        else:
            shapes["use_cache"] = None
        return shapes
    shapes = {
        "input_ids": {0: "batch", 1: "seq"},
        "attention_mask": {0: "batch", 1: "past+seq" if cache else "seq"},
    }
    if cache:
        layers = model.config.get_text_config(decoder=True).num_hidden_layers
        per_layer = [{0: "batch", 2: "past"} for _ in range(layers)]
        shapes["cache"] = [per_layer, [dict(d) for d in per_layer]]
    else:
        shapes["use_cache"] = None
    return shapes


def _shapes(case: Case) -> tuple[tuple, tuple]:
    return (VISION_TRACED, VISION_NEW) if case.kind == "vision" else (TRACED, NEW_SHAPES)


def _checks(report: Any) -> list[dict]:
    return [
        {"label": c.label, "ok": c.ok, "diff": c.max_abs_diff, "error": c.error}
        for c in report.shape_checks
    ]


def run_plain(model: Any, case: Case, cache: bool, traced: dict, checks: list) -> dict:
    """Plain ``torch.export.export`` (no patch, torch's defaults) and its check."""
    import torch

    from patchport.torch import check_program, use_dyn_not_str

    named = dynamic_shapes(model, case, cache)
    start = time.perf_counter()
    try:
        program = torch.export.export(
            model, (), kwargs=traced, dynamic_shapes=use_dyn_not_str(named)
        )
    except Exception as exc:
        return {"exported": False, "error": _short(exc), "seconds": _since(start)}
    exported = _since(start)
    report = check_program(program, model, (), traced, dynamic_shapes=named, check_shapes=checks)
    return {
        "exported": True,
        "export_seconds": exported,
        "seconds": _since(start),
        "checks": _checks(report),
        "narrowings": [n.text for n in report.narrowings],
        "all_ok": all(c.ok for c in report.shape_checks),
    }


def run_patchport(model: Any, case: Case, cache: bool, traced: dict, checks: list) -> tuple:
    """``patchport.torch.export`` (narrowing allowed, to see it): the row, the program and
    its report."""
    from patchport.torch import export

    named = dynamic_shapes(model, case, cache)
    start = time.perf_counter()
    try:
        program, report = export(
            model, (), traced, dynamic_shapes=named, check_shapes=checks, allow_narrowing=True
        )
    except Exception as exc:
        return {"exported": False, "error": _short(exc), "seconds": _since(start)}, None, None
    row = {
        "exported": True,
        "seconds": _since(start),
        "checks": _checks(report),
        "narrowings": [n.text for n in report.narrowings],
        "all_ok": all(c.ok for c in report.shape_checks),
        "chosen": report.configuration,
        "tried": [a.to_text() for a in report.attempts],
        "exercised": sorted({p.name for p in report.patches.exercised()}),
    }
    return row, program, report


def run_onnx(
    model: Any, case: Case, cache: bool, program: Any, report: Any, traced: dict, checks: list
) -> dict:
    """patchport's program through ``patchport.torch.onnx_export.program_to_onnx`` (the
    conversion of ``to_onnx``) and ONNX Runtime, compared with eager on the new shapes;
    with a cache, also greedy generation of ``NEW_TOKENS`` from the file (see
    :func:`run_generation`)."""
    import tempfile
    from pathlib import Path

    from patchport.torch.onnx_export import program_to_onnx

    start = time.perf_counter()
    folder = Path(tempfile.mkdtemp(prefix="patchport_corpus_"))
    # an encoder-decoder file traced with a filled cross-attention cache only reads it:
    # its generation is checked on a file of its own (run_generation)
    loop = NEW_TOKENS if cache and case.kind == "decoder" else 0
    try:
        _, onnx_report = program_to_onnx(
            program,
            report,
            model,
            (),
            traced,
            dynamic_shapes=dynamic_shapes(model, case, cache),
            path=folder / "model.onnx",
            check_shapes=checks,
            check_generation=loop,
        )
    except Exception as exc:
        return {"converted": False, "error": _short(exc), "seconds": _since(start)}
    row = {
        "converted": True,
        "seconds": _since(start),
        "checks": [
            {"label": c.label, "ok": c.ok, "diff": c.max_abs_diff, "error": c.error}
            for c in onnx_report.checks
        ],
        "all_ok": onnx_report.checks != [] and all(c.ok for c in onnx_report.checks),
    }
    if loop:
        row["generation"] = {"ok": onnx_report.generation_ok, "text": onnx_report.generation}
    return row


def _empty_cross(inputs: dict) -> dict:
    """The inputs with the cross-attention cache emptied: the file then computes it."""
    from transformers import DynamicCache, EncoderDecoderCache

    cache = inputs["cache"]
    return {**inputs, "cache": EncoderDecoderCache(cache.self_attention_cache, DynamicCache())}


def run_generation(model: Any, case: Case) -> dict:
    """Greedy generation parity of an encoder-decoder through ``to_onnx`` traced with an
    empty cross-attention cache (the file computes it; the one the corpus checks reads it
    and cannot start a loop)."""
    import tempfile
    from pathlib import Path

    from patchport.torch import to_onnx

    traced = _empty_cross(make_inputs(model, case, TRACED, True, seed=1))
    shapes = dynamic_shapes(model, case, True)
    shapes["cache"][1] = [[], []]
    start = time.perf_counter()
    path = Path(tempfile.mkdtemp(prefix="patchport_corpus_")) / "model.onnx"
    try:
        _, report = to_onnx(
            model, (), traced, dynamic_shapes=shapes, path=path, check_generation=NEW_TOKENS
        )
    except Exception as exc:
        return {"ok": False, "text": _short(exc), "seconds": _since(start)}
    return {"ok": report.generation_ok, "text": report.generation, "seconds": _since(start)}


def run_one(name: str, cache: bool, onnx: bool = True) -> dict:
    """Plain, patchport and ONNX for one case; a JSON-able row."""
    from patchport.torch import register_cache_pytrees

    register_cache_pytrees()  # both need it to pass a cache in or out
    case = BY_NAME[name]
    model = build_model(name)
    traced_shape, new_shapes = _shapes(case)
    traced = make_inputs(model, case, traced_shape, cache, seed=1)
    checks = [
        make_inputs(model, case, shape, cache, seed=10 + i) for i, shape in enumerate(new_shapes)
    ]
    row: dict[str, Any] = {"model": name, "family": case.family, "cache": cache}
    row["plain"] = run_plain(model, case, cache, traced, checks)
    row["patchport"], program, report = run_patchport(model, case, cache, traced, checks)
    if onnx and program is not None:
        row["onnx"] = run_onnx(model, case, cache, program, report, traced, checks)
        if cache and case.kind in ("seq2seq", "speech2seq"):
            row["onnx"]["generation"] = run_generation(model, case)
    return row


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {(text[0] if text else '')[:200]}"


def _since(start: float) -> float:
    return round(time.perf_counter() - start, 1)


def _mark(result: dict | None, key: str = "exported") -> str:
    if result is None:
        return "-"
    if not result.get(key):
        return "fails"
    checks = result["checks"]
    right = sum(1 for c in checks if c["ok"])
    return "right" if right == len(checks) else f"{right}/{len(checks)}"


def _run_case(name: str, cache: bool, onnx: bool) -> dict:
    command = [sys.executable, __file__, "--one", name, str(int(cache))]
    if not onnx:
        command.append("--no-onnx")
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=1200)
    except subprocess.TimeoutExpired:
        return {"model": name, "family": BY_NAME[name].family, "cache": cache, "error": "timeout"}
    lines = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")]
    if lines:
        return json.loads(lines[-1][len("RESULT ") :])
    tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
    return {"model": name, "family": BY_NAME[name].family, "cache": cache, "error": tail[:200]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--one", nargs=2, metavar=("MODEL", "CACHE"))
    parser.add_argument("--models", nargs="*", default=list(BY_NAME))
    parser.add_argument("--no-onnx", action="store_true")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--json", help="also write the rows to this file")
    options = parser.parse_args()
    if options.one:
        name, cache = options.one
        print("RESULT " + json.dumps(run_one(name, cache == "1", not options.no_onnx)))
        return
    todo = [(n, c) for n in options.models for c in BY_NAME[n].caches]
    print(
        f"{'model':<19} {'family':<25} cache  {'plain':<6} {'patchport':<9} {'onnx':<6} "
        f"{'gen':<7} {'time':<6} chosen"
    )
    rows = []
    with ThreadPoolExecutor(max_workers=max(1, options.jobs)) as pool:
        for row in pool.map(lambda nc: _run_case(*nc, not options.no_onnx), todo):
            rows.append(row)  # printed and saved as they come, in order
            print(_line(row), flush=True)
            if options.json:
                with open(options.json, "w", encoding="utf-8") as handle:
                    json.dump(rows, handle, indent=1)
    print()
    for key in ("plain", "patchport"):
        right = sum(1 for r in rows if r.get(key, {}).get("all_ok"))
        print(f"{key:>9}: right on all new shapes in {right}/{len(rows)} cases")
    onnx_right = sum(1 for r in rows if (r.get("onnx") or {}).get("all_ok"))
    print(f"{'onnx':>9}: ONNX Runtime right on all new shapes in {onnx_right}/{len(rows)} cases")
    looped = [r for r in rows if _generation(r) is not None]
    same = sum(1 for r in looped if _generation(r).get("ok"))
    print(f"{'gen':>9}: {NEW_TOKENS} greedy tokens equal generate in {same}/{len(looped)} cases")
    worse = [
        f"{r['model']} cache={int(r['cache'])}"
        for r in rows
        if r.get("plain", {}).get("all_ok") and not r.get("patchport", {}).get("all_ok")
    ]
    print(f"patchport worse than plain: {', '.join(worse) or 'none'}")
    print()
    print(_family_summary(rows))


def _generation(row: dict) -> dict | None:
    return (row.get("onnx") or {}).get("generation")


def _gen_mark(row: dict) -> str:
    found = _generation(row)
    if found is None:
        return "-"
    if found.get("ok"):
        return "same"
    return "differs" if "differs" in (found.get("text") or "") else "fails"


def _ratio(row: dict) -> float | None:
    """patchport's export (its checks included) over plain torch.export + check_program."""
    plain, ours = row.get("plain") or {}, row.get("patchport") or {}
    if not plain.get("seconds") or "seconds" not in ours:
        return None
    return ours["seconds"] / plain["seconds"]


def _family_summary(rows: list[dict]) -> str:
    """Per family: cases right with plain torch.export, patchport's program, its ONNX file
    in ONNX Runtime, and generation parity; the median time ratio patchport/plain."""
    families: dict[str, list[dict]] = {}
    for row in rows:
        families.setdefault(row["family"], []).append(row)
    lines = [
        f"{'family':<25} {'cases':<5} {'plain':<6} {'patchport':<9} {'onnx':<6} "
        f"{'gen':<6} time patchport/plain"
    ]
    for family, group in families.items():
        n = len(group)

        def count(key: str, group: list[dict] = group, n: int = n) -> str:
            return f"{sum(1 for r in group if (r.get(key) or {}).get('all_ok'))}/{n}"

        looped = [r for r in group if _generation(r) is not None]
        same = sum(1 for r in looped if _generation(r).get("ok"))
        gen = f"{same}/{len(looped)}" if looped else "-"
        ratios = sorted(x for x in (_ratio(r) for r in group) if x is not None)
        ratio = f"x{ratios[len(ratios) // 2]:.1f}" if ratios else "-"
        lines.append(
            f"{family:<25} {n:<5} {count('plain'):<6} {count('patchport'):<9} "
            f"{count('onnx'):<6} {gen:<6} {ratio}"
        )
    return "\n".join(lines)


def _line(row: dict) -> str:
    head = f"{row['model']:<19} {row['family']:<25} {int(row['cache']):<6}"
    if "error" in row:
        return f"{head} case FAILED: {row['error']}"
    plain, ours, onnx = row["plain"], row["patchport"], row.get("onnx")
    text = f"{head} {_mark(plain):<6} {_mark(ours):<9} {_mark(onnx, 'converted'):<6}"
    ratio = _ratio(row)
    text += f" {_gen_mark(row):<7} {'-' if ratio is None else f'x{ratio:.1f}':<6}"
    text += f" {ours.get('chosen', '')}"
    problems = []
    for label, result in (("plain", plain), ("patchport", ours), ("onnx", onnx)):
        if result is None or _mark(result, "exported" if label != "onnx" else "converted") in (
            "right",
            "-",
        ):
            continue
        if "error" in result:
            problems.append(f"{label}: {result['error'][:110]}")
            continue
        bad = next(c for c in result["checks"] if not c["ok"])
        problems.append(f"{label}: {(bad.get('error') or 'mismatch')[:110]}")
        if result.get("narrowings"):
            problems[-1] += f" [narrowed: {'; '.join(result['narrowings'])[:80]}]"
    found = _generation(row)
    if found is not None and not found.get("ok"):
        problems.append(f"gen: {(found.get('text') or '')[:160]}")
    return text + ("\n      " + "\n      ".join(problems) if problems else "")


if __name__ == "__main__":
    main()
