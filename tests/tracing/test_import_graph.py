"""The tracing package's imports point one way: no module of it is in an import cycle.

Read from the source with ``ast`` (nothing is imported), counting every import statement:
module level, inside functions and under ``TYPE_CHECKING`` alike, since a lazy import is
still a dependency that only hides the cycle until the line runs.
"""

from __future__ import annotations

import ast
from pathlib import Path

import patchport

SRC = Path(patchport.__file__).resolve().parent


def _modules() -> dict[str, Path]:
    """Dotted name -> file for every module of the package (``pkg/__init__`` is ``pkg``)."""
    found = {}
    for path in SRC.rglob("*.py"):
        parts = path.relative_to(SRC.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _imported(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """Modules of the package that ``name`` imports anywhere in its source."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            submodules = {f"{source}.{alias.name}" for alias in node.names}
            found = submodules & modules.keys()
            out.update(found)
            if len(found) < len(node.names):
                out.add(source)
    return {m for m in out if m in modules and m != name}


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_cycle() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(edges) == [["a", "b", "c"]]


def test_no_tracing_module_is_in_an_import_cycle() -> None:
    modules = _modules()
    edges = {name: _imported(name, path, modules) for name, path in modules.items()}
    assert "patchport.tracing.values" in edges  # the walk really saw the package
    cycles = [c for c in _cycles(edges) if any(m.startswith("patchport.tracing") for m in c)]
    assert not cycles, f"import cycles through patchport.tracing: {cycles}"


def test_no_module_of_the_package_is_in_an_import_cycle() -> None:
    """sessions, patching, export and torch point one way too (they did not before)."""
    modules = _modules()
    edges = {name: _imported(name, path, modules) for name, path in modules.items()}
    assert not _cycles(edges), f"import cycles in patchport: {_cycles(edges)}"


def _package_of(name: str, modules: dict[str, Path]) -> str:
    """The subpackage a module belongs to (``patchport.export.onnx.x`` -> ``patchport.export``);
    a top-level module (``patchport.errors``) is its own unit."""
    parts = name.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else name


def test_no_package_imports_a_package_that_imports_it_back() -> None:
    """Packages point one way: tracing, sessions, export, bundle, torch never form a loop."""
    modules = _modules()
    packages: dict[str, set[str]] = {}
    for name, path in modules.items():
        if name == "patchport":  # the public face imports lazily from everything
            continue
        source = _package_of(name, modules)
        targets = {_package_of(m, modules) for m in _imported(name, path, modules)}
        packages.setdefault(source, set()).update(targets - {source, "patchport"})
    for targets in list(packages.values()):
        for target in targets:
            packages.setdefault(target, set())
    assert "patchport.sessions" in packages and "patchport.export" in packages
    assert not _cycles(packages), f"package import cycles: {_cycles(packages)}"
