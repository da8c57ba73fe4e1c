"""Vision models whose image height and width stay dynamic: the image-size patches
(``TransformersPatch.IMAGE_SIZE``) on real tiny transformers models."""

from __future__ import annotations

import pytest
import torch

transformers = pytest.importorskip("transformers")

from patchport.torch import TransformersPatch, apply_patches_for_model, export  # noqa: E402
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


def test_mobilevit_unfolding_patch_is_found_in_its_group_only():
    model = tiny_mobilevit()
    found = [p.name for p in iter_transformers_patches(model, [TransformersPatch.IMAGE_SIZE])]
    assert found == ["mobilevit_unfolding_without_size_branch"]
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
