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

from corpus_models import VOCAB, build_model

# (batch, seq, past): traced, then batch 1; decode (seq 1) with a past; longer than traced
# (past the original context of 16 positions and Gemma's window of 8); other sizes;
# decode from a 1-token past
TRACED = (2, 5, 7)
NEW_SHAPES = ((1, 5, 7), (2, 1, 12), (2, 24, 7), (3, 3, 2), (1, 1, 1))
# (batch,) for vision models at their configured image size
VISION_TRACED = (2,)
VISION_NEW = ((1,), (3,))
# (batch, height, width) for vision models that take any image size: 96 x 160 leaves maps
# of odd size after 5 halvings. A vision transformer is traced at its configured size
# (32), where transformers returns its stored position embeddings unless tracing
SPATIAL_TRACED = (2, 128, 128)
SPATIAL_NEW = ((1, 128, 128), (3, 96, 160), (1, 192, 128))
CONFIGURED_SIZE_TRACED = (2, 32, 32)
CONFIGURED_SIZE_NEW = ((1, 32, 32), (3, 48, 64), (1, 64, 40))
# (batch, samples) for raw-audio encoders
AUDIO_TRACED = (2, 800)
AUDIO_NEW = ((1, 800), (3, 1200), (2, 400))
# greedy tokens the ONNX file generates fed its own cache, against model.generate
NEW_TOKENS = 20


@dataclass(frozen=True)
class Case:
    """One model of the corpus: its family, how it is built and what inputs it takes.
    ``spatial``: a vision model whose image height and width are dynamic too, traced at
    its configured image size when ``configured_size``."""

    name: str
    family: str
    kind: str  # "decoder", "encoder", "seq2seq", "speech2seq", "vision", "audio", "text_image"
    caches: tuple[bool, ...] = (False, True)
    spatial: bool = False
    configured_size: bool = False


def _decoders(family: str, *names: str) -> tuple[Case, ...]:
    return tuple(Case(name, family, "decoder") for name in names)


def _no_cache(family: str, kind: str, *names: str, spatial: bool = False) -> tuple[Case, ...]:
    return tuple(Case(name, family, kind, (False,), spatial) for name in names)


CASES = (
    *_decoders(
        "dense decoder",
        "llama",
        "llama_dynamic_rope",
        "qwen2",
        "mistral",
        "phi3_longrope",
        "gpt2",
        "falcon",
        "gemma2",
        "gemma3",
        "gpt_neox",
        "gptj",
        "opt",
        "bloom",
        "phi",
        "qwen3",
        "stablelm",
        "cohere",
        "olmo2",
        "granite",
        "glm",
        "starcoder2",
        "gpt_bigcode",
        "codegen",
        "mpt",
        "xglm",
        "persimmon",
    ),
    *_decoders("MoE decoder", "mixtral", "qwen2_moe", "qwen3_moe", "deepseek_v3"),
    *_no_cache(
        "encoder", "encoder", "bert", "distilbert", "roberta", "deberta_v2", "albert", "electra"
    ),
    *_no_cache("encoder", "encoder", "clip_text"),
    Case("t5", "encoder-decoder (text)", "seq2seq"),
    Case("bart", "encoder-decoder (text)", "seq2seq"),
    Case("mbart", "encoder-decoder (text)", "seq2seq"),
    Case("marian", "encoder-decoder (text)", "seq2seq"),
    Case("pegasus", "encoder-decoder (text)", "seq2seq"),
    Case("whisper", "encoder-decoder (speech)", "speech2seq"),
    Case("speech2text", "encoder-decoder (speech)", "speech2seq"),
    Case("moonshine", "encoder-decoder (speech)", "speech2seq"),
    *_no_cache("vision transformer", "vision", "vit", "siglip_vision", "clip_vision", "deit"),
    *_no_cache("vision transformer", "vision", "beit", "levit", "dpt"),
    *_no_cache("vision transformer", "vision", "yolos", spatial=True),
    Case("dinov2", "vision transformer", "vision", (False,), True, True),
    *_no_cache("convolutional vision", "vision", "convnext"),
    *_no_cache(
        "convolutional vision",
        "vision",
        "resnet",
        "regnet",
        "efficientnet",
        "mobilenet_v2",
        "convnextv2",
        spatial=True,
    ),
    *_no_cache("windowed vision", "vision", "swin"),
    *_no_cache("windowed vision", "vision", "swinv2", spatial=True),
    *_no_cache(
        "hybrid vision", "vision", "mobilevit", "mobilevitv2", "segformer", "detr", spatial=True
    ),
    *_no_cache("text and image", "text_image", "clip"),
    *_no_cache("audio encoder", "audio", "wav2vec2", "hubert", "wavlm"),
    *_no_cache("state-space", "decoder", "mamba", "mamba2"),
    *_no_cache("hybrid", "decoder", "bamba"),
    # round 2: architectures not tried before
    *_decoders(
        "dense decoder",
        "gemma",
        "gemma3_text",
        "gpt_neo",
        "phi3",
        "olmo",
        "olmo3",
        "ctrl",
        "biogpt",
        "cohere2",
        "helium",
        "smollm3",
        "glm4",
        "exaone4",
    ),
    *_decoders("MoE decoder", "olmoe", "jetmoe"),
    *_no_cache("state-space", "decoder", "falcon_mamba"),
    *_no_cache("hybrid", "decoder", "recurrent_gemma", "zamba2", "jamba", "lfm2"),
    *_no_cache(
        "encoder",
        "encoder",
        "xlm_roberta",
        "modernbert",
        "big_bird",
        "longformer",
        "convbert",
        "mobilebert",
        "esm",
        "funnel",
        "roformer",
        "ernie",
        "nomic_bert",
        "xlnet",
    ),
    *(
        Case(name, "encoder-decoder (text)", "seq2seq")
        for name in ("mt5", "umt5", "longt5", "m2m_100", "blenderbot", "led", "prophetnet")
    ),
    Case("dinov2_with_registers", "vision transformer", "vision", (False,), True, True),
    *_no_cache("vision transformer", "vision", "hiera", "zoedepth"),
    *_no_cache("vision transformer", "vision", "depth_anything", spatial=True),
    *_no_cache("hybrid vision", "vision", "pvt_v2", "focalnet", spatial=True),
    *_no_cache("hybrid vision", "vision", "conditional_detr", "rt_detr", spatial=True),
    *_no_cache("audio encoder", "audio", "sew", "unispeech", "wav2vec2_conformer"),
    # round 3: architectures not tried before
    *_decoders(
        "dense decoder",
        "ministral",
        "arcee",
        "nemotron",
        "ernie4_5",
        "hunyuan_v1_dense",
        "seed_oss",
        "diffllama",
        "apertus",
    ),
    *_decoders("MoE decoder", "granitemoe", "phimoe", "deepseek_v2", "gpt_oss", "glm4_moe"),
    *_no_cache("hybrid", "decoder", "falcon_h1", "zamba", "granitemoehybrid"),
    *_no_cache(
        "encoder",
        "encoder",
        "mpnet",
        "camembert",
        "rembert",
        "squeezebert",
        "data2vec_text",
        "megatron_bert",
    ),
    *(
        Case(name, "encoder-decoder (text)", "seq2seq")
        for name in (
            "t5gemma",
            "plbart",
            "blenderbot_small",
            "pegasus_x",
            "bigbird_pegasus",
            "switch_transformers",
        )
    ),
    *_no_cache("vision transformer", "vision", "data2vec_vision", "vitdet"),
    *_no_cache("vision transformer", "vision", "dinov3_vit", spatial=True),
    *_no_cache("convolutional vision", "vision", "bit", "mobilenet_v1", spatial=True),
    *_no_cache("convolutional vision", "vision", "poolformer", "swiftformer", spatial=True),
    *_no_cache("hybrid vision", "vision", "cvt", "glpn", "upernet", spatial=True),
    *_no_cache("hybrid vision", "vision", "deformable_detr", "rt_detr_v2", spatial=True),
    *_no_cache("audio encoder", "audio", "data2vec_audio", "sew_d", "unispeech_sat"),
    *_no_cache("text and image", "text_image", "clipseg", "owlvit", "siglip"),
)
BY_NAME = {case.name: case for case in CASES}


def _cache_layout(model: Any, inputs: dict) -> list[list[tuple[int, ...]]]:
    """Per cache of the eager model's output on ``inputs`` (one for a decoder; self- and
    cross-attention for an encoder-decoder), per layer, the key and value shapes without
    batch: so a filled cache matches what the model itself writes (multi-head latent
    attention caches compressed keys of another width than its values)."""
    import torch

    with torch.no_grad():
        cache = model(**inputs, use_cache=True).past_key_values
    parts = [cache]
    if hasattr(cache, "cross_attention_cache"):
        parts = [cache.self_attention_cache, cache.cross_attention_cache]
    return [
        [(tuple(layer.keys.shape[1:]), tuple(layer.values.shape[1:])) for layer in part.layers]
        for part in parts
    ]


def _random_layers(layout: list, batch: int, length: int | None, generator: Any) -> tuple:
    """Random keys and values per layer of ``layout``, ``length`` positions (the traced
    length when None)."""
    import torch

    def tensor(shape: tuple) -> Any:
        heads, traced, dim = shape
        return torch.randn(
            batch, heads, traced if length is None else length, dim, generator=generator
        )

    keys = [tensor(k) for k, _ in layout]
    values = [tensor(v) for _, v in layout]
    return keys, values


def _filled_cache(model: Any, batch: int, past: int, generator: Any) -> Any:
    from patchport.torch import make_dynamic_cache

    probe = {"input_ids": _ones(1, 2)}
    keys, values = _random_layers(_cache_layout(model, probe)[0], batch, past, generator)
    text = model.config.get_text_config(decoder=True)
    return make_dynamic_cache(text, keys, values, full_sliding_layers=True)


def _ones(*shape: int) -> Any:
    import torch

    return torch.ones(*shape, dtype=torch.int64)


def _seq2seq_cache(model: Any, encoder: dict, batch: int, past: int, generator: Any) -> Any:
    """A decoder cache: self-attention over ``past`` tokens, cross-attention over the
    encoder's positions (as many as the model's own cache has for these inputs)."""
    from transformers import DynamicCache, EncoderDecoderCache

    probe = {**encoder, "decoder_input_ids": _ones(batch, 2)}
    own, cross = _cache_layout(model, probe)

    def filled(layout: list, length: int | None) -> Any:
        cache = DynamicCache()
        for index, (key, value) in enumerate(
            zip(*_random_layers(layout, batch, length, generator))
        ):
            cache.update(key, value, index)
        return cache

    return EncoderDecoderCache(filled(own, past), filled(cross, None))


def _encoder_inputs(model: Any, case: Case, batch: int, generator: Any) -> dict:
    """What an encoder-decoder's encoder reads, at a fixed length: 6 tokens; or the
    model's own audio input (Whisper's log-mel frames, Speech2Text's filterbank
    frames, Moonshine's raw samples)."""
    import torch

    if case.kind == "seq2seq":
        return {
            "input_ids": torch.randint(1, VOCAB, (batch, 6), generator=generator),
            "attention_mask": _ones(batch, 6),
        }
    config, name = model.config, model.main_input_name
    if name == "input_values":
        return {name: torch.randn(batch, 1600, generator=generator)}
    if hasattr(config, "num_mel_bins"):  # Whisper: (batch, mel bins, frames)
        shape = (batch, config.num_mel_bins, 2 * config.max_source_positions)
    else:  # Speech2Text: (batch, frames, features)
        shape = (batch, 40, config.input_feat_per_channel * config.input_channels)
    return {name: torch.randn(shape, generator=generator)}


def make_inputs(model: Any, case: Case, shape: tuple, cache: bool, seed: int) -> dict:
    """Keyword inputs of one case at one shape: (batch, seq, past) for text, (batch,) or
    (batch, height, width) for vision, (batch, samples) for audio."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    if case.kind == "vision":
        config = model.config
        size = getattr(config, "image_size", None)
        size = size[0] if isinstance(size, (list, tuple)) else size  # Hiera: [height, width]
        size = size if isinstance(size, int) else 32
        height, width = shape[1:] if case.spatial else (size, size)
        channels = getattr(config, "num_channels", 3)
        return {"pixel_values": torch.randn(shape[0], channels, height, width, generator=generator)}
    if case.kind == "audio":
        return {"input_values": torch.randn(*shape, generator=generator)}
    batch, seq, past = shape
    past = past if cache else 0
    tokens = torch.randint(1, VOCAB, (batch, seq), generator=generator)
    if case.kind == "encoder":
        return {"input_ids": tokens, "attention_mask": _ones(batch, seq)}
    if case.kind == "text_image":  # as many images as texts
        size = model.config.vision_config.image_size
        image = torch.randn(batch, 3, size, size, generator=generator)
        return {"input_ids": tokens, "attention_mask": _ones(batch, seq), "pixel_values": image}
    if case.kind in ("seq2seq", "speech2seq"):
        encoder = _encoder_inputs(model, case, batch, generator)
        inputs = {**encoder, "decoder_input_ids": tokens}
        if cache:
            inputs["cache"] = _seq2seq_cache(model, encoder, batch, past, generator)
        else:
            inputs["use_cache"] = False
        return inputs
    inputs = {"input_ids": tokens, "attention_mask": _ones(batch, seq + past)}
    if cache:
        inputs["cache"] = _filled_cache(model, batch, past, generator)
    else:
        inputs["use_cache"] = False
    return inputs


def _decoder_layers(model: Any) -> int:
    """Decoder layers, read from the model's own config (BART's ``get_text_config``
    answers with a config of default sizes)."""
    config = model.config
    for name in ("num_decoder_layers", "decoder_layers", "decoder_num_hidden_layers"):
        if isinstance(getattr(config, name, None), int):
            return getattr(config, name)
    return config.get_text_config(decoder=True).num_hidden_layers


def dynamic_shapes(model: Any, case: Case, cache: bool) -> dict:
    """batch, seq and past (images: height and width; audio: samples) dynamic, named for
    the report."""
    if case.kind == "vision":
        return {
            "pixel_values": {0: "batch", 2: "height", 3: "width"} if case.spatial else {0: "batch"}
        }
    if case.kind == "audio":
        return {"input_values": {0: "batch", 1: "samples"}}
    if case.kind in ("encoder", "text_image"):
        shapes = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}}
        if case.kind == "text_image":
            shapes["pixel_values"] = {0: "batch"}
        return shapes
    if case.kind in ("seq2seq", "speech2seq"):
        shapes: dict[str, Any] = {
            name: {0: "batch"} for name in _encoder_inputs(model, case, 1, None)
        }
        shapes["decoder_input_ids"] = {0: "batch", 1: "seq"}
        if cache:
            layers = _decoder_layers(model)
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
        per_layer = [{0: "batch", 2: "past"} for _ in range(_decoder_layers(model))]
        shapes["cache"] = [per_layer, [dict(d) for d in per_layer]]
    else:
        shapes["use_cache"] = None
    return shapes


def _shapes(case: Case) -> tuple[tuple, tuple]:
    if case.kind == "vision":
        if not case.spatial:
            return VISION_TRACED, VISION_NEW
        if case.configured_size:
            return CONFIGURED_SIZE_TRACED, CONFIGURED_SIZE_NEW
        return SPATIAL_TRACED, SPATIAL_NEW
    if case.kind == "audio":
        return AUDIO_TRACED, AUDIO_NEW
    return TRACED, NEW_SHAPES


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
    try:
        report = check_program(
            program, model, (), traced, dynamic_shapes=named, check_shapes=checks
        )
    except Exception as exc:  # the eager model left unusable by the export (BigBird)
        return {
            "exported": False,
            "error": f"after export: {_short(exc)}",
            "seconds": _since(start),
        }
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
    # patchport gets a model of its own, never run before, as a user's would be: state the
    # first forward leaves (transformers' output hooks) is then made under patchport
    model = build_model(name)
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
