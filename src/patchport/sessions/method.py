"""annotate.method: a decorated function becomes a node (arguments in, return values out).

Each tensor argument is an input named after its parameter; a tensor default the call
did not override is a buffer (baked in); outputs are named after the variables in the
function's ``return`` statement (``output1``, ``output2``... for other expressions).
Outside a session the function runs untouched.
"""

from __future__ import annotations

import ast
import functools
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


def method(
    node_name: str | None = None,
    export_with: str | None = "onnx",
    backend_params: dict[str, Any] | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: each call of the function inside a session is a pass through a node."""
    if node_name is not None and (not isinstance(node_name, str) or not node_name):
        raise PatchDefinitionError(
            f"annotate.method(node_name={node_name!r}): expected a non-empty string."
        )

    def decorator(func: Callable[..., Any]) -> Callable[..., Any]:
        name = node_name or func.__name__
        signature = inspect.signature(func)

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            from . import annotate
            from .lifecycle import current_session

            if current_session() is None:
                return func(*args, **kwargs)
            bound = signature.bind(*args, **kwargs)
            given = set(bound.arguments)
            bound.apply_defaults()
            for param, value in list(bound.arguments.items()):
                kind = signature.parameters[param].kind
                if param in ("self", "cls") or not isinstance(value, _ARRAYS):
                    continue
                if kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
                    continue
                if param in given:
                    bound.arguments[param] = annotate.input_tensors(name, {param: value})
                else:  # a tensor default: a constant of the node
                    bound.arguments[param] = annotate.register_buffer(name, {param: value})
            result = func(*bound.args, **bound.kwargs)
            if result is None:
                raise PatchDefinitionError(
                    f"annotate.method: {func.__qualname__} returned None; a node needs outputs."
                )
            values = list(result) if isinstance(result, tuple) else [result]
            names = return_names(func)
            if len(names) != len(values):
                names = [f"output{i + 1}" for i in range(len(values))]
            annotate.output_tensors(
                name,
                dict(zip(names, values)),
                export_with=export_with,
                backend_params=backend_params,
            )
            return result

        return wrapper

    return decorator
