"""The deploy runtime: read a bundle's YAML, check it, load its models and run the pipeline.

It needs NumPy, PyYAML and ONNX Runtime for an ONNX bundle, and torch only for a ``.pt2`` or
``.pt`` model; nothing here imports the tracer (``patchport.tracing``, ``patchport.sessions``)
or the exporters (``patchport.export``).
"""

from ..errors import ModelIntegrityError
from .inference import InferenceManager

__all__ = ["InferenceManager", "ModelIntegrityError"]
