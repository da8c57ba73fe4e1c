"""A node's passes (NodeTrace): what a later pass must repeat, what becomes of states, and
what an unfinished pass leaves behind."""

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


@pytest.mark.parametrize("backend", ["jit", "onnx", "pt2"])
def test_a_state_never_updated_is_carried_unchanged(tmp_path, backend):
    """A declared state that update_state never touches keeps its value from call to call
    (LEAPP's contract): it is fed back as it came in, not demanded as a pipeline input."""
    held = torch.tensor([2.0, -1.0])
    with patchport.session("unset", save_path=tmp_path):
        for step in range(2):
            x = annotate.input_tensors("n", {"x": torch.full((2,), float(step))})
            s = annotate.state_tensors("n", {"s": held})
            annotate.output_tensors("n", {"y": x * s}, export_with=backend)
    assert _nodes()["n"].states == ["s"]
    result = patchport.compile_graph(visualize=False)
    assert result.ok
    manager = patchport.InferenceManager(result.yaml_path)
    assert sorted(manager.inputs) == ["n/x"] and manager.feedback_inputs == ["n/s"]
    for value in (3.0, -4.0):  # the state stays at its initial value on every call
        out = manager.run_policy({"n/x": torch.full((2,), value)})
        torch.testing.assert_close(out["n/y"], value * held)


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
