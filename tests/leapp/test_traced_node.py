"""LEAPP's ``TracedTensorNode`` (``leapp.leapp_graph.traced_node``), which LEAPP's own unit
tests build directly: a node traced on its own, its graph module run on fresh values."""

import numpy as np
import pytest
import torch

import patchport
from patchport import PatchportWarning
from patchport.leapp_graph.datatypes import TracedNpArray
from patchport.leapp_graph.traced_node import TracedTensorNode
from patchport.sessions.lifecycle import current_session


def test_a_node_alone_traces_numpy_and_its_module_runs_fresh_values(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    node = TracedTensorNode(name="scale", node_index=0)
    assert node.is_tracing
    x = node.create_input(np.array([1.0, 2.0, 3.0]), name="x")
    assert isinstance(x, TracedNpArray)
    y = np.clip(x * 2.0 - 1.0, 0.0, 4.0)
    result = node.compile_trace({"y": y})
    assert not node.is_tracing
    np.testing.assert_allclose(np.asarray(result), [1.0, 3.0, 4.0])
    fresh = torch.tensor([0.25, 1.0, 9.0], dtype=torch.float64)
    torch.testing.assert_close(node.m(fresh), torch.tensor([0.0, 1.0, 4.0], dtype=torch.float64))
    assert current_session() is None  # its own session closed with its last node
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_two_nodes_alive_at_once_and_a_name_used_again():
    first = TracedTensorNode(name="same")
    second = TracedTensorNode(name="other")
    a = first.create_input(torch.ones(2), name="a")
    b = second.create_input(torch.ones(2), name="b")
    first.compile_trace({"out": a + 1})
    assert current_session() is not None  # "other" is still tracing
    second.compile_trace({"out": b * 3})
    assert current_session() is None
    again = TracedTensorNode(name="same")
    c = again.create_input(torch.zeros(3), name="c")
    again.compile_trace({"out": c - 1, "twice": c * 2})
    out, twice = again.m(torch.ones(3))
    torch.testing.assert_close(out, torch.zeros(3))
    torch.testing.assert_close(twice, torch.full((3,), 2.0))


def test_inside_a_users_session_the_node_joins_it_and_leaves_it_open(tmp_path):
    with patchport.session("user", save_path=tmp_path) as session:
        node = TracedTensorNode(name="joined")
        x = node.create_input(torch.ones(2), name="x")
        node.compile_trace({"y": x + 2})
        assert current_session() is session and "joined" in session.nodes
    assert current_session() is None


def test_a_node_made_for_one_call_keeps_tracing_and_its_name_starts_afresh():
    x = TracedTensorNode(name="test").create_input(np.array([1.0, 2.0]), name="x")
    y = x + 1
    assert isinstance(y, TracedNpArray)  # the node lives as long as its values
    first = current_session()
    z = TracedTensorNode(name="test").create_input(np.array([5.0]), name="x")
    assert isinstance(z * 2, TracedNpArray) and current_session() is not first
    with pytest.warns(PatchportWarning, match="leapp_graph.traced_node"):
        with patchport.session("users", save_path="unused") as session:
            assert current_session() is session  # the user's start ends the private one
    assert current_session() is None
