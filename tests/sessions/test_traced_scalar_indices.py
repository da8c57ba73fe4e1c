"""Indexing by traced integers (an argmax, an item of a traced index array) exports.

torch reads a 0-d tensor index by ``.item()``, which torch.export refuses as a
data-dependent guard; patchport records such an index as one-element advanced indexing.
A list of traced integers is one integer-array index, as NumPy reads it. A number written
into a slice whose bounds are traced (``out[b, n:] = 0``) is a masked write: its shape
does not depend on the data, so it exports and stays right on new lengths."""

from __future__ import annotations

import numpy as np
import pytest

from .pipeline_check import export_and_replay

RNG = np.random.default_rng(0)


def _penalty_loop(logits, previous):
    scores = logits.copy()
    for b in range(scores.shape[0]):
        for token in previous[b]:  # traced 0-d integers
            value = scores[b, token]
            scores[b, token] = np.where(value < 0, value * 1.3, value / 1.3)
    return {"scores": scores}


def _one_hot_and_reads(logits, previous):
    best = np.argmax(logits[0])
    onehot = np.zeros(logits.shape[1], np.float32)
    onehot[best] = 1.0
    worst = np.argmin(logits[1])
    shifted = previous[0, 0] - 20  # negative as often as not: wrapped like NumPy
    return {
        "onehot": onehot,
        "column": logits[:, best],
        "row_part": logits[previous[1, 2] % 2, 1:4],
        "pair": logits[1, worst] - logits[0, best],
        "wrapped": logits[0, shifted],
        "last_axis": logits[..., best],
    }


def _list_of_traced_indices(logits, previous):
    i, j = np.argmax(logits[0]), previous[0, 1]
    picked = logits[0][[i, j]]
    out = np.zeros_like(logits[0])
    out[[i, j]] = picked * 2
    return {"picked": picked, "out": out}


def _writes_bounded_by_traced_lengths(logits, previous):
    out = logits.copy()
    lengths = previous[:, 0] % 30  # a valid length per row, read from the data
    for b in range(out.shape[0]):
        out[b, lengths[b] :] = 0.0  # padding zeroed past each row's length
    head = logits.copy()
    head[0, : previous[1, 1] % 7] = logits[1, 0]  # a traced value into a traced span
    middle = logits.copy()
    middle[:, previous[0, 2] % 5 : -(previous[1, 3] % 4) - 1] = -1.0
    return {"out": out, "head": head, "middle": middle}


CASES = [
    _penalty_loop,
    _one_hot_and_reads,
    _list_of_traced_indices,
    _writes_bounded_by_traced_lengths,
]


def _inputs(rng):
    return {
        "logits": rng.normal(size=(2, 30)).astype(np.float32),
        "previous": rng.integers(0, 30, size=(2, 5)),
    }


@pytest.mark.parametrize("fn", CASES)
@pytest.mark.parametrize("backend", ["onnx", "pt2", "jit"])
def test_traced_integer_indices_export_and_replay(fn, backend, tmp_path):
    inputs, fresh = _inputs(RNG), _inputs(RNG)
    replay, warned = export_and_replay(fn, inputs, fresh, tmp_path, backend)
    assert not warned, [str(w.message) for w in warned]
    want = fn(**{k: v.copy() for k, v in fresh.items()})
    for key, value in want.items():
        np.testing.assert_allclose(replay[key], value, rtol=1e-6, err_msg=key)
