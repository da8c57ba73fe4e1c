"""One tiny model per architecture family through ``patchport.torch.export``: the program is
checked on batch 1 and (for decoders) the decode step, and is never narrower than plain
torch's. The whole corpus, with ONNX, is ``bench/export_corpus.py``."""

from __future__ import annotations

from functools import partial

import pytest
import torch

transformers = pytest.importorskip("transformers")

from patchport.torch import ExportFailedError, export, make_dynamic_cache, to_onnx  # noqa: E402

VOCAB = 64
ONE_LAYER = dict(
    hidden_size=32,
    intermediate_size=64,
    num_hidden_layers=1,
    num_attention_heads=4,
    num_key_value_heads=2,
    vocab_size=VOCAB,
    max_position_embeddings=32,
)


def _tokens(batch: int, seq: int, seed: int) -> torch.Tensor:
    return torch.randint(1, VOCAB, (batch, seq), generator=torch.Generator().manual_seed(seed))


def _decoder_inputs(model, batch: int, seq: int, past: int, seed: int) -> dict:
    config = model.config
    dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    shape = (batch, config.num_key_value_heads, past, dim)
    generator = torch.Generator().manual_seed(seed)
    keys = [torch.randn(shape, generator=generator) for _ in range(config.num_hidden_layers)]
    values = [torch.randn(shape, generator=generator) for _ in range(config.num_hidden_layers)]
    return {
        "input_ids": _tokens(batch, seq, seed),
        "attention_mask": torch.ones(batch, past + seq, dtype=torch.int64),
        "cache": make_dynamic_cache(config, keys, values),
    }


def _decoder_shapes() -> dict:
    """Dynamic axes of a one-layer decoder's inputs with a cache."""
    return {
        "input_ids": {0: "batch", 1: "seq"},
        "attention_mask": {0: "batch", 1: "past+seq"},
        "cache": [[{0: "batch", 2: "past"}], [{0: "batch", 2: "past"}]],
    }


def _one_layer_inputs(config, key: tuple, value: tuple, batch, seq, past, seed) -> dict:
    """Token ids, a full mask and a one-layer cache whose keys are (batch, key[0], past,
    key[1]) and values (batch, value[0], past, value[1]) (heads, width)."""
    generator = torch.Generator().manual_seed(seed)
    keys = [torch.randn(batch, key[0], past, key[1], generator=generator)]
    values = [torch.randn(batch, value[0], past, value[1], generator=generator)]
    mask = torch.ones(batch, past + seq, dtype=torch.int64)
    cache = make_dynamic_cache(config, keys, values)
    return {"input_ids": _tokens(batch, seq, seed), "attention_mask": mask, "cache": cache}


def _decoder_case(config):
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(config).eval()
    shapes = _decoder_shapes()
    traced = _decoder_inputs(model, 2, 5, 7, seed=1)
    checks = [_decoder_inputs(model, 2, 1, 12, seed=2), _decoder_inputs(model, 1, 4, 3, seed=3)]
    return model, traced, shapes, checks


def dense_decoder_with_cache():
    return _decoder_case(transformers.LlamaConfig(**ONE_LAYER))


def alibi_decoder_with_cache():
    """Bloom: ALiBi attention, its query a strided view of the fused projection; checked
    on the decode step from a one-token past (mask length 2)."""
    torch.manual_seed(0)
    config = transformers.BloomConfig(hidden_size=32, n_layer=1, n_head=4, vocab_size=VOCAB)
    model = transformers.BloomForCausalLM(config).eval()

    heads = (config.n_head, config.hidden_size // config.n_head)
    inputs = partial(_one_layer_inputs, config, heads, heads)

    shapes = _decoder_shapes()
    checks = [inputs(1, 1, 1, seed=2), inputs(2, 1, 12, seed=3), inputs(1, 4, 3, seed=4)]
    return model, inputs(2, 5, 7, seed=1), shapes, checks


def local_attention_decoder_with_cache():
    """GPT-Neo: global and local (windowed) layers masked by slicing a causal buffer, heads
    split and merged as permuted views; checked on the decode step from a one-token past
    (mask length 2) and past the window of 4."""
    torch.manual_seed(0)
    config = transformers.GPTNeoConfig(
        hidden_size=32,
        num_layers=2,
        num_heads=4,
        attention_types=[[["global", "local"], 1]],
        window_size=4,
        vocab_size=VOCAB,
        max_position_embeddings=32,
        intermediate_size=64,
    )
    model = transformers.GPTNeoForCausalLM(config).eval()

    def inputs(batch: int, seq: int, past: int, seed: int) -> dict:
        generator = torch.Generator().manual_seed(seed)
        shape = (batch, config.num_heads, past, config.hidden_size // config.num_heads)
        keys = [torch.randn(shape, generator=generator) for _ in range(2)]
        values = [torch.randn(shape, generator=generator) for _ in range(2)]
        mask = torch.ones(batch, past + seq, dtype=torch.int64)
        cache = make_dynamic_cache(config, keys, values)
        return {"input_ids": _tokens(batch, seq, seed), "attention_mask": mask, "cache": cache}

    per_layer = [{0: "batch", 2: "past"}, {0: "batch", 2: "past"}]
    shapes = {**_decoder_shapes(), "cache": [per_layer, [dict(d) for d in per_layer]]}
    checks = [inputs(1, 1, 1, seed=2), inputs(2, 1, 12, seed=3), inputs(1, 4, 3, seed=4)]
    return model, inputs(2, 5, 7, seed=1), shapes, checks


def latent_attention_decoder_with_cache():
    """DeepSeek-V3: multi-head latent attention, whose cache holds the compressed keys
    (one head of kv_lora_rank) and the rotary part; checked on the decode step from a
    one-token past."""
    torch.manual_seed(0)
    config = transformers.DeepseekV3Config(
        **{**ONE_LAYER, "num_key_value_heads": 4},
        first_k_dense_replace=1,
        kv_lora_rank=16,
        q_lora_rank=24,
        qk_rope_head_dim=4,
        qk_nope_head_dim=8,
        v_head_dim=8,
    )
    model = transformers.AutoModelForCausalLM.from_config(config).eval()

    # the compressed keys and the rotary part, one head each
    keys, rotary = (1, config.kv_lora_rank), (1, config.qk_rope_head_dim)
    inputs = partial(_one_layer_inputs, config, keys, rotary)

    shapes = _decoder_shapes()
    checks = [inputs(1, 1, 1, seed=2), inputs(2, 1, 12, seed=3), inputs(1, 4, 3, seed=4)]
    return model, inputs(2, 5, 7, seed=1), shapes, checks


def sinusoidal_decoder_with_cache():
    """XGLM: sinusoidal positions from a table of 16 + 2 rows that eager grows when a
    longer sequence comes; checked past it (a past of 20, a prompt of 24)."""
    torch.manual_seed(0)
    config = transformers.XGLMConfig(
        d_model=32,
        num_layers=1,
        attention_heads=4,
        ffn_dim=64,
        vocab_size=VOCAB,
        max_position_embeddings=16,
        pad_token_id=0,
    )
    model = transformers.XGLMForCausalLM(config).eval()

    heads = (config.attention_heads, config.d_model // config.attention_heads)
    inputs = partial(_one_layer_inputs, config, heads, heads)

    shapes = _decoder_shapes()
    checks = [inputs(1, 1, 20, seed=2), inputs(2, 24, 3, seed=3), inputs(1, 4, 3, seed=4)]
    return model, inputs(2, 5, 7, seed=1), shapes, checks


def moe_decoder_with_cache():
    config = transformers.MixtralConfig(**ONE_LAYER, num_local_experts=4, num_experts_per_tok=2)
    return _decoder_case(config)


def encoder():
    torch.manual_seed(0)
    config = transformers.BertConfig(
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=4,
        intermediate_size=64,
        vocab_size=VOCAB,
    )
    model = transformers.BertModel(config).eval()

    def inputs(batch, seq, seed):
        mask = torch.ones(batch, seq, dtype=torch.int64)
        return {"input_ids": _tokens(batch, seq, seed), "attention_mask": mask}

    shapes = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}}
    return model, inputs(2, 5, 1), shapes, [inputs(1, 5, 2), inputs(2, 1, 3)]


def _cross_cache(batch, heads, past, encoded, dim, seed):
    generator = torch.Generator().manual_seed(seed)

    def filled(length):
        cache = transformers.DynamicCache()
        shape = (batch, heads, length, dim)
        key, value = (
            torch.randn(shape, generator=generator),
            torch.randn(shape, generator=generator),
        )
        cache.update(key, value, 0)
        return cache

    return transformers.EncoderDecoderCache(filled(past), filled(encoded))


def _seq2seq_shapes(encoder_input: str) -> dict:
    own, cross = [{0: "batch", 2: "past"}], [{0: "batch"}]
    return {
        encoder_input: {0: "batch"},
        "decoder_input_ids": {0: "batch", 1: "seq"},
        "cache": [[own, [dict(own[0])]], [cross, [dict(cross[0])]]],
    }


def text_encoder_decoder_with_cache():
    torch.manual_seed(0)
    config = transformers.T5Config(
        d_model=32, d_kv=8, d_ff=64, num_layers=1, num_heads=4, vocab_size=VOCAB
    )
    model = transformers.T5ForConditionalGeneration(config).eval()

    def inputs(batch, seq, past, seed):
        return {
            "input_ids": _tokens(batch, 6, seed),
            "decoder_input_ids": _tokens(batch, seq, seed + 1),
            "cache": _cross_cache(batch, 4, past, 6, 8, seed),
        }

    checks = [inputs(2, 1, 9, 2), inputs(1, 3, 2, 3)]
    return model, inputs(2, 4, 5, 1), _seq2seq_shapes("input_ids"), checks


def speech_encoder_decoder_with_cache():
    torch.manual_seed(0)
    config = transformers.WhisperConfig(
        d_model=32,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        num_mel_bins=8,
        max_source_positions=16,
        vocab_size=VOCAB,
        pad_token_id=0,
    )
    model = transformers.WhisperForConditionalGeneration(config).eval()

    def inputs(batch, seq, past, seed):
        generator = torch.Generator().manual_seed(seed)
        return {
            "input_features": torch.randn(batch, 8, 32, generator=generator),
            "decoder_input_ids": _tokens(batch, seq, seed),
            "cache": _cross_cache(batch, 4, past, 16, 8, seed),
        }

    checks = [inputs(2, 1, 9, 2), inputs(1, 3, 2, 3)]
    return model, inputs(2, 4, 5, 1), _seq2seq_shapes("input_features"), checks


def _vision_case(model):
    size = model.config.image_size

    def inputs(batch, seed):
        generator = torch.Generator().manual_seed(seed)
        return {"pixel_values": torch.randn(batch, 3, size, size, generator=generator)}

    return model, inputs(2, 1), {"pixel_values": {0: "batch"}}, [inputs(1, 2), inputs(3, 3)]


def vision_transformer():
    torch.manual_seed(0)
    config = transformers.ViTConfig(
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=4,
        intermediate_size=64,
        image_size=32,
        patch_size=8,
    )
    return _vision_case(transformers.ViTModel(config).eval())


def convolutional_vision():
    torch.manual_seed(0)
    config = transformers.ConvNextConfig(
        hidden_sizes=[8, 16], depths=[1, 1], num_stages=2, image_size=32, num_labels=3
    )
    return _vision_case(transformers.ConvNextForImageClassification(config).eval())


def windowed_vision():
    torch.manual_seed(0)
    config = transformers.SwinConfig(
        image_size=32, patch_size=4, embed_dim=16, depths=[1, 1], num_heads=[2, 2], window_size=4
    )
    return _vision_case(transformers.SwinForImageClassification(config).eval())


def _state_space_case(model, traced_seq: int = 5, check_seqs=(1, 3)):
    """Keyword inputs without a cache (``use_cache=False``): batch and seq dynamic."""

    def inputs(batch, seq, seed):
        mask = torch.ones(batch, seq, dtype=torch.int64)
        return {"input_ids": _tokens(batch, seq, seed), "attention_mask": mask, "use_cache": False}

    shapes = {
        "input_ids": {0: "batch", 1: "seq"},
        "attention_mask": {0: "batch", 1: "seq"},
        "use_cache": None,
    }
    checks = [inputs(1, traced_seq, 2)] + [inputs(2, s, 3 + s) for s in check_seqs]
    return model, inputs(2, traced_seq, 1), shapes, checks


def state_space(traced_seq: int = 5, check_seqs=(1, 3)):
    """Mamba: its CPU scan is patched to a closed form, so seq stays dynamic."""
    torch.manual_seed(0)
    config = transformers.MambaConfig(
        hidden_size=32, state_size=4, num_hidden_layers=1, vocab_size=VOCAB, time_step_rank=4
    )
    model = transformers.MambaForCausalLM(config).eval()
    return _state_space_case(model, traced_seq, check_seqs)


def decoder_taking_use_cache_through_kwargs():
    """GraniteMoE takes ``use_cache`` through ``**kwargs``: torch 2.13 refuses its
    ``dynamic_shapes`` flat and fails on them nested under ``kwargs``."""
    torch.manual_seed(0)
    config = transformers.GraniteMoeConfig(**ONE_LAYER, num_local_experts=4, num_experts_per_tok=2)
    return _state_space_case(transformers.GraniteMoeForCausalLM(config).eval())


FAMILIES = {
    "dense decoder + cache": dense_decoder_with_cache,
    "alibi decoder + cache": alibi_decoder_with_cache,
    "local-attention decoder + cache": local_attention_decoder_with_cache,
    "latent-attention decoder + cache": latent_attention_decoder_with_cache,
    "sinusoidal-table decoder + cache": sinusoidal_decoder_with_cache,
    "MoE decoder + cache": moe_decoder_with_cache,
    "encoder": encoder,
    "text encoder-decoder + cache": text_encoder_decoder_with_cache,
    "speech encoder-decoder + cache": speech_encoder_decoder_with_cache,
    "vision transformer": vision_transformer,
    "convolutional vision": convolutional_vision,
    "windowed vision": windowed_vision,
    "state-space": state_space,
    "decoder with options in **kwargs": decoder_taking_use_cache_through_kwargs,
}


@pytest.mark.slow
@pytest.mark.parametrize("family", list(FAMILIES))
def test_family_exports_right_on_batch_1_and_decode_step(family):
    model, traced, shapes, checks = FAMILIES[family]()
    program, report = export(
        model, (), traced, dynamic_shapes=shapes, check_shapes=checks, allow_narrowing=True
    )
    plain = report.attempts[0]
    assert plain.configuration == "plain"
    if plain.report is not None and plain.report.is_general:
        assert report.is_general, report.to_text()  # never narrower than plain torch
    assert report.wrong_values == 0, report.to_text()
    assert report.is_general, report.to_text()


@pytest.mark.slow
def test_state_space_scan_without_its_patch_is_refused_not_narrowed():
    # Without the scan patch, Mamba's CPU scan loops over the sequence in Python: plain
    # torch refuses a dynamic length, and so must every patched configuration (no program
    # fixed to the traced length)
    from patchport.torch import TransformersPatch

    model, traced, shapes, _ = state_space()
    no_scan = [group for group in TransformersPatch if group is not TransformersPatch.SCAN]
    with pytest.raises(ExportFailedError) as caught:
        export(model, (), traced, dynamic_shapes=shapes, patch_transformers=no_scan)
    assert all(attempt.report is None for attempt in caught.value.attempts)
    assert "Constraints violated" in str(caught.value)
    assert "cannot keep seq dynamic" in str(caught.value)  # named as the user named it
    # one attempt: the loop that fixed seq is named, and no patch replaces it
    assert len(caught.value.attempts) == 1, str(caught.value)
    assert "Python loop" in str(caught.value) and "for index in range(seq_len)" in str(caught.value)
    assert "modeling_mamba.py" in str(caught.value) and "static in dynamic_shapes" in str(
        caught.value
    )
    with pytest.raises(ExportFailedError, match="Python loop"):  # to_onnx says the same
        to_onnx(model, (), traced, dynamic_shapes=shapes, patch_transformers=no_scan)
