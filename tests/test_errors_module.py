"""Every exception and warning class of patchport is declared in ``patchport.errors``, and
stays importable from the module that raises it (where users and older code import it)."""

import ast
import importlib
import inspect
from pathlib import Path

import patchport.errors as errors

SRC = Path(errors.__file__).parent

OLD_HOMES = {
    "patchport.cli_bundle": ["BundleCommandError"],
    "patchport.bundle.spec_checks": ["BundleFormatError"],
    "patchport.export.onnx.driver": ["Untranslatable"],
    "patchport.export.scene": ["DrawingUnavailable"],
    "patchport.bundle.bundle_safety": ["BundleSafetyError", "ModelIntegrityError"],
    "patchport.bundle.input_shapes": ["InputShapeError"],
    "patchport.export.onnx.kernels": ["OnnxPrecisionWarning", "OnnxKernelError"],
    "patchport.export.dynamic_export": ["DynamicShapeError"],
    "patchport.export.compile": ["ValidationError"],
    "patchport.bundle.input_checks": [
        "PolicyInputError",
        "PolicyInputTypeError",
        "UnknownPolicyInputError",
        "MissingPolicyInputError",
    ],
    "patchport.export.backends": ["ExportBackendError"],
    "patchport.sessions.dispatch": ["PatchRuleError"],
    "patchport.torch.export_select": ["ExportFailedError", "NarrowedExportError"],
    "patchport.torch.export_check": ["ExportArgumentError"],
    "patchport.patches.opencv._base": ["UnsupportedCaseError"],
}


def test_no_exception_class_is_declared_outside_errors_py():
    declared = {
        n for n, v in vars(errors).items() if inspect.isclass(v) and v.__module__ == errors.__name__
    }
    elsewhere = []
    for path in SRC.rglob("*.py"):
        if path.name == "errors.py" and path.parent == SRC:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases = [ast.unparse(b).split(".")[-1] for b in node.bases]
                if node.name in declared or any(
                    b in declared or b.endswith(("Error", "Exception", "Warning")) for b in bases
                ):
                    elsewhere.append(f"{path.relative_to(SRC)}: {node.name}")
    assert not elsewhere, elsewhere


def test_each_error_is_still_importable_from_its_old_module():
    for module_name, names in OLD_HOMES.items():
        module = importlib.import_module(module_name)
        for name in names:
            assert getattr(module, name) is getattr(errors, name), (module_name, name)
