"""Recorder API: inputs, finishing, long chains, constants, the cheap traced check."""

from __future__ import annotations

import sys

import numpy as np
import pytest
import torch

from patchport import TraceLossWarning
from patchport.tracing import (
    Recorder,
    contains_traced,
    find_recorder,
    finish,
    is_traced,
    plain,
    trace_input,
)


def test_inputs_are_never_mutated_in_class_or_content() -> None:
    rec = Recorder("r")
    a = np.arange(6.0).reshape(2, 3)
    t = torch.arange(6.0).reshape(2, 3)
    x = trace_input(rec, "a", a)
    y = trace_input(rec, "t", t)
    x += 100
    x[0, 0] = -1
    y.add_(5)
    y[1] = 0
    assert type(a) is np.ndarray and type(t) is torch.Tensor
    np.testing.assert_array_equal(a, np.arange(6.0).reshape(2, 3))
    torch.testing.assert_close(t, torch.arange(6.0).reshape(2, 3))
    gm = finish(rec, (x, y))
    out = gm(torch.zeros(2, 3, dtype=torch.float64), torch.ones(2, 3))
    np.testing.assert_array_equal(out[0].numpy(), [[-1, 100, 100], [100, 100, 100]])
    np.testing.assert_array_equal(out[1].numpy(), [[6, 6, 6], [0, 0, 0]])


def test_input_names_are_unique_and_ordered() -> None:
    rec = Recorder("r")
    x = trace_input(rec, "first", np.ones(2))
    with pytest.raises(ValueError, match="already used"):
        trace_input(rec, "first", np.ones(2))
    y = trace_input(rec, "second", np.ones(2))
    gm = finish(rec, x * 2 + y)
    assert [n.name for n in gm.graph.nodes if n.op == "placeholder"] == ["first", "second"]


def test_chain_of_10000_ops_records_and_exports_without_recursion() -> None:
    limit = sys.getrecursionlimit()
    rec = Recorder("chain")
    x = trace_input(rec, "x", np.zeros(3, dtype=np.float64))
    for _ in range(10_000):
        x = x + 1.0
    gm = finish(rec, x)
    assert sys.getrecursionlimit() == limit
    assert len(gm.graph.nodes) == 10_002
    np.testing.assert_array_equal(gm(torch.full((3,), 5.0, dtype=torch.float64)).numpy(), 10_005.0)


def test_torch_chain_of_10000_ops() -> None:
    rec = Recorder("chain")
    x = trace_input(rec, "x", torch.zeros(3))
    for _ in range(10_000):
        x = x + 1.0
    gm = finish(rec, x)
    torch.testing.assert_close(gm(torch.ones(3)), torch.full((3,), 10_001.0))


def test_finish_closes_and_drops_unused() -> None:
    rec = Recorder("r")
    x = trace_input(rec, "x", np.ones(3))
    _unused = x * np.array([5.0, 6.0, 7.0])
    y = x + np.array([1.0, 2.0, 3.0])
    gm = finish(rec, {"y": y})
    assert not rec.active and len(rec.constants()) == 1
    assert len([n for n in gm.graph.nodes if n.op == "call_function"]) == 1
    assert set(gm.state_dict()) == {"_const_1"}
    out = gm(torch.zeros(3, dtype=torch.float64))
    assert set(out) == {"y"}
    with pytest.raises(RuntimeError, match="already finished"):
        finish(rec, y)
    assert not is_traced(y) and type(y * 2) is np.ndarray


def test_outputs_must_be_arrays() -> None:
    rec = Recorder("r")
    x = trace_input(rec, "x", np.ones(3))
    with pytest.raises(TypeError, match="arrays or tensors"):
        finish(rec, [x, "text"])


def test_contains_traced_looks_into_structures() -> None:
    rec = Recorder("r")
    x = trace_input(rec, "x", np.ones(3))
    t = trace_input(rec, "t", torch.ones(3))
    assert is_traced(x) and is_traced(t) and not is_traced(np.ones(3))
    assert contains_traced((1, [2, {"k": x}]))
    assert contains_traced((), {"a": [t]})
    assert not contains_traced((np.ones(3), [torch.ones(2)]), {"b": 3})
    assert find_recorder([{"a": x}]) is rec
    assert type(plain(x)) is np.ndarray and type(plain(t)) is torch.Tensor
    rec.close()
    assert not is_traced(x) and not contains_traced((x,))


def test_plain_data_is_not_traced_and_nested_traced_data_is_found() -> None:
    # the cost of these checks is a hot path; bench/trace_overhead.py measures it
    rec = Recorder("r")
    x = trace_input(rec, "x", np.ones(3))
    plain_array = np.ones((4, 4))
    assert not is_traced(plain_array) and not contains_traced((plain_array, 3, "BGR"))
    assert is_traced(x) and contains_traced((plain_array, [{"k": x}]), {})
    rec.close()


def test_two_recorders_do_not_mix() -> None:
    r1, r2 = Recorder("one"), Recorder("two")
    x = trace_input(r1, "x", np.ones(3))
    y = trace_input(r2, "y", np.full(3, 2.0))
    z = y * 3
    with pytest.warns(TraceLossWarning, match="Cannot mix multiple active TracedTensors"):
        w = x + z  # z belongs to r2 (still open): a constant of r1, with an origin saying so
    finish(r1, w)
    (const,) = r1.constants()
    assert "another recorder ('two')" in const.origin
    r2.close()


def test_inputs_added_after_constants_still_come_first() -> None:
    rec = Recorder("r")
    x = trace_input(rec, "x", np.ones(3))
    y = x * np.array([1.0, 2.0, 3.0])  # a constant enters the graph
    z = trace_input(rec, "z", np.full(3, 2.0))
    gm = finish(rec, y + z)
    gm.graph.lint()
    ops = [n.op for n in gm.graph.nodes]
    assert ops[:3] == ["placeholder", "placeholder", "get_attr"]
    out = gm(torch.ones(3, dtype=torch.float64), torch.zeros(3, dtype=torch.float64))
    np.testing.assert_array_equal(out.numpy(), [1.0, 2.0, 3.0])


def test_seal_closes_the_graph_and_the_graph_module_is_made_once_on_first_use() -> None:
    from patchport.tracing.graph_io import seal

    rec = Recorder("sealed")
    x = trace_input(rec, "x", np.arange(3.0))
    with pytest.raises(RuntimeError, match=r"recorder 'sealed' is not finished; call finish"):
        rec.module()
    seal(rec, x * 2 + np.ones(3))  # a constant, held by the root module
    assert rec.finished and not rec.active
    assert rec._module is None  # not made by the traced pass itself
    gm = rec.module()
    assert rec.module() is gm and gm.graph is rec.graph
    np.testing.assert_array_equal(gm(torch.arange(3.0)).numpy(), [1.0, 3.0, 5.0])
    with pytest.raises(RuntimeError, match="already finished"):
        seal(rec, x)


def test_a_node_makes_its_graph_module_when_first_asked_for(tmp_path) -> None:
    import patchport
    from patchport import annotate
    from patchport.sessions.lifecycle import last_session

    with patchport.session("lazy", save_path=tmp_path):
        x = annotate.input_tensors("n", {"x": np.arange(3.0)})
        annotate.output_tensors("n", {"y": x * 2})
        trace = last_session().nodes["n"]
        assert trace.finished and trace.recorder._module is None
    assert trace.graph_module is trace.m is trace.recorder.module()
    assert [n.op for n in trace.graph.nodes] == ["placeholder", "call_function", "output"]


def test_node_names_match_fx_for_every_kind_of_target() -> None:
    # the recorder names nodes without fx's snake-casing regex where no capital needs it;
    # the names must be fx's own (exported graphs and reports show them)
    import operator

    from torch import fx

    from patchport.tracing.recorder import _target_name

    graph = fx.Graph()
    targets = [torch.cat, operator.truediv, operator.getitem, torch.Tensor.add, np.add, getattr,
               torch.nn.functional.adaptive_avg_pool2d, "float", "__add__", "left_bgr", "x1",
               "_private", "camelCase", "MyInput", "__Foo__", "a_b_C", "\u00c9t\u00e9"]  # fmt: skip
    for target in targets:
        assert _target_name(graph, target) == graph._target_to_str(target), target
    rec = Recorder("names")
    x = trace_input(rec, "leftImage", torch.ones(2))
    gm = finish(rec, x.float() + 1)
    names = [n.name for n in gm.graph.nodes]
    assert names[0] == "left_image" and names[-1] == "output"
