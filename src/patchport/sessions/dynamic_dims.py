"""``annotate.input_tensors(..., dynamic=...)``: which input axes may change size.

``dynamic={"bgr": {0: "batch", 1: "height", 2: "width"}}`` names axes of the node's input
ports; one name on several ports means those axes always have equal sizes. The argument
is checked completely before the node changes, and every refusal names the port, the
axis and the fix.
"""

from __future__ import annotations

from typing import Any

from ..errors import PatchDefinitionError

DynamicAxes = dict[str, dict[int, str]]  # port -> {axis: dimension name}


def _refuse(node: str, text: str) -> PatchDefinitionError:
    return PatchDefinitionError(f"annotate.input_tensors({node!r}, ..., dynamic=...): {text}")


def check_dynamic(
    node: str,
    dynamic: Any,
    shapes: dict[str, tuple[int, ...]],
    earlier: DynamicAxes,
    earlier_shapes: dict[str, tuple[int, ...]],
) -> DynamicAxes:
    """Validate ``dynamic`` against the ports of this call (``shapes``: port -> shape).

    Returns ``{port: {axis (non-negative): name}}``. ``earlier`` / ``earlier_shapes`` are
    the node's dynamic axes and port shapes declared by earlier calls (shared names must
    keep equal sizes across them).
    """
    if dynamic is None:
        return {}
    if not isinstance(dynamic, dict):
        raise _refuse(
            node,
            f"expected a dict {{port: {{axis: name}}}} such as "
            f"{{'image': {{0: 'batch'}}}}, got {type(dynamic).__name__}.",
        )
    result: DynamicAxes = {}
    sizes: dict[str, tuple[int, str]] = {}  # name -> (size, "port axis N") seen first
    for port, axes in earlier.items():
        for axis, name in axes.items():
            sizes.setdefault(name, (earlier_shapes[port][axis], f"{port!r} axis {axis}"))
    for port, axes in dynamic.items():
        if port not in shapes:
            raise _refuse(
                node,
                f"{port!r} is not an input of this call (inputs: {sorted(shapes)}); name a "
                f"port given in the same call.",
            )
        if not isinstance(axes, dict) or not axes:
            raise _refuse(
                node,
                f"port {port!r}: expected a non-empty dict {{axis: name}} such as "
                f"{{0: 'batch'}}, got {axes!r}.",
            )
        rank = len(shapes[port])
        named: dict[int, str] = {}
        for axis, name in axes.items():
            if isinstance(axis, bool) or not isinstance(axis, int) or not -rank <= axis < rank:
                raise _refuse(
                    node,
                    f"port {port!r}: axis {axis!r} is not an axis of its shape "
                    f"{list(shapes[port])}; use an integer in [{-rank}, {rank}).",
                )
            if not isinstance(name, str) or not name.isidentifier():
                raise _refuse(
                    node,
                    f"port {port!r} axis {axis}: the dimension name must be an identifier "
                    f"such as 'batch' or 'width', got {name!r}.",
                )
            axis = axis % rank
            if axis in named:
                raise _refuse(node, f"port {port!r}: axis {axis} is named twice.")
            if name in named.values():
                raise _refuse(
                    node,
                    f"port {port!r}: {name!r} names two axes of one port; a port's axes "
                    f"have independent sizes, give each its own name.",
                )
            size = shapes[port][axis]
            first = sizes.setdefault(name, (size, f"{port!r} axis {axis}"))
            if first[0] != size:
                raise _refuse(
                    node,
                    f"port {port!r} axis {axis} has size {size} but {name!r} already names "
                    f"{first[1]} of size {first[0]}; one name means equal sizes, use "
                    f"another name.",
                )
            named[axis] = name
        result[port] = dict(sorted(named.items()))
    return result
