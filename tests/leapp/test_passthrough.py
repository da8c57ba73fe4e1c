"""Outside a session (before start, after stop) every annotation hands back the very objects
given and records nothing, as LEAPP's does; inside one, inputs come back traced."""

import leapp  # the real 0.7.2 package: its passthrough is the reference
import numpy as np
import pytest
import torch

import patchport
from patchport import ExportManager, annotate
from patchport.tracing import is_traced


class Stateful(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("running", torch.zeros(3))

    def forward(self, x):
        return x + self.running


def _annotations_pass_through(api):
    """Each annotation returns its arguments themselves (one value, or a tuple in order)."""
    a, b = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([0.5, 0.5, 0.5])
    got_a, got_b = api.input_tensors("node", {"a": a, "b": b})
    assert got_a is a and got_b is b
    nested = {"pos": a, "more": [b, {"deep": a}]}
    got = api.input_tensors("node", {"obs": nested})
    assert got is nested
    out = a + b
    assert api.output_tensors("node", {"out": out}, export_with="jit") is out
    state = torch.zeros(3)
    assert api.state_tensors("node", {"state": state}) is state
    assert api.update_state("node", {"state": out}) is out
    model = Stateful()
    before = {name: id(buffer) for name, buffer in model.named_buffers()}
    assert api.module("node", model) is None
    assert {name: id(buffer) for name, buffer in model.named_buffers()} == before
    seen = []

    @api.method(export_with="jit")
    def policy(x):
        seen.append(x)
        return x * 2.0

    y = policy(a)
    assert seen == [a] and seen[0] is a and type(y) is torch.Tensor
    for value in (a, b, out, y):
        assert not hasattr(value, "leapp_tag") and not is_traced(value)


@pytest.mark.parametrize("api", [annotate, leapp.annotate], ids=["patchport", "leapp"])
def test_outside_a_session_values_are_handed_back(api):
    nodes = dict(ExportManager().nodes)
    _annotations_pass_through(api)
    assert ExportManager().nodes == nodes  # nothing recorded


def test_numpy_values_pass_through_too():
    image = np.zeros((2, 3), np.uint8)
    assert annotate.input_tensors("node", {"image": image}) is image
    assert annotate.output_tensors("node", {"image": image}) is image


def test_after_stop_values_are_handed_back(tmp_path):
    with patchport.session("closed", save_path=tmp_path):
        x = annotate.input_tensors("node", {"x": torch.ones(3)})
        annotate.output_tensors("node", {"y": x * 2.0}, export_with="jit")
    nodes = ExportManager().nodes
    _annotations_pass_through(annotate)
    assert ExportManager().nodes.keys() == nodes.keys() == {"node"}
    assert len(ExportManager().nodes["node"].samples) == 1  # the stopped session is unchanged


def test_inside_a_session_inputs_come_back_traced_and_outputs_as_given(tmp_path):
    """Inputs come back as new traced values (the caller's stay untouched); output_tensors
    hands back the very values it was given, as LEAPP does, and they are finished."""
    a = torch.ones(3)
    image = np.ones((2, 2), np.float32)
    with patchport.session("open", save_path=tmp_path):
        x, picture = annotate.input_tensors("node", {"x": a, "image": image})
        assert is_traced(x) and isinstance(x, torch.Tensor) and x is not a
        assert type(a) is torch.Tensor  # never promoted in place
        assert is_traced(picture) and isinstance(picture, np.ndarray)
        total = x * 2.0 + torch.from_numpy(picture).sum()
        y = annotate.output_tensors("node", {"y": total})
        assert y is total and not is_traced(y)
        assert torch.equal(y, a * 2.0 + 4.0)
        assert type(y * 1.0) is torch.Tensor  # work after the node is plain
