"""Aliasing between traced values: a write through a view reaches its base, and views of a
written base see the write, as they do in NumPy and torch.

Views made by basic indexing (ints, slices, ``...``, ``None``) are linked to their base
by the index; views made by layout functions (reshape, transpose, flip, ``Tensor.view``...)
by a :class:`LayoutLink`, a map from each view element to its base element. After an
in-place write the graph is updated functionally: the base becomes the base with the view
written back, and every live view is re-read from its base.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from .indexing import record_getitem, record_setitem
from .values import active_recorder


class LayoutLink:
    """How a layout view maps onto its base: flat base position of every view element."""

    __slots__ = ("_make", "_positions")

    def __init__(self, make_positions: Callable[[], np.ndarray]) -> None:
        self._make = make_positions
        self._positions: np.ndarray | None = None

    def positions(self) -> np.ndarray:
        """int64 array shaped like the view (computed on first need)."""
        if self._positions is None:
            self._positions = np.asarray(self._make(), dtype=np.int64)
        return self._positions


def numpy_layout_link(func: Callable, args: tuple, kwargs: dict, base: Any) -> LayoutLink:
    """Link for ``func(base, ...)``: the same call applied to base positions gives the map."""

    def make() -> np.ndarray:
        flat = np.arange(base.size, dtype=np.int64).reshape(base.shape)
        swapped = tuple(flat if a is base else a for a in args)
        return func(*swapped, **kwargs)

    return LayoutLink(make)


def torch_layout_link(func: Callable, args: tuple, kwargs: dict, base: Any) -> LayoutLink:
    """Link for a torch view op on ``base`` (its first argument)."""

    def make() -> np.ndarray:
        flat = torch.arange(base.numel(), dtype=torch.int64).reshape(tuple(base.shape))
        with torch._C.DisableTorchFunctionSubclass():
            out = func(flat, *args[1:], **kwargs)
        return out.numpy()

    return LayoutLink(make)


def gather_view(base: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """Read a layout view from its base (positions: flat base index per view element)."""
    return base.reshape(-1)[positions]


def scatter_view(base: torch.Tensor, positions: torch.Tensor, view: torch.Tensor) -> torch.Tensor:
    """Write a layout view's values back into a copy of its base."""
    out = base.reshape(-1).clone()
    out[positions.reshape(-1)] = view.reshape(-1).to(out.dtype)
    return out.reshape(base.shape)


def link_view(base: Any, view: Any, index: Any) -> None:
    """Remember that ``view`` is ``base[index]`` sharing memory with ``base``."""
    view._pp.view_of = (base, index)
    state = base._pp
    views = state.views
    if views is None:
        views = state.views = []
    elif len(views) > 32:
        views[:] = [ref for ref in views if ref() is not None]
    views.append(weakref.ref(view))


def _read(rec: Any, base: Any, index: Any) -> Any:
    if type(index) is LayoutLink:
        positions = rec.constant(index.positions(), origin="element map of a view")
        return rec.call(gather_view, (base._pp.node, positions))
    return record_getitem(rec, base, index)


def _write(rec: Any, base: Any, index: Any, view: Any) -> Any:
    if type(index) is LayoutLink:
        positions = rec.constant(index.positions(), origin="element map of a view")
        return rec.call(scatter_view, (base._pp.node, positions, view._pp.node))
    return record_setitem(rec, base, index, view)


def rebind(value: Any, node: Any) -> None:
    """``value`` was written in place and is now computed by ``node``: point it there and
    bring its bases and views up to date."""
    value._pp.node = node
    after_inplace(value)


def after_inplace(value: Any) -> None:
    """``value``'s node was just replaced by an in-place write: update bases and views."""
    rec = value._pp.rec
    top = value
    while (link := top._pp.view_of) is not None:
        base, index = link
        if active_recorder(base) is not rec:
            break
        base._pp.node = _write(rec, base, index, top)
        top = base
    if top is value and not value._pp.views:
        return
    stack = [top]
    while stack:
        base = stack.pop()
        for ref in base._pp.views or ():
            view = ref()
            if view is None or view is value or active_recorder(view) is not rec:
                continue
            state = view._pp
            state.node = _read(rec, base, state.view_of[1])
            stack.append(view)
