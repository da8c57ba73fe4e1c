"""patch_transformers on real (tiny, random, offline) transformers models."""

from __future__ import annotations

import copy

import pytest
import torch

transformers = pytest.importorskip("transformers")

from patchport.patching import PatchDetails, SkippedPatch  # noqa: E402
from patchport.patching.declaration import PatchDeclaration  # noqa: E402
from patchport.torch import apply_patches_for_model, make_dynamic_cache  # noqa: E402
from patchport.torch.builtin import BuiltinPatch, builtin_patches  # noqa: E402
from patchport.torch.builtin.transformers_attention import (  # noqa: E402
    attention_interface_for_export,
)
from patchport.torch.export_select import export  # noqa: E402
from patchport.torch.model_state import ModelState  # noqa: E402
from patchport.torch.transformers_patches import (  # noqa: E402
    EXPORTER_PATCHES_NOT_APPLIED,
    MODULE_PATCHES,
    CopiedHelperPatch,
    ExporterPatches,
    ModulePatch,
    copied_helper_patches,
    exporter_patches,
    iter_transformers_patches,
    model_patches,
)

VOCAB = 64


def tiny(config_class, **extra):
    torch.manual_seed(0)
    fields = dict(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=VOCAB,
        max_position_embeddings=16,
    )
    fields.update(extra)
    return transformers.AutoModelForCausalLM.from_config(config_class(**fields)).eval()


def dynamic_llama():
    rope = {"rope_type": "dynamic", "factor": 2.0, "rope_theta": 10000.0}
    return tiny(transformers.LlamaConfig, rope_parameters=rope)


def longrope_phi3():
    rope = {
        "rope_type": "longrope",
        "rope_theta": 10000.0,
        "short_factor": [1.0, 1.1, 1.2, 1.3],
        "long_factor": [2.0, 2.5, 3.0, 4.0],
        "original_max_position_embeddings": 16,
    }
    return tiny(
        transformers.Phi3Config, rope_parameters=rope, max_position_embeddings=64, pad_token_id=0
    )


def inputs(model, batch, seq, past=None, seed=0):
    generator = torch.Generator().manual_seed(seed)
    kwargs = {
        "input_ids": torch.randint(0, VOCAB, (batch, seq), generator=generator),
        "attention_mask": torch.ones(batch, seq + (past or 0), dtype=torch.int64),
    }
    if past is None:
        kwargs["use_cache"] = False
        return kwargs
    config = model.config
    heads, dim = config.num_key_value_heads, config.head_dim
    shape = (batch, heads, past, dim)
    layers = range(config.num_hidden_layers)
    keys = [torch.randn(shape, generator=generator) for _ in layers]
    values = [torch.randn(shape, generator=generator) for _ in layers]
    kwargs["cache"] = make_dynamic_cache(config, keys, values, full_sliding_layers=True)
    return kwargs


def shapes(model, cache):
    result = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "total"}}
    if cache:
        per_layer = [{0: "batch", 2: "past"} for _ in range(model.config.num_hidden_layers)]
        result["cache"] = [per_layer, [dict(item) for item in per_layer]]
    else:
        result["use_cache"] = None
    return result


def test_dynamic_rope_llama_fails_without_patches():
    model = dynamic_llama()
    dims = torch.export.Dim.DYNAMIC
    with pytest.raises(Exception, match="(?s)data-dependent|GuardOnDataDependent"):
        torch.export.export(
            model,
            (),
            kwargs=inputs(model, 2, 5),
            dynamic_shapes={
                "input_ids": {0: dims, 1: dims},
                "attention_mask": {0: dims, 1: dims},
                "use_cache": None,
            },
        )


@pytest.mark.slow
def test_dynamic_rope_llama_exports_and_stays_exact_past_its_original_length():
    model = dynamic_llama()
    checks = [inputs(model, 1, 1, past=1, seed=1), inputs(model, 2, 30, past=3, seed=2)]
    program, report = export(
        model,
        (),
        inputs(model, 2, 5, past=4),
        dynamic_shapes=shapes(model, True),
        check_shapes=checks,
    )
    assert report.narrowings == []
    assert [check.ok for check in report.shape_checks] == [True, True], report.to_text()
    rotary = [p for p in report.patches if p.name == "rotary_forward_without_state"]
    assert len(rotary) == 1 and rotary[0].calls > 0
    assert rotary[0].owner is type(model.model.rotary_emb)
    involved = dict(report.patches.patches_involved_in_graph(program.graph))
    assert rotary[0] in involved and involved[rotary[0]]
    # 33 positions are past the original 16: the grown frequencies really were used
    long_positions = torch.arange(33)[None]
    with apply_patches_for_model(patch_transformers=True, model=model):
        grown, _ = model.model.rotary_emb(torch.zeros(1, dtype=torch.float32), long_positions)
    plain, _ = model.model.rotary_emb.__class__.forward.__wrapped__(
        model.model.rotary_emb, torch.zeros(1), long_positions
    )
    assert not torch.allclose(grown, plain)


def test_rotary_patch_is_found_from_the_model_classes_not_a_list():
    from transformers.modeling_rope_utils import dynamic_rope_update

    base = type(dynamic_llama().model.rotary_emb)

    class HomemadeRotary(base):  # a class no list could know about
        @dynamic_rope_update
        def forward(self, x, position_ids):
            return base.forward.__wrapped__(self, x, position_ids)

    model = dynamic_llama()
    model.model.rotary_emb.__class__ = HomemadeRotary
    patches, skipped = model_patches(model)
    rotary = [p for p in patches if p.name == "rotary_forward_without_state"]
    assert [p.owner for p in rotary] == [HomemadeRotary]
    assert skipped == []
    with PatchDetails(rotary):
        assert HomemadeRotary.forward is not base.forward
    assert "forward" in vars(HomemadeRotary)


def test_rotary_module_with_unknown_forward_is_skipped_with_its_reason():
    class OddRotary(torch.nn.Module):
        rope_type = "dynamic"

        def forward(self, x, position_ids):
            return x

    class Holder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.rotary = OddRotary()

    patches, skipped = model_patches(Holder())
    assert [p for p in patches if p.name == "rotary_forward_without_state"] == []
    assert len(skipped) == 1
    assert "OddRotary.forward is not the code this patch was written for" in skipped[0].reason


def test_patch_whose_target_is_missing_in_installed_transformers_is_skipped():
    spec = builtin_patches("transformers")[0]
    missing = BuiltinPatch(
        spec.family,
        spec.module,
        "AttentionInterface.get_interface_gone",
        spec.replacement,
        "transformers",
        spec.versions,
        spec.why,
    )
    [resolved] = missing.resolve()
    assert isinstance(resolved, SkippedPatch)
    assert "AttentionInterface.get_interface_gone not found in transformers 5." in resolved.reason
    other = BuiltinPatch(
        spec.family,
        spec.module,
        spec.attribute,
        spec.replacement,
        "transformers",
        "<4.0",
        spec.why,
    )
    assert "written for transformers<4.0, installed" in other.resolve()[0].reason
    old = ModulePatch(**{**MODULE_PATCHES[0].__dict__, "versions": ">=9.0"})
    gone = CopiedHelperPatch(
        **{**copied_helper_patches()[0].__dict__, "reference": "transformers.models.llama.gone"}
    )
    model = dynamic_llama()
    # the four declaration kinds share one contract: resolve(model) -> patches and skips
    for declaration, reason in [
        (other, "written for transformers<4.0, installed"),
        (old, "written for transformers>=9.0, installed"),
        (gone, "reference transformers.models.llama.gone not found"),
        (ExporterPatches("no_such_backend"), "ships no exporter patch registry"),
    ]:
        assert isinstance(declaration, PatchDeclaration)
        [skipped] = declaration.resolve(model)
        assert isinstance(skipped, SkippedPatch) and reason in skipped.reason
        assert skipped.family == declaration.family == "transformers"
    patches, skipped = exporter_patches(backend="no_such_backend")
    assert patches == [] and "ships no exporter patch registry" in skipped[0].reason


def test_transformers_own_export_patches_are_listed_diffed_and_restored():
    from transformers.cache_utils import DynamicLayer, DynamicSlidingWindowLayer

    before = vars(DynamicSlidingWindowLayer)["update"]
    patches, skipped = exporter_patches(tiny(transformers.Gemma2Config, head_dim=8))
    targets = {p.target_name for p in patches}
    assert "transformers.cache_utils.DynamicSlidingWindowLayer.update" in targets
    assert all(p.family == "transformers" for p in patches)
    sdpa = "torch.nn.functional.scaled_dot_product_attention"
    assert [s.reason for s in skipped if s.target == sdpa] == [EXPORTER_PATCHES_NOT_APPLIED[sdpa]]
    with PatchDetails(patches):
        assert DynamicSlidingWindowLayer.update.__wrapped__ is DynamicLayer.update
    assert vars(DynamicSlidingWindowLayer)["update"] is before
    update = next(p for p in patches if p.attribute == "update")
    assert "self.cumulative_length" in update.format_diff()


@pytest.mark.slow
def test_gemma2_sliding_window_cache_exports_past_the_window():
    model = tiny(transformers.Gemma2Config, head_dim=8, sliding_window=4, num_hidden_layers=2)
    checks = [inputs(model, 2, 1, past=9, seed=3), inputs(model, 1, 6, past=5, seed=4)]
    traced = inputs(model, 2, 2, past=1)
    program, report = export(
        model, (), traced, dynamic_shapes=shapes(model, True), check_shapes=checks
    )
    assert report.narrowings == []
    assert all(check.ok for check in report.shape_checks), report.to_text()
    exercised = {p.target_name for p in report.patches.exercised()}
    assert "transformers.cache_utils.DynamicSlidingWindowLayer.update" in exercised
    assert "sliding-window cache layers were traced as full layers" in report.to_text()


@pytest.mark.slow
def test_export_leaves_the_eager_model_exactly_as_it_was():
    from torch._subclasses.fake_tensor import FakeTensor

    dims = torch.export.Dim.DYNAMIC
    plain_shapes = {
        "input_ids": {0: dims, 1: dims},
        "attention_mask": {0: dims, 1: dims},
        "use_cache": None,
    }
    reference = longrope_phi3()
    probe = inputs(reference, 1, 20)
    with torch.no_grad():
        expected = reference(**probe).logits
    # the problem: plain torch.export leaves a fake tensor on a fresh longrope model
    plain = longrope_phi3()
    with pytest.warns(UserWarning, match="long_inv_freq was assigned during export"):
        torch.export.export(plain, (), kwargs=inputs(plain, 2, 5), dynamic_shapes=plain_shapes)
    assert isinstance(plain.model.rotary_emb.long_inv_freq, FakeTensor)
    # apply_patches_for_model(model=...) alone puts the model back
    guarded = longrope_phi3()
    with (
        pytest.warns(UserWarning, match="long_inv_freq was assigned during export"),
        apply_patches_for_model(model=guarded) as details,
    ):
        torch.export.export(guarded, (), kwargs=inputs(guarded, 2, 5), dynamic_shapes=plain_shapes)
    assert not hasattr(guarded.model.rotary_emb, "long_inv_freq")
    assert any("long_inv_freq: removed" in change for change in details.model_changes)
    # patchport.torch.export: nothing left behind, eager unchanged, a second export works
    model = longrope_phi3()
    rotary = model.model.rotary_emb
    attributes = set(vars(rotary))
    buffers = {k: v.clone() for k, v in rotary._buffers.items()}
    for _ in range(2):
        result = export(model, (), inputs(model, 2, 5), dynamic_shapes=shapes(model, False))
        plain_try = result.report.attempts[0]  # what each try put back is on its report
        assert plain_try.configuration == "plain" and plain_try.report is not None
        assert any("long_inv_freq: removed" in c for c in plain_try.report.model_changes)
        assert set(vars(rotary)) == attributes
        assert all(torch.equal(rotary._buffers[k], v) for k, v in buffers.items())
        with torch.no_grad():
            assert torch.equal(model(**probe).logits, expected)
        del rotary.long_inv_freq  # set by the eager call just above, like any eager run


def test_model_state_puts_back_buffers_attributes_and_contents():
    model = longrope_phi3()
    rotary = model.model.rotary_emb
    buffer = rotary.inv_freq
    contents = buffer.clone()
    state = ModelState.capture(model)
    rotary.long_inv_freq = torch.ones(3)
    rotary.inv_freq.mul_(2)
    rotary.register_buffer("original_inv_freq", torch.zeros(4), persistent=False)
    rotary.original_max_seq_len = -1
    changes = state.restore()
    assert not hasattr(rotary, "long_inv_freq")
    assert rotary.inv_freq is buffer and torch.equal(buffer, contents)
    assert rotary.original_inv_freq.abs().sum() > 0
    assert rotary.original_max_seq_len == 64
    assert len(changes) == 4, changes


def _tiny_segformer():
    torch.manual_seed(0)
    config = transformers.SegformerConfig(
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
    return transformers.SegformerForSemanticSegmentation(config).eval()


def test_model_state_takes_back_the_output_hooks_installed_with_their_flag():
    # transformers installs its output-recording hooks on the first forward that records
    # (SegFormer's always does) and marks the model; putting back the mark without the
    # hooks made the next forward install them twice, and SegFormer then failed
    from patchport.torch.export_shape_checks import eager_outputs

    model, fresh = _tiny_segformer(), _tiny_segformer()
    first = {"pixel_values": torch.randn(1, 3, 64, 64)}
    second = {"pixel_values": torch.randn(2, 3, 96, 64)}
    (got,) = eager_outputs(model, [first])  # patchport's checks run the model like this
    assert not hasattr(model, "_output_capturing_hooks_installed")
    assert sum(len(m._forward_hooks) for m in model.modules()) == 0
    with torch.no_grad():
        torch.testing.assert_close(got.logits, fresh(**first).logits, rtol=0, atol=0)
        torch.testing.assert_close(model(**second).logits, fresh(**second).logits, rtol=0, atol=0)
        state = ModelState.capture(model)  # hooks installed before the snapshot stay
        hooks = sum(len(m._forward_hooks) for m in model.modules())
        model(**first)
    assert state.restore() == [] and hooks == sum(len(m._forward_hooks) for m in model.modules())


def test_apply_patches_for_model_restores_model_and_patches_after_a_failure():
    from transformers.modeling_utils import AttentionInterface

    model = longrope_phi3()
    get_interface = vars(AttentionInterface)["get_interface"]
    with pytest.raises(RuntimeError, match="stop"):
        with apply_patches_for_model(patch_transformers=True, model=model):
            model.model.rotary_emb.leftover = torch.zeros(1)
            assert AttentionInterface.get_interface.__wrapped__ is attention_interface_for_export
            raise RuntimeError("stop")
    assert not hasattr(model.model.rotary_emb, "leftover")
    assert vars(AttentionInterface)["get_interface"] is get_interface
    assert "forward" not in vars(type(model.model.rotary_emb)) or not hasattr(
        vars(type(model.model.rotary_emb))["forward"], "__patchport_patch__"
    )


def test_model_argument_is_checked_before_anything_changes():
    with pytest.raises(TypeError, match=r"apply_patches_for_model\(model=...\)"):
        with apply_patches_for_model(patch_transformers=True, model="llama"):
            pass


def test_patch_transformers_selects_groups_and_refuses_unknown_ones():
    from patchport.torch import TransformersPatch

    model = dynamic_llama()
    with apply_patches_for_model(patch_transformers=[TransformersPatch.ROTARY], model=model) as d:
        assert [p.name for p in d] == ["rotary_forward_without_state"]
    with apply_patches_for_model(patch_transformers="attention", model=model) as d:
        names = {p.name for p in d}
        assert "attention_interface_for_export" in names
        assert "rotary_forward_without_state" not in names
        assert not any(p.target_name.startswith("transformers.cache_utils") for p in d)
    with pytest.raises(TypeError, match=r"patch_transformers='rope'\): expected True, False"):
        with apply_patches_for_model(patch_transformers="rope", model=model):
            pass


def test_failed_export_leaves_nothing_patched_and_the_model_untouched():
    from transformers.modeling_utils import AttentionInterface

    model = dynamic_llama()
    rotary_class = type(model.model.rotary_emb)
    forward = vars(rotary_class)["forward"]
    attributes = dict(vars(model.model.rotary_emb))
    with pytest.raises(Exception, match="(?s)data-dependent|GuardOnDataDependent"):
        export(  # without the rotary patch the dynamic RoPE branch fails the export
            model,
            (),
            inputs(model, 2, 5),
            dynamic_shapes=shapes(model, False),
            patch_transformers=["attention", "exporters"],
        )
    assert vars(rotary_class)["forward"] is forward
    assert not hasattr(vars(AttentionInterface)["get_interface"], "__patchport_patch__")
    assert vars(model.model.rotary_emb).keys() == attributes.keys()
    assert all(vars(model.model.rotary_emb)[k] is v for k, v in attributes.items())


@pytest.mark.parametrize(
    ("module_path", "cache"),
    [
        ("m2m_100.modeling_m2m_100.M2M100SinusoidalPositionalEmbedding", 5),
        # Speech2Text grows its table for the sequence only: eager fails past it with a cache
        ("speech_to_text.modeling_speech_to_text.Speech2TextSinusoidalPositionalEmbedding", 0),
        ("xglm.modeling_xglm.XGLMSinusoidalPositionalEmbedding", 5),
    ],
)
def test_sinusoidal_positions_are_the_grown_tables_values_and_the_table_is_kept(module_path, cache):
    import importlib

    from patchport.torch import TransformersPatch

    module_name, class_name = module_path.rsplit(".", 1)
    klass = getattr(importlib.import_module(f"transformers.models.{module_name}"), class_name)
    ids = torch.randint(2, VOCAB, (2, 30), generator=torch.Generator().manual_seed(0))
    first = ids if "XGLM" not in class_name else torch.arange(30).expand(2, 30)
    patched, grown = klass(16, 8, 1), klass(16, 8, 1)
    table = patched.weights.clone()
    expected = grown(first, cache_length=cache)  # eager grows its table past 16 + 2 rows
    assert grown.weights.shape[0] > table.shape[0]
    group = [TransformersPatch.POSITIONS]
    with apply_patches_for_model(patch_transformers=group, model=patched) as details:
        got = patched(first, cache_length=cache)
    assert [p.name for p in details.exercised()] == ["sinusoidal_table_sized_for_the_call"]
    assert torch.equal(got, expected)
    assert torch.equal(patched.weights, table)  # the module's own table is as it was


def _tiny_big_bird():
    torch.manual_seed(0)
    config = transformers.BigBirdConfig(
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=4,
        intermediate_size=64,
        vocab_size=64,
        max_position_embeddings=64,
        attention_type="block_sparse",
        block_size=2,
        num_random_blocks=1,
    )
    return transformers.BigBirdModel(config).eval()


def test_a_submodule_swapped_by_forward_is_put_back_with_the_attribute_naming_it():
    """BigBird swaps its block-sparse attention module for a full one on a short input and
    records attention_type='original_full'; putting the attribute back without the module
    left a full-attention module called as a block-sparse one (a TypeError on the next
    long input, after any export or check of the model)."""
    model = _tiny_big_bird()
    short, long = torch.randint(1, 64, (1, 5)), torch.randint(1, 64, (1, 24))
    state = ModelState.capture(model)
    with torch.no_grad():
        model(input_ids=short)  # switches to full attention, in place
    state.restore()
    assert model.attention_type == "block_sparse"
    attention = model.encoder.layer[0].attention
    assert type(attention.self).__name__ == "BigBirdBlockSparseAttention"
    with torch.no_grad():
        model(input_ids=long)
    assert any("_modules" in change or "module put back" in change for change in state.changes)


def _causal_buffer_decoder(name: str):
    """A one-layer ImageGPT or Bark (semantic) with a cache: attention masked by slicing a
    causal buffer, heads merged from permuted views; inputs ``(batch, seq, past, seed)``."""
    torch.manual_seed(0)
    if name == "imagegpt":
        config = transformers.ImageGPTConfig(
            n_embd=32, n_layer=1, n_head=4, vocab_size=17, n_positions=32
        )
        model = transformers.ImageGPTForCausalImageModeling(config).eval()
    else:
        config = transformers.BarkSemanticConfig(
            hidden_size=32,
            num_layers=1,
            num_heads=4,
            block_size=32,
            input_vocab_size=17,
            output_vocab_size=17,
        )
        model = transformers.BarkSemanticModel(config).eval()

    def inputs(batch: int, seq: int, past: int, seed: int) -> dict:
        generator = torch.Generator().manual_seed(seed)
        keys = [torch.randn(batch, 4, past, 8, generator=generator)]
        values = [torch.randn(batch, 4, past, 8, generator=generator)]
        return {
            "input_ids": torch.randint(0, 16, (batch, seq), generator=generator),
            "attention_mask": torch.ones(batch, past + seq, dtype=torch.int64),
            "cache": make_dynamic_cache(config, keys, values),
        }

    shapes = {
        "input_ids": {0: "batch", 1: "seq"},
        "attention_mask": {0: "batch", 1: "past+seq"},
        "cache": [[{0: "batch", 2: "past"}], [{0: "batch", 2: "past"}]],
    }
    checks = [inputs(1, 1, 1, seed=2), inputs(2, 1, 12, seed=3), inputs(1, 4, 3, seed=4)]
    return model, inputs(2, 5, 7, seed=1), shapes, checks


def _gpt_neo():
    from .test_export_families import local_attention_decoder_with_cache

    return local_attention_decoder_with_cache()


CAUSAL_BUFFER_DECODERS = {
    "gpt_neo": (_gpt_neo, "causal_buffer_read_by_index"),
    "imagegpt": (
        lambda: _causal_buffer_decoder("imagegpt"),
        "imagegpt_causal_buffer_read_by_index",
    ),
    "bark": (lambda: _causal_buffer_decoder("bark"), "bark_causal_buffer_read_by_index"),
}


@pytest.mark.parametrize("name", list(CAUSAL_BUFFER_DECODERS))
def test_causal_buffer_attention_patches_compute_the_original_values(name):
    build, attention = CAUSAL_BUFFER_DECODERS[name]
    model, traced, _, checks = build()
    names = {p.name for p in iter_transformers_patches(model)}
    assert {attention, "heads_merged_dense"} <= names
    for inputs in (traced, *checks):
        with torch.no_grad():
            expected = model(**copy.deepcopy(inputs)).logits
            with apply_patches_for_model(patch_transformers=True, model=model):
                got = model(**copy.deepcopy(inputs)).logits
        torch.testing.assert_close(got, expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", ["imagegpt", "bark"])
def test_causal_buffer_decoders_keep_the_decode_step_from_a_one_token_past(name):
    # plain torch.export traces every length as >= 2: its program refuses (1, 1, past 1)
    model, traced, shapes, checks = CAUSAL_BUFFER_DECODERS[name][0]()
    _, report = export(
        model, (), traced, dynamic_shapes=shapes, check_shapes=checks, allow_narrowing=True
    )
    assert report.is_general and report.wrong_values == 0, report.to_text()
    assert CAUSAL_BUFFER_DECODERS[name][1] in {p.name for p in report.patches.exercised()}
    plain = report.attempts[0]
    assert plain.configuration == "plain" and plain.report is not None
    assert plain.report.refused == 1


def _tiny_xlnet():
    torch.manual_seed(0)
    config = transformers.XLNetConfig(vocab_size=VOCAB, d_model=32, n_layer=1, n_head=4, d_inner=64)
    return transformers.XLNetModel(config).eval()


def _xlnet_inputs(batch: int, seq: int, seed: int) -> dict:
    generator = torch.Generator().manual_seed(seed)
    return {
        "input_ids": torch.randint(0, VOCAB, (batch, seq), generator=generator),
        "attention_mask": torch.ones(batch, seq, dtype=torch.int64),
    }


def test_xlnet_relative_shift_patch_computes_the_original_values():
    model = _tiny_xlnet()
    assert "relative_shift_by_flat_reshapes" in {p.name for p in iter_transformers_patches(model)}
    for batch, seq in ((2, 5), (1, 1), (3, 2)):
        inputs = _xlnet_inputs(batch, seq, seed=seq)
        with torch.no_grad():
            expected = model(**inputs).last_hidden_state
            with apply_patches_for_model(patch_transformers=True, model=model):
                got = model(**inputs).last_hidden_state
        assert torch.equal(got, expected)


def test_xlnet_keeps_a_one_token_sequence():
    # plain torch.export guards (2 * seq - 1) % seq != 0 in the relative shift's reshape
    model = _tiny_xlnet()
    shapes = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}}
    checks = [_xlnet_inputs(1, 1, seed=2), _xlnet_inputs(3, 9, seed=3)]
    _, report = export(
        model,
        (),
        _xlnet_inputs(2, 5, seed=1),
        dynamic_shapes=shapes,
        check_shapes=checks,
        allow_narrowing=True,
    )
    assert all(check.ok for check in report.shape_checks), report.to_text()
    assert "relative_shift_by_flat_reshapes" in {p.name for p in report.patches.exercised()}
    plain = report.attempts[0]
    assert plain.configuration == "plain" and plain.report is not None
    assert plain.report.refused == 1
