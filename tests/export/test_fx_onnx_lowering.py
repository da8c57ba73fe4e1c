"""Lowerings of the direct FX->ONNX translator chosen for ONNX Runtime's speed stay exact:
integer ``where`` as arithmetic (its Where branches per element), flips of short inner runs
through a transposed view, int8/int16 arithmetic in its own type, and int32 indices for
Gather/GatherElements where the int64 ones hold small values."""

from __future__ import annotations

import onnx
import onnxruntime
import pytest
import torch
from torch import fx

from patchport.export.onnx import driver


def _run(fn, *inputs, optimise=False, tmp_path=None):
    """(ONNX Runtime's outputs, torch's outputs, op types) of ``fn`` translated."""
    module = fx.symbolic_trace(fn)
    names = [f"x{i}" for i in range(len(inputs))]
    if optimise:
        path = tmp_path / "model.onnx"
        driver.write_direct(module, list(inputs), names, ["out"], path)
        model = path.read_bytes()
    else:
        model, _ = driver.translate(module, list(inputs), names, ["out"])
    session = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])
    got = session.run(None, {n: x.numpy() for n, x in zip(names, inputs)})[0]
    graph = onnx.load_from_string(model).graph
    return got, fn(*inputs).numpy(), graph


def _ops(graph) -> list[str]:
    return [node.op_type for node in graph.node]


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64])
def test_integer_where_is_arithmetic_and_exact(dtype):
    info = torch.iinfo(dtype)
    gen = torch.Generator().manual_seed(0)
    a = torch.randint(info.min, info.max, (6, 7, 3), generator=gen).to(dtype)
    b = torch.randint(info.min, info.max, (6, 7, 3), generator=gen).to(dtype)
    mask = torch.randint(0, 2, (6, 7, 1), generator=gen, dtype=torch.uint8)
    calls = [
        lambda a, b, m: torch.where(a > b, a, b),  # both tensors, extremes of the type
        lambda a, b, m: torch.where(m != 0, a, torch.zeros_like(a)),  # broadcast condition
        lambda a, b, m: torch.where(m != 0, torch.zeros_like(a), b),
        lambda a, b, m: torch.where(a > b, 5, b),  # a number
    ]
    for fn in calls:
        got, expected, graph = _run(fn, a, b, mask)
        assert got.dtype == expected.dtype and (got == expected).all()
        assert "Where" not in _ops(graph)


def test_float_where_stays_where():
    a, b = torch.randn(4, 5), torch.randn(4, 5)
    got, expected, graph = _run(lambda a, b: torch.where(a > 0, a, b), a, b)
    assert (got == expected).all() and "Where" in _ops(graph)


@pytest.mark.parametrize(
    ("shape", "dims", "transposed"),
    [
        ((70, 33, 3), (1,), True),  # image columns: runs of 3 values
        ((70, 33, 3), (0, 1), True),
        ((70, 33, 3), (2,), True),  # channels
        ((70, 33, 3), (1, 2), True),
        ((70, 33, 3), (0, 1, 2), True),
        ((70, 33, 3), (0,), False),  # rows: long runs already
        ((100, 5), (1,), True),
        ((1, 70, 20, 3), (2,), True),
        ((2, 40, 3), (1,), False),  # too few rows before the axis to gain
        ((70, 1, 3), (1,), False),  # an axis of one: nothing to reverse
    ],
)
def test_flips_are_exact_and_short_runs_go_through_a_transpose(shape, dims, transposed):
    x = torch.arange(int(torch.tensor(shape).prod())).to(torch.int16).reshape(shape)
    got, expected, graph = _run(lambda x: torch.flip(x, dims), x)
    assert (got == expected).all()
    assert ("Transpose" in _ops(graph)) == transposed


def test_rot90_of_an_image_is_exact():
    x = torch.arange(70 * 33 * 3).to(torch.int32).reshape(70, 33, 3)
    turns = {
        1: lambda x: torch.rot90(x, 1, (0, 1)),
        2: lambda x: torch.rot90(x, 2, (0, 1)),
        3: lambda x: torch.rot90(x, 3, (0, 1)),
    }
    for fn in turns.values():
        got, expected, _ = _run(fn, x)
        assert (got == expected).all()


@pytest.mark.parametrize("dtype", [torch.int8, torch.int16])
def test_small_integer_arithmetic_stays_in_its_type_and_wraps_like_torch(dtype):
    info = torch.iinfo(dtype)
    x = torch.arange(info.min, info.max, 97).to(dtype)
    y = torch.flip(x, (0,))
    got, expected, graph = _run(lambda x, y: (x * 3 - y) + 7, x, y)
    assert (got == expected).all()
    assert "Cast" not in _ops(graph)  # no int64 round trip


def test_gather_indices_from_small_integers_are_int32(tmp_path):
    table = torch.arange(256, dtype=torch.float32) * 0.5
    x = torch.randint(0, 256, (9, 11), dtype=torch.uint8)

    def lookup(x):
        return torch.gather(table, 0, x.reshape(-1).to(torch.int64)).reshape(9, 11)

    got, expected, graph = _run(lookup, x, optimise=True, tmp_path=tmp_path)
    assert (got == expected).all()
    casts = [n for n in graph.node if n.op_type == "Cast"]
    assert [a.i for n in casts for a in n.attribute if a.name == "to"] == [onnx.TensorProto.INT32]


def test_uint8_clamp_with_integer_bounds_stays_uint8():
    x = torch.arange(256, dtype=torch.uint8).reshape(16, 16)
    calls = [
        lambda x: torch.clamp(x, min=16),
        lambda x: torch.clamp(x, 16, 235),
        lambda x: torch.clamp(x, max=200),
    ]
    for fn in calls:
        got, expected, graph = _run(fn, x)
        assert got.dtype == expected.dtype and (got == expected).all()
        assert "Clip" in _ops(graph) and "Cast" not in _ops(graph)  # no int64 round trip
