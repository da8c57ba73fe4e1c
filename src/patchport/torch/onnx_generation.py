"""Greedy generation with an ONNX file that is fed its own cache, against
``model.generate(do_sample=False)``: the check that the exported decode step is right over
many steps, not only on one.

What the loop feeds is read from the file's input names (:mod:`.onnx_naming`):

* a decoder (``input_ids``, ``attention_mask``, ``position_ids``, ``past_key_values.N.key``):
  the prompt, then one token a step with the ``present.N.*`` of the step before, from an
  empty past; a file without a cache gets the whole sequence at every step;
* an encoder-decoder (``decoder_input_ids``, ``past_key_values.N.decoder.*``): the encoder
  inputs as traced at every step, ``decoder_input_ids`` from ``decoder_start_token_id``, the
  decoder's self-attention cache fed back. The file must compute the cross-attention cache
  (traced with an empty one, so it has no ``past_key_values.N.encoder.*`` input): a file
  traced with a filled one only reads it, and nothing in it can start the loop.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from ..dtype_table import numpy_dtype_of_onnx

PAST = "past_key_values."
PRESENT = "present."
DECODER_FED = {"input_ids", "attention_mask", "position_ids"}
SEQ2SEQ_FED = {"decoder_input_ids", "decoder_attention_mask", "decoder_position_ids"}


def _start_token(model: torch.nn.Module) -> int | None:
    for config in (getattr(model, "generation_config", None), getattr(model, "config", None)):
        token = getattr(config, "decoder_start_token_id", None)
        if isinstance(token, int):
            return token
    return None


def _filled_cross_cache(value: Any) -> bool:
    cross = getattr(value, "cross_attention_cache", None)
    if cross is None or not hasattr(cross, "get_seq_length"):
        return False
    return bool(getattr(cross, "layers", None)) and int(cross.get_seq_length()) > 0


def generation_refusal(model: torch.nn.Module, kwargs: Mapping[str, Any]) -> str | None:
    """Why a greedy loop cannot run on the file the traced ``kwargs`` give, in words, or
    ``None``; known before exporting, so ``to_onnx`` refuses before any work."""
    kind = type(model).__name__
    generate = getattr(model, "generate", None)
    can = getattr(model, "can_generate", None)
    if not callable(generate) or (callable(can) and not can()):
        return f"{kind} cannot generate (no model.generate to compare with)"
    config = getattr(model, "config", None)
    if getattr(config, "is_encoder_decoder", False):
        if not isinstance(kwargs.get("decoder_input_ids"), torch.Tensor):
            return (
                f"{kind} is an encoder-decoder traced without decoder_input_ids, so the file "
                f"has no input for the generated tokens; trace with decoder_input_ids"
            )
        start = _start_token(model)
        vocab = getattr(config, "vocab_size", None)
        if start is None or (isinstance(vocab, int) and not 0 <= start < vocab):
            return (
                f"{kind}'s decoder_start_token_id is {start!r}, not a token of its vocabulary "
                f"({vocab}); set config.decoder_start_token_id"
            )
        for name, value in kwargs.items():
            if _filled_cross_cache(value):
                return (
                    f"the traced {name} holds a filled cross-attention cache, so the file only "
                    f"reads the encoder keys/values (past_key_values.N.encoder.*) and never "
                    f"computes them: nothing can start the loop; trace with an empty one, "
                    f"EncoderDecoderCache(self_attention_cache, DynamicCache()), for a file "
                    f"that computes them from the encoder"
                )
        return _unfed(kind, kwargs, SEQ2SEQ_FED, encoder=True)
    if not isinstance(kwargs.get("input_ids"), torch.Tensor):
        return f"{kind} was traced without input_ids: the file has no input for new tokens"
    return _unfed(kind, kwargs, DECODER_FED, encoder=False)


def _unfed(kind: str, kwargs: Mapping[str, Any], fed: set[str], encoder: bool) -> str | None:
    """Traced inputs the loop would not know how to feed at each step, in words."""
    from transformers import DynamicCache, EncoderDecoderCache

    for name, value in kwargs.items():
        if value is None or isinstance(value, (bool, int, float, str)):
            continue  # not an input of the file
        if isinstance(value, (DynamicCache, EncoderDecoderCache)):
            continue  # past_key_values.N.* in, present.N.* out
        if isinstance(value, torch.Tensor):
            if name in fed or (encoder and not name.startswith("decoder_")):
                continue  # fed each step, or an encoder input fed as traced
            return (
                f"{kind} was traced with {name}, which the greedy loop cannot feed at each "
                f"step (it feeds {', '.join(sorted(fed))}); trace without it"
            )
        return (
            f"the traced {name} is a {type(value).__name__}: the greedy loop feeds a cache "
            f"only as DynamicCache / EncoderDecoderCache tensors (past_key_values.N.*)"
        )
    return None


def _empty_past(session: Any, batch: int, names: list[str]) -> dict[str, np.ndarray]:
    """Zero-length past tensors (axis 2) for each cache input, sized from the file."""
    inputs = {item.name: item for item in session.get_inputs()}
    past = {}
    for name in names:
        item = inputs[name]
        shape = [batch if i == 0 else 0 if i == 2 else d for i, d in enumerate(item.shape)]
        if len(shape) != 4 or not all(isinstance(d, int) for d in shape):
            raise ValueError(f"cannot size an empty past for {name} {item.shape}")
        past[name] = np.zeros(shape, dtype=numpy_dtype_of_onnx(item.type) or np.float32)
    return past


def _fed_back(named: dict[str, np.ndarray], wanted: list[str]) -> dict[str, np.ndarray]:
    """The next step's ``past_key_values.*`` from this step's ``present.*``."""
    past = {PAST + n[len(PRESENT) :]: v for n, v in named.items() if n.startswith(PRESENT)}
    missing = [name for name in wanted if name not in past]
    if missing:
        raise ValueError(f"the file gives no present.* output for {missing}")
    return {name: past[name] for name in wanted}


def greedy_onnx(session: Any, input_ids: np.ndarray, new_tokens: int) -> np.ndarray:
    """``new_tokens`` greedy tokens from an ONNX decoder with inputs ``input_ids``,
    ``attention_mask`` (optional ``position_ids``) and ``past_key_values.N.key/value``; each
    step feeds the ``present.N.key/value`` of the step before, starting from an empty past.
    Without cache inputs, each step feeds the whole sequence."""
    inputs = [item.name for item in session.get_inputs()]
    outputs = [item.name for item in session.get_outputs()]
    unknown = [n for n in inputs if n not in DECODER_FED and not n.startswith(PAST)]
    if unknown or "input_ids" not in inputs:
        raise ValueError(f"the loop cannot feed the inputs {unknown or ['input_ids missing']}")
    batch = input_ids.shape[0]
    names = [n for n in inputs if n.startswith(PAST)]
    past = _empty_past(session, batch, names)
    ids, length, produced = input_ids.astype(np.int64), 0, []
    sequence = ids
    for _ in range(new_tokens):
        seq = ids.shape[1]
        feed = {"input_ids": ids, **past, **_positions(inputs, "", batch, length, seq)}
        named = dict(zip(outputs, session.run(None, feed)))
        token = named["logits"][:, -1].argmax(-1)
        produced.append(token)
        sequence = np.concatenate([sequence, token[:, None].astype(np.int64)], axis=1)
        if names:
            past = _fed_back(named, names)
            ids, length = token[:, None].astype(np.int64), length + seq
        else:  # no cache: the whole sequence again
            ids = sequence
    return np.stack(produced, axis=1)


def _positions(inputs: Any, prefix: str, batch: int, length: int, seq: int) -> dict:
    """The step's ``{prefix}attention_mask`` (ones over past and new tokens) and
    ``{prefix}position_ids`` (the new tokens' positions), for those the file takes."""
    feed = {}
    if f"{prefix}attention_mask" in inputs:
        feed[f"{prefix}attention_mask"] = np.ones((batch, length + seq), dtype=np.int64)
    if f"{prefix}position_ids" in inputs:
        positions = np.arange(length, length + seq)
        feed[f"{prefix}position_ids"] = np.tile(positions, (batch, 1))
    return feed


def greedy_onnx_seq2seq(
    session: Any, encoder_inputs: Mapping[str, np.ndarray], start: int, new_tokens: int
) -> np.ndarray:
    """``new_tokens`` greedy tokens from an ONNX encoder-decoder: the encoder inputs as
    given at every step, ``decoder_input_ids`` from ``start``, and the decoder's
    ``past_key_values.N.decoder.*`` fed back from ``present.N.decoder.*``."""
    inputs = [item.name for item in session.get_inputs()]
    outputs = [item.name for item in session.get_outputs()]
    reads_cross = [n for n in inputs if n.startswith(PAST) and ".encoder." in n]
    if reads_cross:
        raise ValueError(
            f"the file reads the cross-attention cache ({reads_cross[0]}, ...) and never "
            f"computes it; export it traced with an empty cross-attention cache"
        )
    names = [n for n in inputs if n.startswith(PAST)]
    fixed = [n for n in inputs if not n.startswith(PAST) and n not in SEQ2SEQ_FED]
    missing = [n for n in fixed if n not in encoder_inputs]
    if missing or "decoder_input_ids" not in inputs:
        raise ValueError(f"the loop has nothing to feed {missing or ['decoder_input_ids']}")
    batch = next(iter(encoder_inputs.values())).shape[0] if encoder_inputs else 1
    past = _empty_past(session, batch, names)
    ids, length, produced = np.full((batch, 1), start, dtype=np.int64), 0, []
    for _ in range(new_tokens):
        seq = ids.shape[1]
        feed = {name: encoder_inputs[name] for name in fixed}
        feed.update(
            decoder_input_ids=ids, **past, **_positions(inputs, "decoder_", batch, length, seq)
        )
        named = dict(zip(outputs, session.run(None, feed)))
        token = named["logits"][:, -1].argmax(-1)
        produced.append(token)
        past = _fed_back(named, names)
        ids, length = token[:, None].astype(np.int64), length + seq
    return np.stack(produced, axis=1)


# the logits processors a checkpoint's generation config may switch on (BART and Pegasus
# force their last token and ban repeated n-grams, Whisper suppresses tokens): each makes
# generate's token differ from the argmax of the model's logits, which is what the ONNX
# loop takes, so the reference runs without them
PLAIN_ARGMAX: dict[str, Any] = dict(
    begin_suppress_tokens=None,
    suppress_tokens=None,
    forced_bos_token_id=None,
    forced_eos_token_id=None,
    no_repeat_ngram_size=None,
    encoder_no_repeat_ngram_size=None,
    repetition_penalty=None,
    encoder_repetition_penalty=None,
    bad_words_ids=None,
    sequence_bias=None,
    min_length=None,
    min_new_tokens=None,
    exponential_decay_length_penalty=None,
)


def _reference(
    model: torch.nn.Module, inputs: Mapping[str, torch.Tensor], new_tokens: int
) -> np.ndarray:
    """``model.generate(do_sample=False)``'s new tokens without logits processors (see
    :data:`PLAIN_ARGMAX`): the last ones, one per score it returns (Whisper's generate
    drops ``decoder_start_token_id``, others keep the prompt)."""
    options: dict[str, Any] = dict(
        max_new_tokens=new_tokens,
        do_sample=False,
        num_beams=1,
        return_dict_in_generate=True,
        output_scores=True,
        **PLAIN_ARGMAX,
    )
    if getattr(model.config, "is_encoder_decoder", False):
        given = {n: t for n, t in inputs.items() if not n.startswith(("decoder_", PAST))}
    else:
        prompt = inputs["input_ids"]
        given = {"input_ids": prompt, "attention_mask": torch.ones_like(prompt)}
    with torch.no_grad():
        out = model.generate(**given, **options)
    steps = len(out.scores)
    return out.sequences[:, out.sequences.shape[1] - steps :].numpy()


def check_generation(
    session: Any, model: torch.nn.Module, inputs: Mapping[str, Any], new_tokens: int
) -> tuple[bool, str]:
    """Greedy tokens of the ONNX file against ``model.generate`` on the traced prompt (or
    encoder inputs); ``(same, words)``. ``inputs`` are the traced tensors by ONNX input
    name. ``generate`` may stop early at the end-of-sequence token; the tokens it gave must
    then be the file's first ones."""
    seq2seq = bool(getattr(model.config, "is_encoder_decoder", False))
    tensors = {n: t for n, t in inputs.items() if isinstance(t, torch.Tensor)}
    try:
        if seq2seq:
            encoder = {
                n: t.detach().cpu().numpy()
                for n, t in tensors.items()
                if not n.startswith(PAST) and n not in SEQ2SEQ_FED
            }
            got = greedy_onnx_seq2seq(session, encoder, _start_token(model), new_tokens)
        else:
            got = greedy_onnx(session, tensors["input_ids"].numpy(), new_tokens)
    except Exception as exc:  # the file cannot run a generation loop: say why
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return False, f"the ONNX loop failed: {type(exc).__name__}: {first[:300]}"
    reference = _reference(model, tensors, new_tokens)
    steps, batch = reference.shape[1], got.shape[0]
    has_cache = any(item.name.startswith(PAST) for item in session.get_inputs())
    how = "fed its own cache" if has_cache else "fed the whole sequence (no cache)"
    if seq2seq:
        how += ", encoder inputs at every step"
    first = first_difference(got[:, :steps], reference, end_tokens(model))
    if first is None:
        return True, (
            f"{steps} greedy tokens x batch {batch} from the ONNX file {how} equal "
            f"model.generate(do_sample=False)"
        )
    return False, (
        f"the ONNX loop ({how}) differs from model.generate(do_sample=False) from new token "
        f"{first} (onnx {got[:, first].tolist()}, generate {reference[:, first].tolist()})"
    )


def end_tokens(model: torch.nn.Module) -> set[int]:
    """The end-of-sequence ids ``generate`` stops a sequence at (one or a list)."""
    for config in (getattr(model, "generation_config", None), getattr(model, "config", None)):
        found = getattr(config, "eos_token_id", None)
        if found is not None:
            values = found if isinstance(found, (list, tuple)) else [found]
            return {int(v) for v in values if isinstance(v, int)}
    return set()


def first_difference(got: np.ndarray, reference: np.ndarray, ends: set[int]) -> int | None:
    """The first step where the loop's tokens differ from ``generate``'s, or None.

    A sequence of the batch that ``generate`` ended (its end-of-sequence token) is then
    padded by ``generate`` while the others go on: it is compared up to and with that
    token; the loop's tokens after it are not ``generate``'s to judge."""
    differs = got != reference
    for row, tokens in enumerate(reference):
        ended = np.flatnonzero(np.isin(tokens, list(ends))) if ends else []
        if len(ended):
            differs[row, int(ended[0]) + 1 :] = False
    columns = np.flatnonzero(differs.any(axis=0))
    return int(columns[0]) if len(columns) else None
