"""Names that become file names: a session's, a node's, a port's.

``compile_graph`` writes ``<save_path>/<session>/<node>.<suffix>``; a name holding a path
separator or ``..`` would write (and overwrite) files outside ``save_path``. Such names
are refused where they are given, before anything is written.
"""

from __future__ import annotations

import os

from ..errors import PatchDefinitionError

_FORBIDDEN = frozenset('/\\:*?"<>|')


def check_file_name(caller: str, argument: str, value: object) -> str:
    """Return ``value`` if it is safe as one file-name component, else raise naming it."""
    if type(value) is str and value.isprintable() and value not in (".", ".."):
        if value.strip() and _FORBIDDEN.isdisjoint(value):
            return value  # the common case, once per traced pass: no per-character loop
    if not isinstance(value, str) or not value.strip():
        raise PatchDefinitionError(
            f"{caller}: {argument} must be a non-empty string, got {value!r}."
        )
    bad = sorted({char for char in value if char in _FORBIDDEN or ord(char) < 32})
    if bad or value in (".", ".."):
        shown = ", ".join(repr(char) for char in bad) or repr(value)
        raise PatchDefinitionError(
            f"{caller}: {argument}={value!r} becomes a file name inside save_path, so it may "
            f"not contain {shown} (no path separators, '..' or absolute paths); use a plain "
            f"name such as 'policy_2'."
        )
    return value


def check_start_arguments(name: object, save_path: object) -> None:
    """Refuse, before anything changes, the ``start()`` arguments of the wrong kind."""
    check_file_name("patchport.start(name=...)", "name", name)
    if not isinstance(save_path, (str, os.PathLike)):
        raise PatchDefinitionError(
            f"patchport.start(save_path=...): expected a folder path (str or pathlib.Path), "
            f"got {type(save_path).__name__} {save_path!r}; e.g. save_path='exports'."
        )
