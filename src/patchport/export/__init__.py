"""Export of traced nodes (ONNX, torch.export, TorchScript), pipeline YAML, replay."""

from .compile import CompileResult, NodeValidation, ValidationError, compile_graph
from .inference import InferenceManager, ModelIntegrityError

__all__ = [
    "CompileResult",
    "InferenceManager",
    "ModelIntegrityError",
    "NodeValidation",
    "ValidationError",
    "compile_graph",
]
