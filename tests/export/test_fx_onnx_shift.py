"""``x >> k`` in the direct FX->ONNX translator: exact floor division for every sign, and
one Div where the value is non-negative by construction (uint8 data cast to int32)."""

from __future__ import annotations

import onnx
import onnxruntime
import torch
from torch import fx

from patchport.export.onnx import driver


def _run(fn, x):
    module = fx.symbolic_trace(fn)
    model, expected = driver.translate(module, [x], ["x"], ["out"])
    session = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])
    got = session.run(None, {"x": x.numpy()})[0]
    ops = [node.op_type for node in onnx.load_from_string(model).graph.node]
    return got, expected[0].numpy(), ops


def test_signed_shift_is_floor_division():
    x = torch.tensor([-17, -16, -1, 0, 1, 15, 16, 2**30], dtype=torch.int32)
    got, expected, ops = _run(lambda x: x >> 4, x)
    assert (got == expected).all() and "Mod" in ops


def test_shift_of_unsigned_data_is_one_div():
    x = torch.arange(256, dtype=torch.uint8).reshape(16, 16)
    got, expected, ops = _run(lambda x: ((x.to(torch.int32) * 2047 + 3) >> 4) >> 2, x)
    assert (got == expected).all()
    assert "Mod" not in ops and ops.count("Div") == 2
