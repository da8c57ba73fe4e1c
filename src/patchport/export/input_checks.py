"""run_policy's inputs checked against the bundle, with errors naming port, expected, got.

A runtime accepts a wrong shape or dtype and returns nonsense (TorchScript) or fails
deep inside (ONNX Runtime); a key named like an output would shadow that output. The
expectations are built once per manager, so the check costs a few dict and tuple
comparisons per call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from ..errors import PatchportError


class PolicyInputError(PatchportError, ValueError):
    """An input of run_policy has the wrong shape or dtype, or is unknown to the bundle."""


class PolicyInputTypeError(PatchportError, TypeError):
    """run_policy was given something else than a dict of arrays or tensors."""


class MissingPolicyInputError(PatchportError, KeyError):
    """run_policy was not given every input the bundle needs."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def _expectations(manager: Any) -> dict[str, tuple[tuple[int, ...], np.dtype, Any]]:
    found = manager.__dict__.get("_policy_input_expectations")
    if found is None:
        found = {}
        for key in manager.inputs:
            node, port = key.split("/", 1)
            spec = next(p for p in manager.models[node]["inputs"] if p["name"] == port)
            dtype = np.dtype(spec["dtype"])
            as_torch = torch.from_numpy(np.zeros(0, dtype=dtype)).dtype
            found[key] = (tuple(spec["shape"]), dtype, as_torch)
        manager.__dict__["_policy_input_expectations"] = found
    return found


def check_policy_inputs(manager: Any, inputs: Any) -> None:
    """Raise a clear error unless ``inputs`` holds exactly the bundle's inputs, as recorded."""
    if type(inputs) is not dict and not isinstance(inputs, Mapping):
        raise PolicyInputTypeError(
            f"run_policy(inputs=...): expected a dict {{'node/port': array or tensor}} with "
            f"keys {manager.inputs}, got {type(inputs).__name__}."
        )
    expected = _expectations(manager)
    missing = [key for key in expected if key not in inputs]
    if missing:
        raise MissingPolicyInputError(
            f"run_policy: missing inputs {missing}; expected keys {list(expected)}."
        )
    if len(inputs) != len(expected):
        for key in inputs:
            if key in expected:
                continue
            what = "an output of the pipeline" if key in manager.outputs else "not an input"
            raise PolicyInputError(
                f"run_policy: key {key!r} is {what}; expected exactly the keys "
                f"{list(expected)}. Remove it."
            )
    for key, (shape, dtype, torch_dtype) in expected.items():
        value = inputs[key]
        if isinstance(value, np.ndarray):
            ok_dtype = value.dtype == dtype
        elif isinstance(value, torch.Tensor):
            ok_dtype = value.dtype == torch_dtype
        else:
            raise PolicyInputTypeError(
                f"run_policy: input {key!r} expected a NumPy array or torch tensor "
                f"{dtype}{list(shape)}, got {type(value).__name__}."
            )
        if tuple(value.shape) != shape or not ok_dtype:
            got = str(value.dtype).replace("torch.", "")
            raise PolicyInputError(
                f"run_policy: input {key!r} expected {dtype}{list(shape)}, got "
                f"{got}{list(value.shape)}; convert it (e.g. .astype('{dtype}')) or re-export "
                f"with that shape."
            )
