"""``to_onnx(check_generation=N)`` beyond LLaMA: a greedy loop that feeds the ONNX file its own
cache gives the tokens of ``model.generate(do_sample=False)`` for a dense decoder without a
cache (the whole sequence at every step) and an encoder-decoder (``decoder_input_ids`` from
``decoder_start_token_id``, the decoder's cache fed back); a file that cannot run the loop
is refused in words before exporting. The MoE decoder's loop runs in test_to_onnx.py."""

from __future__ import annotations

import numpy as np
import pytest
import torch

transformers = pytest.importorskip("transformers")
pytest.importorskip("onnxscript")
pytest.importorskip("onnxruntime")

from patchport.errors import ExportArgumentError  # noqa: E402
from patchport.torch import to_onnx  # noqa: E402

from .test_export_families import FAMILIES, ONE_LAYER, _tokens  # noqa: E402


def _without_cache(batch: int, seq: int, seed: int) -> dict:
    mask = torch.ones(batch, seq, dtype=torch.int64)
    return {"input_ids": _tokens(batch, seq, seed), "attention_mask": mask, "use_cache": False}


@pytest.mark.slow
def test_dense_decoder_without_cache_runs_in_onnx_runtime_and_generates_like_generate(tmp_path):
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(
        transformers.Qwen2Config(**ONE_LAYER)
    ).eval()
    shapes = {
        "input_ids": {0: "batch", 1: "seq"},
        "attention_mask": {0: "batch", 1: "seq"},
        "use_cache": None,
    }
    checks = [_without_cache(1, 5, 2), _without_cache(3, 17, 3)]
    traced = _without_cache(2, 5, 1)
    # an end-of-sequence token that the first prompt generates early and the second never:
    # generate pads the first sequence after it while the second goes on
    model.generation_config.eos_token_id = _token_ending_one_row(model, traced["input_ids"])
    path, report = to_onnx(
        model,
        (),
        traced,
        dynamic_shapes=shapes,
        path=tmp_path / "qwen2.onnx",
        check_shapes=checks,
        check_generation=20,
    )
    assert report.inputs == ["input_ids", "attention_mask"]  # no cache in or out
    assert report.outputs == ["logits"]
    assert len(report.checks) == 2 and all(c.ok for c in report.checks), report.to_text()
    assert report.generation_ok, report.generation
    assert "greedy tokens x batch 2 from the ONNX file fed the whole sequence" in report.generation
    assert report.ok


def _token_ending_one_row(model, prompt: torch.Tensor, steps: int = 20) -> int:
    """A token greedy decoding gives the first prompt within a few steps and never the
    second one."""
    model.generation_config.eos_token_id = None
    with torch.no_grad():
        tokens = model.generate(
            input_ids=prompt,
            attention_mask=torch.ones_like(prompt),
            max_new_tokens=steps,
            do_sample=False,
        )[:, prompt.shape[1] :]
    first, second = tokens.tolist()
    token = next(t for t in first[1:8] if t not in second and t not in first[: first.index(t)])
    return int(token)


def test_a_sequence_generate_ended_is_compared_up_to_its_end_token():
    from patchport.torch.onnx_generation import first_difference

    # generate ended the first sequence at token 2 and padded it with 0; the loop went on
    reference = np.array([[5, 2, 0, 0], [7, 8, 9, 10]])
    got = np.array([[5, 2, 41, 3], [7, 8, 9, 10]])
    assert first_difference(got, reference, {2}) is None
    assert first_difference(got, reference, set()) == 2  # no end token: every step counts
    early = got.copy()
    early[0, 1] = 3  # the loop did not end where generate did
    assert first_difference(early, reference, {2}) == 1
    late = got.copy()
    late[1, 3] = 11  # the sequence still running differs
    assert first_difference(late, reference, {2}) == 3


def _empty_cross(inputs: dict) -> dict:
    cache = inputs["cache"]
    empty = transformers.DynamicCache()
    return {**inputs, "cache": transformers.EncoderDecoderCache(cache.self_attention_cache, empty)}


@pytest.mark.slow
def test_encoder_decoder_generates_like_generate_from_the_onnx_file(tmp_path):
    # traced with an empty cross-attention cache, the file computes the encoder's keys and
    # values (present.N.encoder.*); the loop feeds the encoder inputs, decoder_input_ids from
    # decoder_start_token_id and the decoder's own cache back
    model, traced, shapes, checks = FAMILIES["text encoder-decoder + cache"]()
    model.generation_config.decoder_start_token_id = 0
    # a checkpoint's generation policy (BART's and Pegasus's: no repeated n-grams, a forced
    # last token): the file is the model's greedy step, so generate runs without it
    model.generation_config.update(
        forced_eos_token_id=1, no_repeat_ngram_size=2, repetition_penalty=1.3
    )
    shapes["cache"][1] = [[], []]
    path, report = to_onnx(
        model,
        (),
        _empty_cross(traced),
        dynamic_shapes=shapes,
        path=tmp_path / "t5.onnx",
        check_shapes=[_empty_cross(checks[0])],  # the decode step
        check_generation=20,
    )
    assert "past_key_values.0.decoder.key" in report.inputs
    assert not [name for name in report.inputs if ".encoder." in name]
    assert "present.0.encoder.value" in report.outputs
    assert report.checks and all(c.ok for c in report.checks), report.to_text()
    assert report.generation_ok, report.generation
    assert "20 greedy tokens x batch 2" in report.generation
    assert "encoder inputs at every step" in report.generation
    assert report.ok


def test_a_file_that_cannot_run_the_loop_is_refused_in_words_before_exporting(tmp_path):
    # each refusal comes before torch.export: nothing is written
    target = tmp_path / "never.onnx"
    model, traced, shapes, _ = FAMILIES["text encoder-decoder + cache"]()
    model.generation_config.decoder_start_token_id = 0
    with pytest.raises(ExportArgumentError) as caught:  # filled cross-attention cache
        to_onnx(model, (), traced, dynamic_shapes=shapes, path=target, check_generation=5)
    text = str(caught.value)
    assert "to_onnx(check_generation=5)" in text and "filled cross-attention cache" in text
    assert "EncoderDecoderCache(self_attention_cache, DynamicCache())" in text
    assert "check_generation=0" in text

    model, traced, shapes, _ = FAMILIES["speech encoder-decoder + cache"]()
    with pytest.raises(ExportArgumentError, match="decoder_start_token_id is 50257, not a token"):
        to_onnx(model, (), traced, dynamic_shapes=shapes, path=target, check_generation=5)

    model, traced, shapes, _ = FAMILIES["dense decoder + cache"]()
    ids = traced.pop("input_ids")
    traced["inputs_embeds"] = model.get_input_embeddings()(ids).detach()
    shapes["inputs_embeds"] = shapes.pop("input_ids")
    with pytest.raises(ExportArgumentError, match="traced without input_ids"):
        to_onnx(model, (), traced, dynamic_shapes=shapes, path=target, check_generation=5)

    model, traced, shapes, _ = FAMILIES["encoder"]()
    with pytest.raises(ExportArgumentError, match="BertModel cannot generate"):
        to_onnx(model, (), traced, dynamic_shapes=shapes, path=target, check_generation=5)
    assert not target.exists()
