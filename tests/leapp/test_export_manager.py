"""ExportManager: LEAPP's singleton, read after compile_graph, is a view of our session state."""

import leapp  # the real 0.7.2 package: the graph it detects is the reference
import pytest
import torch
import yaml

import patchport
from patchport import ExportManager, annotate


def _program(manager_annotate, steps=2):
    """sense -> policy (with a recurrent counter), traced twice so feedback is inferred."""
    counter = torch.tensor([1.0, 2.0, 3.0])
    for step in range(steps):
        raw = manager_annotate.input_tensors("sense", {"raw": torch.arange(3.0) + step})
        features = raw * 0.5
        manager_annotate.output_tensors("sense", {"features": features}, export_with="jit")
        obs = manager_annotate.input_tensors("policy", {"obs": features})
        state = manager_annotate.state_tensors("policy", {"counter": counter})
        counter = manager_annotate.update_state("policy", {"counter": state + obs})
        manager_annotate.output_tensors(
            "policy", {"action": obs * 2.0, "debug": obs - 1.0}, export_with="jit"
        )


def test_is_public_and_one_per_process():
    assert "ExportManager" in patchport.__all__
    assert ExportManager() is ExportManager() is patchport.ExportManager()


def test_detected_graph_matches_leapp_and_the_yaml_written(tmp_path):
    manager = ExportManager()
    manager.start("ours", save_path=tmp_path)
    _program(manager)  # the annotation API is reachable on the manager, as in LEAPP
    manager.stop()
    result = manager.compile_graph(visualize=False)

    leapp.start("theirs", save_path=str(tmp_path))
    try:
        _program(leapp.ExportManager())
    finally:
        leapp.stop()
    leapp.compile_graph(visualize=False)
    theirs = leapp.ExportManager()

    assert set(manager.detected_nodes) == set(theirs.detected_nodes) == {"sense", "policy"}
    for key in ("data_flow", "feedback_flow", "inputs", "outputs"):
        assert isinstance(manager.detected_pipeline[key], dict)
        assert manager.detected_pipeline[key] == theirs.detected_pipeline[key], key
    for node in ("sense", "policy"):
        ours_ports = [p.name for p in manager.nodes[node].inputs]
        assert ours_ports == [p.name for p in theirs.nodes[node].inputs]
        assert [p.name for p in manager.nodes[node].outputs] == [
            p.name for p in theirs.nodes[node].outputs
        ]
    # one source of truth: what the manager shows is what compile_graph wrote
    written = yaml.safe_load(result.yaml_path.read_text())
    assert manager.detected_pipeline == written["pipeline"]
    assert manager.detected_nodes == written["models"]
    assert manager.config_path == str(result.yaml_path)
    assert manager.nodes["policy"].m is not None  # the traced graph module
    targets = [str(node.target) for node in manager.nodes["policy"].graph.nodes]
    assert any("mul" in target for target in targets), targets  # obs * 2.0


def test_state_follows_the_session(tmp_path):
    manager = ExportManager()
    manager.start("first", save_path=tmp_path)
    assert manager.is_interpret_graph_enabled() and manager.GRAPH_NAME == "first"
    x = annotate.input_tensors("node", {"x": torch.ones(2)})
    annotate.output_tensors("node", {"y": x + 1}, export_with="jit")
    assert list(manager.nodes) == ["node"]
    assert not hasattr(manager, "detected_nodes")  # nothing compiled in this session yet
    manager.stop()
    assert not manager.is_interpret_graph_enabled()
    manager.compile_graph(visualize=False)
    assert list(manager.detected_nodes) == ["node"]

    with patchport.session("second", save_path=tmp_path, dry_run=True):
        assert manager.nodes == {} and manager.dry_run
        assert not hasattr(manager, "detected_pipeline")
    assert manager.is_dry_run() and manager.SAVE_PATH == str(tmp_path / "second")


def test_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="warp_op"):
        ExportManager().warp_op  # noqa: B018 - Warp is out of scope
