"""The arrays user code made before the session, handed over as watched buffers.

Each plain ndarray that is a global of a user module (``obs = np.zeros(47)`` in a deploy
script, a lookup table), or an attribute of a user-class object held in one (a wrapper's
``self._obs_buffer``), is replaced for the session by a view of the same memory that
records traced writes and reads (:mod:`patchport.tracing.prior_buffers`). Plain code sees
the same values and writes the same memory. At the session's end every name gets its own
array back, unless user code bound it to something else meanwhile.
"""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..tracing.prior_buffers import watched
from .aliases import is_user_module, user_modules


@dataclass
class UserArrays:
    """The replaced names: ``(holder, name, original, view)``, the holder a module or an
    object whose ``__dict__`` held the array."""

    replaced: list[tuple[Any, str, np.ndarray, Any]] = field(default_factory=list)

    def watch(self) -> UserArrays:
        """Replace every plain array found (see the module docstring); returns self."""
        for module in user_modules():
            try:
                items = list(vars(module).items())
            except RuntimeError:  # the module's dict changed while we read it
                continue
            for name, value in items:
                if type(value) is np.ndarray:
                    self._replace(module, name, value, f"{name!r}, a global of {module.__name__}")
                elif _user_object(value):
                    self._watch_attributes(value, name, module)
        return self

    def _watch_attributes(self, obj: Any, name: str, module: types.ModuleType) -> None:
        try:
            attributes = list(vars(obj).items())
        except (TypeError, RuntimeError):
            return
        for attribute, value in attributes:
            if type(value) is np.ndarray:
                where = f"{name}.{attribute} ({type(obj).__name__}, a global of {module.__name__})"
                self._replace(obj, attribute, value, where)

    def _replace(self, holder: Any, name: str, array: np.ndarray, description: str) -> None:
        view = watched(array, description)
        try:
            _set(holder, name, view)
        except (AttributeError, TypeError):  # read-only attribute or frozen object
            return
        self.replaced.append((holder, name, array, view))

    def restore(self) -> None:
        """Give each name its array back where it still holds the session's view."""
        while self.replaced:
            holder, name, array, view = self.replaced.pop()
            try:
                if _get(holder, name) is view:
                    _set(holder, name, array)
            except (AttributeError, TypeError, KeyError):
                continue


def _user_object(value: Any) -> bool:
    """An instance of a class defined in a user module (not a module, class or function)."""
    if isinstance(value, (type, types.ModuleType, types.FunctionType, types.MethodType)):
        return False
    module = getattr(type(value), "__module__", None)
    if not isinstance(module, str):
        return False
    owner = sys.modules.get(module)
    return owner is not None and is_user_module(owner) and hasattr(value, "__dict__")


def _set(holder: Any, name: str, value: Any) -> None:
    vars(holder)[name] = value  # a module's globals or an object's __dict__, no hooks run


def _get(holder: Any, name: str) -> Any:
    return vars(holder)[name]
