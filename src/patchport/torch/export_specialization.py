"""Where tracing fixed a dynamic size: the model's line that made torch specialize a
dimension to its traced value, recorded while ``torch.export.export`` runs.

torch's error names the dimension ("specialized it to be a constant (5)") but not the
line. A Python loop over the size (``for i in range(seq_len)``) fixes it in every
configuration, patches aside: knowing it is a loop lets :func:`patchport.torch.export`
refuse in words after one attempt instead of three full exports.

The guards torch adds on a size modulo a constant (a sequence padded to whole chunks:
``seq % chunk_size``) are recorded the same way, with their line: no configuration drops
them while the code that pads stays unpatched, so one attempt says so in words.
"""

from __future__ import annotations

import linecache
import os
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import CodeType
from typing import Any

import torch

_SKIPPED = (
    os.path.dirname(torch.__file__),
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))),  # patchport itself
    os.path.dirname(os.__file__),  # the standard library (contextlib, functools)
)


@dataclass(frozen=True)
class Specialization:
    """A dimension torch fixed to ``value`` at ``filename:lineno`` (in ``function``)."""

    sources: tuple[str, ...]
    value: str
    filename: str
    lineno: int
    function: str
    line: str
    code: CodeType | None
    kind: str = "fixed"  # "fixed": replaced by a constant; "modular": a guard on a % or //

    @property
    def is_loop(self) -> bool:
        """A ``for``/``while`` loop: it runs once per position while traced."""
        return self.line.startswith(("for ", "while ", "async for "))

    @property
    def is_branch(self) -> bool:
        """A Python ``if``/``while``/``assert`` on the size: decided while traced."""
        return self.line.startswith(("if ", "elif ", "while ", "assert "))

    def where(self) -> str:
        """``transformers/models/mamba/modeling_mamba.py:321 in slow_forward``."""
        parts = self.filename.replace(os.sep, "/").split("/")
        short = "/".join(parts[-4:]) if "site-packages" in parts else self.filename
        return f"{short}:{self.lineno} in {self.function}"


@contextmanager
def recording_specializations() -> Iterator[list[Specialization]]:
    """Record each size torch fixes to a constant while the block runs."""
    import sympy
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    found: list[Specialization] = []
    original = ShapeEnv._set_replacement

    def recording(self: Any, a: Any, tgt: Any, msg: str) -> None:
        if isinstance(tgt, (int, sympy.Integer)) and tgt != self.replacements.get(a):
            site = _model_frame()
            sources = tuple(s.name for s in self.var_to_sources.get(a, []))
            if site is not None and sources:
                found.append(Specialization(sources, str(tgt), *site))
        return original(self, a, tgt, msg)

    original_guard = ShapeEnv._log_guard

    def recording_guard(self: Any, prefix: str, g: Any, forcing_spec: bool) -> None:
        if not prefix.endswith("[guard suppressed]") and _modular(g):
            try:
                site = _model_frame()
                symbols = _padded_symbols(g)
                sources = tuple(
                    source.name for a in symbols for source in self.var_to_sources.get(a, [])
                )
            except Exception:  # recording is a diagnosis: it never fails the export
                site, sources = None, ()
            if site is not None and sources:
                found.append(Specialization(sources, str(g), *site, kind="modular"))
        return original_guard(self, prefix, g, forcing_spec)

    ShapeEnv._set_replacement = recording
    ShapeEnv._log_guard = recording_guard
    try:
        yield found
    finally:
        ShapeEnv._set_replacement = original
        ShapeEnv._log_guard = original_guard


def _modular(expression: Any) -> bool:
    """A guard on a size modulo or divided by something (``Mod``, ``FloorDiv``)."""
    try:
        atoms = expression.atoms(*_MODULAR_TYPES)
    except (AttributeError, TypeError):
        return False
    return bool(atoms)


def _padded_symbols(expression: Any) -> set[Any]:
    """The symbols taken modulo a constant at the innermost ``%``/``//`` (``seq`` in
    ``(seq + (4 - seq % 4) % 4) // 4 * batch``): the sizes padded, not the others."""
    atoms = expression.atoms(*_MODULAR_TYPES)
    inner = [
        atom
        for atom in atoms
        if atom.args[-1].is_number and not any(arg.atoms(*_MODULAR_TYPES) for arg in atom.args)
    ]
    return {x for atom in inner or atoms for x in atom.free_symbols}


def _modular_types() -> tuple[type, ...]:
    import sympy
    from torch.utils._sympy import functions

    names = ("FloorDiv", "Mod", "PythonMod", "CleanDiv")
    return (sympy.Mod, *(getattr(functions, n) for n in names if hasattr(functions, n)))


_MODULAR_TYPES = _modular_types()


def _model_frame() -> tuple[str, int, str, str, CodeType] | None:
    frame = sys._getframe(2)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_SKIPPED) and not filename.startswith("<"):
            line = linecache.getline(filename, frame.f_lineno).strip()
            return filename, frame.f_lineno, frame.f_code.co_qualname, line, frame.f_code
        frame = frame.f_back
    return None


def loops_fixing(
    found: Iterable[Specialization], message: str, patched_code: set[CodeType]
) -> list[Specialization]:
    """The loop that first fixed a dimension torch's ``message`` names, when it is in code
    no patch replaces (no configuration can then keep it dynamic); else an empty list.
    Only the first counts: the sizes fixed after it are tied to it (the mask's length
    equals the tokens'), wherever torch happened to find that out."""
    named = [
        s for s in found if s.kind == "fixed" and any(source in message for source in s.sources)
    ]
    if not named or not named[0].is_loop or named[0].code in patched_code:
        return []
    return [named[0]]


def modular_sites(found: Iterable[Specialization], patched: set[CodeType]) -> list[Specialization]:
    """One site per line where torch guarded a size modulo a constant, the Python branches
    first, when one of them is a branch (``if pad_size > 0:``, decided at trace time in
    every configuration) and no patch replaces any of that code; else empty."""
    sites = [s for s in found if s.kind == "modular"]
    if not any(s.is_branch for s in sites) or any(s.code in patched for s in sites):
        return []
    unique: dict[tuple[str, int], Specialization] = {}
    for site in sorted(sites, key=lambda s: not s.is_branch):
        unique.setdefault((site.filename, site.lineno), site)
    return list(unique.values())


def patched_code(patches: Iterable[Any]) -> set[CodeType]:
    """The code objects the patches replace (a loop inside one may be gone when patched)."""
    found = set()
    for patch in patches:
        target = getattr(patch, "_original_at_creation", None)
        target = getattr(target, "__func__", target)
        seen: set[int] = set()
        while target is not None and id(target) not in seen:  # a decorated function: the
            seen.add(id(target))  # code it wraps is replaced too
            code = getattr(target, "__code__", None)
            if code is not None:
                found.add(code)
            target = getattr(target, "__wrapped__", None)
    return found
