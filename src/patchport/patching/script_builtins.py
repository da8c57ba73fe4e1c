"""TorchScript resolves torch functions by identity: keep an installed replacement of a
torch builtin compiling as that builtin, so code scripted while a patch is active
(``torch.zeros`` or ``torch.arange`` in a ``@torch.jit.script`` function) compiles as it
does without the patch. Nothing is imported: without torch loaded there is nothing to do.
"""

from __future__ import annotations

import sys
from typing import Any


def _builtins() -> Any:
    if "torch" not in sys.modules:
        return None
    from torch.jit import _builtins

    return _builtins


def register(original: Any, installed: Any) -> bool:
    """Make ``installed`` compile as the builtin ``original`` is; True when it was one."""
    table = _builtins()
    if table is None or installed is original:
        return False
    op = table._find_builtin(original)
    if op is None or table._find_builtin(installed) is not None:
        return False
    table._register_builtin(installed, op)
    return True


def unregister(installed: Any) -> None:
    """Forget ``installed`` (its id may be reused by another object once it is gone)."""
    table = _builtins()
    if table is not None:
        table._get_builtin_table().pop(id(installed), None)
