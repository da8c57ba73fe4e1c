"""Python numbers beside tensors in recorded operator calls, made safe for TorchScript.

fx records ``7 // b`` as ``operator.floordiv(7, b)`` and ``m & True`` as
``operator.and_(m, True)``; scripted as they are, number-first floor division, bit
operations and shifts take the tensor for a number (failing unless it is 0-d), a bool
literal is an int (``m & True`` comes back int64) and ``2.5 - u`` wraps in uint8.
"""

from __future__ import annotations

import operator

import pytest
import torch
from torch import fx

from patchport.export.number_operands import numbers_as_tensors

OPS = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and_", "or_", "xor",
       "lshift", "rshift", "eq", "lt", "ge")  # fmt: skip
DTYPES = (torch.float32, torch.float16, torch.int64, torch.int32, torch.uint8, torch.bool)


def _operand(dtype: torch.dtype, seed: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.rand(2, 3, generator=gen) < 0.5
    return torch.randint(1, 4, (2, 3), generator=gen).to(dtype)


def _graph(number: object, dtype: torch.dtype, first: bool) -> tuple:
    """One graph holding every operator eager torch accepts for (number, dtype)."""
    graph = fx.Graph()
    x = graph.placeholder("x")
    example = _operand(dtype, 1)
    outputs, kept = [], []
    for name in OPS:
        if name == "pow" and (type(number) is bool or dtype == torch.bool):
            continue  # eager torch's pow on bools is its own (``-3 ** m`` gives -1 for False)
        fn = getattr(operator, name)
        args = (number, x) if first else (x, number)
        try:
            fn(*[example if a is x else a for a in args])
        except (RuntimeError, TypeError):
            continue
        outputs.append(graph.call_function(fn, args))
        kept.append(name)
    graph.output(tuple(outputs))
    return fx.GraphModule(torch.nn.Module(), graph), kept


@pytest.mark.parametrize("first", [True, False], ids=["number_first", "number_second"])
@pytest.mark.parametrize("number", [7, 2.5, True, -3, 300], ids=str)
def test_scripted_operators_with_number_operands_match_eager(number, first) -> None:  # noqa: ANN001
    wrong = []
    for dtype in DTYPES:
        module, kept = _graph(number, dtype, first)
        rewritten = numbers_as_tensors(module, (_operand(dtype, 1),))
        scripted = torch.jit.freeze(torch.jit.script(rewritten).eval())  # as jit exports do
        fresh = _operand(dtype, 2)
        for name, want, got in zip(kept, module(fresh), scripted(fresh)):
            same = got.dtype == want.dtype and torch.equal(got.isnan(), want.isnan())
            if not same or not torch.equal(got.nan_to_num(), want.nan_to_num()):
                wrong.append(f"{dtype} {name}: {got.flatten()[:3]} != {want.flatten()[:3]}")
    assert not wrong, "\n".join(wrong)


def test_graph_without_number_operands_is_returned_as_is() -> None:
    graph = fx.Graph()
    x = graph.placeholder("x")
    graph.output(graph.call_function(operator.add, (x, x)))
    module = fx.GraphModule(torch.nn.Module(), graph)
    assert numbers_as_tensors(module, (torch.ones(2),)) is module


@pytest.mark.parametrize("method", ["add", "mul", "bitwise_or", "bitwise_xor", "eq", "__and__"])
def test_bool_literal_in_a_recorded_method_call_keeps_bool(method) -> None:  # noqa: ANN001
    graph = fx.Graph()
    x = graph.placeholder("x")
    graph.output(graph.call_method(method, (x, True)))
    module = fx.GraphModule(torch.nn.Module(), graph)
    m = torch.tensor([True, False, True])
    scripted = torch.jit.freeze(torch.jit.script(numbers_as_tensors(module, (m,))).eval())
    want = getattr(m, method)(True)
    assert scripted(m).dtype == want.dtype and torch.equal(scripted(m), want)
