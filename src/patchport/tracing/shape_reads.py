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
import torch

from .data_sized import sized_by
from .location import user_location
from .loss import report_loss

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
            _report_data_sized(rec, self, how)


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


def _report_data_sized(rec: Any, value: ShapeInt, how: str) -> None:
    """A trace loss where a size decided by the data leaves the integers (see data_sized);
    not where patchport's own code reads it (the graph computes that use)."""
    if _read_by_patchport():
        return
    for node, axis, size in leaves(value):
        if sized_by(node) is not None:
            report_data_sized(rec, node, axis, size, how)
            return


def report_data_sized(rec: Any, node: Any, axis: int, size: int, how: str) -> None:
    """Warn (raise when strict) that size ``size`` of ``node``'s axis, decided by the data,
    became a Python number in ``how``."""
    origin = sized_by(node)
    made = origin.meta.get("pp_location", "<unknown>")
    target = getattr(origin.target, "__name__", origin.target)
    report_loss(
        rec,
        f"size {size} of axis {axis} read in {how}, a size decided by the traced data "
        f"({target} at {made})",
        "the number is frozen in the graph as a constant although another input makes "
        "another size; keep the arithmetic on arrays (e.sum() / e.shape[0] computes the "
        "count in the graph), or use a mask and np.sum(mask) instead of the selection",
    )


def note_pick(rec: Any, node: Any, index: Any, length: int) -> None:
    """The last item of a value whose length the data decides, picked by a plain number:
    most likely a Python loop over ``range(e.shape[0])`` (range takes the size with no
    hook), which is fixed at this sample's length: a loss at the user's line."""
    first = index[0] if type(index) is tuple and index else index
    if type(first) is not int or length < 2 or first != length - 1:
        return
    origin = sized_by(node)
    if origin is None or not _leading_axis_of(node, origin) or _read_by_patchport(3):
        return
    made = origin.meta.get("pp_location", "<unknown>")
    target = getattr(origin.target, "__name__", origin.target)
    report_loss(
        rec,
        f"item {first} picked by number, the last of an axis whose length is "
        f"decided by the traced data ({target} at {made})",
        "a Python loop over range(e.shape[0]) runs this sample's count of times whatever "
        "the input; compute on the whole selection instead (e.sum(axis=0), np.where over a "
        "mask)",
    )


def _leading_axis_of(node: Any, origin: Any) -> bool:
    """Whether ``node``'s first axis is the one ``origin`` sizes from the data (``origin``
    itself, or one array of its tuple, as np.nonzero's)."""
    if node is origin:
        return True
    args = node.args
    return node.target is operator.getitem and args[0] is origin and type(args[1]) is int


def _read_by_patchport(depth: int = 2) -> bool:
    """Whether the code reading a size (past NumPy / torch frames) is patchport's own."""
    frame = sys._getframe(depth)
    while frame is not None:
        name = frame.f_code.co_filename
        if name in _DISPATCH or name.startswith(_LIBRARIES):
            frame = frame.f_back
            continue
        return name.startswith(_PATCHPORT)
    return False


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
            if getattr(other, "_pp", None) is None:  # a traced operand records the size
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


def _array_ufunc(self: ShapeInt, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
    """A size in NumPy arithmetic: a traced operand records it (see symbolic_args); with
    untraced arrays only, NumPy's C code would read it as a plain number: a use."""
    if any(getattr(v, "_pp", None) is not None for v in (*inputs, *kwargs.get("out", ()))):
        return NotImplemented  # the traced operand's __array_ufunc__ answers
    for value in inputs:
        if type(value) is ShapeInt:
            value._use(f"np.{ufunc.__name__} with untraced arrays")
    plain = (int.__int__(v) if type(v) is ShapeInt else v for v in inputs)
    return getattr(ufunc, method)(*plain, **kwargs)


ShapeInt.__array_ufunc__ = _array_ufunc


def size_recorder(inputs: tuple) -> Any:
    """The active recorder of a size among a ufunc's inputs (a fresh buffer times a count
    is then recorded, the count computed in the graph), or None."""
    for value in inputs:
        if type(value) is ShapeInt and value._pp_rec.active:
            return value._pp_rec
    return None


def _comparing(name: str, symbol: str) -> Any:
    """A comparison (or truth test) of a size: not a use of a dynamic axis's size, but a
    Python branch on the data where the data decides the size."""
    base = getattr(int, name)

    def method(self: ShapeInt, *other: Any) -> Any:
        sizes = [self, *(o for o in other if type(o) is ShapeInt)]
        for node, axis, size in (leaf for value in sizes for leaf in leaves(value)):
            rec = self._pp_rec
            if sized_by(node) is not None and rec.active and not _read_by_patchport():
                report_data_sized(rec, node, axis, size, f"a comparison ({symbol})")
                break
        plain = (int.__int__(o) if type(o) is ShapeInt else o for o in other)
        return base(int.__int__(self), *plain)

    method.__name__ = name
    return method


for _name, _symbol in {
    "__lt__": "<",
    "__le__": "<=",
    "__gt__": ">",
    "__ge__": ">=",
    "__eq__": "==",
    "__ne__": "!=",
    "__bool__": "a truth test",
}.items():
    setattr(ShapeInt, _name, _comparing(_name, _symbol))
ShapeInt.__hash__ = int.__hash__  # defining __eq__ dropped it


_HERE = os.path.abspath(__file__)
_DISPATCH = (
    _HERE,
    os.path.join(os.path.dirname(_HERE), "torch_dispatch.py"),
    os.path.join(os.path.dirname(_HERE), "values.py"),
)
_LIBRARIES = tuple(os.path.dirname(os.path.abspath(m.__file__)) + os.sep for m in (np, torch))


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
        if sized_by(node) is not None:
            report_data_sized(rec, node, 0, size, how)


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
    note_len(rec, array._pp.node, size)
    return tag_size(rec, array._pp.node, 0, size, 2)


def note_len(rec: Any, node: Any, size: int) -> None:
    """``len()`` of a value whose length the data decides: Python makes the answer a plain
    int whatever ``__len__`` returns, so the user's read is a loss."""
    if sized_by(node) is not None and not _read_by_patchport():
        report_data_sized(rec, node, 0, size, "len()")


def traced_size(array: Any) -> Any:
    """``TracedArray.size``: the product of :func:`traced_shape`'s sizes."""
    total = 1
    for size in traced_shape(array):
        total = size * total
    return total


_NDARRAY_SHAPE = np.ndarray.shape.__get__
_NDARRAY_LEN = np.ndarray.__len__
