"""Token and embedding pipelines around language and vision-language models x backends.

New pipelines in the idioms of public inference code around transformer models (nobody
tuned patchport to them), on token ids, masks, logits and embeddings in NumPy and torch:
attention masks and position ids as Hugging Face builds them (``cumsum`` of the mask, pad
positions set to 1), the additive 4-D causal + padding mask, a logits processor chain
(repetition penalty by ``take_along_axis`` / ``put_along_axis``, temperature, top-k by
``np.partition``, top-p by a sorted ``cumsum`` scattered back), greedy decoding of a tiny
LM for a fixed number of steps with ``np.concatenate``, sentence-transformers mean pooling
and L2 normalisation, a cosine retrieval matrix, CLIP's zero-shot softmax with
``logit_scale.exp()``, NER first-subword aggregation by a word-id table, extractive QA's
best span (outer sum, ``np.triu`` / ``np.tril`` band, flat ``argmax``, ``unravel_index``),
Whisper's suppressed tokens set to ``-inf``, a beam step by a stable log-softmax and
``argsort``, sliding-window chunking with a stride, truncation and padding by ``np.pad``,
and CTC greedy decoding's repeat collapse. Each is traced once, exported and replayed on
fresh inputs against the plain code; the classes are those of ``bench/real_pipelines.py``
(whose harness is reused).

Run: python bench/real_pipelines_tokens.py [--variants] [--all-backends] [name ...]
(onnx and pt2 by default; ``--all-backends`` adds jit; ``--variants`` runs one-line
changes of the data-dependent idioms instead, each of which must be right or loud.)
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import real_pipelines as harness  # noqa: E402

harness.HERE = str(Path(__file__).resolve())  # the user's lines are in this file
torch.manual_seed(0)
P = harness.Pipeline

BATCH, LENGTH, VOCAB, HIDDEN, PAD = 2, 12, 50, 16, 0


def _ids(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Right-padded token ids: each row a random length of 5 to LENGTH."""
    ids = rng.integers(3, VOCAB, size=(BATCH, LENGTH))
    for row, length in enumerate(rng.integers(5, LENGTH + 1, size=BATCH)):
        ids[row, length:] = PAD
    return {"input_ids": ids}


def _logits(rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {
        "logits": rng.normal(0, 2, size=(BATCH, VOCAB)).astype(np.float32),
        "previous": rng.integers(0, VOCAB, size=(BATCH, 6)),
    }


def _embeddings(rng: np.random.Generator) -> dict[str, np.ndarray]:
    out = _ids(rng)
    out["token_embeddings"] = rng.normal(size=(BATCH, LENGTH, HIDDEN)).astype(np.float32)
    return out


# ------------------------------------------------------------------ masks and positions
def masks_and_positions(input_ids):
    """Hugging Face's attention mask and position ids for right padding."""
    attention_mask = (input_ids != PAD).astype(np.int64)
    position_ids = np.cumsum(attention_mask, axis=-1) - 1
    position_ids[attention_mask == 0] = 1
    return {"attention_mask": attention_mask, "position_ids": position_ids}


def additive_causal_mask(input_ids):
    """The 4-D additive mask: causal triangle plus padded keys, in float32."""
    mask = torch.from_numpy((input_ids != PAD).astype(np.float32))
    bsz, tgt = mask.shape
    causal = torch.full((tgt, tgt), torch.finfo(torch.float32).min)
    causal = torch.triu(causal, diagonal=1)[None, None]
    expanded = mask[:, None, None, :].expand(bsz, 1, tgt, tgt)
    inverted = (1.0 - expanded).masked_fill((1.0 - expanded).bool(), torch.finfo(torch.float32).min)
    return {"mask": (causal + inverted).clamp(min=torch.finfo(torch.float32).min)}


# ------------------------------------------------------------------ logits processing
def logits_processors(logits, previous, penalty=1.3, temperature=0.7, top_k=8, top_p=0.9):
    """Repetition penalty, temperature, top-k and top-p, then the sampling distribution."""
    scores = logits.copy()
    score = np.take_along_axis(scores, previous, axis=1)
    score = np.where(score < 0, score * penalty, score / penalty)
    np.put_along_axis(scores, previous, score, axis=1)
    scores = scores / temperature
    kth = np.partition(scores, -top_k, axis=-1)[:, -top_k][:, None]
    scores = np.where(scores < kth, -np.inf, scores)
    order = np.argsort(scores, axis=-1)  # ascending, as transformers' TopPLogitsWarper
    sorted_scores = np.take_along_axis(scores, order, axis=-1)
    exp = np.exp(sorted_scores - sorted_scores.max(axis=-1, keepdims=True))
    cumulative = np.cumsum(exp / exp.sum(axis=-1, keepdims=True), axis=-1)
    remove_sorted = cumulative <= (1 - top_p)
    remove_sorted[:, -1] = False  # keep at least one token
    remove = np.zeros_like(remove_sorted)
    np.put_along_axis(remove, order, remove_sorted, axis=1)
    scores = np.where(remove, -np.inf, scores)
    probs = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return {"probs": probs / probs.sum(axis=-1, keepdims=True)}


_SUPPRESS = [1, 2, 7, 11, 40]


def whisper_suppress(logits, previous):
    """Whisper's suppressed tokens and its no-timestamp rule, then a log-softmax."""
    logits = logits.copy()
    logits[:, _SUPPRESS] = -np.inf
    logits[:, 45:] = -np.inf  # timestamps not allowed at this step
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return {"logprobs": shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))}


def beam_step(logits, previous, beams=3):
    """A beam step: log-softmax by the max-shift, the best tokens by argsort."""
    m = logits.max(axis=-1, keepdims=True)
    logprobs = logits - m - np.log(np.sum(np.exp(logits - m), axis=-1, keepdims=True))
    best = np.argsort(logprobs, axis=-1)[:, -beams:][:, ::-1]
    return {"tokens": best, "scores": np.take_along_axis(logprobs, best, axis=-1)}


class TinyLM(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(VOCAB, HIDDEN)
        self.head = torch.nn.Linear(HIDDEN, VOCAB)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.head(torch.cumsum(self.embed(ids), dim=1))


_LM = TinyLM().eval()


def greedy_decode(input_ids, steps=3):
    """Greedy decoding for a fixed number of steps: argmax of the last logits appended."""
    ids = input_ids
    for _ in range(steps):
        with torch.no_grad():
            logits = _LM(torch.from_numpy(ids)).numpy()
        next_token = logits[:, -1, :].argmax(axis=-1)
        ids = np.concatenate([ids, next_token[:, None]], axis=-1)
    return {"ids": ids}


def last_real_token_logits(input_ids):
    """Logits at each row's last real token (mask sum minus one as a gather index)."""
    with torch.no_grad():
        logits = _LM(torch.from_numpy(input_ids))
    lengths = torch.from_numpy((input_ids != PAD).sum(axis=1)) - 1
    return {"last": logits[torch.arange(BATCH), lengths]}


# ------------------------------------------------------------------ embeddings
def mean_pooling(input_ids, token_embeddings):
    """sentence-transformers' mean pooling over the attention mask, then L2 norm."""
    mask = (input_ids != PAD).astype(np.float32)[..., None]
    summed = (token_embeddings * mask).sum(axis=1)
    counts = np.clip(mask.sum(axis=1), 1e-9, None)
    pooled = summed / counts
    return {"embedding": pooled / np.linalg.norm(pooled, axis=1, keepdims=True)}


_CORPUS = np.random.default_rng(7).normal(size=(5, HIDDEN)).astype(np.float32)


def cosine_retrieval(input_ids, token_embeddings):
    """CLS pooling, cosine similarity to a fixed corpus, best match and its score."""
    query = token_embeddings[:, 0]
    query = query / np.linalg.norm(query, axis=-1, keepdims=True)
    corpus = _CORPUS / np.linalg.norm(_CORPUS, axis=-1, keepdims=True)
    scores = query @ corpus.T
    best = scores.argmax(axis=1)
    return {"best": best, "score": scores[np.arange(len(best)), best]}


_TEXT = torch.nn.functional.normalize(torch.randn(4, HIDDEN), dim=-1)
_LOGIT_SCALE = torch.tensor(np.log(1 / 0.07), dtype=torch.float32)


def clip_zero_shot(input_ids, token_embeddings):
    """CLIP's zero-shot head: normalised image features, logit_scale.exp(), softmax."""
    image = torch.from_numpy(token_embeddings.mean(axis=1))
    image = image / image.norm(p=2, dim=-1, keepdim=True)
    logits_per_image = _LOGIT_SCALE.exp() * image @ _TEXT.t()
    return {"probs": logits_per_image.softmax(dim=-1)}


_WORD_IDS = [None, 0, 0, 1, 2, 2, 2, 3, 4, 4, None, None]  # a tokenizer's word_ids()
_FIRST_SUBWORD = [i for i, w in enumerate(_WORD_IDS) if w is not None and w != _WORD_IDS[i - 1]]


def ner_first_subword(input_ids, token_embeddings):
    """Token classification: softmax scores, labels of each word's first sub-token."""
    logits = token_embeddings[..., :5]
    shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
    scores = shifted / shifted.sum(axis=-1, keepdims=True)
    labels = scores.argmax(axis=-1)
    return {"labels": labels[:, _FIRST_SUBWORD], "scores": scores.max(axis=-1)[:, _FIRST_SUBWORD]}


def qa_best_span(input_ids, token_embeddings, max_answer=4):
    """Extractive QA: start + end scores outer sum, a band of legal spans, flat argmax."""
    start = token_embeddings[..., 0]
    end = token_embeddings[..., 1]
    outer = start[:, :, None] + end[:, None, :]
    band = np.tril(np.triu(np.ones((LENGTH, LENGTH)), 0), max_answer - 1)
    candidates = np.where(band[None] > 0, outer, -np.inf)
    flat = candidates.reshape(BATCH, -1).argmax(axis=1)
    starts, ends = np.unravel_index(flat, (LENGTH, LENGTH))
    return {"span": np.stack([starts, ends], axis=1), "score": candidates.reshape(BATCH, -1).max(1)}


# ------------------------------------------------------------------ sequences
def sliding_chunks(input_ids, window=6, stride=3):
    """Overlapping windows of a long sequence (a long-document reader's chunking)."""
    flat = input_ids.reshape(-1)
    chunks = [flat[i : i + window] for i in range(0, flat.shape[0] - window + 1, stride)]
    return {"chunks": np.stack(chunks)}


def truncate_and_pad(input_ids, max_length=16):
    """Truncation to a maximum length and right padding by np.pad."""
    ids = input_ids[:, :max_length]
    padded = np.pad(ids, ((0, 0), (0, max_length - ids.shape[1])), constant_values=PAD)
    return {"ids": padded, "mask": (padded != PAD).astype(np.int64)}


def ctc_collapse_mask(logits, previous, blank=0):
    """CTC greedy decoding as a fixed-size result: best classes per frame, repeats and
    blanks marked by a keep mask (the ragged list is left to the caller)."""
    frames = logits.reshape(BATCH * 5, VOCAB // 5)
    best = frames.argmax(axis=-1)
    keep = np.diff(np.r_[-1, best]) != 0
    keep &= best != blank
    return {"best": best, "keep": keep}


PIPELINES = [
    P("masks_and_positions", masks_and_positions, _ids),
    P("additive_causal_mask", additive_causal_mask, _ids),
    P("logits_processors", logits_processors, _logits),
    P("whisper_suppress", whisper_suppress, _logits),
    P("beam_step", beam_step, _logits),
    P("greedy_decode", greedy_decode, _ids),
    P("last_real_token_logits", last_real_token_logits, _ids),
    P("mean_pooling", mean_pooling, _embeddings),
    P("cosine_retrieval", cosine_retrieval, _embeddings),
    P("clip_zero_shot", clip_zero_shot, _embeddings),
    P("ner_first_subword", ner_first_subword, _embeddings),
    P("qa_best_span", qa_best_span, _embeddings),
    P("sliding_chunks", sliding_chunks, _ids),
    P("truncate_and_pad", truncate_and_pad, _ids),
    P("ctc_collapse_mask", ctc_collapse_mask, _logits),
]


# ------------------------------------------------------------------ one-line variants
def ctc_collapse_ragged(logits, previous, blank=0):
    """CTC greedy decoding to the ragged token list (a size decided by the data)."""
    best = logits.reshape(BATCH * 5, VOCAB // 5).argmax(axis=-1)
    keep = (np.diff(np.r_[-1, best]) != 0) & (best != blank)
    return {"tokens": best[keep]}


def top_p_loop(logits, previous, top_p=0.9):
    """Top-p with a Python loop to the cutoff (a data-dependent count)."""
    probs = np.exp(logits[0] - logits[0].max())
    probs = probs / probs.sum()
    order = np.argsort(-probs)
    total, kept = 0.0, []
    for index in order:
        kept.append(index)
        total += probs[index]
        if total >= top_p:
            break
    out = np.zeros_like(probs)
    out[kept] = probs[kept]
    return {"probs": out / out.sum()}


def empty_mask_guard(input_ids):
    """A guard for an all-padding batch (a Python branch on the data)."""
    mask = (input_ids != PAD).astype(np.float32)
    if mask.sum() == 0:
        return {"mask": np.ones_like(mask)}
    return {"mask": mask}


def lengths_loop_zeroing(input_ids, token_embeddings):
    """Padding positions zeroed by a loop with a slice bound read from the mask."""
    out = token_embeddings.copy()
    lengths = (input_ids != PAD).sum(axis=1)
    for b in range(BATCH):
        out[b, lengths[b] :] = 0.0
    return {"out": out}


def lengths_mask_zeroing(input_ids, token_embeddings):
    """The same zeroing by a mask built from arange < lengths (traced)."""
    lengths = (input_ids != PAD).sum(axis=1)
    keep = np.arange(LENGTH)[None, :] < lengths[:, None]
    return {"out": token_embeddings * keep[..., None]}


def decode_tolist(input_ids):
    """The ids handed to a tokenizer's decode as Python lists (leaves the trace)."""
    words = [" ".join(str(t) for t in row if t != PAD) for row in input_ids.tolist()]
    return {"lengths": np.array([len(w) for w in words], dtype=np.int64)}


def last_index_by_where(input_ids):
    """Each row's last real token by np.where(...)[0].max() in a loop over rows."""
    last = np.array([np.where(row != PAD)[0].max() for row in input_ids])
    return {"last": last}


def penalty_loop(logits, previous, penalty=1.3):
    """The repetition penalty as a Python loop over the previous tokens."""
    scores = logits.copy()
    for b in range(BATCH):
        for token in previous[b]:
            value = scores[b, token]
            scores[b, token] = value * penalty if value < 0 else value / penalty
    return {"scores": scores}


def penalty_loop_where(logits, previous, penalty=1.3):
    """The same loop with np.where for the sign (no Python branch)."""
    scores = logits.copy()
    for b in range(BATCH):
        for token in previous[b]:
            value = scores[b, token]
            scores[b, token] = np.where(value < 0, value * penalty, value / penalty)
    return {"scores": scores}


VARIANTS = [
    P("ctc_collapse_ragged", ctc_collapse_ragged, _logits),
    P("top_p_loop", top_p_loop, _logits),
    P("empty_mask_guard", empty_mask_guard, _ids),
    P("lengths_loop_zeroing", lengths_loop_zeroing, _embeddings),
    P("lengths_mask_zeroing", lengths_mask_zeroing, _embeddings),
    P("decode_tolist", decode_tolist, _ids),
    P("last_index_by_where", last_index_by_where, _ids),
    P("penalty_loop", penalty_loop, _logits),
    P("penalty_loop_where", penalty_loop_where, _logits),
]


def main(names: list[str]) -> dict[str, dict[str, int]]:
    return harness.run_probe(names, PIPELINES, VARIANTS, "tokens")


if __name__ == "__main__":
    main(sys.argv[1:])
