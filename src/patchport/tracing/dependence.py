"""Does a node's output depend on the node's inputs?

An output computed without them (the original array instead of the traced one, a fresh
``np.zeros``) exports as a constant: the model returns the traced-time value for every
input. Found by walking the value's ``fx.Node`` back towards a graph input.
"""

from __future__ import annotations

from typing import Any

from .recorder import Recorder
from .values import active_recorder


def depends_on_inputs(recorder: Recorder, value: Any) -> bool:
    """True when ``value`` is traced in ``recorder`` and reaches one of its graph inputs."""
    if active_recorder(value) is not recorder or value._pp.node is None:
        return False
    stack = [value._pp.node]
    seen = set()
    while stack:
        node = stack.pop()
        if node.op == "placeholder":
            return True
        for parent in node.all_input_nodes:
            if parent not in seen:
                seen.add(parent)
                stack.append(parent)
    return False


def inputs_reached(recorder: Recorder, values: Any) -> set[str]:
    """Names of ``recorder``'s graph inputs that any of ``values`` is computed from."""
    stack = [v._pp.node for v in values if active_recorder(v) is recorder and v._pp.node]
    seen = set(stack)
    reached: set[str] = set()
    while stack:
        node = stack.pop()
        if node.op == "placeholder":
            reached.add(node.target)
        for parent in node.all_input_nodes:
            if parent not in seen:
                seen.add(parent)
                stack.append(parent)
    return reached
