"""An installed wrapper that, like the C function it stands for, does not bind.

A Python function is a descriptor: kept as a class attribute (``array = np.array`` in a
class body run during a session, as NumPy's own linalg tests write it, or
``convert = cv2.cvtColor`` in a preprocessing class) it would receive the instance as its
first argument, which the builtin it replaces never does. :class:`Unbound` is a
``functools.partial`` (no ``__get__``, called from C) with the original's face.
"""

from __future__ import annotations

import functools
from typing import Any


class Unbound(functools.partial):
    """``func`` with no arguments bound, shown and pickled as the builtin it replaces."""

    def __repr__(self) -> str:
        original = self.__dict__.get("__pp_original__")
        return repr(original) if original is not None else super().__repr__()

    def __reduce__(self) -> str:
        # a global looked up by name, like the builtin: outside a session it is the original
        return self.__qualname__


def binds(value: Any) -> bool:
    """Whether ``value`` becomes a bound method when read from an instance of a class."""
    return hasattr(type(value), "__get__")


def unbound(func: Any, original: Any) -> Unbound:
    """``func`` (a wrapper with ``original``'s face) as a non-binding callable."""
    wrapper = Unbound(func)
    functools.update_wrapper(wrapper, func)
    wrapper.__pp_original__ = original
    return wrapper
