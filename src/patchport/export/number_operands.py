"""Python numbers beside tensors in operator calls, rewritten for exporters that mistype
them.

A traced ``7 // b`` or ``m & True`` is recorded as ``operator.floordiv(7, b)`` /
``operator.and_(m, True)``, which Python runs as torch does. TorchScript compiles such
calls through its own overloads instead: number-first floor division, bit operations and
shifts take the tensor for a number (and fail unless it is 0-d), a ``bool`` literal is an
``int`` (``m & True`` comes back int64) and ``2.5 - u`` wraps in uint8. torch.onnx fails
on a number first (``2.5 - u``, ``7 // j``). Before such an export, each of those numbers
becomes a 0-d tensor of the dtype that promotes exactly as the Python number did; the
other backends keep the literal.
"""

from __future__ import annotations

import copy
import operator
from collections.abc import Sequence
from typing import Any

import torch
from torch import fx

_OPERATORS = {
    operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
    operator.mod, operator.pow, operator.and_, operator.or_, operator.xor,
    operator.lshift, operator.rshift, operator.eq, operator.ne, operator.lt,
    operator.le, operator.gt, operator.ge,
}  # fmt: skip
# tensor methods (and torch functions of the same name) taking (tensor, other): a bool
# ``other`` is an int to TorchScript (``m.mul(True)`` comes back int64)
_BINARY_NAMES = {
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide",
    "floor_divide", "remainder", "fmod", "pow", "bitwise_and", "bitwise_or", "bitwise_xor",
    "bitwise_left_shift", "bitwise_right_shift", "eq", "ne", "lt", "le", "gt", "ge",
    "__and__", "__or__", "__xor__", "__lshift__", "__rshift__", "__mul__", "__add__",
    "__sub__", "__floordiv__", "__mod__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__",
    "__ge__",
}  # fmt: skip
_BINARY_FUNCTIONS = {getattr(torch, name) for name in _BINARY_NAMES if hasattr(torch, name)}
_NUMBERS = (bool, int, float)
_SCALAR_FIRST = {operator.truediv, operator.pow}  # TorchScript has eager's (number, tensor)


def _needs_tensor(node: fx.Node) -> int | None:
    """Position of the number TorchScript would mistype in ``node``'s ``(x, y)``, or None:
    a number before a tensor in an operator, or a bool beside a tensor."""
    args = node.args
    if len(args) != 2 or node.kwargs:
        return None
    if node.op == "call_method":
        known = node.target in _BINARY_NAMES
    else:
        known = node.op == "call_function" and (
            node.target in _OPERATORS or node.target in _BINARY_FUNCTIONS
        )
    if not known:
        return None
    first, second = args
    if type(first) in _NUMBERS and isinstance(second, fx.Node):
        reflected = node.op == "call_function" and node.target in _OPERATORS
        return 0 if reflected or type(first) is bool else None
    if type(second) is bool and isinstance(first, fx.Node):
        return 1
    return None


def _dtype_for(number: Any, operand: Any) -> torch.dtype | None:
    """The 0-d dtype that promotes with ``operand`` as ``number`` does."""
    if not isinstance(operand, torch.Tensor):
        return None
    return torch.result_type(operand, number)


def _literal(number: Any, dtype: torch.dtype) -> Any:
    """``number`` as torch holds it in ``dtype``: integers wrap (``u8 < 300`` compares with
    44, ``-3 // u8`` divides 253), as eager torch converts a Python int to the tensor's type."""
    if dtype.is_floating_point or dtype.is_complex:
        return float(number)
    value = int(number)
    if dtype == torch.bool:
        return value
    bits = torch.iinfo(dtype).bits
    value &= (1 << bits) - 1
    if torch.iinfo(dtype).min < 0 and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


def numbers_as_tensors(module: Any, args: Sequence[Any], *, bool_literals: bool = True) -> Any:
    """A copy of fx ``module`` whose operator calls take no number before a tensor (and,
    with ``bool_literals``, no bool beside one; see the module docstring); ``module``
    itself when it has none or its values on ``args`` cannot be worked out."""
    if not isinstance(module, fx.GraphModule):
        return module
    calls = [
        (node, position)
        for node in module.graph.nodes
        for position in [_needs_tensor(node)]
        if position is not None and (bool_literals or position == 0)
    ]
    if not calls:
        return module
    values = _run(module, args)
    if values is None:
        return module
    graph = copy.deepcopy(module.graph)
    copies = {node.name: node for node in graph.nodes}
    changed = False
    for node, position in calls:
        number, operand = node.args[position], node.args[1 - position]
        target = copies[node.name]
        if node.op == "call_function" and node.target in _SCALAR_FIRST and position == 0:
            # TorchScript's own ``7 / b`` and ``2 ** b`` are eager torch's (``7 / b`` is
            # reciprocal(b) * 7; a 0-d tensor would divide, one ulp apart): only a bool
            # base needs help, as the int it stands for
            if type(number) is not bool:
                continue
            replacement: Any = int(number)
        else:
            dtype = _dtype_for(number, values.get(operand.name))
            if dtype is None:
                continue
            with graph.inserting_before(target):
                literal = _literal(number, dtype)
                if dtype == torch.bool:  # torch.jit.freeze folds a 0-d bool back to a bool
                    operand_copy = target.args[1 - position]
                    replacement = graph.call_function(
                        torch.full_like, (operand_copy, literal), {"dtype": dtype}
                    )
                else:
                    replacement = graph.call_function(
                        torch.scalar_tensor, (literal,), {"dtype": dtype}
                    )
        new_args = list(target.args)
        new_args[position] = replacement
        target.args = tuple(new_args)
        changed = True
    if not changed:
        return module
    return fx.GraphModule(module, graph)


def _run(module: fx.GraphModule, args: Sequence[Any]) -> dict[str, Any] | None:
    """Each node's value on ``args`` (by node name), or None when the graph fails on them."""
    values: dict[str, Any] = {}

    class _Keep(fx.Interpreter):
        def run_node(self, n: fx.Node) -> Any:
            result = super().run_node(n)
            values[n.name] = result
            return result

    try:
        with torch.no_grad():
            _Keep(module).run(*args)
    except Exception:  # noqa: BLE001 - without values the literals are left as they are
        return None
    return values
