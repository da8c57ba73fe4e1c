"""Export of traced nodes (ONNX, torch.export, TorchScript), pipeline YAML, replay."""

from ..bundle.inference import InferenceManager
from ..errors import ModelIntegrityError
from .compile import CompileResult, NodeValidation, ValidationError, compile_graph
from .export_manager import ExportManager

__all__ = [
    "CompileResult",
    "ExportManager",
    "InferenceManager",
    "ModelIntegrityError",
    "NodeValidation",
    "ValidationError",
    "compile_graph",
]
