"""The tiny models of the export corpus (``bench/export_corpus.py``): one builder per
architecture, each a real transformers class built from a config with random weights (no
download), 1-2 layers and hidden sizes of 16-64. Token ids of the configs lie inside the
vocabulary, as in a real checkpoint."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

VOCAB = 100
# bos / eos / pad inside the vocabulary (some configs default to ids of a 50k+ vocabulary)
TOKENS = dict(bos_token_id=1, eos_token_id=2, pad_token_id=0)

BUILDERS: dict[str, Callable[[Any], Any]] = {}


def builder(name: str) -> Callable[[Callable[[Any], Any]], Callable[[Any], Any]]:
    """Register ``function(transformers) -> model`` as the builder of ``name``."""

    def register(function: Callable[[Any], Any]) -> Callable[[Any], Any]:
        BUILDERS[name] = function
        return function

    return register


def build_model(name: str) -> Any:
    """A tiny random model of ``name`` in eval mode, seeded so every run builds the same."""
    import torch
    import transformers

    if name not in BUILDERS:
        raise ValueError(f"unknown model {name!r}; choose from {list(BUILDERS)}")
    torch.manual_seed(0)
    return BUILDERS[name](transformers).eval()


def _common() -> dict[str, Any]:
    return dict(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=VOCAB,
        max_position_embeddings=16,
    )


def _lm(tr: Any, config: Any) -> Any:
    return tr.AutoModelForCausalLM.from_config(config)


# ---- dense decoders ----------------------------------------------------------------------


@builder("llama")
def _llama(tr: Any) -> Any:
    return _lm(tr, tr.LlamaConfig(**_common()))


@builder("llama_dynamic_rope")
def _llama_dynamic_rope(tr: Any) -> Any:
    rope = {"rope_type": "dynamic", "factor": 2.0, "rope_theta": 10000.0}
    return _lm(tr, tr.LlamaConfig(**_common(), rope_parameters=rope))


@builder("qwen2")
def _qwen2(tr: Any) -> Any:
    return _lm(tr, tr.Qwen2Config(**_common()))


@builder("mistral")
def _mistral(tr: Any) -> Any:
    return _lm(tr, tr.MistralConfig(**_common(), sliding_window=None))


@builder("phi3_longrope")
def _phi3_longrope(tr: Any) -> Any:
    common = {**_common(), "max_position_embeddings": 64}
    rope = {
        "rope_type": "longrope",
        "rope_theta": 10000.0,
        "short_factor": [1.0, 1.1, 1.2, 1.3],
        "long_factor": [2.0, 2.5, 3.0, 4.0],
        "original_max_position_embeddings": 16,
    }
    return _lm(tr, tr.Phi3Config(**common, rope_parameters=rope, pad_token_id=0))


@builder("gpt2")
def _gpt2(tr: Any) -> Any:
    config = tr.GPT2Config(
        n_embd=32, n_layer=2, n_head=4, vocab_size=VOCAB, n_positions=64, bos_token_id=0
    )
    return _lm(tr, config)


@builder("falcon")
def _falcon(tr: Any) -> Any:
    config = tr.FalconConfig(
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        vocab_size=VOCAB,
        new_decoder_architecture=True,
        num_kv_heads=2,
    )
    return _lm(tr, config)


@builder("gemma2")
def _gemma2(tr: Any) -> Any:
    return _lm(tr, tr.Gemma2Config(**_common(), head_dim=8, sliding_window=8))


@builder("gemma3")
def _gemma3(tr: Any) -> Any:
    config = tr.Gemma3TextConfig(
        **_common(), head_dim=8, sliding_window=8, layer_types=["sliding_attention"] * 2
    )
    return _lm(tr, config)


@builder("gpt_neox")
def _gpt_neox(tr: Any) -> Any:
    common = {k: v for k, v in _common().items() if k != "num_key_value_heads"}
    return _lm(tr, tr.GPTNeoXConfig(**common, rotary_pct=0.5, **TOKENS))


@builder("gptj")
def _gptj(tr: Any) -> Any:
    config = tr.GPTJConfig(
        n_embd=32, n_layer=2, n_head=4, vocab_size=VOCAB, n_positions=64, rotary_dim=4, **TOKENS
    )
    return _lm(tr, config)


@builder("opt")
def _opt(tr: Any) -> Any:
    config = tr.OPTConfig(
        hidden_size=32,
        ffn_dim=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        vocab_size=VOCAB,
        max_position_embeddings=64,
        word_embed_proj_dim=32,
        **TOKENS,
    )
    return _lm(tr, config)


@builder("bloom")
def _bloom(tr: Any) -> Any:
    return _lm(tr, tr.BloomConfig(hidden_size=32, n_layer=2, n_head=4, vocab_size=VOCAB, **TOKENS))


@builder("phi")
def _phi(tr: Any) -> Any:
    return _lm(tr, tr.PhiConfig(**_common(), partial_rotary_factor=0.5, **TOKENS))


@builder("qwen3")
def _qwen3(tr: Any) -> Any:
    return _lm(tr, tr.Qwen3Config(**_common(), head_dim=8, **TOKENS))


@builder("stablelm")
def _stablelm(tr: Any) -> Any:
    return _lm(tr, tr.StableLmConfig(**_common(), partial_rotary_factor=0.5, **TOKENS))


@builder("cohere")
def _cohere(tr: Any) -> Any:
    return _lm(tr, tr.CohereConfig(**_common(), **TOKENS))


@builder("olmo2")
def _olmo2(tr: Any) -> Any:
    return _lm(tr, tr.Olmo2Config(**_common(), **TOKENS))


@builder("granite")
def _granite(tr: Any) -> Any:
    return _lm(tr, tr.GraniteConfig(**_common(), **TOKENS))


@builder("glm")
def _glm(tr: Any) -> Any:
    return _lm(tr, tr.GlmConfig(**_common(), head_dim=8, **TOKENS))


@builder("starcoder2")
def _starcoder2(tr: Any) -> Any:
    return _lm(tr, tr.Starcoder2Config(**_common(), sliding_window=None, **TOKENS))


@builder("gpt_bigcode")
def _gpt_bigcode(tr: Any) -> Any:
    """StarCoder's multi-query attention (one key/value head, fused with the query)."""
    config = tr.GPTBigCodeConfig(
        n_embd=32, n_layer=2, n_head=4, vocab_size=VOCAB, n_positions=64, multi_query=True, **TOKENS
    )
    return _lm(tr, config)


@builder("codegen")
def _codegen(tr: Any) -> Any:
    config = tr.CodeGenConfig(
        n_embd=32,
        n_layer=2,
        n_head=4,
        vocab_size=VOCAB,
        n_positions=64,
        n_ctx=64,
        rotary_dim=4,
        **TOKENS,
    )
    return _lm(tr, config)


@builder("mpt")
def _mpt(tr: Any) -> Any:
    """ALiBi attention, as Bloom, in MosaicML's layout."""
    config = tr.MptConfig(
        d_model=32, n_layers=2, n_heads=4, vocab_size=VOCAB, max_seq_len=64, **TOKENS
    )
    return _lm(tr, config)


@builder("xglm")
def _xglm(tr: Any) -> Any:
    config = tr.XGLMConfig(
        d_model=32,
        num_layers=2,
        attention_heads=4,
        ffn_dim=64,
        vocab_size=VOCAB,
        max_position_embeddings=64,
        **TOKENS,
    )
    return _lm(tr, config)


@builder("persimmon")
def _persimmon(tr: Any) -> Any:
    common = {k: v for k, v in _common().items() if k != "num_key_value_heads"}
    return _lm(tr, tr.PersimmonConfig(**{**common, "max_position_embeddings": 64}, **TOKENS))


# ---- mixture-of-experts decoders ---------------------------------------------------------


@builder("mixtral")
def _mixtral(tr: Any) -> Any:
    return _lm(tr, tr.MixtralConfig(**_common(), num_local_experts=4, num_experts_per_tok=2))


@builder("qwen2_moe")
def _qwen2_moe(tr: Any) -> Any:
    config = tr.Qwen2MoeConfig(
        **_common(),
        num_experts=4,
        num_experts_per_tok=2,
        moe_intermediate_size=32,
        shared_expert_intermediate_size=32,
    )
    return _lm(tr, config)


@builder("qwen3_moe")
def _qwen3_moe(tr: Any) -> Any:
    config = tr.Qwen3MoeConfig(
        **_common(),
        head_dim=8,
        num_experts=4,
        num_experts_per_tok=2,
        moe_intermediate_size=32,
        **TOKENS,
    )
    return _lm(tr, config)


@builder("deepseek_v3")
def _deepseek_v3(tr: Any) -> Any:
    """Multi-head latent attention (its cache holds the compressed keys and the rotary
    part, not per-head keys/values) and a routed MoE after one dense layer."""
    config = tr.DeepseekV3Config(
        **{**_common(), "num_key_value_heads": 4},
        moe_intermediate_size=16,
        n_routed_experts=4,
        num_experts_per_tok=2,
        n_group=2,
        topk_group=1,
        first_k_dense_replace=1,
        kv_lora_rank=16,
        q_lora_rank=24,
        qk_rope_head_dim=4,
        qk_nope_head_dim=8,
        v_head_dim=8,
        **TOKENS,
    )
    return _lm(tr, config)


# ---- encoders ----------------------------------------------------------------------------


def _encoder_common() -> dict[str, Any]:
    return dict(
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        vocab_size=VOCAB,
        max_position_embeddings=64,
    )


@builder("bert")
def _bert(tr: Any) -> Any:
    return tr.BertModel(tr.BertConfig(**_encoder_common()))


@builder("distilbert")
def _distilbert(tr: Any) -> Any:
    config = tr.DistilBertConfig(
        dim=32, n_layers=2, n_heads=4, hidden_dim=64, vocab_size=VOCAB, max_position_embeddings=64
    )
    return tr.DistilBertModel(config)


@builder("roberta")
def _roberta(tr: Any) -> Any:
    return tr.RobertaModel(tr.RobertaConfig(**_encoder_common(), pad_token_id=0))


@builder("deberta_v2")
def _deberta_v2(tr: Any) -> Any:
    config = tr.DebertaV2Config(
        **_encoder_common(),
        relative_attention=True,
        position_buckets=8,
        pos_att_type=["p2c", "c2p"],
        max_relative_positions=16,
    )
    return tr.DebertaV2Model(config)


@builder("albert")
def _albert(tr: Any) -> Any:
    return tr.AlbertModel(tr.AlbertConfig(**_encoder_common(), embedding_size=16))


@builder("electra")
def _electra(tr: Any) -> Any:
    return tr.ElectraModel(tr.ElectraConfig(**_encoder_common(), embedding_size=16))


@builder("clip_text")
def _clip_text(tr: Any) -> Any:
    config = tr.CLIPTextConfig(
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        vocab_size=VOCAB,
        max_position_embeddings=64,
        **TOKENS,
    )
    return tr.CLIPTextModel(config)


# ---- encoder-decoders --------------------------------------------------------------------


@builder("t5")
def _t5(tr: Any) -> Any:
    config = tr.T5Config(
        d_model=32,
        d_kv=8,
        d_ff=64,
        num_layers=2,
        num_heads=4,
        vocab_size=VOCAB,
        decoder_start_token_id=0,
    )
    return tr.T5ForConditionalGeneration(config)


def _bart_like() -> dict[str, Any]:
    return dict(
        d_model=32,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        vocab_size=VOCAB,
        max_position_embeddings=64,
        decoder_start_token_id=2,
        **TOKENS,
    )


@builder("bart")
def _bart(tr: Any) -> Any:
    return tr.BartForConditionalGeneration(tr.BartConfig(**_bart_like()))


@builder("mbart")
def _mbart(tr: Any) -> Any:
    return tr.MBartForConditionalGeneration(tr.MBartConfig(**_bart_like()))


@builder("marian")
def _marian(tr: Any) -> Any:
    return tr.MarianMTModel(tr.MarianConfig(**{**_bart_like(), "decoder_start_token_id": 0}))


@builder("pegasus")
def _pegasus(tr: Any) -> Any:
    config = tr.PegasusConfig(**{**_bart_like(), "decoder_start_token_id": 0})
    return tr.PegasusForConditionalGeneration(config)


@builder("whisper")
def _whisper(tr: Any) -> Any:
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
    return tr.WhisperForConditionalGeneration(config)


@builder("speech2text")
def _speech2text(tr: Any) -> Any:
    config = tr.Speech2TextConfig(
        **{k: v for k, v in _bart_like().items() if k != "max_position_embeddings"},
        max_source_positions=64,
        max_target_positions=64,
        input_feat_per_channel=8,
        conv_channels=16,
        num_conv_layers=2,
        input_channels=1,
    )
    return tr.Speech2TextForConditionalGeneration(config)


@builder("moonshine")
def _moonshine(tr: Any) -> Any:
    config = tr.MoonshineConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        intermediate_size=64,
        encoder_num_hidden_layers=2,
        decoder_num_hidden_layers=2,
        encoder_num_attention_heads=4,
        decoder_num_attention_heads=4,
        decoder_start_token_id=1,
        **TOKENS,
    )
    return tr.MoonshineForConditionalGeneration(config)


# ---- vision ------------------------------------------------------------------------------


def _vit_like() -> dict[str, Any]:
    return dict(
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        image_size=32,
        patch_size=8,
    )


@builder("vit")
def _vit(tr: Any) -> Any:
    return tr.ViTModel(tr.ViTConfig(**_vit_like()))


@builder("siglip_vision")
def _siglip_vision(tr: Any) -> Any:
    return tr.SiglipVisionModel(tr.SiglipVisionConfig(**_vit_like()))


@builder("clip_vision")
def _clip_vision(tr: Any) -> Any:
    return tr.CLIPVisionModel(tr.CLIPVisionConfig(**_vit_like()))


@builder("deit")
def _deit(tr: Any) -> Any:
    return tr.DeiTForImageClassificationWithTeacher(tr.DeiTConfig(**_vit_like(), num_labels=3))


@builder("beit")
def _beit(tr: Any) -> Any:
    return tr.BeitModel(tr.BeitConfig(**_vit_like(), use_relative_position_bias=True))


@builder("dinov2")
def _dinov2(tr: Any) -> Any:
    """Interpolates its position embeddings to the image: any size of 8-pixel patches."""
    return tr.Dinov2Model(tr.Dinov2Config(**_vit_like()))


@builder("convnext")
def _convnext(tr: Any) -> Any:
    config = tr.ConvNextConfig(
        hidden_sizes=[8, 16], depths=[1, 1], num_stages=2, image_size=32, num_labels=3
    )
    return tr.ConvNextForImageClassification(config)


@builder("swin")
def _swin(tr: Any) -> Any:
    config = tr.SwinConfig(
        image_size=32,
        patch_size=4,
        embed_dim=16,
        depths=[1, 1],
        num_heads=[2, 2],
        window_size=4,
        num_labels=3,
    )
    return tr.SwinForImageClassification(config)


def _resnet_config(tr: Any, **extra: Any) -> Any:
    return tr.ResNetConfig(
        embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1], layer_type="basic", **extra
    )


@builder("resnet")
def _resnet(tr: Any) -> Any:
    return tr.ResNetForImageClassification(_resnet_config(tr, num_labels=3))


@builder("regnet")
def _regnet(tr: Any) -> Any:
    config = tr.RegNetConfig(
        embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1], groups_width=8, num_labels=3
    )
    return tr.RegNetForImageClassification(config)


@builder("efficientnet")
def _efficientnet(tr: Any) -> Any:
    config = tr.EfficientNetConfig(
        image_size=32, width_coefficient=0.1, depth_coefficient=0.1, hidden_dim=128, num_labels=3
    )
    return tr.EfficientNetForImageClassification(config)


@builder("mobilevit")
def _mobilevit(tr: Any) -> Any:
    config = tr.MobileViTConfig(
        image_size=32,
        hidden_sizes=[16, 24, 32],
        neck_hidden_sizes=[8, 8, 16, 16, 24, 32, 64],
        num_attention_heads=2,
        num_labels=3,
    )
    return tr.MobileViTForImageClassification(config)


@builder("segformer")
def _segformer(tr: Any) -> Any:
    config = tr.SegformerConfig(
        num_encoder_blocks=2,
        depths=[1, 1],
        sr_ratios=[2, 1],
        hidden_sizes=[16, 32],
        num_attention_heads=[1, 2],
        patch_sizes=[7, 3],
        strides=[4, 2],
        mlp_ratios=[2, 2],
        decoder_hidden_size=32,
        num_labels=3,
    )
    return tr.SegformerForSemanticSegmentation(config)


@builder("detr")
def _detr(tr: Any) -> Any:
    """DETR on transformers' own ResNet backbone (no timm)."""
    config = tr.DetrConfig(
        use_timm_backbone=False,
        use_pretrained_backbone=False,
        backbone_config=_resnet_config(tr, out_features=["stage2"]),
        d_model=32,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        num_queries=5,
        num_labels=3,
    )
    return tr.DetrForObjectDetection(config)


@builder("mobilenet_v2")
def _mobilenet_v2(tr: Any) -> Any:
    config = tr.MobileNetV2Config(image_size=32, depth_multiplier=0.25, num_labels=3)
    return tr.MobileNetV2ForImageClassification(config)


@builder("mobilevitv2")
def _mobilevitv2(tr: Any) -> Any:
    """Patches unfolded with ``F.unfold`` / ``F.fold`` (MobileViT resizes instead)."""
    config = tr.MobileViTV2Config(image_size=32, width_multiplier=0.25, num_labels=3)
    return tr.MobileViTV2ForImageClassification(config)


@builder("convnextv2")
def _convnextv2(tr: Any) -> Any:
    config = tr.ConvNextV2Config(
        hidden_sizes=[8, 16], depths=[1, 1], num_stages=2, image_size=32, num_labels=3
    )
    return tr.ConvNextV2ForImageClassification(config)


@builder("swinv2")
def _swinv2(tr: Any) -> Any:
    config = tr.Swinv2Config(
        image_size=32,
        patch_size=4,
        embed_dim=16,
        depths=[1, 1],
        num_heads=[2, 2],
        window_size=4,
        num_labels=3,
    )
    return tr.Swinv2ForImageClassification(config)


@builder("levit")
def _levit(tr: Any) -> Any:
    """Attention biases tied to the resolution: a fixed image size."""
    config = tr.LevitConfig(
        image_size=64,
        hidden_sizes=[16, 32, 48],
        num_attention_heads=[1, 2, 3],
        depths=[1, 1, 1],
        key_dim=[8, 8, 8],
        num_labels=3,
    )
    return tr.LevitForImageClassification(config)


@builder("dpt")
def _dpt(tr: Any) -> Any:
    """Depth estimation: a ViT backbone, a reassembling neck and a fusion head."""
    config = tr.DPTConfig(
        hidden_size=32,
        num_hidden_layers=4,
        num_attention_heads=4,
        intermediate_size=64,
        image_size=32,
        patch_size=8,
        neck_hidden_sizes=[8, 16, 16, 32],
        fusion_hidden_size=16,
        backbone_out_indices=[0, 1, 2, 3],
    )
    return tr.DPTForDepthEstimation(config)


@builder("yolos")
def _yolos(tr: Any) -> Any:
    """Detection with a ViT: it resizes its position embeddings to any image."""
    config = tr.YolosConfig(
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        image_size=[32, 32],
        patch_size=8,
        num_detection_tokens=5,
        num_labels=3,
    )
    return tr.YolosForObjectDetection(config)


@builder("clip")
def _clip(tr: Any) -> Any:
    """Text and image towers in one model (the similarity logits)."""
    text = dict(
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=4,
        intermediate_size=64,
        vocab_size=VOCAB,
        max_position_embeddings=64,
        **TOKENS,
    )
    vision = {**_vit_like(), "num_hidden_layers": 1}
    return tr.CLIPModel(tr.CLIPConfig(text_config=text, vision_config=vision, projection_dim=16))


# ---- audio encoders ----------------------------------------------------------------------


def _wav2vec2_like() -> dict[str, Any]:
    return dict(
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        conv_dim=(16, 16),
        conv_stride=(5, 2),
        conv_kernel=(10, 3),
        num_conv_pos_embeddings=16,
        num_conv_pos_embedding_groups=4,
        vocab_size=VOCAB,
    )


@builder("wav2vec2")
def _wav2vec2(tr: Any) -> Any:
    return tr.Wav2Vec2ForCTC(tr.Wav2Vec2Config(**_wav2vec2_like()))


@builder("hubert")
def _hubert(tr: Any) -> Any:
    return tr.HubertModel(tr.HubertConfig(**_wav2vec2_like()))


@builder("wavlm")
def _wavlm(tr: Any) -> Any:
    """Gated relative position buckets over the frames."""
    config = tr.WavLMConfig(**_wav2vec2_like(), num_buckets=16, max_bucket_distance=32)
    return tr.WavLMModel(config)


# ---- state-space and hybrid --------------------------------------------------------------


@builder("mamba")
def _mamba(tr: Any) -> Any:
    config = tr.MambaConfig(
        hidden_size=32, state_size=4, num_hidden_layers=2, vocab_size=VOCAB, time_step_rank=4
    )
    return _lm(tr, config)


@builder("mamba2")
def _mamba2(tr: Any) -> Any:
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
    return _lm(tr, config)


@builder("bamba")
def _bamba(tr: Any) -> Any:
    config = tr.BambaConfig(
        **_common(),
        attn_layer_indices=[1],
        mamba_n_heads=4,
        mamba_d_head=16,
        mamba_d_state=8,
        mamba_n_groups=1,
        mamba_chunk_size=4,
        mamba_expand=2,
    )
    return _lm(tr, config)


# ---- more architectures (round 2): dense decoders ----------------------------------------


@builder("gemma")
def _gemma(tr: Any) -> Any:
    return _lm(tr, tr.GemmaConfig(**_common(), head_dim=8, **TOKENS))


@builder("gemma3_text")
def _gemma3_text(tr: Any) -> Any:
    """Gemma 3's text model with its own mix of sliding and full attention layers."""
    config = tr.Gemma3TextConfig(
        **_common(),
        head_dim=8,
        sliding_window=8,
        layer_types=["sliding_attention", "full_attention"],
        **TOKENS,
    )
    return _lm(tr, config)


@builder("gpt_neo")
def _gpt_neo(tr: Any) -> Any:
    """Global and local (windowed) attention layers in turn."""
    config = tr.GPTNeoConfig(
        hidden_size=32,
        num_layers=2,
        num_heads=4,
        attention_types=[[["global", "local"], 1]],
        window_size=8,
        vocab_size=VOCAB,
        max_position_embeddings=64,
        intermediate_size=64,
        **TOKENS,
    )
    return _lm(tr, config)


@builder("phi3")
def _phi3(tr: Any) -> Any:
    return _lm(tr, tr.Phi3Config(**{**_common(), "max_position_embeddings": 64}, **TOKENS))


@builder("olmo")
def _olmo(tr: Any) -> Any:
    return _lm(tr, tr.OlmoConfig(**_common(), clip_qkv=8.0, **TOKENS))


@builder("olmo3")
def _olmo3(tr: Any) -> Any:
    config = tr.Olmo3Config(
        **_common(),
        sliding_window=8,
        layer_types=["sliding_attention", "full_attention"],
        **TOKENS,
    )
    return _lm(tr, config)


@builder("ctrl")
def _ctrl(tr: Any) -> Any:
    config = tr.CTRLConfig(
        n_embd=32, n_layer=2, n_head=4, dff=64, vocab_size=VOCAB, n_positions=64, **TOKENS
    )
    return _lm(tr, config)


@builder("biogpt")
def _biogpt(tr: Any) -> Any:
    common = {**_common(), "max_position_embeddings": 64}
    common.pop("num_key_value_heads")
    return _lm(tr, tr.BioGptConfig(**common, **TOKENS))


@builder("cohere2")
def _cohere2(tr: Any) -> Any:
    config = tr.Cohere2Config(
        **_common(),
        sliding_window=8,
        layer_types=["sliding_attention", "full_attention"],
        **TOKENS,
    )
    return _lm(tr, config)


@builder("helium")
def _helium(tr: Any) -> Any:
    return _lm(tr, tr.HeliumConfig(**_common(), head_dim=8, **TOKENS))


@builder("smollm3")
def _smollm3(tr: Any) -> Any:
    """Rotary positions on some layers only (``no_rope_layers``)."""
    return _lm(tr, tr.SmolLM3Config(**_common(), no_rope_layers=[1, 0], **TOKENS))


@builder("glm4")
def _glm4(tr: Any) -> Any:
    return _lm(tr, tr.Glm4Config(**_common(), head_dim=8, **TOKENS))


@builder("exaone4")
def _exaone4(tr: Any) -> Any:
    config = tr.Exaone4Config(
        **_common(),
        sliding_window=8,
        layer_types=["sliding_attention", "full_attention"],
        **TOKENS,
    )
    return _lm(tr, config)


# ---- more architectures: mixture-of-experts decoders --------------------------------------


@builder("olmoe")
def _olmoe(tr: Any) -> Any:
    config = tr.OlmoeConfig(**_common(), num_experts=4, num_experts_per_tok=2, **TOKENS)
    return _lm(tr, config)


@builder("jetmoe")
def _jetmoe(tr: Any) -> Any:
    """Mixture of attention heads as well as of MLP experts."""
    config = tr.JetMoeConfig(
        hidden_size=32,
        num_hidden_layers=2,
        num_key_value_heads=2,
        kv_channels=8,
        intermediate_size=64,
        num_local_experts=4,
        num_experts_per_tok=2,
        vocab_size=VOCAB,
        max_position_embeddings=64,
        **TOKENS,
    )
    return _lm(tr, config)


# ---- more architectures: state-space, recurrent and hybrid --------------------------------


@builder("falcon_mamba")
def _falcon_mamba(tr: Any) -> Any:
    config = tr.FalconMambaConfig(
        hidden_size=32, state_size=4, num_hidden_layers=2, vocab_size=VOCAB, time_step_rank=4
    )
    return _lm(tr, config)


@builder("recurrent_gemma")
def _recurrent_gemma(tr: Any) -> Any:
    """Griffin: gated linear recurrences and local attention in turn."""
    config = tr.RecurrentGemmaConfig(
        num_hidden_layers=2,
        vocab_size=VOCAB,
        hidden_size=32,
        intermediate_size=64,
        num_attention_heads=4,
        num_key_value_heads=1,
        lru_width=32,
        attention_window_size=8,
        conv1d_width=4,
        block_types=["recurrent", "attention"],
        **TOKENS,
    )
    return _lm(tr, config)


@builder("zamba2")
def _zamba2(tr: Any) -> Any:
    config = tr.Zamba2Config(
        vocab_size=VOCAB,
        hidden_size=32,
        num_hidden_layers=2,
        layers_block_type=["mamba", "hybrid", "hybrid"],
        mamba_d_state=8,
        mamba_expand=2,
        mamba_ngroups=1,
        n_mamba_heads=4,
        chunk_size=4,
        intermediate_size=64,
        num_attention_heads=4,
        num_key_value_heads=4,
        num_mem_blocks=1,
        max_position_embeddings=64,
        **TOKENS,
    )
    return _lm(tr, config)


@builder("jamba")
def _jamba(tr: Any) -> Any:
    config = tr.JambaConfig(
        **_common(),
        num_experts=2,
        num_experts_per_tok=1,
        expert_layer_period=2,
        expert_layer_offset=1,
        attn_layer_period=2,
        attn_layer_offset=1,
        mamba_d_state=4,
        mamba_dt_rank=4,
        **TOKENS,
    )
    return _lm(tr, config)


@builder("lfm2")
def _lfm2(tr: Any) -> Any:
    """Short gated convolutions and attention layers."""
    config = tr.Lfm2Config(
        **_common(), layer_types=["conv", "full_attention"], block_auto_adjust_ff_dim=False
    )
    return _lm(tr, config)


# ---- more architectures: encoders ---------------------------------------------------------


@builder("xlm_roberta")
def _xlm_roberta(tr: Any) -> Any:
    return tr.XLMRobertaModel(tr.XLMRobertaConfig(**_encoder_common(), pad_token_id=0))


@builder("modernbert")
def _modernbert(tr: Any) -> Any:
    """Rotary positions, alternating global and local (windowed) attention."""
    config = tr.ModernBertConfig(
        **_encoder_common(),
        local_attention=8,
        layer_types=["full_attention", "sliding_attention"],
        cls_token_id=3,
        sep_token_id=4,
        **TOKENS,
    )
    return tr.ModernBertModel(config)


@builder("big_bird")
def _big_bird(tr: Any) -> Any:
    """Block-sparse attention (falls back to full attention on short inputs)."""
    config = tr.BigBirdConfig(
        **_encoder_common(), attention_type="block_sparse", block_size=2, num_random_blocks=1
    )
    return tr.BigBirdModel(config)


@builder("longformer")
def _longformer(tr: Any) -> Any:
    """Sliding-window attention over chunks padded to the window."""
    config = tr.LongformerConfig(**_encoder_common(), attention_window=4, pad_token_id=0)
    return tr.LongformerModel(config)


@builder("convbert")
def _convbert(tr: Any) -> Any:
    return tr.ConvBertModel(tr.ConvBertConfig(**_encoder_common(), embedding_size=32))


@builder("mobilebert")
def _mobilebert(tr: Any) -> Any:
    config = tr.MobileBertConfig(
        **_encoder_common(),
        embedding_size=16,
        intra_bottleneck_size=16,
        true_hidden_size=16,
        num_feedforward_networks=2,
    )
    return tr.MobileBertModel(config)


@builder("esm")
def _esm(tr: Any) -> Any:
    """Protein language model with rotary positions."""
    config = tr.EsmConfig(
        **_encoder_common(), position_embedding_type="rotary", pad_token_id=0, mask_token_id=3
    )
    return tr.EsmModel(config)


@builder("funnel")
def _funnel(tr: Any) -> Any:
    """Pools the sequence between blocks (and upsamples it back in the decoder)."""
    config = tr.FunnelConfig(
        vocab_size=VOCAB,
        block_sizes=[1, 1],
        block_repeats=[1, 1],
        num_decoder_layers=1,
        d_model=32,
        n_head=4,
        d_head=8,
        d_inner=64,
    )
    return tr.FunnelModel(config)


@builder("roformer")
def _roformer(tr: Any) -> Any:
    return tr.RoFormerModel(tr.RoFormerConfig(**_encoder_common(), embedding_size=32))


@builder("ernie")
def _ernie(tr: Any) -> Any:
    return tr.ErnieModel(tr.ErnieConfig(**_encoder_common(), use_task_id=True))


@builder("nomic_bert")
def _nomic_bert(tr: Any) -> Any:
    return tr.NomicBertModel(tr.NomicBertConfig(**_encoder_common()))


@builder("xlnet")
def _xlnet(tr: Any) -> Any:
    """Two-stream relative attention (used here as an encoder, no memory)."""
    config = tr.XLNetConfig(vocab_size=VOCAB, d_model=32, n_layer=2, n_head=4, d_inner=64, **TOKENS)
    return tr.XLNetModel(config)


# ---- more architectures: encoder-decoders -------------------------------------------------


def _t5_like() -> dict[str, Any]:
    return dict(
        d_model=32,
        d_kv=8,
        d_ff=64,
        num_layers=2,
        num_heads=4,
        vocab_size=VOCAB,
        decoder_start_token_id=0,
    )


@builder("mt5")
def _mt5(tr: Any) -> Any:
    return tr.MT5ForConditionalGeneration(tr.MT5Config(**_t5_like()))


@builder("umt5")
def _umt5(tr: Any) -> Any:
    """A relative position bias per layer (T5 shares one)."""
    return tr.UMT5ForConditionalGeneration(tr.UMT5Config(**_t5_like()))


@builder("longt5")
def _longt5(tr: Any) -> Any:
    """Transient-global attention over blocks of the encoder's input."""
    config = tr.LongT5Config(
        **_t5_like(),
        local_radius=2,
        global_block_size=2,
        encoder_attention_type="transient-global",
    )
    return tr.LongT5ForConditionalGeneration(config)


@builder("m2m_100")
def _m2m_100(tr: Any) -> Any:
    return tr.M2M100ForConditionalGeneration(tr.M2M100Config(**_bart_like()))


@builder("blenderbot")
def _blenderbot(tr: Any) -> Any:
    return tr.BlenderbotForConditionalGeneration(tr.BlenderbotConfig(**_bart_like()))


@builder("led")
def _led(tr: Any) -> Any:
    """Longformer's windowed attention in the encoder of a BART."""
    like = {k: v for k, v in _bart_like().items() if k != "max_position_embeddings"}
    config = tr.LEDConfig(
        **like,
        max_encoder_position_embeddings=64,
        max_decoder_position_embeddings=64,
        attention_window=4,
    )
    return tr.LEDForConditionalGeneration(config)


@builder("prophetnet")
def _prophetnet(tr: Any) -> Any:
    """Predicts n future tokens with n-gram streams in its decoder."""
    config = tr.ProphetNetConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        encoder_ffn_dim=64,
        num_encoder_layers=2,
        num_encoder_attention_heads=4,
        decoder_ffn_dim=64,
        num_decoder_layers=2,
        num_decoder_attention_heads=4,
        max_position_embeddings=64,
        ngram=2,
        num_buckets=8,
        relative_max_distance=16,
        decoder_start_token_id=0,
        **TOKENS,
    )
    return tr.ProphetNetForConditionalGeneration(config)


# ---- more architectures: vision -----------------------------------------------------------


@builder("dinov2_with_registers")
def _dinov2_with_registers(tr: Any) -> Any:
    config = tr.Dinov2WithRegistersConfig(**_vit_like(), num_register_tokens=2)
    return tr.Dinov2WithRegistersModel(config)


@builder("pvt_v2")
def _pvt_v2(tr: Any) -> Any:
    config = tr.PvtV2Config(
        image_size=32,
        num_encoder_blocks=2,
        depths=[1, 1],
        sr_ratios=[2, 1],
        hidden_sizes=[16, 32],
        patch_sizes=[7, 3],
        strides=[4, 2],
        num_attention_heads=[1, 2],
        mlp_ratios=[2, 2],
        num_labels=3,
    )
    return tr.PvtV2ForImageClassification(config)


@builder("focalnet")
def _focalnet(tr: Any) -> Any:
    config = tr.FocalNetConfig(
        image_size=32,
        patch_size=4,
        embed_dim=16,
        depths=[1, 1],
        hidden_sizes=[16, 32],
        focal_levels=[2, 2],
        focal_windows=[3, 3],
        num_labels=3,
    )
    return tr.FocalNetForImageClassification(config)


@builder("hiera")
def _hiera(tr: Any) -> Any:
    """Hierarchical ViT with mask units and query pooling (a fixed image size)."""
    config = tr.HieraConfig(
        embed_dim=16,
        image_size=[64, 64],
        patch_size=[7, 7],
        patch_stride=[4, 4],
        patch_padding=[3, 3],
        depths=[1, 1],
        num_heads=[1, 2],
        num_query_pool=1,
        query_stride=[2, 2],
        masked_unit_size=[4, 4],
        masked_unit_attention=[True, False],
        num_labels=3,
    )
    return tr.HieraForImageClassification(config)


@builder("conditional_detr")
def _conditional_detr(tr: Any) -> Any:
    config = tr.ConditionalDetrConfig(
        backbone_config=_resnet_config(tr, out_features=["stage2"]),
        d_model=32,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        num_queries=5,
        num_labels=3,
    )
    return tr.ConditionalDetrForObjectDetection(config)


@builder("rt_detr")
def _rt_detr(tr: Any) -> Any:
    """Real-time DETR: a hybrid encoder over 3 levels, deformable attention in the decoder."""
    backbone = tr.RTDetrResNetConfig(
        embedding_size=8,
        hidden_sizes=[8, 16, 24, 32],
        depths=[1, 1, 1, 1],
        layer_type="basic",
        out_features=["stage2", "stage3", "stage4"],
    )
    config = tr.RTDetrConfig(
        backbone_config=backbone,
        encoder_hidden_dim=32,
        encoder_in_channels=[16, 24, 32],
        encoder_ffn_dim=64,
        encoder_attention_heads=4,
        d_model=32,
        num_queries=10,
        decoder_in_channels=[32, 32, 32],
        decoder_ffn_dim=64,
        decoder_layers=1,
        decoder_attention_heads=4,
        decoder_n_points=2,
        num_denoising=0,
        num_labels=3,
        anchor_image_size=None,
    )
    return tr.RTDetrForObjectDetection(config)


def _small_dinov2(tr: Any) -> Any:
    return tr.Dinov2Config(
        **{**_vit_like(), "num_hidden_layers": 4, "patch_size": 14, "image_size": 56},
        out_features=["stage1", "stage2", "stage3", "stage4"],
        reshape_hidden_states=False,
    )


@builder("depth_anything")
def _depth_anything(tr: Any) -> Any:
    """A DINOv2 backbone, DPT's neck and a depth head."""
    config = tr.DepthAnythingConfig(
        backbone_config=_small_dinov2(tr),
        patch_size=14,
        reassemble_hidden_size=32,
        neck_hidden_sizes=[8, 16, 16, 32],
        fusion_hidden_size=16,
        head_hidden_size=8,
    )
    return tr.DepthAnythingForDepthEstimation(config)


@builder("zoedepth")
def _zoedepth(tr: Any) -> Any:
    """Metric depth: a BEiT backbone, DPT's neck and bin attractors."""
    backbone = tr.BeitConfig(
        **{**_vit_like(), "num_hidden_layers": 4, "image_size": 32},
        out_features=["stage1", "stage2", "stage3", "stage4"],
        reshape_hidden_states=False,
        use_relative_position_bias=True,
    )
    config = tr.ZoeDepthConfig(
        backbone_config=backbone,
        neck_hidden_sizes=[8, 16, 16, 32],
        fusion_hidden_size=16,
        bottleneck_features=16,
        num_attractors=[4, 4, 2, 2],
        bin_embedding_dim=16,
        num_relative_features=8,
        patch_transformer_hidden_size=16,
        patch_transformer_intermediate_size=32,
        patch_transformer_num_attention_heads=2,
        bin_configurations=[{"n_bins": 8, "min_depth": 0.001, "max_depth": 10.0, "name": "nyu"}],
    )
    return tr.ZoeDepthForDepthEstimation(config)


# ---- more architectures: audio encoders ---------------------------------------------------


@builder("sew")
def _sew(tr: Any) -> Any:
    """Squeezes the frames before the transformer and upsamples them after."""
    return tr.SEWModel(tr.SEWConfig(**_wav2vec2_like(), squeeze_factor=2))


@builder("unispeech")
def _unispeech(tr: Any) -> Any:
    return tr.UniSpeechModel(tr.UniSpeechConfig(**_wav2vec2_like()))


@builder("wav2vec2_conformer")
def _wav2vec2_conformer(tr: Any) -> Any:
    config = tr.Wav2Vec2ConformerConfig(
        **_wav2vec2_like(), position_embeddings_type="rotary", conv_depthwise_kernel_size=3
    )
    return tr.Wav2Vec2ConformerModel(config)


# ---- round 3: decoders ----------------------------------------------------------------------


@builder("granitemoe")
def _granitemoe(tr: Any) -> Any:
    config = tr.GraniteMoeConfig(**_common(), num_local_experts=4, num_experts_per_tok=2, **TOKENS)
    return _lm(tr, config)


@builder("phimoe")
def _phimoe(tr: Any) -> Any:
    """Sparse mixer routing (jitter-free in eval) over 4 experts."""
    common = {**_common(), "max_position_embeddings": 64}
    config = tr.PhimoeConfig(**common, num_local_experts=4, num_experts_per_tok=2, **TOKENS)
    return _lm(tr, config)


@builder("deepseek_v2")
def _deepseek_v2(tr: Any) -> Any:
    """Multi-head latent attention and group-limited expert routing."""
    config = tr.DeepseekV2Config(
        **{**_common(), "num_key_value_heads": 4},  # latent attention: one kv head per head
        moe_intermediate_size=16,
        n_routed_experts=4,
        n_shared_experts=1,
        num_experts_per_tok=2,
        first_k_dense_replace=1,
        n_group=2,
        topk_group=1,
        kv_lora_rank=16,
        q_lora_rank=16,
        qk_rope_head_dim=4,
        qk_nope_head_dim=8,
        v_head_dim=8,
        **TOKENS,
    )
    return _lm(tr, config)


@builder("ministral")
def _ministral(tr: Any) -> Any:
    config = tr.MinistralConfig(
        **_common(),
        head_dim=8,
        sliding_window=8,
        layer_types=["sliding_attention", "full_attention"],
        **TOKENS,
    )
    return _lm(tr, config)


@builder("arcee")
def _arcee(tr: Any) -> Any:
    """ReLU-squared MLP without a gate."""
    return _lm(tr, tr.ArceeConfig(**_common(), **TOKENS))


@builder("nemotron")
def _nemotron(tr: Any) -> Any:
    """LayerNorm1P and partial rotary positions."""
    return _lm(tr, tr.NemotronConfig(**_common(), partial_rotary_factor=0.5, **TOKENS))


@builder("gpt_oss")
def _gpt_oss(tr: Any) -> Any:
    """Attention sinks, sliding and full layers, clamped SwiGLU experts."""
    config = tr.GptOssConfig(
        **_common(),
        head_dim=8,
        num_local_experts=4,
        num_experts_per_tok=2,
        sliding_window=8,
        layer_types=["sliding_attention", "full_attention"],
        **TOKENS,
    )
    return _lm(tr, config)


@builder("glm4_moe")
def _glm4_moe(tr: Any) -> Any:
    config = tr.Glm4MoeConfig(
        **_common(),
        head_dim=8,
        moe_intermediate_size=16,
        n_routed_experts=4,
        n_shared_experts=1,
        num_experts_per_tok=2,
        first_k_dense_replace=1,
        n_group=1,
        topk_group=1,
        partial_rotary_factor=0.5,
        **TOKENS,
    )
    return _lm(tr, config)


@builder("ernie4_5")
def _ernie4_5(tr: Any) -> Any:
    return _lm(tr, tr.Ernie4_5Config(**_common(), head_dim=8, **TOKENS))


@builder("hunyuan_v1_dense")
def _hunyuan_v1_dense(tr: Any) -> Any:
    """Query and key norms after the rotary positions."""
    return _lm(tr, tr.HunYuanDenseV1Config(**_common(), head_dim=8, **TOKENS))


@builder("seed_oss")
def _seed_oss(tr: Any) -> Any:
    return _lm(tr, tr.SeedOssConfig(**_common(), head_dim=8, **TOKENS))


@builder("diffllama")
def _diffllama(tr: Any) -> Any:
    """Differential attention: two softmax maps subtracted."""
    return _lm(tr, tr.DiffLlamaConfig(**_common(), **TOKENS))


@builder("apertus")
def _apertus(tr: Any) -> Any:
    """xIELU activation and query/key norms."""
    return _lm(tr, tr.ApertusConfig(**_common(), **TOKENS))


# ---- round 3: hybrid and state-space ----------------------------------------------------------


@builder("falcon_h1")
def _falcon_h1(tr: Any) -> Any:
    """Attention and Mamba2 side by side in every layer, with multipliers."""
    config = tr.FalconH1Config(
        **_common(),
        head_dim=8,
        mamba_d_ssm=32,
        mamba_n_heads=4,
        mamba_d_head=8,
        mamba_n_groups=1,
        mamba_d_state=8,
        mamba_chunk_size=4,
        mamba_expand=1,
        **TOKENS,
    )
    return _lm(tr, config)


@builder("zamba")
def _zamba(tr: Any) -> Any:
    config = tr.ZambaConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=3,
        num_attention_heads=4,
        num_key_value_heads=4,
        layers_block_type=["mamba", "hybrid", "hybrid"],
        mamba_d_state=4,
        mamba_expand=2,
        n_mamba_heads=2,
        max_position_embeddings=64,
        **TOKENS,
    )
    return _lm(tr, config)


@builder("granitemoehybrid")
def _granitemoehybrid(tr: Any) -> Any:
    config = tr.GraniteMoeHybridConfig(
        **_common(),
        num_local_experts=4,
        num_experts_per_tok=2,
        shared_intermediate_size=32,
        layer_types=["mamba", "attention"],
        mamba_n_heads=4,
        mamba_d_head=16,
        mamba_d_state=8,
        mamba_n_groups=1,
        mamba_chunk_size=4,
        mamba_expand=2,
        **TOKENS,
    )
    return _lm(tr, config)


# ---- round 3: encoders ------------------------------------------------------------------------


@builder("mpnet")
def _mpnet(tr: Any) -> Any:
    """Relative position buckets shared by every layer."""
    config = tr.MPNetConfig(**_encoder_common(), relative_attention_num_buckets=32, pad_token_id=0)
    return tr.MPNetModel(config)


@builder("camembert")
def _camembert(tr: Any) -> Any:
    return tr.CamembertModel(tr.CamembertConfig(**_encoder_common(), pad_token_id=0))


@builder("rembert")
def _rembert(tr: Any) -> Any:
    """Decoupled input and output embeddings."""
    config = tr.RemBertConfig(
        **_encoder_common(), input_embedding_size=16, output_embedding_size=16, pad_token_id=0
    )
    return tr.RemBertModel(config)


@builder("squeezebert")
def _squeezebert(tr: Any) -> Any:
    """Grouped 1x1 convolutions in place of the linear layers."""
    config = tr.SqueezeBertConfig(**_encoder_common(), embedding_size=32, pad_token_id=0)
    return tr.SqueezeBertModel(config)


@builder("data2vec_text")
def _data2vec_text(tr: Any) -> Any:
    return tr.Data2VecTextModel(tr.Data2VecTextConfig(**_encoder_common(), pad_token_id=0))


@builder("megatron_bert")
def _megatron_bert(tr: Any) -> Any:
    return tr.MegatronBertModel(tr.MegatronBertConfig(**_encoder_common()))


# ---- round 3: encoder-decoders ----------------------------------------------------------------


@builder("t5gemma")
def _t5gemma(tr: Any) -> Any:
    """A Gemma 2 encoder and decoder (sliding and full layers, soft-capped logits)."""
    module = dict(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=8,
        vocab_size=VOCAB,
        max_position_embeddings=64,
        sliding_window=8,
        layer_types=["sliding_attention", "full_attention"],
        **TOKENS,
    )
    config = tr.T5GemmaConfig(
        encoder=tr.T5GemmaModuleConfig(**module),
        decoder=tr.T5GemmaModuleConfig(**module),
        vocab_size=VOCAB,
        decoder_start_token_id=0,
        **TOKENS,
    )
    return tr.T5GemmaForConditionalGeneration(config)


@builder("plbart")
def _plbart(tr: Any) -> Any:
    return tr.PLBartForConditionalGeneration(tr.PLBartConfig(**_bart_like()))


@builder("blenderbot_small")
def _blenderbot_small(tr: Any) -> Any:
    config = tr.BlenderbotSmallConfig(**_bart_like())
    return tr.BlenderbotSmallForConditionalGeneration(config)


@builder("pegasus_x")
def _pegasus_x(tr: Any) -> Any:
    """Block-local encoder attention with global tokens."""
    config = tr.PegasusXConfig(
        **{**_bart_like(), "decoder_start_token_id": 0},
        block_size=4,
        num_global_tokens=2,
        stagger_local_blocks=True,
    )
    return tr.PegasusXForConditionalGeneration(config)


@builder("bigbird_pegasus")
def _bigbird_pegasus(tr: Any) -> Any:
    config = tr.BigBirdPegasusConfig(
        **{**_bart_like(), "decoder_start_token_id": 0},
        attention_type="block_sparse",
        block_size=2,
        num_random_blocks=1,
    )
    return tr.BigBirdPegasusForConditionalGeneration(config)


@builder("switch_transformers")
def _switch_transformers(tr: Any) -> Any:
    """T5 with top-1 routed expert MLPs in every other layer."""
    config = tr.SwitchTransformersConfig(
        **_t5_like(),
        num_decoder_layers=2,
        num_sparse_encoder_layers=1,
        num_sparse_decoder_layers=1,
        num_experts=4,
        expert_capacity=8,
    )
    return tr.SwitchTransformersForConditionalGeneration(config)


# ---- round 3: vision --------------------------------------------------------------------------


@builder("bit")
def _bit(tr: Any) -> Any:
    """Weight-standardised convolutions with dynamic 'SAME' padding."""
    config = tr.BitConfig(
        embedding_size=8,
        hidden_sizes=[8, 16],
        depths=[1, 1],
        layer_type="preactivation",
        global_padding="SAME",
        num_groups=2,
        num_labels=3,
    )
    return tr.BitForImageClassification(config)


@builder("cvt")
def _cvt(tr: Any) -> Any:
    """Convolutional token embeddings and projections, a class token in the last stage."""
    three = dict(
        embed_dim=[8, 16, 32],
        num_heads=[1, 2, 2],
        depth=[1, 2, 3],  # transformers indexes stage i's drop rates by i
        num_labels=3,
    )
    return tr.CvtForImageClassification(tr.CvtConfig(**three))


@builder("poolformer")
def _poolformer(tr: Any) -> Any:
    config = tr.PoolFormerConfig(
        hidden_sizes=[8, 16],
        depths=[1, 1],
        num_encoder_blocks=2,
        patch_sizes=[7, 3],
        strides=[4, 2],
        padding=[2, 1],
        num_labels=3,
    )
    return tr.PoolFormerForImageClassification(config)


@builder("data2vec_vision")
def _data2vec_vision(tr: Any) -> Any:
    config = tr.Data2VecVisionConfig(
        **_vit_like(), use_relative_position_bias=True, use_mean_pooling=True
    )
    return tr.Data2VecVisionModel(config)


@builder("dinov3_vit")
def _dinov3_vit(tr: Any) -> Any:
    """Rotary patch positions (computed per image size) and register tokens."""
    config = tr.DINOv3ViTConfig(
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        image_size=32,
        patch_size=8,
        num_register_tokens=2,
    )
    return tr.DINOv3ViTModel(config)


@builder("glpn")
def _glpn(tr: Any) -> Any:
    """SegFormer-like encoder and a depth decoder that upsamples to the input size."""
    config = tr.GLPNConfig(
        num_encoder_blocks=2,
        depths=[1, 1],
        sr_ratios=[2, 1],
        hidden_sizes=[16, 32],
        patch_sizes=[7, 3],
        strides=[4, 2],
        num_attention_heads=[1, 2],
        mlp_ratios=[2, 2],
        decoder_hidden_size=16,
        head_in_index=-1,
    )
    return tr.GLPNForDepthEstimation(config)


@builder("upernet")
def _upernet(tr: Any) -> Any:
    """Semantic segmentation: a pyramid pooling module over a ConvNeXt backbone."""
    backbone = tr.ConvNextConfig(
        hidden_sizes=[8, 16, 24, 32],
        depths=[1, 1, 1, 1],
        out_features=["stage1", "stage2", "stage3", "stage4"],
    )
    config = tr.UperNetConfig(
        backbone_config=backbone,
        hidden_size=16,
        auxiliary_in_channels=24,
        auxiliary_channels=8,
        num_labels=3,
        pool_scales=[1, 2, 3, 6],
    )
    return tr.UperNetForSemanticSegmentation(config)


@builder("mobilenet_v1")
def _mobilenet_v1(tr: Any) -> Any:
    """TensorFlow 'SAME' padding computed from the input size."""
    config = tr.MobileNetV1Config(image_size=32, depth_multiplier=0.25, num_labels=3)
    return tr.MobileNetV1ForImageClassification(config)


@builder("swiftformer")
def _swiftformer(tr: Any) -> Any:
    config = tr.SwiftFormerConfig(
        image_size=32, depths=[1, 1, 1, 1], embed_dims=[8, 16, 24, 32], num_labels=3
    )
    return tr.SwiftFormerForImageClassification(config)


@builder("vitdet")
def _vitdet(tr: Any) -> Any:
    """Windowed and global attention with decomposed relative positions."""
    config = tr.VitDetConfig(
        **{**_vit_like(), "image_size": 64, "patch_size": 8},
        window_size=4,
        window_block_indices=[0],
        use_relative_position_embeddings=True,
        pretrain_image_size=64,
    )
    return tr.VitDetModel(config)


@builder("deformable_detr")
def _deformable_detr(tr: Any) -> Any:
    """Multi-scale deformable attention (the PyTorch path of grid_sample)."""
    config = tr.DeformableDetrConfig(
        backbone_config=_resnet_config(tr, out_features=["stage1", "stage2"]),
        use_timm_backbone=False,
        use_pretrained_backbone=False,
        num_feature_levels=2,
        d_model=32,
        encoder_layers=1,
        decoder_layers=2,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        encoder_n_points=2,
        decoder_n_points=2,
        num_queries=5,
        num_labels=3,
    )
    return tr.DeformableDetrForObjectDetection(config)


@builder("rt_detr_v2")
def _rt_detr_v2(tr: Any) -> Any:
    backbone = tr.RTDetrResNetConfig(
        embedding_size=8,
        hidden_sizes=[8, 16, 24, 32],
        depths=[1, 1, 1, 1],
        layer_type="basic",
        out_features=["stage2", "stage3", "stage4"],
    )
    config = tr.RTDetrV2Config(
        backbone_config=backbone,
        encoder_hidden_dim=32,
        encoder_in_channels=[16, 24, 32],
        encoder_ffn_dim=64,
        encoder_attention_heads=4,
        d_model=32,
        num_queries=10,
        decoder_in_channels=[32, 32, 32],
        decoder_ffn_dim=64,
        decoder_layers=2,
        decoder_attention_heads=4,
        decoder_n_points=2,
        num_denoising=0,
        num_labels=3,
        anchor_image_size=None,
    )
    return tr.RTDetrV2ForObjectDetection(config)


# ---- round 3: audio ---------------------------------------------------------------------------


@builder("data2vec_audio")
def _data2vec_audio(tr: Any) -> Any:
    """Convolutional position embeddings in several layers."""
    like = {**_wav2vec2_like(), "num_conv_pos_embeddings": 5}
    return tr.Data2VecAudioModel(tr.Data2VecAudioConfig(**like, conv_pos_kernel_size=5))


@builder("sew_d")
def _sew_d(tr: Any) -> Any:
    """Squeezed frames and DeBERTa's disentangled attention."""
    config = tr.SEWDConfig(
        **_wav2vec2_like(),
        squeeze_factor=2,
        max_position_embeddings=64,
        position_buckets=8,
        share_att_key=True,
        relative_attention=True,
        pos_att_type=("p2c", "c2p"),
    )
    return tr.SEWDModel(config)


@builder("unispeech_sat")
def _unispeech_sat(tr: Any) -> Any:
    return tr.UniSpeechSatModel(tr.UniSpeechSatConfig(**_wav2vec2_like()))


# ---- round 3: text and image ------------------------------------------------------------------


def _text_tower() -> dict[str, Any]:
    return dict(
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=4,
        intermediate_size=64,
        vocab_size=VOCAB,
        max_position_embeddings=64,
        **TOKENS,
    )


@builder("clipseg")
def _clipseg(tr: Any) -> Any:
    """Segmentation conditioned on a text prompt: a decoder over CLIP's activations."""
    config = tr.CLIPSegConfig(
        text_config=_text_tower(),
        vision_config={**_vit_like(), "num_hidden_layers": 2},
        projection_dim=16,
        extract_layers=[1],
        reduce_dim=16,
        decoder_num_attention_heads=2,
        decoder_intermediate_size=32,
    )
    return tr.CLIPSegForImageSegmentation(config)


@builder("owlvit")
def _owlvit(tr: Any) -> Any:
    """Open-vocabulary detection: boxes from image patches scored against texts."""
    config = tr.OwlViTConfig(
        text_config=_text_tower(),
        vision_config={**_vit_like(), "num_hidden_layers": 1},
        projection_dim=16,
    )
    return tr.OwlViTForObjectDetection(config)


@builder("siglip")
def _siglip(tr: Any) -> Any:
    """Sigmoid text-image logits with a learned scale and bias."""
    config = tr.SiglipConfig(
        text_config=_text_tower(),
        vision_config={**_vit_like(), "num_hidden_layers": 1},
    )
    return tr.SiglipModel(config)
