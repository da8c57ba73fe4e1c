"""What annotate calls accept: ``{name: tensor}`` (nested lists/tuples/dicts allowed) or
TensorSemantics, turned into flat port names, values and labels.

A nested entry ``{"obs": {"pos": p, "vel": [v0, v1]}}`` becomes the ports ``obs_pos``,
``obs_vel_0`` and ``obs_vel_1`` (LEAPP's naming), and the traced values go back to the
caller in the structure they came in.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ..errors import PatchDefinitionError
from ..semantics import TensorSemantics

ARRAY_TYPES = (np.ndarray, torch.Tensor, np.generic)


@dataclass
class Payload:
    """A normalised annotate argument: top-level entries, flat ports, and their labels."""

    entries: dict[str, Any]  # as given (TensorSemantics unwrapped to their ref)
    flat: dict[str, Any]  # port name -> array or tensor
    semantics: dict[str, dict[str, Any]]  # port name -> YAML labels


def _flatten(name: str, value: Any, out: dict[str, Any]) -> None:
    if isinstance(value, ARRAY_TYPES):
        out[name] = value
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            _flatten(f"{name}_{index}", item, out)
    elif isinstance(value, dict):
        for key, item in value.items():
            _flatten(f"{name}_{key}", item, out)
    # any other leaf (a number, a string, None) is not a port; it passes through unchanged


def rebuild(name: str, value: Any, leaf: Callable[[str, Any], Any]) -> Any:
    """``value`` with each array or tensor replaced by ``leaf(port_name, it)``."""
    if isinstance(value, ARRAY_TYPES):
        return leaf(name, value)
    if isinstance(value, (list, tuple)):
        items = [rebuild(f"{name}_{i}", item, leaf) for i, item in enumerate(value)]
        return type(value)(items) if type(value) in (list, tuple) else type(value)(*items)
    if isinstance(value, dict):
        return {key: rebuild(f"{name}_{key}", item, leaf) for key, item in value.items()}
    return value


_NUMPY_KINDS = "biufc"  # bool, integers, floats, complex (pt2/jit; ONNX refuses at compile)


def refuse_unsupported(caller: str, node: str, port: str, value: Any) -> None:
    """Refuse a value no exported graph can hold, or whose traced copy would drop part of
    it: object, string, structured or datetime dtypes, ``np.matrix`` (``*`` is a
    matrix product there), masked arrays (the mask), meta tensors (no data)."""
    where = f"{caller}({node!r}, {{{port!r}: ...}})"
    masked = sys.modules.get("numpy.ma")
    if masked is not None and isinstance(value, masked.MaskedArray):
        raise PatchDefinitionError(
            f"{where}: a masked array's mask would be dropped by tracing; pass "
            f"value.filled(fill_value) (and the mask as its own input if the node uses it)."
        )
    if isinstance(value, np.matrix):
        raise PatchDefinitionError(
            f"{where}: np.matrix makes * a matrix product, which the graph would not keep; "
            f"pass np.asarray(value) and write @ for matrix products."
        )
    if isinstance(value, torch.Tensor):
        if value.device.type == "meta":
            raise PatchDefinitionError(f"{where}: a meta tensor has no data; pass real values.")
        return
    dtype = np.asarray(value).dtype if isinstance(value, np.generic) else value.dtype
    if dtype.kind not in _NUMPY_KINDS or dtype.names is not None:
        raise PatchDefinitionError(
            f"{where}: dtype {dtype.str if dtype.kind in 'USV' else dtype} cannot be traced or "
            f"exported; use bool, integer, float or complex values (strings and objects "
            f"stay outside the node)."
        )


def unwrap_semantics(caller: str, node: str, tensors: Any) -> tuple[Any, dict[str, Any]]:
    """A TensorSemantics (or a list of them) as ``{name: ref}`` plus their labels."""
    items = [tensors] if isinstance(tensors, TensorSemantics) else list(tensors)
    if not all(isinstance(item, TensorSemantics) for item in items):
        kinds = sorted({type(i).__name__ for i in items if not isinstance(i, TensorSemantics)})
        raise PatchDefinitionError(
            f"{caller}({node!r}, [...]): a list must hold only TensorSemantics, found "
            f"{', '.join(kinds)}; pass a dict {{name: tensor}} or wrap each tensor."
        )
    names = [item.name for item in items]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated or any(not isinstance(n, str) or not n for n in names):
        raise PatchDefinitionError(
            f"{caller}({node!r}, [...]): each TensorSemantics needs its own non-empty name "
            f"(repeated or missing: {repeated or names}; Duplicate name or empty name)."
        )
    return {item.name: item.ref for item in items}, {item.name: item.to_dict() for item in items}


def normalize(caller: str, node: str, tensors: Any) -> Payload:
    """Check and flatten an annotate argument; every refusal names the call and the fix."""
    if not isinstance(node, str) or not node:
        raise PatchDefinitionError(
            f"{caller}: the node name must be a non-empty string, got {node!r}."
        )
    labels: dict[str, Any] = {}
    if isinstance(tensors, TensorSemantics) or (
        isinstance(tensors, (list, tuple)) and any(isinstance(t, TensorSemantics) for t in tensors)
    ):
        tensors, labels = unwrap_semantics(caller, node, tensors)
    if isinstance(tensors, ARRAY_TYPES):
        raise PatchDefinitionError(
            f"{caller}({node!r}, ...): got a bare {type(tensors).__name__}; name it: "
            f"{caller}({node!r}, {{'x': value}}) or pass TensorSemantics."
        )
    if not isinstance(tensors, dict) or not tensors:
        raise PatchDefinitionError(
            f"{caller}({node!r}, ...): expected a non-empty dict {{name: array or tensor}} or a "
            f"list of TensorSemantics, got {type(tensors).__name__}."
        )
    flat: dict[str, Any] = {}
    semantics: dict[str, dict[str, Any]] = {}
    for key, value in tensors.items():
        if not isinstance(key, str) or not key.isidentifier():
            raise PatchDefinitionError(
                f"{caller}({node!r}, ...): port name {key!r} must be a Python identifier."
            )
        found: dict[str, Any] = {}
        _flatten(key, value, found)
        if not found:
            raise PatchDefinitionError(
                f"{caller}({node!r}, {{{key!r}: ...}}): expected a NumPy array or a torch tensor "
                f"(or lists/tuples/dicts of them), got {type(value).__name__}."
            )
        for port, leaf in found.items():
            refuse_unsupported(caller, node, port, leaf)
        flat.update(found)
        if key in labels and labels[key]:
            semantics[key] = labels[key]
    return Payload(dict(tensors), flat, semantics)


def single_or_tuple(values: list[Any]) -> Any:
    """LEAPP's return convention: one value alone, several as a tuple."""
    return values[0] if len(values) == 1 else tuple(values)


def passthrough(tensors: Any) -> Any:
    """What an annotation returns outside a session: the given values, unchanged."""
    if isinstance(tensors, TensorSemantics):
        return tensors.ref
    if isinstance(tensors, (list, tuple)) and any(isinstance(t, TensorSemantics) for t in tensors):
        return single_or_tuple([t.ref if isinstance(t, TensorSemantics) else t for t in tensors])
    if isinstance(tensors, dict):
        return single_or_tuple(list(tensors.values()))
    if isinstance(tensors, (list, tuple)):
        return single_or_tuple(list(tensors))
    return tensors
