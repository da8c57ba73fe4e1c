"""patchport.torch: patches that make ``torch.export.export`` succeed, and their helpers."""

from .apply import apply_patches, apply_patches_for_model, collect_patches
from .dynamic_shapes import use_dyn_not_str

__all__ = [
    "ExportFailedError",
    "ExportReport",
    "ExportResult",
    "NarrowedExportError",
    "OnnxReport",
    "OnnxResult",
    "TransformersPatch",
    "TransformersPatchEnum",
    "apply_patches",
    "apply_patches_for_model",
    "check_program",
    "collect_patches",
    "export",
    "get_tiny_model",
    "make_dynamic_cache",
    "onnx_translation_table",
    "register_cache_pytrees",
    "register_flattening_functions",
    "to_onnx",
    "torch_deepcopy",
    "use_dyn_not_str",
]

_LAZY = {
    "export": "export_select",
    "ExportFailedError": "export_select",
    "NarrowedExportError": "export_select",
    "check_program": "export_check",
    "ExportReport": "export_check",
    "ExportResult": "export_check",
    "TransformersPatch": "transformers_patches",
    "TransformersPatchEnum": "transformers_patches",
    "register_flattening_functions": "transformers_inputs",
    "get_tiny_model": "tiny_models",
    "onnx_translation_table": "onnx_translation",
    "make_dynamic_cache": "transformers_inputs",
    "register_cache_pytrees": "transformers_inputs",
    "torch_deepcopy": "transformers_inputs",
    "to_onnx": "onnx_export",
    "OnnxReport": "onnx_export",
    "OnnxResult": "onnx_export",
}


def __getattr__(name: str):  # noqa: ANN202 - module-level lazy attribute
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'patchport.torch' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
