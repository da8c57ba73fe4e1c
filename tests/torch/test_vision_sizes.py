"""Vision models whose image height and width stay dynamic: the image-size patches
(``TransformersPatch.IMAGE_SIZE``) on real tiny transformers models."""

from __future__ import annotations

import pytest
import torch

transformers = pytest.importorskip("transformers")

from patchport.torch import TransformersPatch, apply_patches_for_model, export  # noqa: E402
from patchport.torch import use_dyn_not_str as patchport_dims_for_torch  # noqa: E402
from patchport.torch.transformers_patches import iter_transformers_patches  # noqa: E402

SHAPES = {"pixel_values": {0: "batch", 2: "height", 3: "width"}}


def tiny_mobilevit():
    torch.manual_seed(0)
    config = transformers.MobileViTConfig(
        image_size=64,
        hidden_sizes=[16, 24, 32],
        neck_hidden_sizes=[8, 8, 16, 16, 24, 32, 64],
        num_attention_heads=2,
        num_labels=3,
    )
    return transformers.MobileViTForImageClassification(config).eval()


def image(batch: int, height: int, width: int, seed: int) -> dict:
    generator = torch.Generator().manual_seed(seed)
    return {"pixel_values": torch.randn(batch, 3, height, width, generator=generator)}


def _vit_like() -> dict:
    return dict(
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=4,
        intermediate_size=64,
        image_size=32,
        patch_size=8,
    )


def tiny_dinov2():
    torch.manual_seed(0)
    return transformers.Dinov2Model(transformers.Dinov2Config(**_vit_like())).eval()


def tiny_vit():
    torch.manual_seed(0)
    return transformers.ViTModel(transformers.ViTConfig(**_vit_like())).eval()


def tiny_siglip():
    torch.manual_seed(0)
    config = transformers.SiglipVisionConfig(**_vit_like())
    return transformers.SiglipVisionModel(config).eval()


def tiny_dinov2_with_registers():
    """Sizes its resized grid with transformers' ``torch_int``, whose ``int()`` fixed a
    symbolic size to the traced one."""
    torch.manual_seed(0)
    config = transformers.Dinov2WithRegistersConfig(**_vit_like(), num_register_tokens=2)
    return transformers.Dinov2WithRegistersModel(config).eval()


# models that resize their position embeddings to the image, and the keyword that asks for it
POSITION_RESIZING = {
    "dinov2": (tiny_dinov2, {}),
    "dinov2_with_registers": (tiny_dinov2_with_registers, {}),
    "vit": (tiny_vit, {"interpolate_pos_encoding": True}),
    "siglip": (tiny_siglip, {"interpolate_pos_encoding": True}),
}


@pytest.mark.parametrize("name", list(POSITION_RESIZING))
def test_position_embeddings_resized_at_the_configured_size_are_the_stored_ones(name, monkeypatch):
    # at the configured size the original returns its embeddings as they are; resized to
    # the same grid (the path the patch takes when the size is symbolic) they are the same,
    # bit for bit, and at another size both paths resize
    from patchport.torch.builtin.transformers_vision import answering_tracing

    resizes = []
    original = torch.nn.functional.interpolate

    def counted(*args, **kwargs):
        resizes.append(kwargs.get("size"))
        return original(*args, **kwargs)

    monkeypatch.setattr(torch.nn.functional, "interpolate", counted)
    build, extra = POSITION_RESIZING[name]
    model = build()
    with torch.no_grad():
        for height, width in ((32, 32), (48, 64)):
            inputs = {**image(2, height, width, seed=1), **extra}
            expected = model(**inputs).last_hidden_state
            stored = not resizes
            with answering_tracing():
                got = model(**inputs).last_hidden_state
            assert torch.equal(got, expected), (height, width)
            assert stored == ((height, width) == (32, 32)) and resizes, resizes
            resizes.clear()
    assert torch.jit.is_tracing() is False


def test_position_embeddings_patch_is_found_for_vision_transformers():
    group = [TransformersPatch.IMAGE_SIZE]
    for build, _ in POSITION_RESIZING.values():
        names = {p.name for p in iter_transformers_patches(build(), group)}
        assert "position_embeddings_always_resized" in names


@pytest.mark.slow
@pytest.mark.parametrize("name", ["dinov2", "vit", "dinov2_with_registers"])
def test_vision_transformer_traced_at_its_own_size_keeps_height_and_width_dynamic(name):
    # traced at the configured image size, the original returns the stored embeddings
    # (a branch on num_patches == num_positions and height == width): the program was
    # pinned to square images of that size
    build, extra = POSITION_RESIZING[name]
    model = build()
    shapes = {**SHAPES, **{key: None for key in extra}}
    checks = [{**image(*size, seed=2 + i), **extra} for i, size in enumerate(CHECKS)]
    traced = {**image(2, 32, 32, seed=1), **extra}
    program, report = export(
        model, (), traced, dynamic_shapes=shapes, check_shapes=checks, allow_narrowing=True
    )
    assert all(check.ok for check in report.shape_checks), report.to_text()
    # left: torch's decomposition of the resize asks whether a grid of one patch is
    # contiguous (images under 16 pixels); the 8-pixel kernel is the model's own limit
    assert all(n.text.endswith("must be != 1") for n in report.narrowings), report.to_text()
    assert "position_embeddings_always_resized" in {p.name for p in report.patches.exercised()}
    plain = report.attempts[0]
    assert plain.configuration == "plain" and plain.report is not None
    assert plain.report.refused == 2  # only the traced size ran


CHECKS = ((1, 32, 32), (3, 48, 64), (1, 64, 40))


def tiny_mobilenet_v2():
    torch.manual_seed(0)
    config = transformers.MobileNetV2Config(image_size=32, depth_multiplier=0.25, num_labels=3)
    return transformers.MobileNetV2ForImageClassification(config).eval()


MOBILENET_CHECKS = ((1, 64, 64), (3, 97, 131), (1, 96, 160))


def test_tensorflow_same_padding_computes_the_original_padding():
    model = tiny_mobilenet_v2()
    group = [TransformersPatch.IMAGE_SIZE]
    for index, size in enumerate(MOBILENET_CHECKS):  # strides dividing the size, or not
        inputs = image(*size, seed=index)
        with torch.no_grad():
            expected = model(**inputs).logits
            with apply_patches_for_model(patch_transformers=group, model=model) as details:
                got = model(**inputs).logits
        assert torch.equal(got, expected)
    assert [p.name for p in details.exercised()] == ["tf_same_padding_any_size"]


@pytest.mark.slow
def test_tensorflow_same_padding_keeps_height_and_width_dynamic():
    # MobileNet pads "SAME" as TensorFlow does, from int(features.shape[-2]): plain
    # torch.export refuses a dynamic height or width outright
    model = tiny_mobilenet_v2()
    traced = image(2, 64, 64, seed=1)
    checks = [image(*size, seed=2 + i) for i, size in enumerate(MOBILENET_CHECKS)]
    with pytest.raises(Exception, match="Constraints violated"):
        torch.export.export(model, (), traced, dynamic_shapes=patchport_dims_for_torch(SHAPES))
    program, report = export(
        model, (), traced, dynamic_shapes=SHAPES, check_shapes=checks, allow_narrowing=True
    )
    assert all(check.ok for check in report.shape_checks), report.to_text()
    assert "tf_same_padding_any_size" in {p.name for p in report.patches.exercised()}


def test_mobilevit_unfolding_patch_is_found_in_its_group_only():
    model = tiny_mobilevit()
    found = [p.name for p in iter_transformers_patches(model, [TransformersPatch.IMAGE_SIZE])]
    # MobileViT's module also imports transformers' torch_int (a copy patched in that group)
    assert found == ["mobilevit_unfolding_without_size_branch", "torch_int_keeping_symbolic"]
    others = [g for g in TransformersPatch if g is not TransformersPatch.IMAGE_SIZE]
    assert "mobilevit_unfolding_without_size_branch" not in [
        p.name for p in iter_transformers_patches(model, others)
    ]
    llama = transformers.LlamaForCausalLM(
        transformers.LlamaConfig(
            hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2
        )
    )
    assert list(iter_transformers_patches(llama, [TransformersPatch.IMAGE_SIZE])) == []


@pytest.mark.parametrize("size", [(64, 64), (96, 160), (72, 40), (33, 47)])
def test_mobilevit_patched_unfolding_computes_the_original_values(size):
    # even maps (no rounding: the resize is an identity) and odd ones (rounded up to
    # whole patches, resized there and back), against transformers' own layer
    model = tiny_mobilevit()
    inputs = image(2, *size, seed=1)
    with torch.no_grad():
        expected = model(**inputs).logits
        with apply_patches_for_model(
            patch_transformers=[TransformersPatch.IMAGE_SIZE], model=model
        ):
            got = model(**inputs).logits
    assert torch.equal(got, expected)


@pytest.mark.slow
def test_mobilevit_exports_with_dynamic_height_and_width():
    model = tiny_mobilevit()
    traced = image(2, 128, 128, seed=1)
    # 96 x 160: maps of odd size at the later stages, rounded up to whole patches
    checks = [image(1, 128, 128, seed=2), image(3, 96, 160, seed=3), image(1, 192, 128, seed=4)]
    program, report = export(
        model,
        (),
        traced,
        dynamic_shapes=SHAPES,
        check_shapes=checks,
        backed_size_oblivious=True,
        allow_narrowing=True,  # torch still excludes maps of a single patch (tiny images)
    )
    assert all(check.ok for check in report.shape_checks), report.to_text()
    assert report.configuration == "patches+backed_size_oblivious"
    assert "mobilevit_unfolding_without_size_branch" in {p.name for p in report.patches.exercised()}
    assert not any(n.text.startswith(("height must", "width must")) for n in report.narrowings)
    # plain torch.export keeps the traced branch and size: it refuses every new image
    plain = report.attempts[0]
    assert plain.configuration == "plain" and plain.report is not None
    assert plain.report.refused == len(checks)


def tiny_depth_anything():
    """A DINOv2 backbone and DPT's neck; its depth head resizes to ``int(patch_height *
    patch_size)``, an ``int()`` that fixed a symbolic size to the traced one."""
    torch.manual_seed(0)
    backbone = transformers.Dinov2Config(
        **{**_vit_like(), "num_hidden_layers": 4, "patch_size": 14, "image_size": 56},
        out_features=["stage1", "stage2", "stage3", "stage4"],
        reshape_hidden_states=False,
    )
    config = transformers.DepthAnythingConfig(
        backbone_config=backbone,
        patch_size=14,
        reassemble_hidden_size=32,
        neck_hidden_sizes=[8, 16, 16, 32],
        fusion_hidden_size=16,
        head_hidden_size=8,
    )
    return transformers.DepthAnythingForDepthEstimation(config).eval()


@pytest.mark.parametrize("size", [(56, 56), (70, 98)])
def test_depth_anything_head_patch_computes_the_original_depth(size):
    model = tiny_depth_anything()
    found = [p.name for p in iter_transformers_patches(model, [TransformersPatch.IMAGE_SIZE])]
    assert "depth_head_at_symbolic_size" in found
    inputs = image(2, *size, seed=1)
    with torch.no_grad():
        expected = model(**inputs).predicted_depth
        with apply_patches_for_model(
            patch_transformers=[TransformersPatch.IMAGE_SIZE], model=model
        ):
            got = model(**inputs).predicted_depth
    assert torch.equal(got, expected)


@pytest.mark.slow
def test_depth_anything_exports_with_dynamic_height_and_width():
    model = tiny_depth_anything()
    traced = image(2, 70, 70, seed=1)
    checks = [image(1, 70, 70, seed=2), image(3, 56, 98, seed=3)]
    program, report = export(
        model, (), traced, dynamic_shapes=SHAPES, check_shapes=checks, allow_narrowing=True
    )
    assert all(check.ok for check in report.shape_checks), report.to_text()
    assert "depth_head_at_symbolic_size" in {p.name for p in report.patches.exercised()}
    # plain torch.export fixes the depth map's size: it refuses the new image size
    plain = report.attempts[0]
    assert plain.configuration == "plain" and plain.report is not None
    assert plain.report.refused == 1
