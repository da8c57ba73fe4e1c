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


def test_shift_counts_outside_the_width_follow_aten():
    """ATen shifts by counts < 0 or >= the width to 0 (left) or to the sign (signed right);
    ONNX's BitShift leaves them undefined, so the translation guards them."""
    for dtype in (torch.int64, torch.int32, torch.int8, torch.uint8):
        x = torch.tensor([-100, -1, 0, 5, 100, 127]).to(dtype)
        counts = [-1, 0, 1, 7, 8, 31, 32, 63, 64, 70]
        counts = [c for c in counts if dtype != torch.uint8 or c >= 0]
        s = torch.tensor(counts).to(dtype)
        pairs = torch.cartesian_prod(torch.arange(len(x)), torch.arange(len(s)))
        xs, ss = x[pairs[:, 0]], s[pairs[:, 1]]
        for fn in (lambda a, b: a << b, lambda a, b: a >> b, lambda a, b: 1 << b):
            module = fx.symbolic_trace(fn)
            model, expected = driver.translate(module, [xs, ss], ["a", "b"], ["out"])
            session = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])
            inputs = {i.name for i in session.get_inputs()}
            feed = {k: v.numpy() for k, v in (("a", xs), ("b", ss)) if k in inputs}
            got = session.run(None, feed)[0]
            assert (got == expected[0].numpy()).all(), (dtype, fn(xs, ss), got)
