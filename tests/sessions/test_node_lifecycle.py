"""A node's passes (NodeTrace): what a later pass must repeat, what becomes of states, and
what an unfinished pass leaves behind."""

import sys
import warnings

import numpy as np
import pytest
import torch

import patchport
from patchport import annotate


def _nodes():
    return patchport.ExportManager().nodes


def test_a_later_pass_with_other_outputs_is_refused_and_not_kept(tmp_path):
    with patchport.session("renamed", save_path=tmp_path):
        x = annotate.input_tensors("n", {"x": np.arange(3.0)})
        annotate.output_tensors("n", {"y": x * 2})
        x = annotate.input_tensors("n", {"x": np.arange(3.0) + 1})
        with pytest.raises(
            patchport.PatchDefinitionError,
            match=r"outputs \['z'\] differ from the first pass \['y'\]; a node keeps one signature",
        ):
            annotate.output_tensors("n", {"z": x * 2})
        trace = _nodes()["n"]
        assert [p.name for p in trace.outputs] == ["y"]
        assert len(trace.samples) == 1 and trace.pass_recorder is None


def test_an_output_named_like_a_state_is_refused(tmp_path):
    with patchport.session("clash", save_path=tmp_path):
        annotate.input_tensors("n", {"x": torch.ones(2)})
        s = annotate.state_tensors("n", {"s": torch.zeros(2)})
        annotate.update_state("n", {"s": s + 1})
        with pytest.raises(patchport.PatchDefinitionError, match=r"\['s'\] are state outputs"):
            annotate.output_tensors("n", {"s": s * 2})


def test_a_state_never_updated_warns_at_the_user_line_and_stays_a_plain_input(tmp_path):
    with patchport.session("unset", save_path=tmp_path):
        x = annotate.input_tensors("n", {"x": torch.ones(2)})
        s = annotate.state_tensors("n", {"s": torch.zeros(2)})
        with pytest.warns(patchport.PatchportWarning, match="state 's' was never given") as seen:
            annotate.output_tensors("n", {"y": x + s})
            line = sys._getframe().f_lineno - 1
        x = annotate.input_tensors("n", {"x": torch.full((2,), 3.0)})
        s = annotate.input_tensors("n", {"s": torch.ones(2)})  # now an ordinary input
        annotate.output_tensors("n", {"y": x + s})
    assert [(w.filename, w.lineno) for w in seen] == [(__file__, line)]
    trace = _nodes()["n"]
    assert trace.states == [] and [p.name for p in trace.outputs] == ["y"]
    result = patchport.compile_graph(visualize=False)
    manager = patchport.InferenceManager(result.yaml_path)
    assert manager.feedback_inputs == [] and sorted(manager.inputs) == ["n/s", "n/x"]


def test_a_later_pass_cut_short_by_stop_is_not_a_sample(tmp_path):
    with patchport.session("cut", save_path=tmp_path):
        for step in range(3):
            x = annotate.input_tensors("n", {"x": np.full(3, float(step))})
            if step < 2:
                annotate.output_tensors("n", {"y": x * 2})
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a finished node is not reported unfinished
            patchport.stop()
    trace = _nodes()["n"]
    assert trace.pending_inputs == {} and len(trace.samples) == 2
    result = patchport.compile_graph(visualize=False)
    assert result.ok and [v.samples for v in result.validation] == [2]
