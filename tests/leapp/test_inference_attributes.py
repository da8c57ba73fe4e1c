"""InferenceManager exposes what LEAPP's tests read (routing table, node descriptions), and
every node input, not only the pipeline's, is addressable as ``node/port``."""

import leapp  # the real 0.7.2 package: its InferenceManager on the same bundle is the reference
import pytest
import torch

import patchport
from patchport import InferenceManager, annotate


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    """a -> b with a split output (one routed, one pipeline-only) and a recurrent counter."""
    folder = tmp_path_factory.mktemp("attributes")
    counter = torch.tensor([10.0, 20.0, 30.0])
    with patchport.session("attributes", save_path=folder):
        for step in range(2):
            x = annotate.input_tensors("node_a", {"x": torch.tensor([1.0, 2.0, 3.0]) + step})
            to_b, _ = annotate.output_tensors(
                "node_a", {"to_b": x * 2.0, "final_a": x + 10.0}, export_with="jit"
            )
            y = annotate.input_tensors("node_b", {"y": to_b})
            state = annotate.state_tensors("node_b", {"counter": counter})
            counter = annotate.update_state("node_b", {"counter": state + y})
            annotate.output_tensors("node_b", {"final_b": y - state}, export_with="jit")
    return str(patchport.compile_graph(visualize=False).yaml_path)


def test_routing_table_is_leapps(bundle):
    ours, theirs = InferenceManager(bundle), leapp.InferenceManager(bundle)
    table = ours.organized_pipeline_connections
    assert table == theirs.organized_pipeline_connections
    assert table["node_a"]["final_a"] == [("==out==", "node_a/final_a")]
    assert ("node_b", "y") in table["node_a"]["to_b"]


def test_node_descriptions_are_leapps(bundle):
    ours, theirs = InferenceManager(bundle), leapp.InferenceManager(bundle)
    assert ours.model_path == theirs.model_path == bundle
    assert ours.leapp_description == theirs.leapp_description
    for name in ("node_a", "node_b"):
        mine, reference = ours.nodes[name], theirs.nodes[name]
        for attribute in (
            "input_names",
            "output_names",
            "input_shapes",
            "output_shapes",
            "input_dtypes",
            "output_dtypes",
            "input_descriptions",
            "output_descriptions",
        ):
            assert getattr(mine, attribute) == getattr(reference, attribute), attribute
        assert mine.model_path.endswith(f"{name}.pt")


def test_an_inner_port_can_be_set_as_in_leapp(bundle):
    """``node_b/counter`` is fed back, not a pipeline input: set it, then run."""
    ours, theirs = InferenceManager(bundle), leapp.InferenceManager(bundle)
    assert "node_b/counter" not in ours.inputs
    start = torch.tensor([-5.0, 0.0, 5.0])
    x = {"node_a/x": torch.tensor([0.5, 1.5, 2.5])}
    for manager in (ours, theirs):
        manager.set_input_value("node_b", "counter", start)
    mine, reference = ours.run_policy(dict(x)), theirs.run_policy(dict(x))
    assert torch.equal(mine["node_b/final_b"], reference["node_b/final_b"])
    assert torch.equal(mine["node_b/final_b"], x["node_a/x"] * 2.0 - start)
    # the same port given to run_policy by its key
    again = ours.run_policy({**x, "node_b/counter": start})
    assert torch.equal(again["node_b/final_b"], mine["node_b/final_b"])
    with pytest.raises(KeyError, match="node_b/nope"):
        ours.set_input_value("node_b", "nope", start)
