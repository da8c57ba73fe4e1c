"""Traced values answer LEAPP's questions about their node (is_tracing, context,
context_obj, output_port, tensor), and output_tensors hands back the values it was given.

LEAPP (0.7.2 and its repository since) checks a value's state through these attributes;
dry_run and non_traced nodes trace like any other and only skip writing a model.
"""

import numpy as np
import pytest
import torch

import patchport
from patchport import ExportManager, annotate
from patchport.leapp_graph.datatypes import TracedNpArray, TracedTensor


def test_values_know_their_node_and_port(tmp_path):
    with patchport.session("facts", save_path=tmp_path):
        x = annotate.input_tensors("scale", {"x": torch.arange(3.0)})
        assert isinstance(x, TracedTensor) and x.is_tracing
        assert x.context == "scale" and x.output_port is None
        assert x.context_obj is ExportManager().nodes["scale"]
        doubled, shifted = x * 2.0, x + 1.0
        got = annotate.output_tensors("scale", {"doubled": doubled, "shifted": shifted})
        assert got[0] is doubled and got[1] is shifted
        assert not doubled.is_tracing and doubled.output_port == "doubled"
        assert shifted.output_port == "shifted" and shifted.context == "scale"
        assert type(doubled * 1.0) is torch.Tensor  # work after the node is plain
        y = annotate.input_tensors("next", {"doubled": doubled})
        assert y is not doubled and y.is_tracing and y.context == "next"
        annotate.output_tensors("next", {"z": y - 1.0})
    assert ExportManager().nodes["next"].sources == {"doubled": "scale/doubled"}
    assert type(doubled.tensor) is torch.Tensor
    assert torch.equal(doubled.tensor, torch.arange(3.0) * 2)


def test_numpy_values_answer_the_same(tmp_path):
    raw = np.array([1.0, 2.0, 3.0], np.float32)
    with patchport.session("np_facts", save_path=tmp_path):
        a = annotate.input_tensors("source", {"a": raw})
        assert isinstance(a, TracedNpArray) and a.is_tracing and a.context == "source"
        out = a * 2.0
        assert annotate.output_tensors("source", {"out": out}) is out
        assert not out.is_tracing and out.output_port == "out"
        assert out.context_obj is ExportManager().nodes["source"]
        tensor = out.tensor
        assert type(tensor) is torch.Tensor and tensor.tolist() == [2.0, 4.0, 6.0]
        b = annotate.input_tensors("sink", {"out": out})
        assert b.context == "sink" and b.is_tracing and out.context == "source"
        annotate.output_tensors("sink", {"c": b + 1.0})
    assert type(raw) is np.ndarray and raw.tolist() == [1.0, 2.0, 3.0]  # untouched


def test_nested_outputs_come_back_in_their_structure(tmp_path):
    with patchport.session("nested_out", save_path=tmp_path):
        x = annotate.input_tensors("n", {"x": torch.ones(2)})
        pair = [x * 2.0, {"neg": -x}]
        got = annotate.output_tensors("n", {"pair": pair}, export_with="jit")
    assert got is pair
    assert pair[0].output_port == "pair_0" and pair[1]["neg"].output_port == "pair_1_neg"


def test_state_and_method_outputs_carry_their_port(tmp_path):
    @annotate.method(export_with="jit")
    def policy(obs: torch.Tensor):
        action = obs * 0.5
        return action

    with patchport.session("ports", save_path=tmp_path):
        obs = annotate.input_tensors("memory", {"obs": torch.ones(3)})
        h = annotate.state_tensors("memory", {"h": torch.zeros(3)})
        new_h = h + obs
        assert annotate.update_state("memory", {"h": new_h}) is new_h
        annotate.output_tensors("memory", {"out": obs * 2.0}, export_with="jit")
        action = policy(torch.full((3,), 4.0))
    assert new_h.output_port == "h" and not new_h.is_tracing
    assert isinstance(action, TracedTensor) and action.output_port == "action"
    assert not action.is_tracing and action.context == "policy"


def test_facts_are_read_only(tmp_path):
    with patchport.session("ro", save_path=tmp_path):
        x = annotate.input_tensors("n", {"x": torch.ones(2)})
        for name in ("is_tracing", "context", "context_obj", "output_port", "tensor"):
            with pytest.raises(AttributeError):
                setattr(x, name, None)
        annotate.output_tensors("n", {"y": x + 1.0}, export_with="jit")


@pytest.mark.parametrize("options", [{"dry_run": True}, {"non_traced": ["raw"]}])
def test_dry_run_and_non_traced_nodes_trace_like_any_other(tmp_path, options):
    """As in LEAPP: inputs are traced, outputs carry their port and feed the next node;
    only the model file of the skipped node is not written."""
    patchport.start("skip", save_path=tmp_path, **options)
    x = annotate.input_tensors("raw", {"x": torch.tensor([1.0, 2.0])})
    assert isinstance(x, TracedTensor) and x.is_tracing
    y = x * 3.0
    annotate.output_tensors("raw", {"y": y}, export_with="jit")
    assert y.output_port == "y" and not y.is_tracing
    z = annotate.input_tensors("after", {"y": y})
    assert z.is_tracing
    annotate.output_tensors("after", {"z": z + 1.0}, export_with="jit")
    patchport.stop()
    result = patchport.compile_graph(visualize=False)
    assert ExportManager().detected_pipeline["data_flow"] == {"raw/y": ["after/y"]}
    assert result["raw"] is True
    assert not (tmp_path / "skip" / "raw.pt").exists()
    assert (tmp_path / "skip" / "after.pt").exists() == ("non_traced" in options)


def test_handed_back_values_serve_glue_code_as_plain_data(tmp_path):
    """What robot code does with a node's result between nodes gives ordinary data."""
    import copy
    import io

    with patchport.session("glue", save_path=tmp_path):
        x = annotate.input_tensors("n", {"x": torch.arange(4.0)})
        action = annotate.output_tensors("n", {"action": x * 0.5}, export_with="jit")
        logged = io.BytesIO()
        torch.save(action, logged)
        logged.seek(0)
        results = [
            copy.deepcopy(action),
            torch.load(logged),
            action.clone(),
            action + 1.0,
            torch.cat([action, action]),
        ]
        assert all(type(value) is torch.Tensor for value in results)
        assert type(action.numpy()) is np.ndarray and action.tolist() == [0.0, 0.5, 1.0, 1.5]
