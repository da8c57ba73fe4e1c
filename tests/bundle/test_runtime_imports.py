"""The deploy runtime's imports point one way: ``patchport.bundle`` reads only the leaves
(``errors``, ``versions``, ``backend_names``) of patchport, and torch only inside the
functions that load or convert to it (read from the source with ``ast``)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import patchport.bundle

PACKAGE = Path(patchport.bundle.__file__).parent
LEAVES = {"patchport", "patchport.errors", "patchport.versions", "patchport.backend_names"}
THIRD_PARTY = {"numpy", "yaml", "onnxruntime", "safetensors"}  # safetensors: initial values


def _imports(path: Path) -> list[tuple[str, bool]]:
    """(absolute module name, at module level) for every import statement of ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = {id(node) for node in tree.body}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, id(node) in top) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ["patchport", "bundle"][: 3 - node.level]
                name = ".".join([*base, *([node.module] if node.module else [])])
            else:
                name = node.module or ""
            found.append((name, id(node) in top))
    return found


def test_the_runtime_imports_only_leaves_of_patchport_and_torch_lazily():
    wrong = []
    for path in sorted(PACKAGE.glob("*.py")):
        for name, module_level in _imports(path):
            root = name.split(".")[0]
            if name.startswith("patchport.bundle") or name in LEAVES or name == "__future__":
                continue
            if root in sys.stdlib_module_names or root in THIRD_PARTY:
                continue
            if root == "torch" and not module_level:
                continue
            wrong.append(f"{path.name}: {name}{' (module level)' if module_level else ''}")
    assert not wrong, wrong


def test_the_public_names_still_reach_the_runtime():
    import patchport
    import patchport.export

    manager = patchport.bundle.InferenceManager
    assert patchport.InferenceManager is manager is patchport.export.InferenceManager
    assert patchport.export.ModelIntegrityError is patchport.bundle.ModelIntegrityError


def test_system_info_records_the_opencv_release_the_arithmetic_follows():
    """Replacements follow the installed cv2 (4.x and 5.x differ): the bundle says which,
    whichever distribution (headless, contrib) installed it."""
    import cv2

    from patchport.bundle.spec import system_info

    assert system_info()["opencv version"] == cv2.__version__
