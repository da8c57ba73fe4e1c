"""``patchport.torch.export`` is never worse than plain ``torch.export``: where plain's program
is right on the user's new shapes, ours is returned too (not refused), and at least as general.

Falcon with a cache is the case that was refused: torch traces batch, seq and past as >= 2
(its 0/1 specialization), which makes the mask length ``past+seq`` >= 4. That bound follows
from torch's assumption, it is not a narrowing a patch added; the shape checks decide.
"""

from __future__ import annotations

import pytest
import torch

transformers = pytest.importorskip("transformers")

from patchport.torch import export, register_cache_pytrees, use_dyn_not_str  # noqa: E402

from .test_export_families import _decoder_inputs  # noqa: E402


def _falcon():
    torch.manual_seed(0)
    config = transformers.FalconConfig(
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=4,
        vocab_size=64,
        new_decoder_architecture=True,
        num_kv_heads=2,
    )
    config.num_key_value_heads = 4  # the cache _decoder_inputs builds: one head per query head
    model = transformers.AutoModelForCausalLM.from_config(config).eval()
    shapes = {
        "input_ids": {0: "batch", 1: "seq"},
        "attention_mask": {0: "batch", 1: "past+seq"},
        "cache": [[{0: "batch", 2: "past"}], [{0: "batch", 2: "past"}]],
    }
    return model, shapes


@pytest.mark.slow
def test_falcon_with_a_cache_is_returned_where_plain_torch_is_right():
    model, shapes = _falcon()
    register_cache_pytrees()  # plain torch.export needs the cache as a pytree node
    traced = _decoder_inputs(model, 2, 5, 7, seed=1)
    checks = [_decoder_inputs(model, 2, 1, 12, seed=2), _decoder_inputs(model, 1, 4, 3, seed=3)]
    plain = torch.export.export(
        model,
        (),
        kwargs=_decoder_inputs(model, 2, 5, 7, seed=1),
        dynamic_shapes=use_dyn_not_str(shapes),
    )
    for item in checks:  # plain's program is right on these shapes
        with torch.no_grad():
            expected = model(**_copy(item)).logits
            got = plain.module()(**_copy(item)).logits
        torch.testing.assert_close(got, expected)
    program, report = export(model, (), traced, dynamic_shapes=shapes, check_shapes=checks)
    assert report.is_general, report.to_text()
    assert all(check.ok for check in report.shape_checks)
    assert any("past+seq" in item.text for item in report.assumptions), report.to_text()
    assert len(report.attempts) <= 2, report.to_text()  # never three full exports


def _copy(item):
    import copy

    return copy.deepcopy(item)


def test_one_export_when_the_checks_prove_what_torch_assumed():
    # plain torch traces batch and seq as >= 2; checks that run each of them at size 1 and
    # match eager prove the program there, so no second full export is spent
    import transformers as tr

    from .test_export_families import ONE_LAYER, _tokens

    torch.manual_seed(0)
    model = tr.AutoModelForCausalLM.from_config(tr.LlamaConfig(**ONE_LAYER)).eval()

    def inputs(batch, seq, seed):
        mask = torch.ones(batch, seq, dtype=torch.int64)
        return {"input_ids": _tokens(batch, seq, seed), "attention_mask": mask, "use_cache": False}

    shapes = {
        "input_ids": {0: "batch", 1: "seq"},
        "attention_mask": {0: "batch", 1: "seq"},
        "use_cache": None,
    }
    checks = [inputs(1, 1, seed=2), inputs(3, 4, seed=3)]
    program, report = export(model, (), inputs(2, 5, 1), dynamic_shapes=shapes, check_shapes=checks)
    assert report.is_general, report.to_text()
    assert [a.configuration for a in report.attempts] == ["plain"], report.to_text()
    assert "ran each of them at size 1" in report.choice


@pytest.mark.slow
def test_falcon_with_a_cache_costs_one_export_when_a_probe_proves_past_1():
    # no check runs past at size 1 (torch traced it as >= 2 and does not enforce it): one
    # run of plain's program on the traced inputs cut to past=1 (the mask with it) proves
    # it, where a second full export was spent before
    model, shapes = _falcon()
    traced = _decoder_inputs(model, 2, 5, 7, seed=1)
    checks = [_decoder_inputs(model, 2, 1, 12, seed=2), _decoder_inputs(model, 1, 4, 3, seed=3)]
    program, report = export(model, (), traced, dynamic_shapes=shapes, check_shapes=checks)
    assert [a.configuration for a in report.attempts] == ["plain"], report.to_text()
    (probe,) = [c for c in report.shape_checks if c.label.startswith("probe ")]
    assert probe.ok and "past=1" in probe.label, report.to_text()
    assert "attention_mask=(2, 6)" in probe.label and "(2, 4, 1, 8)" in probe.label
    assert "size-1 probe" in report.choice
    past_1 = _decoder_inputs(model, 2, 5, 1, seed=4)  # the program is right there
    with torch.no_grad():
        expected = model(**_copy(past_1)).logits
        got = program.module()(**_copy(past_1)).logits
    torch.testing.assert_close(got, expected)


class _TwiceAtOne(torch.nn.Module):
    """Doubles its input when it has one row: torch's >= 2 trace misses that branch and the
    program still runs one row, silently wrong."""

    def forward(self, x):
        return x * 2 if x.shape[0] == 1 else x + 0


def test_a_probe_that_finds_the_program_wrong_at_size_1_sends_export_on():
    program, report = export(
        _TwiceAtOne(),
        (torch.randn(3, 2),),
        dynamic_shapes=({0: "rows"},),
        check_shapes=[(torch.randn(4, 2),)],
        patch_transformers=False,
        allow_narrowing=True,
    )
    plain = report.attempts[0]
    assert plain.configuration == "plain" and len(report.attempts) > 1, report.to_text()
    (probe,) = [c for c in plain.report.shape_checks if c.label.startswith("probe ")]
    assert not probe.ok and probe.max_abs_diff is not None and "rows=1" in probe.label
    # never silently wrong at one row: the program chosen refuses it or is right there
    one = torch.randn(1, 2)
    try:
        got = program.module()(one)
    except Exception:
        assert report.narrowings, report.to_text()
    else:
        torch.testing.assert_close(got, one * 2)


@pytest.mark.slow
def test_a_bound_the_eager_model_has_too_is_its_limit_not_a_narrowing():
    # BERT's position table has 16 rows: plain's program says seq <= 16, and eager itself
    # fails at 17; that costs no second and third export looking for a wider program
    torch.manual_seed(0)
    config = transformers.BertConfig(
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=4,
        intermediate_size=64,
        vocab_size=64,
        max_position_embeddings=16,
    )
    model = transformers.BertModel(config).eval()

    def inputs(batch, seq, seed):
        generator = torch.Generator().manual_seed(seed)
        ids = torch.randint(0, 64, (batch, seq), generator=generator)
        return {"input_ids": ids, "attention_mask": torch.ones(batch, seq, dtype=torch.int64)}

    shapes = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}}
    checks = [inputs(1, 1, 2), inputs(3, 16, 3)]
    program, report = export(model, (), inputs(2, 5, 1), dynamic_shapes=shapes, check_shapes=checks)
    assert [a.configuration for a in report.attempts] == ["plain"], report.to_text()
    assert report.is_general and report.narrowings == [], report.to_text()
    (limit,) = report.limits
    assert limit.text.startswith("seq must be <= 16: eager runs seq=16 and fails at 17")
    assert "limits of the model itself" in report.to_text()


def test_a_bound_eager_runs_past_stays_a_narrowing():
    class FirstTwelve(torch.nn.Module):
        def forward(self, x):
            return x[:12] * 2 if x.shape[0] <= 12 else x * 3

    program, report = export(
        FirstTwelve(),
        (torch.randn(4, 2),),
        dynamic_shapes=({0: "rows"},),
        patch_transformers=False,
        allow_narrowing=True,
    )
    assert report.limits == [], report.to_text()
    assert "rows must be <= 12" in [n.text for n in report.narrowings], report.to_text()


def test_a_lower_bound_the_eager_model_has_too_is_its_limit_not_a_narrowing():
    # a kernel of 10 samples: eager runs 10 samples and fails at 9, so the program's
    # samples >= 10 is the model's own limit
    torch.manual_seed(0)
    model = torch.nn.Conv1d(1, 4, 10, stride=10).eval()
    checks = [(torch.randn(1, 1, 400),), (torch.randn(3, 1, 1000),)]
    program, report = export(
        model,
        (torch.randn(2, 1, 800),),
        dynamic_shapes=({0: "batch", 2: "samples"},),
        check_shapes=checks,
        allow_narrowing=True,
    )
    assert "samples must be >= 10" not in [n.text for n in report.narrowings], report.to_text()
    limits = [item.text for item in report.limits]
    assert "samples must be >= 10: eager runs samples=10 and fails at 9" in [
        text.split(" (")[0] for text in limits
    ], report.to_text()
