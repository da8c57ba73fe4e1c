"""patchport: export real PyTorch + NumPy + OpenCV pipelines with reversible function patches.

This module is the public face only. Heavy parts (torch.export, dynamo, onnx,
transformers) load when the feature that needs them is used, never on ``import patchport``.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from .errors import (
    PatchDefinitionError,
    PatchMismatchError,
    PatchMismatchWarning,
    PatchportError,
    PatchportWarning,
    PatchRestoreWarning,
    PatchStateError,
    PatchTargetError,
    TraceLossError,
    TraceLossWarning,
)

__version__ = "0.1.0"

# public name -> module that defines it, imported on first access
_LAZY: dict[str, str] = {
    "PatchInfo": "patchport.patching",
    "PatchDetails": "patchport.patching",
    "FunctionPatch": "patchport.patching",
    "PatchRuleError": "patchport.sessions",
    "annotate": "patchport.sessions",
    "ExportManager": "patchport.export",
    "start": "patchport.sessions",
    "stop": "patchport.sessions",
    "session": "patchport.sessions",
    "session_patches": "patchport.sessions",
    "compile_graph": "patchport.export",
    "InferenceManager": "patchport.bundle",
    "ValidationError": "patchport.export",
    "TensorSemantics": "patchport.semantics",
    "TemporalAxis": "patchport.semantics",
    "GraphConfigs": "patchport.semantics",
    "InputKindEnum": "patchport.semantics",
    "OutputKindEnum": "patchport.semantics",
}

__all__ = [
    "PatchDefinitionError",
    "PatchMismatchError",
    "PatchMismatchWarning",
    "PatchportError",
    "PatchportWarning",
    "PatchRestoreWarning",
    "PatchStateError",
    "PatchTargetError",
    "TraceLossError",
    "TraceLossWarning",
    "__version__",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'patchport' has no attribute {name!r}")
    value = getattr(import_module(module_name), name)
    if name == "annotate":  # it also answers the manager's names, as in some LEAPP revisions
        import_module("patchport.leapp")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
