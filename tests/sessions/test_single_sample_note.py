"""A node validated on one sample says so; a second pass catches a baked constant."""

import numpy as np
import pytest

import patchport
from patchport import annotate

TABLE = np.arange(10.0) * 3


def _pass(idx, scale):
    idx, scale = annotate.input_tensors("n", {"idx": idx, "scale": scale})
    picked = TABLE[idx.tolist()]  # indices as a Python list: the rows they pick are baked in
    annotate.output_tensors("n", {"y": picked * scale})


def test_one_pass_summary_says_validation_cannot_catch_a_baked_constant(tmp_path):
    with patchport.session("one", save_path=tmp_path):
        with pytest.warns(patchport.TraceLossWarning, match="input 'n/idx' reaches no output"):
            _pass(np.array([1, 2]), np.ones(2))
    summary = patchport.compile_graph(visualize=False).summary()
    assert "ok on 1 sample(s)" in summary
    assert "validated on the traced sample only" in summary


def test_two_passes_catch_the_baked_constant(tmp_path):
    with patchport.session("two", save_path=tmp_path):
        with pytest.warns(patchport.TraceLossWarning):
            _pass(np.array([1, 2]), np.ones(2))
        _pass(np.array([3, 7]), np.ones(2))
    result = patchport.compile_graph(visualize=False, strict=False)
    assert not result.ok
    assert "MISMATCH on 2 sample(s)" in result.summary()
    assert "validated on the traced sample only" not in result.summary()
