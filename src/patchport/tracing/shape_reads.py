"""Sizes read from traced data in a node with dynamic axes, and where they were used.

A size read in Python (``img.shape``, ``t.size(2)``, ``len(x)``) is a plain number in
the recorded graph: if it feeds arithmetic or an op's argument, the exported model keeps
the traced value even where the axis may change. While a node has dynamic axes, each
size read is a :class:`ShapeInt` that notes such uses (comparisons are not uses); the
export step later tells which of them depend on a dynamic axis, in words.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

from .location import user_location

_PATCHPORT = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_PATCHES = _PATCHPORT + "patches" + os.sep
_INTERNAL = tuple(_PATCHPORT + part + os.sep for part in ("tracing", "sessions", "export"))


@dataclass(frozen=True)
class SizeUse:
    """A size of ``node``'s axis ``axis`` (traced as ``value``) used in ``how`` at ``where``."""

    node: Any
    axis: int
    value: int
    how: str
    where: str
    inside: str | None  # the patchport replacement it happened in, if any


class ShapeInt(int):
    """An ``int`` read from a traced value's shape; arithmetic on it is noted as a use."""

    _pp_source: tuple[Any, Any, int]  # (recorder, fx node, axis)

    def _use(self, how: str) -> None:
        rec, node, axis = self._pp_source
        if rec.active:
            rec.shape_reads.append(
                SizeUse(node, axis, int.__int__(self), how, user_location(3), _inside())
            )


def _inside() -> str | None:
    """The shipped replacement the user called (``patchport.patches...function``), if any."""
    frame, found = sys._getframe(3), None
    while frame is not None:
        if frame.f_code.co_filename.startswith(_PATCHES):
            found = f"{frame.f_globals.get('__name__', '?')}.{frame.f_code.co_name}"
        frame = frame.f_back
    return found


def _noting(name: str, symbol: str) -> Any:
    base = getattr(int, name)

    def method(self: ShapeInt, *args: Any) -> Any:
        self._use(symbol)
        return base(int.__int__(self), *args)

    method.__name__ = name
    return method


for _name, _symbol in {
    "__add__": "+",
    "__radd__": "+",
    "__sub__": "-",
    "__rsub__": "-",
    "__mul__": "*",
    "__rmul__": "*",
    "__truediv__": "/",
    "__rtruediv__": "/",
    "__floordiv__": "//",
    "__rfloordiv__": "//",
    "__mod__": "%",
    "__rmod__": "%",
    "__divmod__": "divmod",
    "__pow__": "**",
    "__neg__": "-",
    "__int__": "int()",
    "__float__": "float()",
    "__round__": "round()",
    "__floor__": "math.floor",
    "__ceil__": "math.ceil",
    "__lshift__": "<<",
    "__rshift__": ">>",
}.items():
    setattr(ShapeInt, _name, _noting(_name, _symbol))


_HERE = os.path.abspath(__file__)
_DISPATCH = (
    _HERE,
    os.path.join(os.path.dirname(_HERE), "torch_dispatch.py"),
    os.path.join(os.path.dirname(_HERE), "values.py"),
)


def _from_internals(depth: int) -> bool:
    """Whether the size is read by patchport's own tracing code (not a user's read)."""
    frame = sys._getframe(depth)
    while frame is not None and frame.f_code.co_filename in _DISPATCH:
        frame = frame.f_back
    return frame is not None and frame.f_code.co_filename.startswith(_INTERNAL)


def tag_shape(rec: Any, node: Any, shape: tuple[int, ...], depth: int = 3) -> Any:
    """``shape`` with each size a :class:`ShapeInt` of ``node``'s axis (same container type)."""
    if node is None or _from_internals(depth):
        return shape
    tagged = []
    for axis, size in enumerate(shape):
        value = ShapeInt(size)
        value._pp_source = (rec, node, axis)
        tagged.append(value)
    return type(shape)(tagged)


def tag_size(rec: Any, node: Any, axis: int, size: int, depth: int = 3) -> Any:
    """One size (``t.size(axis)``, ``len(x)``) as a :class:`ShapeInt`."""
    if node is None or _from_internals(depth):
        return size
    value = ShapeInt(size)
    value._pp_source = (rec, node, axis)
    return value


def note_literal_sizes(rec: Any, target: Any, args: Any) -> None:
    """A recorded op's arguments holding read sizes: each is a use (it becomes a constant)."""
    stack = [args]
    while stack:
        item = stack.pop()
        if type(item) is ShapeInt:
            item._use(f"an argument of {getattr(target, '__name__', target)}")
        elif isinstance(item, (tuple, list)):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, slice):
            stack.extend((item.start, item.stop, item.step))


def traced_shape(array: Any) -> Any:
    """``TracedArray.shape``: the sizes, as :class:`ShapeInt` while its node tracks them."""
    shape = _NDARRAY_SHAPE(array)
    rec = array._pp_rec
    if rec is None or not rec.track_shapes or not rec.active:
        return shape
    return tag_shape(rec, array._pp_node, shape, 2)


def traced_len(array: Any) -> Any:
    """``len()`` of a TracedArray, as a :class:`ShapeInt` while its node tracks sizes."""
    size = _NDARRAY_LEN(array)
    rec = array._pp_rec
    if rec is None or not rec.track_shapes or not rec.active:
        return size
    return tag_size(rec, array._pp_node, 0, size, 2)


_NDARRAY_SHAPE = np.ndarray.shape.__get__
_NDARRAY_LEN = np.ndarray.__len__
