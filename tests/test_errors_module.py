"""Every exception and warning class of patchport is declared in ``patchport.errors`` (the one
home users import them from; tests/test_public_api.py holds the rest of the contract)."""

import ast
import inspect
from pathlib import Path

import patchport.errors as errors

SRC = Path(errors.__file__).parent


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
