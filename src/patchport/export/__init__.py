"""Export of traced nodes (ONNX, torch.export, TorchScript), pipeline YAML, replay."""

from ..bundle.inference import InferenceManager, ModelIntegrityError
from .compile import CompileResult, NodeValidation, ValidationError, compile_graph

__all__ = [
    "CompileResult",
    "InferenceManager",
    "ModelIntegrityError",
    "NodeValidation",
    "ValidationError",
    "compile_graph",
]
