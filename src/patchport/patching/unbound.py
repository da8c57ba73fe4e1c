"""An installed wrapper that, like the C function it stands for, does not bind.

A Python function is a descriptor: kept as a class attribute (``array = np.array`` in a
class body run during a session, as NumPy's own linalg tests write it, or
``convert = cv2.cvtColor`` in a preprocessing class) it would receive the instance as its
first argument, which the builtin it replaces never does. :class:`Unbound` is a
``functools.partial`` (no ``__get__``, called from C) that shows the wrapped function's
face: attributes it does not hold itself are read from that function, live.
"""

from __future__ import annotations

import functools
from typing import Any


class Unbound(functools.partial):
    """``func`` with no arguments bound, shown and pickled as the builtin it replaces."""

    def __getattr__(self, name: str) -> Any:
        # __name__, __qualname__, __text_signature__, __patchport_patch__ ...
        return getattr(self.func, name)

    def __repr__(self) -> str:
        return repr(self.__dict__["__pp_original__"])

    def __reduce__(self) -> str:
        # a global looked up by name, like the builtin: outside a session it is the original
        return self.__qualname__


def binds(value: Any) -> bool:
    """Whether ``value`` becomes a bound method when read from an instance of a class."""
    return hasattr(type(value), "__get__")


def unbound(func: Any, original: Any) -> Unbound:
    """``func`` (a wrapper with ``original``'s face) as a non-binding callable; cheap, as a
    session installs one per patched C function (all of cv2's)."""
    own = getattr(func, "__dict__", None)
    cached = own.get("__pp_unbound__") if own is not None else None
    if cached is not None and cached.func is func and cached.__pp_original__ is original:
        return cached  # a later session installing the same watcher: the same object
    wrapper = Unbound(func)
    # the class's own __doc__ and __module__ would shadow the function's: set them here
    face = {"__doc__": func.__doc__, "__module__": func.__module__, "__wrapped__": func}
    wrapper.__dict__.update(face, __pp_original__=original)
    if own is not None:
        own["__pp_unbound__"] = wrapper
    return wrapper
