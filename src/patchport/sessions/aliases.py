"""Find ``from module import name`` references to a patched function in user modules.

Such a reference is a module global bound to the original function before the session
started; patching ``module.name`` does not reach it. Only user code is searched (not the
standard library, site-packages or patchport), which keeps the scan fast and avoids
rewiring library internals.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from typing import Any

from ..tracing.location import is_user_file


def is_user_module(module: types.ModuleType) -> bool:
    """True for ``__main__`` and modules whose file lies outside the interpreter's libraries."""
    if module.__name__ == "__main__":
        return True
    filename = getattr(module, "__file__", None)
    if not filename or not isinstance(filename, str):
        return False
    return is_user_file(filename)


def user_modules() -> Iterator[types.ModuleType]:
    """Each user module once, even when ``sys.modules`` holds it under two names.

    Running ``python script.py`` and importing torch registers the script's module as both
    ``__main__`` and ``__mp_main__``; identity, not name, decides what was seen.

    A package's submodules live where the package does, so the user/library decision is
    made once per top-level package (a few dozen checks instead of a thousand).
    """
    user_package: dict[str, bool | None] = {}
    seen: set[int] = set()
    for name, module in list(sys.modules.items()):
        if not isinstance(module, types.ModuleType) or id(module) in seen:
            continue
        top = name.partition(".")[0]
        if top not in user_package:
            package = sys.modules.get(top, module)
            has_file = isinstance(getattr(package, "__file__", None), str)
            # namespace packages have no file: decide for each of their modules instead
            user_package[top] = is_user_module(package) if has_file else None
        decided = user_package[top]
        if decided is False or (decided is None and not is_user_module(module)):
            continue
        seen.add(id(module))
        yield module


def find_aliases(
    function: Any, owner: types.ModuleType, attribute: str
) -> Iterator[tuple[types.ModuleType, str]]:
    """Yield ``(module, global_name)`` of user-module globals bound to ``function``."""
    for module, name, _ in find_aliases_of({id(function): function}):
        if not (module is owner and name == attribute):
            yield module, name


def find_aliases_of(functions: dict[int, Any]) -> list[tuple[types.ModuleType, str, Any]]:
    """``(module, global_name, function)`` for user-module globals bound to any of
    ``functions`` (keyed by ``id``); one pass over each module's globals."""
    found = []
    for module in user_modules():
        try:
            items = list(vars(module).items())
        except RuntimeError:  # the module's dict changed while we read it (another thread)
            continue
        for name, value in items:
            hit = functions.get(id(value))
            if hit is not None and hit is value:
                found.append((module, name, value))
    return found
