"""How a :class:`TracedArray` dispatches: ufuncs, array functions, methods and indexing.

The eager result always comes from NumPy on plain views; the table module says what to
record. Anything not in the table warns (or raises when strict) and returns plain data.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from ..errors import UnsupportedCaseError
from . import numpy_table as table
from . import shape_reads, unhooked_copies
from .dtypes import (
    HELD_AS_INT64,
    NP_TO_TORCH,
    dtype_instance,
    numpy_cast,
    real_torch_dtype,
    to_numpy_side,
    to_torch_side,
    torch_dtype,
)
from .flat import TracedFlat
from .fresh import adopt, fresh_view, keep_fresh
from .indexing import (
    bounded_slice_write,
    is_basic_numpy_index,
    plain_bounds,
    record_bounded_write,
    record_getitem,
    record_setitem,
)
from .location import user_location
from .loss import conversion_by_numpy, python_value_hint, report_loss, report_loss_at
from .operator_names import BINARY_OPERATORS
from .recorder import Recorder
from .torch_dispatch import torch_function
from .unhooked import check_numbers, note_text
from .values import (
    TracedArray,
    TracedTensor,
    active_recorder,
    find_orphan,
    find_recorder,
    make_traced,
    plain,
    plain_tree,
)
from .views import link_view, numpy_layout_link, rebind

_UFUNCS = table.UFUNCS
_SLOW_TYPES = (TracedTensor, list, tuple)


def wrap_result(rec: Recorder, result: Any, node: Any) -> Any:
    """Attach node(s) to the eager result (tuples/lists element-wise)."""
    if isinstance(node, tuple):  # nested: np.histogramdd's (hist, [edges per axis]); a
        # None node: that part is plain (a handler's constant, lstsq's rank)
        wrapped = [
            r
            if n is None
            else wrap_result(rec, r, n)
            if isinstance(n, tuple)
            else make_traced(rec, r, n)
            for r, n in zip(result, node)
        ]
        return type(result)(wrapped) if isinstance(result, (tuple, list)) else tuple(wrapped)
    if isinstance(result, (np.ndarray, np.generic, torch.Tensor)):
        return make_traced(rec, result, node)
    return result


def _lost(rec: Recorder, result: Any, what: str) -> Any:
    """Warn that ``what`` was not recorded; remember the plain result's origin."""
    where = report_loss(rec, what)
    origin = f"result of {what} at {where}"
    for item in result if isinstance(result, (tuple, list)) else (result,):
        if isinstance(item, (np.ndarray, torch.Tensor)):
            rec.note_origin(item, origin)
    return result


def _report_orphans(args: tuple, kwargs: dict) -> None:
    """Plain data computed from an array NumPy copied off traced data without a hook is
    a loss; it is reported at the line that made the copy (seen by ``__array_finalize__``),
    else where the copy is first used."""
    found = find_orphan(args, kwargs)
    if found is None:
        return
    orphan, rec = found
    what = (
        "an array copied from traced data without being recorded (NumPy's C code made it "
        "without any hook, e.g. an unbound np.ndarray method, np.lib.stride_tricks.as_strided "
        "or a library converting it such as np.vectorize; use the NumPy function or the "
        "array's own method)"
    )
    if orphan._pp.made_at is None:
        report_loss(rec, what)
    else:
        filename, lineno = orphan._pp.made_at
        report_loss_at(
            rec, filename, lineno, what, f"first used at {user_location(3)}; it is frozen"
        )


def _snapshot(rec: Recorder, target: Any, what: str) -> None:
    """After an unrecorded in-place change, freeze the target's new data as a constant."""
    origin = f"data written in place by {what}"
    data = np.array(np.ndarray.view(target, np.ndarray), copy=True)
    rebind(target, rec.constant(data, origin=origin))


# ------------------------------------------------------------------------ ufuncs
def array_ufunc(
    self: TracedArray, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any
) -> Any:
    """``__array_ufunc__``: run NumPy on plain data, record the torch equivalent."""
    if not kwargs and method == "__call__":
        state = self._pp
        rec = state.rec
        if rec is not None and rec.active and state.node is not None and ufunc in _UFUNCS:
            plain_inputs = [
                np.ndarray.view(x, np.ndarray) if type(x) is TracedArray else x for x in inputs
            ]
            if all(type(x) not in _SLOW_TYPES for x in inputs):
                if rec.unhooked:
                    check_numbers(rec, inputs)
                result = ufunc(*plain_inputs)
                node = table.record_ufunc(rec, ufunc, inputs, result, None)
                return wrap_result(rec, result, node)
    out = kwargs.get("out")
    rec = find_recorder(inputs, out) or shape_reads.size_recorder(inputs)
    if rec is None:
        _report_orphans(inputs, kwargs)
        if kwargs:  # out= and where= may hold fresh (untraced) buffers: NumPy's own call
            kwargs = {key: plain_tree(value) for key, value in kwargs.items()}
        if out is not None:
            return getattr(ufunc, method)(*plain_tree(inputs), **kwargs)
        return keep_fresh(getattr(ufunc, method)(*plain_tree(inputs), **kwargs), inputs)
    if rec.unhooked:
        check_numbers(rec, inputs)
    if "dtype" in kwargs:
        kwargs["dtype"] = dtype_instance(kwargs["dtype"])
    if method == "__call__" and not kwargs and len(inputs) == 2 and ufunc in _TORCH_BINOPS:
        rerouted = _as_torch_binop(ufunc, inputs)
        if rerouted is not NotImplemented:
            return rerouted
    name = _ufunc_name(ufunc) + ("" if method == "__call__" else f".{method}")
    if method == "at":  # in place, its index a tuple of arrays: not recorded, reported
        return _unrecorded_at(rec, ufunc, name, inputs, kwargs)
    inputs = tuple(np.asarray(x) if type(x) in (list, tuple) else x for x in inputs)
    target = None
    if out is not None:
        outs = out if isinstance(out, tuple) else (out,)
        if len(outs) == 1 and adopt(rec, outs[0]) and type(outs[0]) is TracedArray:
            target = outs[0]
            kwargs["out"] = (np.ndarray.view(target, np.ndarray),)
        else:
            kwargs["out"] = plain_tree(out)
    before = target._pp.node if target is not None else None  # the buffer's content
    where = kwargs.get("where", True)
    if where is np.True_:  # NumPy's own default, as a NumPy bool
        where = True
    if where is not True:
        kwargs["where"] = plain_tree(where)
    result = getattr(ufunc, method)(*plain_tree(inputs), **kwargs)
    if out is not None and target is None:
        return _lost(rec, result, f"{name} writing into a plain out= array")
    node = None
    if method == "__call__" and ufunc in table.UFUNCS:
        # subok= only picks the result's class (NumPy's own mean passes subok=False)
        options = set(kwargs) - {"out", "dtype", "casting", "subok"}
        if where is True:
            options.discard("where")
        if not options:
            node = table.record_ufunc(rec, ufunc, inputs, result, kwargs.get("dtype"))
        elif options == {"where"} and before is not None and table.UFUNCS[ufunc].nout == 1:
            # where=mask with an out= buffer: the buffer keeps its content where mask is False
            node = table.record_ufunc(rec, ufunc, inputs, result, kwargs.get("dtype"))
            mask = where if isinstance(where, (np.ndarray, torch.Tensor)) else np.asarray(where)
            keep = table.Call(rec, result).t(mask, np.bool_)
            node = rec.call(torch.where, (keep, node, before))
    elif method in ("reduce", "accumulate"):
        options = {k: v for k, v in kwargs.items() if k != "out"}
        node = table.record_ufunc_method(rec, ufunc, method, inputs, options, result)
    if node is None and where is not True and target is None:
        reason = (
            "where= without an out= buffer: NumPy leaves the masked-out places uninitialised; "
            "pass out=np.zeros_like(...) for the value they should hold"
        )
        return _settle(rec, name, node, target, result, reason)
    if node is None and name.startswith("scipy."):
        return _settle(rec, name, node, target, result, _SCIPY_HINT)
    return _settle(rec, name, node, target, result)


_SCIPY_HINT = (
    'not mapped to torch; patching=[..., "scipy"] traces the scipy.special ufuncs docs/scipy.md '
    "lists"
)


def _ufunc_name(ufunc: np.ufunc) -> str:
    """The name the user wrote: ``np.exp``, or ``scipy.special.expit`` for SciPy's ufuncs
    (they reach ``__array_ufunc__`` too, and "np.expit" names nothing)."""
    name = ufunc.__name__
    special = sys.modules.get("scipy.special")
    if getattr(np, name, None) is not ufunc and getattr(special, name, None) is ufunc:
        return f"scipy.special.{name}"
    return f"np.{name}"


def _unrecorded_at(rec: Recorder, ufunc: np.ufunc, name: str, inputs: tuple, kwargs: dict) -> None:
    """``np.maximum.at(a, index, b)`` on traced data: computed on plain data; recorded as a
    scatter into a traced (or fresh) ``a`` when the table maps it, otherwise reported (a
    traced ``a`` then holds its new values as a constant from here on)."""
    target = inputs[0] if adopt(rec, inputs[0]) else None
    if target is not None and type(target) is TracedArray:
        node = None
        if not kwargs:
            node = table.record_ufunc_at(table.Call(rec, target), ufunc, *inputs)
        ufunc.at(np.ndarray.view(target, np.ndarray), *plain_tree(inputs[1:]), **kwargs)
        if node is not None:
            rebind(target, node)
            return None
        _settle(rec, name, None, target, None)
    else:
        ufunc.at(*plain_tree(inputs), **kwargs)
        written = inputs[0] if isinstance(inputs[0], np.ndarray) else None
        _lost(rec, written, f"{name} (not mapped to torch)")
    return None


_TORCH_BINOPS = {
    np.add: ("__add__", "__radd__"),
    np.subtract: ("__sub__", "__rsub__"),
    np.multiply: ("__mul__", "__rmul__"),
    np.true_divide: ("__truediv__", "__rtruediv__"),
    np.floor_divide: ("__floordiv__", "__rfloordiv__"),
    np.remainder: ("__mod__", "__rmod__"),
    np.power: ("__pow__", "__rpow__"),
    np.matmul: ("__matmul__", "__rmatmul__"),
    np.bitwise_and: ("__and__", "__rand__"),
    np.bitwise_or: ("__or__", "__ror__"),
    np.bitwise_xor: ("__xor__", "__rxor__"),
    np.greater: ("__gt__", "__lt__"),
    np.greater_equal: ("__ge__", "__le__"),
    np.less: ("__lt__", "__gt__"),
    np.less_equal: ("__le__", "__ge__"),
    np.equal: ("__eq__", "__eq__"),
    np.not_equal: ("__ne__", "__ne__"),
}


def _as_torch_binop(ufunc: np.ufunc, inputs: tuple) -> Any:
    """``tensor <op> numpy_scalar`` is torch's business when untraced; keep it so."""
    first, second = inputs
    if type(first) is TracedTensor and _is_scalar_like(second):
        name, tensor, other = _TORCH_BINOPS[ufunc][0], first, second
    elif type(second) is TracedTensor and _is_scalar_like(first):
        name, tensor, other = _TORCH_BINOPS[ufunc][1], second, first
    else:
        return NotImplemented
    return torch_function(getattr(torch.Tensor, name), (tensor, other), {})


def _is_scalar_like(value: Any) -> bool:
    return (type(value) is TracedArray and value._pp.scalar) or isinstance(value, np.generic)


# ----------------------------------------------------------------- array functions
def array_function(func: Callable, args: tuple, kwargs: dict) -> Any:
    """``__array_function__``: eager NumPy on plain data plus the table's recording."""
    rec = find_recorder(args, kwargs)
    if rec is None:
        _report_orphans(args, kwargs)
    if rec is None or func in table.METADATA_FUNCTIONS:
        result = func(*plain_tree(args), **plain_tree(kwargs))
        return result if kwargs.get("out") is not None else keep_fresh(result, args)
    if rec.unhooked:
        check_numbers(rec, args, kwargs)
    name = _NAMES.get(func) or _NAMES.setdefault(func, f"np.{_qualname(func)}")
    out = kwargs.get("out")
    target = None
    inplace = table.INPLACE_FUNCTIONS.get(func)
    if inplace is not None and args:
        return _inplace_function(rec, name, func, inplace, args, kwargs)
    if out is not None:
        if adopt(rec, out) and type(out) is TracedArray:
            target = out
        else:
            result = func(*plain_tree(args), **plain_tree(kwargs))
            return _lost(rec, result, f"{name} writing into a plain out= array")
    result = func(*plain_tree(args), **plain_tree(kwargs))
    handler = table.FUNCTIONS.get(func)
    node = None
    if handler is not None:
        node = handler(table.Call(rec, result), *args, **kwargs)
    reason = table.LOSS_REASONS.get(func, "not mapped to torch") if node is None else ""
    settled = _settle(rec, name, node, target, result, reason)
    if node is not None and target is None and func in _LAYOUT_FUNCTIONS:
        if type(settled) is TracedArray:
            _link_layout(rec, func, args, kwargs, settled)
    return settled


def _inplace_function(
    rec: Recorder, name: str, func: Callable, handler: Callable, args: tuple, kwargs: dict
) -> Any:
    """``np.copyto`` / ``np.put`` / ``np.putmask`` / ``np.place``: the first argument is
    written in place; a traced or fresh one gets the write recorded, a plain one is a loss."""
    target = args[0]
    traced = adopt(rec, target) and type(target) is TracedArray
    result = func(*plain_tree(args), **plain_tree(kwargs))
    if not traced:
        report_loss(rec, f"{name} writing traced data into an array the session does not trace")
        return result
    node = handler(table.Call(rec, target), *args, **kwargs)
    _settle(rec, name, node, target, result)
    return result


def _settle(
    rec: Recorder,
    name: str,
    node: Any,
    target: Any,
    result: Any,
    reason: str = "not mapped to torch",
) -> Any:
    """The value a recorded NumPy call returns: the traced result, the ``out=`` target
    holding the new node, or (when the call is not mapped, for ``reason``) a reported loss."""
    if node is None:
        if target is not None:
            report_loss(rec, f"{name} ({reason})")
            _snapshot(rec, target, name)
            return target
        return _lost(rec, result, f"{name} ({reason})")
    if target is not None:
        rebind(target, node)
        return target
    return wrap_result(rec, result, node)


# functions whose result can be a view of their first argument
_LAYOUT_FUNCTIONS = {
    np.reshape,
    np.ravel,
    np.transpose,
    np.swapaxes,
    np.moveaxis,
    np.squeeze,
    np.expand_dims,
    np.flip,
    np.fliplr,
    np.flipud,
    np.rot90,
    np.atleast_1d,
    np.atleast_2d,
    np.atleast_3d,
    np.permute_dims,
    np.diagonal,
    np.real,
}


def _link_layout(rec: Recorder, func: Callable, args: tuple, kwargs: dict, view: Any) -> None:
    """If the result shares memory with its traced input, link it as a view."""
    base = args[0] if args else None
    if active_recorder(base) is not rec or type(base) is not TracedArray:
        return
    if np.may_share_memory(np.ndarray.view(view, np.ndarray), np.ndarray.view(base, np.ndarray)):
        link_view(base, view, numpy_layout_link(func, args, kwargs, base))


_NAMES: dict[Callable, str] = {}  # NumPy function -> its name in messages


def _qualname(func: Callable) -> str:
    """NumPy's public path of ``func`` below ``np``: ``fft.rfft2``, ``linalg.eig``, ``pad``."""
    module = getattr(func, "__module__", "") or ""
    name = getattr(func, "__name__", repr(func))
    path = module.removeprefix("numpy").lstrip(".")
    if not path or any(part.startswith("_") for part in path.split(".")):
        return name
    return f"{path}.{name}"


# ------------------------------------------------------------------------ indexing
def getitem(self: TracedArray, index: Any) -> Any:
    """``a[index]``: eager NumPy indexing plus a recorded torch read."""
    result = _getitem(self, index)
    rec = self._pp.rec
    if rec is not None and rec.track_shapes and rec.active and self.ndim:
        shape_reads.note_pick(rec, self._pp.node, index, np.ndarray.__len__(self))
    return result


def _getitem(self: TracedArray, index: Any) -> Any:
    result = np.ndarray.view(self, np.ndarray)[plain_tree(index)]
    rec = active_recorder(self) or find_recorder(index)
    if rec is None:
        if self._pp.fresh is not None and type(result) is np.ndarray:
            if is_basic_numpy_index(index):
                return fresh_view(self, index, result)
        return result
    out = make_traced(rec, result, record_getitem(rec, self, index))
    if (
        isinstance(result, np.ndarray)
        and active_recorder(self) is rec
        and is_basic_numpy_index(index)
    ):
        link_view(self, out, index)
    return out


def setitem(self: TracedArray, index: Any, value: Any) -> None:
    """``a[index] = value``: eager write plus a functional ``index_put`` in the graph."""
    rec = active_recorder(self)
    other = find_recorder(index, value)
    if rec is None and other is not None and adopt(other, self):
        rec = other  # a fresh buffer: its content so far is the graph's starting value
    if rec is not None and bounded_slice_write(index, value):  # out[b, n:] = 0, n traced
        np.ndarray.view(self, np.ndarray)[plain_tree(plain_bounds(index))] = plain_tree(value)
        rebind(self, record_bounded_write(rec, self, index, value))
        return
    np.ndarray.view(self, np.ndarray)[plain_tree(index)] = plain_tree(value)
    if rec is not None and rec.unhooked:
        check_numbers(rec, (value,))
    if rec is None:
        if other is not None:
            report_loss(other, "writing traced data into an untraced array with [...] =")
        return
    rebind(self, record_setitem(rec, self, index, value))


# ------------------------------------------------------------------------- methods
def _via_function(fn: Callable) -> Callable:
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)

    return method


def _varargs(fn: Callable) -> Callable:
    def method(self, *shape, **kwargs):
        if len(shape) == 1 and (shape[0] is None or isinstance(shape[0], (tuple, list))):
            shape = shape[0]
        elif len(shape) == 0:
            shape = None
        return fn(self, shape, **kwargs)

    return method


_NUMBER_READS = frozenset({"__float__", "__int__", "__index__", "__complex__"})


def _loss_method(name: str) -> Callable:
    original = getattr(np.ndarray, name)

    def method(self, *args, **kwargs):
        rec = active_recorder(self)
        # called first: a conversion that fails (float() of a 4-vector, which np.float64(q)
        # tries before copying the array) took nothing out of the trace
        result = original(np.ndarray.view(self, np.ndarray), *args, **kwargs)
        if rec is not None:
            by_numpy = conversion_by_numpy(name) if name in _NUMBER_READS else None
            if by_numpy is not None:
                report_loss(rec, *by_numpy)
            else:
                report_loss(
                    rec, f"ndarray.{name}() on traced data", python_value_hint(name, "np.where")
                )
        return result

    method.__name__ = name
    return method


def _unmapped_method(name: str) -> Callable:
    original = getattr(np.ndarray, name)

    def method(self, *args, **kwargs):
        rec = active_recorder(self) or find_recorder(args, kwargs)
        result = original(
            np.ndarray.view(self, np.ndarray), *plain_tree(args), **plain_tree(kwargs)
        )
        if rec is None:
            return result
        what = f"ndarray.{name}() (not mapped to torch)"
        if name in INPLACE_UNMAPPED and active_recorder(self) is rec:
            report_loss(rec, what)
            _snapshot(rec, self, f"ndarray.{name}()")
            return result
        return _lost(rec, result, what)

    method.__name__ = name
    return method


INPLACE_UNMAPPED = {"put", "itemset", "setfield", "byteswap"}

#: attributes NumPy scalars have and arrays lack (``as_integer_ratio``, ``is_integer``,
#: ``numerator``...): Python's ``statistics`` and ``fractions`` read them off each item
SCALAR_ONLY = frozenset(
    name
    for kind in (np.float64, np.float32, np.int64, np.uint8, np.bool_, np.complex128)
    for name in dir(kind)
    if not name.startswith("_") and not hasattr(np.ndarray, name)
)


def _scalar_attribute(self: TracedArray, name: str) -> Any:
    """A NumPy scalar's own attribute on a traced value that stands for a scalar (an item
    of iteration or indexing, as plain code gets an ``np.float64``): the scalar's, and a
    reported loss, since each gives Python values. Any other missing name is missing."""
    state = vars(self).get("_pp") if name in SCALAR_ONLY else None
    if state is None or not state.scalar or np.ndarray.ndim.__get__(self):
        raise AttributeError(f"'numpy.ndarray' object has no attribute '{name}'")
    scalar = np.ndarray.view(self, np.ndarray)[()]
    value = getattr(scalar, name)
    rec = active_recorder(self)
    if rec is not None:
        report_loss(
            rec,
            f"{type(scalar).__name__}.{name} on traced data (what Python's statistics and "
            f"fractions read off each item)",
            python_value_hint("item", "np.where"),
        )
    return value


def _iter(self: TracedArray):
    """Iteration (``x, y, z = v``, ``[0, *v]``, ``for row in m``) over a known-length
    axis yields traced ``self[i]``; over a dynamic axis it stays a reported loss."""
    rec = active_recorder(self)
    if rec is None or self.ndim == 0:
        return iter(np.ndarray.view(self, np.ndarray))
    size = np.ndarray.__len__(self)
    shape_reads.note_fixed_length(rec, self._pp.node, size, "iteration over a traced array")
    return iter([_getitem(self, i) for i in range(size)])


def _astype(self: TracedArray, dtype: Any, *args: Any, **kwargs: Any) -> Any:
    result = np.ndarray.view(self, np.ndarray).astype(dtype, *args, **kwargs)
    rec = active_recorder(self)
    if rec is None:
        return keep_fresh(result, (self,))
    if result.dtype not in NP_TO_TORCH and result.dtype not in HELD_AS_INT64:
        return _lost(rec, result, f"ndarray.astype({result.dtype}) (no torch dtype holds it)")
    return make_traced(rec, result, numpy_cast(rec, self._pp.node, self.dtype, result.dtype))


def _copy(self: TracedArray, *args: Any, **kwargs: Any) -> Any:
    result = np.ndarray.view(self, np.ndarray).copy(*args, **kwargs)
    rec = active_recorder(self)
    return keep_fresh(result, (self,)) if rec is None else make_traced(rec, result, self._pp.node)


def _deepcopy(self: TracedArray, memo: Any = None) -> Any:
    return _copy(self)


def _view(self: TracedArray, *args: Any, **kwargs: Any) -> Any:
    dtype = kwargs.get("dtype", args[0] if args else None)
    kind = kwargs.get("type")
    if isinstance(dtype, type) and issubclass(dtype, np.ndarray):
        kind, dtype = dtype, None
    rec = active_recorder(self)
    base = np.ndarray.view(self, np.ndarray)
    if kind is not None and not issubclass(kind, TracedArray):
        if rec is not None:
            report_loss(rec, f"ndarray.view({kind.__name__}) on traced data")
        return base.view(kind) if dtype is None else base.view(dtype, kind)
    result = base if dtype is None else base.view(dtype)
    if rec is None:
        return result
    node = self._pp.node
    if result.dtype != self.dtype:
        node = to_torch_side(rec, node, self.dtype)
        node = rec.call("view", (node, real_torch_dtype(result.dtype)), None, "call_method")
        node = to_numpy_side(rec, node, result.dtype)
        return make_traced(rec, result, node)
    out = make_traced(rec, result, node)
    link_view(self, out, numpy_layout_link(np.reshape, (self, self.shape), {}, self))
    return out


def _fill(self: TracedArray, value: Any) -> None:
    rec = active_recorder(value)
    if rec is not None:
        adopt(rec, self)
    np.ndarray.view(self, np.ndarray).fill(plain(value))
    rec = active_recorder(self)
    if rec is None:
        return
    if rec.unhooked:
        check_numbers(rec, (value,))
    shape = tuple(self.shape)
    if isinstance(value, (np.ndarray, torch.Tensor)) and active_recorder(value) is rec:
        val = table.Call(rec, self).t(value, self.dtype)
        node = rec.call(torch.broadcast_to, (val, shape))
    else:
        fill = np.asarray(plain(value)).astype(self.dtype).item()
        node = rec.call(torch.full, (shape, fill), {"dtype": torch_dtype(self.dtype)})
    rebind(self, node)


def _sort_inplace(self: TracedArray, axis: int = -1, *args: Any, **kwargs: Any) -> None:
    np.ndarray.view(self, np.ndarray).sort(axis, *args, **kwargs)
    rec = active_recorder(self)
    if rec is None:
        return
    if kwargs.get("order") is not None:
        report_loss(rec, "ndarray.sort(order=...) (not mapped to torch)")
        _snapshot(rec, self, "ndarray.sort(order=...)")
        return
    dim = None if axis is None else int(axis) % max(self.ndim, 1)
    rebind(self, rec.call(table.np_sort, (self._pp.node, dim)))


def _resize(self: TracedArray, *shape: Any, refcheck: bool = True) -> None:
    """``a.resize(shape)`` in place: a traced array is a view (NumPy resizes only arrays
    owning their memory), so the same size is a reshape in place, recorded; another size
    is refused, naming the fix."""
    rec = active_recorder(self)
    if rec is None:  # NumPy's own rules (a view resizes only to its own size)
        return np.ndarray.resize(self, *shape, refcheck=refcheck)
    if len(shape) == 1 and (shape[0] is None or isinstance(shape[0], (tuple, list))):
        shape = shape[0]
    if shape is None:
        return None
    new = tuple(int(n) for n in np.atleast_1d(np.asarray(shape, dtype=np.int64)))
    state = self._pp
    if int(np.prod(new, dtype=np.int64)) != self.size or state.view_of or state.views:
        why = "change its size" if state.view_of is None and not state.views else "be resized"
        raise UnsupportedCaseError(
            f"ndarray.resize({new}) at {user_location(2)}: traced data cannot {why} in place "
            f"(it is a view of the traced result, or shares memory with another traced array); "
            f"write a = np.resize(a, {new}) (repeats the data), or "
            f"a = np.pad(a.ravel(), (0, n))[:n].reshape({new}) (fills with zeros)"
        )
    node = rec.call(torch.reshape, (self._pp.node, new))
    np.ndarray.resize(self, new, refcheck=False)
    rebind(self, node)
    return None


def _hash(self: TracedArray) -> int:
    """A traced NumPy scalar hashes as the scalar it stands for (a dict key, a set member),
    a trace loss: which keys collide depends on the traced values; arrays stay unhashable."""
    if self.ndim != 0 or not self._pp.scalar:
        raise TypeError(f"unhashable type: '{type(self).__name__}'")
    rec = active_recorder(self)
    if rec is not None:
        report_loss(
            rec,
            "hash() of a traced value (a dict key, a set member, a cache key)",
            "which entries are equal or distinct is decided by the traced values and frozen",
        )
    return hash(np.ndarray.view(self, np.ndarray)[()])


def _reduce_ex(self: TracedArray, protocol: Any = 2) -> Any:
    """Pickling (pickle, multiprocessing, joblib) hands out the data as a plain array."""
    rec = active_recorder(self)
    if rec is not None:
        report_loss(rec, "pickling traced data (pickle, multiprocessing, a cache)")
    return np.ndarray.view(self, np.ndarray).__reduce_ex__(protocol)


def _reduce(self: TracedArray) -> Any:
    return _reduce_ex(self, 2)


def _dunder_array(self: TracedArray, dtype: Any = None, copy: Any = None) -> Any:
    """``x.__array__()`` is how other array libraries take the data: a plain array."""
    rec = active_recorder(self)
    if rec is not None:
        report_loss(rec, "ndarray.__array__() on traced data")
    base = np.ndarray.view(self, np.ndarray)
    if dtype is not None and np.dtype(dtype) != base.dtype:
        return base.astype(dtype)
    return base.copy() if copy else base


def _raw_property(name: str) -> property:
    """A property handing out raw memory (a pointer, an interface dict): a trace loss."""
    getter = getattr(np.ndarray, name).__get__

    def get(self: TracedArray) -> Any:
        rec = active_recorder(self)
        if rec is not None:
            report_loss(
                rec,
                f"ndarray.{name} on traced data (raw memory for C code, another array "
                f"library, or np.lib.stride_tricks.as_strided)",
                "what is computed from that memory outside NumPy is not traced",
            )
        return getter(np.ndarray.view(self, np.ndarray))

    return property(get)


def _text_method(name: str) -> Callable:
    """``str`` / ``repr`` / ``format``: a traced NumPy scalar shows as the scalar it stands
    for; the text of a traced 0-d value is remembered (a number parsed back from it and
    used in a traced operation is a loss, see unhooked)."""
    original = getattr(np.ndarray, name)

    def method(self: TracedArray, *args: Any) -> str:
        base = np.ndarray.view(self, np.ndarray)
        if self.ndim or not self._pp.scalar:
            text = original(base, *args)
        else:
            text = getattr(base[()], name)(*args)
        rec = active_recorder(self)
        if rec is not None and self.ndim == 0:
            note_text(rec, text)
        return text

    method.__name__ = name
    return method


def _partition_inplace(
    self: TracedArray, kth: Any, axis: int = -1, *args: Any, **kwargs: Any
) -> None:
    """``a.partition(kth)`` in place: recorded as ``np.partition`` (a sort, see the table)."""
    rec = active_recorder(self)
    if rec is None:
        return np.ndarray.partition(self, kth, axis, *args, **kwargs)
    result = np.partition(self, kth, axis, *args, **kwargs)
    np.ndarray.view(self, np.ndarray)[...] = np.ndarray.view(result, np.ndarray)
    if type(result) is TracedArray and active_recorder(result) is rec:
        rebind(self, result._pp.node)
    else:
        _snapshot(rec, self, "ndarray.partition()")
    return None


def _flatten(self: TracedArray, order: str = "C") -> Any:
    if order not in ("C", "A", "K"):
        return _unmapped_method("flatten")(self, order)
    return np.reshape(self, (-1,)).copy()


def _round(self: TracedArray, ndigits: Any = None) -> Any:
    return np.round(self, 0 if ndigits is None else ndigits)


def _transpose_property(self: TracedArray) -> Any:
    return np.transpose(self)


def _mt_property(self: TracedArray) -> Any:
    return np.swapaxes(self, -1, -2)


def _real_property(self: TracedArray) -> Any:
    if np.iscomplexobj(self):
        return np.real(self)
    return self


def _imag_property(self: TracedArray) -> Any:
    if np.iscomplexobj(self):
        return np.imag(self)
    return np.zeros_like(self)


def _flat_property(self: TracedArray) -> Any:
    rec = active_recorder(self)
    if rec is not None:
        return TracedFlat(self, rec)
    return np.ndarray.view(self, np.ndarray).flat


OPERATOR_NAMES = {
    f"__{p}{op}__" for op in (*BINARY_OPERATORS, "divmod") for p in ("", "r", "i")
} | {"__neg__", "__pos__", "__abs__", "__invert__"}

SPECIAL: dict[str, Any] = {
    "__array_ufunc__": array_ufunc,
    "__array_function__": lambda self, func, types, args, kwargs: array_function(
        func, args, kwargs
    ),
    "__getitem__": getitem,
    "__setitem__": setitem,
    "__iter__": _iter,
    "astype": _astype,
    "copy": _copy,
    "__copy__": _copy,
    "__deepcopy__": _deepcopy,
    "view": _view,
    "fill": _fill,
    "put": _via_function(np.put),
    "sort": _sort_inplace,
    "resize": _resize,
    "partition": _partition_inplace,
    "__str__": _text_method("__str__"),
    "__repr__": _text_method("__repr__"),
    "__format__": _text_method("__format__"),
    "__hash__": _hash,
    "__reduce_ex__": _reduce_ex,
    "__reduce__": _reduce,
    "__array__": _dunder_array,
    "ctypes": _raw_property("ctypes"),
    "__array_interface__": _raw_property("__array_interface__"),
    "__array_struct__": _raw_property("__array_struct__"),
    "flatten": _flatten,
    "__round__": _round,
    "T": property(_transpose_property),
    "mT": property(_mt_property),
    "real": property(_real_property),
    "imag": property(_imag_property),
    "flat": property(_flat_property),
}


def install(cls: type) -> None:
    """Give ``cls`` (TracedArray) every ndarray method: mapped, silent, or warning; its
    ``shape``, ``size`` and ``len()`` note sizes read in a node with dynamic axes (see
    shape_reads)."""
    cls.__array_finalize__ = unhooked_copies.finalize
    cls.__getattr__ = _scalar_attribute
    cls.shape = property(shape_reads.traced_shape, np.ndarray.shape.__set__)
    cls.__len__ = shape_reads.traced_len
    cls.size = property(shape_reads.traced_size)
    for name, value in SPECIAL.items():
        setattr(cls, name, value)
    for name, fn in table.METHOD_FUNCTIONS.items():
        if name not in SPECIAL:
            setattr(cls, name, _via_function(fn))
    for name, fn in table.VARARG_METHODS.items():
        setattr(cls, name, _varargs(fn))
    for name in dir(np.ndarray):
        if name in cls.__dict__ or name in OPERATOR_NAMES or name in table.SILENT_METHODS:
            continue
        attr = getattr(np.ndarray, name)
        if not callable(attr) or isinstance(attr, type):
            continue
        if name in table.LOSS_METHODS:
            setattr(cls, name, _loss_method(name))
        elif not name.startswith("__") or name in ("__array__",):
            setattr(cls, name, _unmapped_method(name))
