"""The arrays user code made before the session, handed over as watched buffers.

Each plain ndarray that is a global of a user module (``obs = np.zeros(47)`` in a deploy
script, a lookup table), a value of a dict or list held in one (``TABLES["gamma"]``), a
class attribute of a user class (``class Cfg: MEAN = np.array(...)``), or an attribute of
a user-class object held in a global (a wrapper's ``self._obs_buffer``, or a dict or list
there), is replaced for the session by a view of the same memory that records traced
writes and reads (:mod:`patchport.tracing.prior_buffers`). Plain code sees the same values
and writes the same memory. At the session's end every slot gets its own array back,
unless user code bound it to something else meanwhile.
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
    """The replaced slots: ``(holder, key, original, view)``; the holder is a module, an
    object or class whose ``__dict__`` held the array, or a dict or list holding it."""

    replaced: list[tuple[Any, Any, np.ndarray, Any]] = field(default_factory=list)

    def watch(self) -> UserArrays:
        """Replace every plain array found (see the module docstring); returns self."""
        for module in user_modules():
            try:
                items = list(vars(module).items())
            except RuntimeError:  # the module's dict changed while we read it
                continue
            for name, value in items:
                where = f"{name!r}, a global of {module.__name__}"
                if isinstance(value, type):
                    if value.__module__ == module.__name__:  # defined here, not imported
                        self._watch_slots(value, where)
                elif _user_object(value):
                    self._watch_slots(value, where)
                else:
                    self._watch_value(module, name, value, where)
        return self

    def _watch_slots(self, obj: Any, where: str) -> None:
        """The arrays among ``obj``'s own attributes (and one level into dicts and lists)."""
        try:
            attributes = list(vars(obj).items())
        except (TypeError, RuntimeError):
            return
        for attribute, value in attributes:
            self._watch_value(obj, attribute, value, f"{attribute} of {where}")

    def _watch_value(self, holder: Any, key: Any, value: Any, where: str) -> None:
        """``value`` held at ``holder[key]``: an array is replaced; a dict or list is looked
        into one level (``TABLES["gamma"]``)."""
        kind = type(value)
        if kind is np.ndarray:
            self._replace(holder, key, value, where)
        elif kind is dict:
            for item_key, item in list(value.items()):
                if type(item) is np.ndarray:
                    self._replace(value, item_key, item, f"[{item_key!r}] of {where}")
        elif kind is list:
            for index, item in enumerate(value):
                if type(item) is np.ndarray:
                    self._replace(value, index, item, f"[{index}] of {where}")

    def _replace(self, holder: Any, key: Any, array: np.ndarray, description: str) -> None:
        view = watched(array, description)
        try:
            _set(holder, key, view)
        except (AttributeError, TypeError, IndexError):  # read-only attribute, frozen object
            return
        self.replaced.append((holder, key, array, view))

    def restore(self) -> None:
        """Give each slot its array back where it still holds the session's view."""
        while self.replaced:
            holder, key, array, view = self.replaced.pop()
            try:
                if _get(holder, key) is view:
                    _set(holder, key, array)
            except (AttributeError, TypeError, KeyError, IndexError):
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


def _set(holder: Any, key: Any, value: Any) -> None:
    if type(holder) in (dict, list):
        holder[key] = value
    elif isinstance(holder, type):
        setattr(holder, key, value)  # a class's __dict__ is read-only
    else:
        vars(holder)[key] = value  # a module's globals or an object's __dict__, no hooks run


def _get(holder: Any, key: Any) -> Any:
    if type(holder) in (dict, list):
        return holder[key]
    return vars(holder)[key]
