"""run_policy's inputs checked against the bundle, with errors naming port, expected, got.

A runtime accepts a wrong shape or dtype and returns nonsense (TorchScript) or fails
deep inside (ONNX Runtime); a key named like an output would shadow that output. The
expectations are built once per manager, so the check costs a few dict and tuple
comparisons per call. torch is not imported here: a tensor can only be given once the
caller imported it.
"""

from __future__ import annotations

import sys
from collections.abc import Collection, Mapping
from typing import Any

import numpy as np

from ..errors import (
    MissingPolicyInputError,
    PolicyInputError,
    PolicyInputTypeError,
    UnknownPolicyInputError,
)
from .arrays import numpy_dtype
from .input_shapes import check_input_shape, expected_shape


def _expectations(manager: Any) -> dict[str, tuple[dict[str, Any], Any, Any, Any]]:
    """Port description, NumPy dtype, torch dtype name and static shape (None where an axis
    is dynamic) of every node input (pipeline inputs and the inputs fed by other nodes or by
    feedback, which LEAPP lets a caller overwrite too)."""
    found = manager.__dict__.get("_policy_input_expectations")
    if found is None:
        found = {}
        for node, model in manager.models.items():
            for spec in model["inputs"] or []:
                name = str(spec["dtype"]).replace("torch.", "")
                try:  # torch's names too: "float" is float32, as the buffers hold it
                    dtype = numpy_dtype(name)
                except ValueError:  # bfloat16 and other dtypes NumPy lacks
                    dtype = name
                static = None if spec.get("dynamic_axes") else tuple(spec["shape"])
                found[f"{node}/{spec['name']}"] = (spec, dtype, name, static)
        manager.__dict__["_policy_input_expectations"] = found
    return found


def check_policy_inputs(manager: Any, inputs: Any, never_given: Collection[str] = ()) -> None:
    """Raise a clear error unless every key of ``inputs`` is a node input of the recorded
    shape and dtype, and every pipeline input in ``never_given`` (not given since the last
    reset) is among them."""
    if type(inputs) is not dict and not isinstance(inputs, Mapping):
        raise PolicyInputTypeError(
            f"run_policy(inputs=...): expected a dict {{'node/port': array or tensor}} with "
            f"keys {manager.inputs}, got {type(inputs).__name__}."
        )
    expected = _expectations(manager)
    torch = sys.modules.get("torch")  # None: no value can be a tensor
    named: dict[str, tuple[int, str]] = {}  # dynamic dimension -> (size, first key)
    for key, value in inputs.items():
        found = expected.get(key)
        if found is None:
            what = "an output of the pipeline" if key in manager.outputs else "not a node input"
            raise UnknownPolicyInputError(
                f"run_policy: key {key!r} is {what}; the inputs are {manager.inputs} (and the "
                f"other node inputs {sorted(set(expected) - set(manager.inputs))}). Remove it."
            )
        description, dtype, torch_dtype, static = found
        if torch is not None and isinstance(value, torch.Tensor):
            ok_dtype = value.dtype == getattr(torch, torch_dtype)
        elif isinstance(value, np.ndarray):
            ok_dtype = value.dtype == dtype
        else:
            raise PolicyInputTypeError(
                f"run_policy: input {key!r} must be a torch tensor or a NumPy array "
                f"({dtype}{expected_shape(description)}), got {type(value).__name__}."
            )
        if not ok_dtype:
            got = str(value.dtype).replace("torch.", "")
            raise PolicyInputError(
                f"run_policy: input {key!r} expected {dtype}{expected_shape(description)}, "
                f"got {got}{list(value.shape)}; convert it (e.g. .astype('{dtype}')) or "
                f"re-export with that dtype."
            )
        shape = tuple(value.shape)
        if shape != static:  # a static port of this shape needs no more checks
            check_input_shape(key, description, shape, named)
    if never_given:
        missing = [key for key in manager.inputs if key in never_given and key not in inputs]
        if missing:
            raise MissingPolicyInputError(
                f"run_policy: missing inputs {missing} (never given: not in this call, an "
                f"earlier one or set_input_value); expected keys {manager.inputs}."
            )
