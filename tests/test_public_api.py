"""The public contract (DESIGN.md's list: the names LEAPP's and yobx's programs use) resolves,
with the parameters those programs pass. Internal module paths are not part of it: code moves
between modules without shims, so this list is what a release must keep."""

from __future__ import annotations

import importlib
import inspect

import pytest

import patchport
import patchport.errors as errors

# module -> names a user program imports from it
PUBLIC = {
    "patchport": [
        "start",
        "stop",
        "session",
        "session_patches",
        "FunctionPatch",
        "annotate",
        "ExportManager",
        "compile_graph",
        "InferenceManager",
        "ValidationError",
        "PatchRuleError",
        "TensorSemantics",
        "TemporalAxis",
        "GraphConfigs",
        "InputKindEnum",
        "OutputKindEnum",
        "TraceLossWarning",
        "TraceLossError",
        "PatchportError",
        "PatchportWarning",
    ],
    "patchport.annotate": [
        "input_tensors",
        "output_tensors",
        "state_tensors",
        "update_state",
        "register_buffer",
        "module",
        "method",
        "mirror_leapp_tags",
    ],
    "patchport.patching": ["PatchInfo", "PatchDetails", "FunctionPatch"],
    "patchport.torch": [
        "apply_patches_for_model",
        "use_dyn_not_str",
        "export",
        "to_onnx",
        "register_flattening_functions",
        "register_cache_pytrees",
        "get_tiny_model",
        "check_program",
        "ExportReport",
        "NarrowedExportError",
        "ExportFailedError",
    ],
    "patchport.torch.tiny_models": ["TinyBroadcastAddModel", "get_tiny_model"],
}

# callable -> keyword parameters the peers' programs and our docs pass to it
PARAMETERS = {
    "patchport.start": [
        "name",
        "save_path",
        "patching",
        "global_patching",
        "strict",
        "verbose",
        "dry_run",
        "non_traced",
        "max_cached_io",
    ],
    "patchport.compile_graph": [
        "visualize",
        "validate",
        "rtol",
        "atol",
        "strict",
        "graph_configs",
    ],
    "patchport.annotate.output_tensors": [
        "node",
        "tensors",
        "static_outputs",
        "export_with",
        "backend_params",
    ],
    "patchport.torch.to_onnx": ["model", "args", "kwargs", "dynamic_shapes", "path"],
    "patchport.torch.export": ["dynamic_shapes"],
}

INFERENCE_MANAGER = [
    "get_mock_input",
    "run_policy",
    "__call__",
    "set_input_value",
    "reset",
    "inputs",
    "outputs",
    "feedback_inputs",
]


def _resolve(dotted: str):
    module_name, _, name = dotted.rpartition(".")
    if module_name == "patchport.annotate":
        return getattr(patchport.annotate, name)
    return getattr(importlib.import_module(module_name), name)


@pytest.mark.parametrize("module_name", sorted(PUBLIC))
def test_every_public_name_resolves(module_name):
    if module_name == "patchport.annotate":
        module = patchport.annotate
    else:
        module = importlib.import_module(module_name)
    missing = [name for name in PUBLIC[module_name] if not hasattr(module, name)]
    assert not missing, f"{module_name} lost public names: {missing}"


@pytest.mark.parametrize("dotted", sorted(PARAMETERS))
def test_public_callables_keep_their_parameters(dotted):
    parameters = inspect.signature(_resolve(dotted)).parameters
    missing = [p for p in PARAMETERS[dotted] if p not in parameters]
    assert not missing, f"{dotted} lost parameters: {missing}"


def test_inference_manager_keeps_leapps_methods():
    missing = [name for name in INFERENCE_MANAGER if not hasattr(patchport.InferenceManager, name)]
    assert not missing, missing


# signals caught inside patchport, never raised to a user
INTERNAL_SIGNALS = {"Untranslatable", "NotInlinable", "BundleCommandError"}


def test_every_error_class_is_public_in_errors():
    """Users catch our exceptions from one place; each one derives from our base classes."""
    classes = {
        name: value
        for name, value in vars(errors).items()
        if inspect.isclass(value) and value.__module__ == errors.__name__
    }
    assert len(classes) > 20  # the walk really saw the module
    assert INTERNAL_SIGNALS <= set(classes)
    for name, value in classes.items():
        if name not in INTERNAL_SIGNALS:
            assert issubclass(value, (errors.PatchportError, errors.PatchportWarning)), name


def test_the_top_level_errors_are_the_same_objects():
    for name in ["TraceLossWarning", "TraceLossError", "PatchportError", "ValidationError"]:
        assert getattr(patchport, name) is getattr(errors, name), name
