"""What ``annotate.method`` reads from the decorated function: its ports, by name.

Each tensor argument is an input named after its parameter; a tensor default the call
did not override is a buffer (baked in); outputs are named after the variables in the
function's ``return`` statement (``output1``, ``output2``... for other expressions).
Only reading happens here; ``annotate.method`` declares the node with these names.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from ..errors import PatchDefinitionError

_ARRAYS = (np.ndarray, torch.Tensor)


def return_names(func: Callable[..., Any]) -> list[str]:
    """Names of the values ``func`` returns, read from its source's ``return`` statements."""
    try:
        source = textwrap.dedent(inspect.getsource(inspect.unwrap(func)))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError):
        return ["output1"]
    function = next(
        (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))),
        None,
    )
    found: list[tuple[int, list[str]]] = []
    stack = list(function.body) if function is not None else []
    while stack:  # the function's own statements, not those of nested functions
        statement = stack.pop()
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        if isinstance(statement, ast.Return) and statement.value is not None:
            value = statement.value
            items = value.elts if isinstance(value, ast.Tuple) else [value]
            names = [
                item.id if isinstance(item, ast.Name) else f"output{index + 1}"
                for index, item in enumerate(items)
            ]
            found.append((statement.lineno, names))
        stack.extend(ast.iter_child_nodes(statement))
    if not found:
        return ["output1"]
    if len({len(names) for _, names in found}) > 1:
        raise PatchDefinitionError(
            f"annotate.method: {func.__qualname__} returns different numbers of values in "
            f"different return statements; a node has one set of outputs."
        )
    return min(found)[1]  # the first return statement in the source names the outputs


def check_node_name(node_name: str | None) -> None:
    """Refuse a node name that is neither None (the function's name) nor a string."""
    if node_name is not None and (not isinstance(node_name, str) or not node_name):
        raise PatchDefinitionError(
            f"annotate.method(node_name={node_name!r}): expected a non-empty string."
        )


def bind_ports(
    signature: inspect.Signature, args: tuple, kwargs: dict
) -> tuple[inspect.BoundArguments, list[str], list[str]]:
    """Bind a call; return it with the names of its tensor inputs and tensor defaults.

    Given tensors are inputs; a tensor default the call did not override is a buffer.
    ``self``/``cls`` and ``*args``/``**kwargs`` are neither.
    """
    bound = signature.bind(*args, **kwargs)
    given = set(bound.arguments)
    bound.apply_defaults()
    inputs: list[str] = []
    buffers: list[str] = []
    for param, value in bound.arguments.items():
        kind = signature.parameters[param].kind
        if param in ("self", "cls") or not isinstance(value, _ARRAYS):
            continue
        if kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            continue
        (inputs if param in given else buffers).append(param)
    return bound, inputs, buffers


def star_ports(
    signature: inspect.Signature, bound: inspect.BoundArguments
) -> list[tuple[str, Any]]:
    """The tensors a call passes through ``*args`` / ``**kwargs``, as ``(port, where)``:
    ``where`` is ``(param, index)`` for ``*args`` (port ``arg_<index>``, its position among
    them, as LEAPP names it) and ``(param, key)`` for ``**kwargs`` (port ``key``)."""
    ports: list[tuple[str, Any]] = []
    for param, value in bound.arguments.items():
        kind = signature.parameters[param].kind
        if kind is inspect.Parameter.VAR_POSITIONAL:
            ports += [
                (f"arg_{i}", (param, i)) for i, v in enumerate(value) if isinstance(v, _ARRAYS)
            ]
        elif kind is inspect.Parameter.VAR_KEYWORD:
            ports += [(key, (param, key)) for key, v in value.items() if isinstance(v, _ARRAYS)]
    return ports


def named_outputs(func: Callable[..., Any], result: Any) -> dict[str, Any]:
    """The returned values by name (``return a, b`` names them ``a``, ``b``)."""
    if result is None:
        raise PatchDefinitionError(
            f"annotate.method: {func.__qualname__} returned None; a node needs outputs."
        )
    values = list(result) if isinstance(result, tuple) else [result]
    names = return_names(func)
    if len(names) != len(values):
        names = [f"output{i + 1}" for i in range(len(values))]
    return dict(zip(names, values))
