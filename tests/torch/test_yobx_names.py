"""yobx's names for tiny models, cache flattening and patch groups (its gallery's imports)."""

from __future__ import annotations

import pytest
import torch

transformers = pytest.importorskip("transformers")

from torch.utils import _pytree as pytree  # noqa: E402

from patchport import PatchportWarning  # noqa: E402
from patchport.torch import (  # noqa: E402
    TransformersPatch,
    TransformersPatchEnum,
    apply_patches_for_model,
    get_tiny_model,
    register_cache_pytrees,
    register_flattening_functions,
    use_dyn_not_str,
)


def test_broadcast_add_has_inputs_and_named_dynamic_shapes():
    data = get_tiny_model("local/BroadcastAdd")
    assert set(data.export_inputs) == {"x", "y"}
    assert data.dynamic_shapes == {"x": {0: "batch", 1: "d1"}, "y": {0: "batch", 1: "d2"}}
    dynamic = data.dynamic_shapes_for_torch_export_export
    assert dynamic["x"][1] is torch.export.Dim.DYNAMIC
    with pytest.raises(ValueError, match="unknown model id.*arnir0/Tiny-LLM"):
        get_tiny_model("someone/Unknown")


def test_transformers_patch_enum_is_our_group_name():
    assert TransformersPatchEnum is TransformersPatch
    with apply_patches_for_model(patch_transformers=[TransformersPatchEnum.ATTENTION]) as details:
        assert details.n_patches >= 1


def test_register_flattening_functions_registers_for_the_block_only():
    classes = [transformers.DynamicCache, transformers.EncoderDecoderCache]
    registered = [cls for cls in classes if cls in pytree.SUPPORTED_NODES]
    for cls in registered:
        pytree._deregister_pytree_node(cls)
    try:
        with register_flattening_functions(patch_transformers=True) as added:
            assert added == classes and all(c in pytree.SUPPORTED_NODES for c in classes)
        assert not any(cls in pytree.SUPPORTED_NODES for cls in classes)
        with register_flattening_functions(patch_transformers=False) as added:
            assert added == [] and transformers.DynamicCache not in pytree.SUPPORTED_NODES
        register_cache_pytrees()
        with register_flattening_functions(patch_transformers=True) as added:
            assert added == []  # registered before: left registered after
        assert all(cls in pytree.SUPPORTED_NODES for cls in classes)
    finally:
        register_cache_pytrees()  # as the other tests of this process expect


def test_tiny_llm_exports_as_in_yobx_gallery():
    data = get_tiny_model("arnir0/Tiny-LLM")
    config = data.model.config
    assert (config.hidden_size, config.head_dim, config.num_key_value_heads) == (192, 96, 1)
    assert data.inputs_batch1["input_ids"].shape == (1, 3)
    with (
        register_flattening_functions(patch_transformers=True),
        apply_patches_for_model(patch_torch=True, patch_transformers=True, model=data.model) as d,
    ):
        ep = torch.export.export(
            data.model,
            (),
            kwargs=data.export_inputs,
            dynamic_shapes=use_dyn_not_str(data.dynamic_shapes),
        )
    assert d.patches_involved_in_graph(ep.graph)


def test_apply_patches_for_model_lists_patches_in_yobx_order():
    """yobx's test_patch reads details[0] as the constraint printer's patch."""
    with apply_patches_for_model(patch_torch=True, verbose=0) as details:
        assert len(details) == 5 and details[0].name == "print_symbol_or_name"
        assert "-    if not self.symbol_to_source.get(expr):" in details[0].make_diff()


def test_apply_patches_for_model_takes_yobx_tracing_switch():
    with apply_patches_for_model(patch_torch=True, tracing=False) as details:
        plain = [p.name for p in details]
    with pytest.warns(PatchportWarning, match="tracing=True.*no patches for torch.fx"):
        with apply_patches_for_model(patch_torch=True, tracing=True) as details:
            assert [p.name for p in details] == plain


@pytest.mark.parametrize(("model_id", "second"), [("add", "y"), ("broadcast_multiply", "w")])
def test_yobx_small_tiny_models_export_with_their_own_dynamic_shapes(model_id, second):
    """yobx's "add" and "broadcast_multiply": two inputs x and y / w; their dynamic shapes
    go to torch.export.export as they are (no use_dyn_not_str)."""
    data = get_tiny_model(model_id)
    x, other = data.export_inputs["x"], data.export_inputs[second]
    expected = x + other if model_id == "add" else x * other
    torch.testing.assert_close(data.model(**data.export_inputs), expected)
    with apply_patches_for_model(patch_torch=True):
        ep = torch.export.export(
            data.model, (), kwargs=data.export_inputs, dynamic_shapes=data.dynamic_shapes
        )
    grown = {"x", "y"}  # w broadcasts along x's batch
    bigger = {
        k: torch.randn(v.shape[0] + 2, *v.shape[1:]) if k in grown else v
        for k, v in data.export_inputs.items()
    }
    torch.testing.assert_close(ep.module()(**bigger), data.model(**bigger))


def test_apply_patches_yields_the_applied_patches_as_a_list():
    """yobx's ``apply_patches`` (its test_patch): a plain list, first the printer's patch."""
    from patchport.torch import apply_patches

    printer = torch.fx.experimental.symbolic_shapes.DynamicDimConstraintPrinter
    original = printer._print_Symbol
    with apply_patches(patch_torch=True) as patches:
        assert type(patches) is list and patches
        assert "-    if not self.symbol_to_source.get(expr):" in patches[0].make_diff()
        assert printer._print_Symbol is not original
    assert printer._print_Symbol is original


def test_config_updates_merge_into_the_rope_parameters():
    """yobx's rope tests pass only the keys they change: rope_theta must stay."""
    from patchport.torch import torch_deepcopy

    updates = {"rope_parameters": {"factor": 10.0, "rope_type": "dynamic"}}
    data = get_tiny_model("arnir0/Tiny-LLM", config_updates=updates)
    rope = data.model.config.rope_parameters
    assert rope["rope_type"] == "dynamic" and rope["factor"] == 10.0
    assert rope["rope_theta"] == 10000.0
    expected = data.model(**torch_deepcopy(data.export_inputs))
    with (
        register_flattening_functions(patch_transformers=True),
        apply_patches_for_model(patch_transformers=True, model=data.model),
    ):
        ep = torch.export.export(
            data.model,
            (),
            kwargs=torch_deepcopy(data.export_inputs),
            dynamic_shapes=use_dyn_not_str(data.dynamic_shapes),
        )
    got = ep.module()(**torch_deepcopy(data.export_inputs))
    torch.testing.assert_close(got.logits, expected.logits)


def test_torch_deepcopy_copies_the_cache_a_forward_fills():
    from patchport.torch import torch_deepcopy

    data = get_tiny_model("arnir0/Tiny-LLM")
    copied = torch_deepcopy(data.export_inputs)
    cache = next(v for v in data.export_inputs.values() if isinstance(v, transformers.Cache))
    twin = next(v for v in copied.values() if isinstance(v, transformers.Cache))
    assert twin is not cache and twin.layers[0].keys.data_ptr() != cache.layers[0].keys.data_ptr()
    data.model(**copied)
    assert twin.get_seq_length() == 33 and cache.get_seq_length() == 30


def test_make_dynamic_cache_takes_yobx_key_value_pairs():
    from patchport.torch import make_dynamic_cache

    pairs = [(torch.randn(2, 1, 4, 8), torch.randn(2, 1, 4, 8)) for _ in range(3)]
    cache = make_dynamic_cache(pairs)
    assert len(cache.layers) == 3 and cache.get_seq_length() == 4
    assert torch.equal(cache.layers[2].values, pairs[2][1])
    flat = make_dynamic_cache([t for pair in pairs for t in pair])
    assert all(torch.equal(a.keys, b.keys) for a, b in zip(flat.layers, cache.layers))
    with pytest.raises(ValueError, match="odd count"):
        make_dynamic_cache([pairs[0][0]])
