"""Aliasing between traced values: a write through a view reaches its base, and views of a
written base see the write, as they do in NumPy and torch.

Views made by basic indexing (ints, slices, ``...``, ``None``) are linked to their base.
After an in-place write the graph is updated functionally: the base becomes
``index_put(base, index, view)`` and every live view is re-read from its base.
"""

from __future__ import annotations

import operator
import weakref
from typing import Any

from .indexing import index_put
from .values import TracedArray, active_recorder, arg_of


def link_view(base: Any, view: Any, index: Any) -> None:
    """Remember that ``view`` is ``base[index]`` sharing memory with ``base``."""
    view._pp_view_of = (base, index)
    views = getattr(base, "_pp_views", None)
    if views is None:
        views = base._pp_views = []
    elif len(views) > 32:
        views[:] = [ref for ref in views if ref() is not None]
    views.append(weakref.ref(view))


def _read(rec: Any, base: Any, index: Any) -> Any:
    if type(base) is TracedArray:
        from .numpy_dispatch import record_getitem

        return record_getitem(rec, base, index)
    return rec.call(operator.getitem, (base._pp_node, arg_of(rec, index)))


def _write(rec: Any, base: Any, index: Any, view: Any) -> Any:
    if type(base) is TracedArray:
        from .numpy_dispatch import record_setitem

        return record_setitem(rec, base, index, view)
    return rec.call(index_put, (base._pp_node, arg_of(rec, index), view._pp_node))


def after_inplace(value: Any) -> None:
    """``value``'s node was just replaced by an in-place write: update bases and views."""
    rec = value._pp_rec
    top = value
    while top._pp_view_of is not None:
        base, index = top._pp_view_of
        if active_recorder(base) is not rec:
            break
        base._pp_node = _write(rec, base, index, top)
        top = base
    if top is value and not getattr(value, "_pp_views", None):
        return
    stack = [top]
    while stack:
        base = stack.pop()
        for ref in getattr(base, "_pp_views", None) or ():
            view = ref()
            if view is None or view is value or active_recorder(view) is not rec:
                continue
            view._pp_node = _read(rec, base, view._pp_view_of[1])
            stack.append(view)
