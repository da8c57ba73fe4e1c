"""Sizes read from traced data in a node with dynamic axes, and where they were used.

A size read in Python (``img.shape``, ``t.size(2)``, ``len(x)``) is a plain number in
the recorded graph: if it feeds arithmetic or an op's argument, the exported model keeps
the traced value even where the axis may change. While a node has dynamic axes, each
size read is a :class:`ShapeInt` that notes such uses (comparisons are not uses); the
export step later tells which of them depend on a dynamic axis, in words.
"""

from __future__ import annotations

import operator
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
    """An ``int`` read from a traced value's shape, or integer arithmetic on such ints.

    It remembers how it was computed (``_pp_expr``: ``("size", node, axis)`` or
    ``(operator, a, b)``), so where it becomes an op's argument the graph computes it
    from the input's size instead of holding the traced number. Uses that leave the
    integers (``/``, ``float()``, ``int()``...) are noted: there the size is fixed.
    """

    _pp_rec: Any
    _pp_expr: tuple[Any, ...]

    def _use(self, how: str) -> None:
        rec = self._pp_rec
        if rec.active:
            where, inside = user_location(3), _inside()
            for node, axis, value in leaves(self):
                rec.shape_reads.append(SizeUse(node, axis, value, how, where, inside))


def leaves(value: ShapeInt) -> list[tuple[Any, int, int]]:
    """``(node, axis, traced size)`` of every size read ``value`` is computed from."""
    found, stack = [], [value]
    while stack:
        item = stack.pop()
        if type(item) is not ShapeInt:
            continue
        expr = item._pp_expr
        if expr[0] == "size":
            found.append((expr[1], expr[2], int.__int__(item)))
        else:
            stack.extend(expr[1:])
    return found


def _shape_int(rec: Any, value: int, expr: tuple[Any, ...]) -> ShapeInt:
    out = ShapeInt(value)
    out._pp_rec = rec
    out._pp_expr = expr
    return out


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
        return base(int.__int__(self), *(int(a) if type(a) is ShapeInt else a for a in args))

    method.__name__ = name
    return method


def _symbolic(name: str, op: Any, reflected: bool, symbol: str) -> Any:
    """Integer arithmetic that stays symbolic (``h // 2``, ``w - 4``); other operands: a use."""
    base = getattr(int, name)

    def method(self: ShapeInt, other: Any) -> Any:
        if type(other) is not ShapeInt and (type(other) is not int):
            self._use(f"{symbol} with {type(other).__name__}")
            return base(int.__int__(self), other)
        result = base(int.__int__(self), int.__int__(other))
        expr = (op, other, self) if reflected else (op, self, other)
        return _shape_int(self._pp_rec, result, expr)

    method.__name__ = name
    return method


for _name, (_op, _sign) in {
    "add": (operator.add, "+"),
    "sub": (operator.sub, "-"),
    "mul": (operator.mul, "*"),
    "floordiv": (operator.floordiv, "//"),
    "mod": (operator.mod, "%"),
}.items():
    setattr(ShapeInt, f"__{_name}__", _symbolic(f"__{_name}__", _op, False, _sign))
    setattr(ShapeInt, f"__r{_name}__", _symbolic(f"__r{_name}__", _op, True, _sign))

for _name, _symbol in {
    "__truediv__": "/",
    "__rtruediv__": "/",
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
    return type(shape)(
        _shape_int(rec, size, ("size", node, axis)) for axis, size in enumerate(shape)
    )


def note_fixed_length(rec: Any, node: Any, size: int, how: str) -> None:
    """Note that ``how`` (iteration) fixed the length of ``node``'s first axis at ``size``;
    compile_graph reports it in words when that axis is dynamic."""
    if rec.track_shapes and node is not None:
        _shape_int(rec, size, ("size", node, 0))._use(how)


def tag_size(rec: Any, node: Any, axis: int, size: int, depth: int = 3) -> Any:
    """One size (``t.size(axis)``, ``len(x)``) as a :class:`ShapeInt`."""
    if node is None or _from_internals(depth):
        return size
    return _shape_int(rec, size, ("size", node, axis))


def symbolic_args(rec: Any, target: Any, args: Any) -> Any:
    """``args`` with each size read in this recorder's graph replaced by graph nodes
    computing it from the input (``x.size(2) // 2``); other read sizes are noted as uses."""
    kind = type(args)
    if kind is ShapeInt:
        node = _emit(rec, args)
        if node is None:
            args._use(f"an argument of {getattr(target, '__name__', target)}")
            return int.__int__(args)
        return node
    if kind is tuple or kind is list:
        return kind(symbolic_args(rec, target, a) for a in args)
    if kind is dict:
        return {k: symbolic_args(rec, target, v) for k, v in args.items()}
    if kind is slice:
        return slice(*(symbolic_args(rec, target, p) for p in (args.start, args.stop, args.step)))
    return args


def _emit(rec: Any, value: ShapeInt) -> Any:
    """Graph nodes computing ``value`` (None when a read is not from ``rec``'s graph)."""
    expr = value._pp_expr
    graph = rec.graph
    if expr[0] == "size":
        node = expr[1]
        if value._pp_rec is not rec or getattr(node, "graph", None) is not graph:
            return None
        return graph.create_node("call_method", "size", (node, expr[2]))
    operands = []
    for item in expr[1:]:
        if type(item) is ShapeInt:
            item = _emit(rec, item)
            if item is None:
                return None
        operands.append(item)
    return graph.create_node("call_function", expr[0], tuple(operands))


def traced_shape(array: Any) -> Any:
    """``TracedArray.shape``: the sizes, as :class:`ShapeInt` while its node tracks them."""
    shape = _NDARRAY_SHAPE(array)
    rec = array._pp.rec
    if rec is None or not rec.track_shapes or not rec.active:
        return shape
    return tag_shape(rec, array._pp.node, shape, 2)


def traced_len(array: Any) -> Any:
    """``len()`` of a TracedArray, as a :class:`ShapeInt` while its node tracks sizes."""
    size = _NDARRAY_LEN(array)
    rec = array._pp.rec
    if rec is None or not rec.track_shapes or not rec.active:
        return size
    return tag_size(rec, array._pp.node, 0, size, 2)


_NDARRAY_SHAPE = np.ndarray.shape.__get__
_NDARRAY_LEN = np.ndarray.__len__
