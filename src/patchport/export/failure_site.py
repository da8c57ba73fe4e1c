"""Where a backend's export failure came from in the user's code.

torch.onnx (and torch.export) report a failing operation by the name of its node in their
own graph (``%linalg_matrix_exp``, ``%_cdist_forward``) or by its ATen operator: a user
cannot act on that. The recorded graph's nodes keep the user's line that recorded them
(``pp_location`` in a node with dynamic axes, else the line that first recorded its
operation), so the failing node is looked up there by name and operator.
"""

from __future__ import annotations

import re

from torch import fx

_NODE = re.compile(r"translating node %(\w+)")
_ATEN = re.compile(r"aten\.(\w+)")
_SUFFIXES = ("_forward", "_backward", "_default")


def _stem(name: str) -> str:
    """``_cdist_forward`` -> ``cdist``; ``linalg_matrix_exp_2`` -> ``linalg_matrix_exp``."""
    name = re.sub(r"_\d+$", "", name).lstrip("_")
    for suffix in _SUFFIXES:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name


def failing_site(module: fx.GraphModule, error: BaseException) -> str | None:
    """``"torch.cdist recorded at file:line"`` for the recorded node a backend's error
    names (its own node name, else its ATen operator), or None when none matches."""
    text = "\n".join(str(e) for e in _chain(error))
    names = _NODE.findall(text) + _ATEN.findall(text)
    if not names:
        return None
    first = getattr(module, "meta", {}).get("pp_first_recorded", {})
    recorded = []
    for node in module.graph.nodes:
        where = node.meta.get("pp_location")
        if where is None and node.op in ("call_function", "call_method"):
            try:
                where = first.get(node.target)
            except TypeError:  # an unhashable target
                where = None
        if where is not None and where != "<unknown>":
            recorded.append((node, where))
    for name in names:
        for node, where in recorded:
            if node.name == name:
                return _describe(node, where)
    stems = {_stem(name) for name in names}
    for node, where in recorded:
        target = getattr(node.target, "__name__", node.target)
        if _stem(node.name) in stems or (isinstance(target, str) and _stem(target) in stems):
            return _describe(node, where)
    return None


def _chain(error: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    while error is not None and error not in seen and len(seen) < 8:
        seen.append(error)
        error = error.__cause__ or error.__context__
    return seen


# torch's internal homes of public functions -> the public name a user wrote
_PUBLIC = {
    "torch._C._linalg": ("torch.linalg.", "linalg_"),
    "torch._C._nn": ("torch.nn.functional.", ""),
    "torch._C._special": ("torch.special.", "special_"),
    "torch._C._fft": ("torch.fft.", "fft_"),
    "torch._C._VariableFunctions": ("torch.", ""),
    "torch.functional": ("torch.", ""),
}


def _describe(node: fx.Node, where: str) -> str:
    target = node.target
    if node.op == "call_method":
        return f"Tensor.{target} recorded at {where}"
    name = getattr(target, "__name__", str(target))
    module = getattr(target, "__module__", None) or "torch"
    prefix, drop = _PUBLIC.get(module, (f"{module}.", ""))
    if drop and name.startswith(drop):
        name = name[len(drop) :]
    return f"{prefix}{name} recorded at {where}"
