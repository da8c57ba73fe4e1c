"""The arrays user code made before the session, handed over as watched buffers.

Each plain ndarray that is a global of a user module (``obs = np.zeros(47)`` in a deploy
script, a lookup table), a value of a dict, list or tuple held in one (``TABLES["gamma"]``,
``PAIR[0]``: the tuple is swapped for an equal one of views), a
class attribute of a user class (``class Cfg: MEAN = np.array(...)``), or an attribute of
a user-class object held in a global (a wrapper's ``self._obs_buffer``, or a dict or list
there) or in a local of a user function running ``start`` (``pre = Preprocess()`` in
``main()``; a dict or list there too), is replaced for the session by a view of the same
memory that records traced writes and reads (:mod:`patchport.tracing.prior_buffers`).
Plain code sees the same values and writes the same memory. At the session's end every
slot gets its own array back, unless user code bound it to something else meanwhile.
"""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..tracing.location import is_user_file
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
        self._watch_locals()
        return self

    def _watch_locals(self) -> None:
        """The user frames running ``start`` (``main()`` made a preprocessing object, then
        opened the session): their locals' user objects, dicts and lists are watched as a
        global's are. A local bound to a bare array cannot be rebound, so it stays as is."""
        frame = sys._getframe(1)
        while frame is not None:
            if is_user_file(frame.f_code.co_filename) and frame.f_globals is not frame.f_locals:
                function = frame.f_code.co_name
                for name, value in list(frame.f_locals.items()):
                    where = f"{name!r}, a local of {function}()"
                    if _user_object(value):
                        self._watch_slots(value, where)
                    elif type(value) in (dict, list):
                        self._watch_value(None, name, value, where)
            frame = frame.f_back

    def _watch_slots(self, obj: Any, where: str) -> None:
        """The arrays among ``obj``'s own attributes (and one level into dicts, lists and
        tuples)."""
        try:
            attributes = list(vars(obj).items())
        except (TypeError, RuntimeError):
            return
        for attribute, value in attributes:
            self._watch_value(obj, attribute, value, f"{attribute} of {where}")

    def _watch_value(self, holder: Any, key: Any, value: Any, where: str) -> None:
        """``value`` held at ``holder[key]``: an array is replaced; a dict, list or tuple
        is looked into one level (``TABLES["gamma"]``)."""
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
        elif isinstance(value, tuple) and (kind is tuple or hasattr(kind, "_make")):
            self._replace_tuple(holder, key, value, where)

    def _replace_tuple(self, holder: Any, key: Any, value: tuple, where: str) -> None:
        """A tuple (or named tuple) holding arrays cannot take a view in place: the slot
        holding it gets an equal tuple of views for the session, the original after."""
        items = [
            watched(item, f"[{index}] of {where}") if type(item) is np.ndarray else item
            for index, item in enumerate(value)
        ]
        if all(new is old for new, old in zip(items, value)):
            return
        copy = type(value)._make(items) if hasattr(type(value), "_make") else tuple(items)
        self.replaced.append((holder, key, value, copy))  # first: an interrupt cannot lose it
        try:
            _set(holder, key, copy)
        except (AttributeError, TypeError, IndexError):
            self.replaced.pop()

    def _replace(self, holder: Any, key: Any, array: np.ndarray, description: str) -> None:
        view = watched(array, description)
        # recorded before it is set: an interrupt between the two cannot leave a slot
        # holding a view that restore() does not know (it checks the slot holds the view)
        self.replaced.append((holder, key, array, view))
        try:
            _set(holder, key, view)
        except (AttributeError, TypeError, IndexError):  # read-only attribute, frozen object
            self.replaced.pop()

    def restore(self) -> None:
        """Give each slot its array back where it still holds the session's view."""
        while self.replaced:
            holder, key, array, view = self.replaced[-1]  # dropped once given back, so an
            try:  # interrupt here leaves it for the second run of the release
                if _get(holder, key) is view:
                    _set(holder, key, array)
            except (AttributeError, TypeError, KeyError, IndexError):
                pass
            self.replaced.pop()


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
