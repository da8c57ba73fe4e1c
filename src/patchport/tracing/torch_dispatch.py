"""How a :class:`TracedTensor` dispatches through ``__torch_function__``.

Every torch function, ``Tensor`` method and ``torch.nn.functional`` call runs eagerly on
plain tensors and is recorded as the same call on graph nodes. In-place methods,
``inplace=True`` and ``x[...] = v`` are recorded functionally; ``.item()``-like calls warn.
"""

from __future__ import annotations

import enum
import operator
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import torch

from .data_sized import is_mask_index
from .dtypes import to_numpy_side
from .fresh_tensors import adopt_tensor
from .indexing import record_setitem
from .loss import python_value_hint, report_loss
from .operator_names import BINARY_OPERATORS, tensor_attribute
from .recorder import Recorder
from .shape_reads import note_len, note_pick, tag_shape, tag_size
from .torchscript import _SCRIPT_METHOD, record_script_call
from .trace_state import TraceState
from .unhooked import check_numbers
from .values import (
    TracedArray,
    TracedTensor,
    active_recorder,
    arg_of,
    find_recorder,
    make_traced,
    plain,
)
from .views import link_view, rebind, torch_layout_link

_DISABLE = torch._C.DisableTorchFunctionSubclass

# calls that hand traced data to Python or to foreign memory: trace loss
LOSS_NAMES = {
    "item",
    "tolist",
    "__bool__",
    "__float__",
    "__int__",
    "__index__",
    "__complex__",
    "__iter__",
    "equal",
    "allclose",
    "is_nonzero",
    "__array__",
    "__dlpack__",
    "data_ptr",
    "untyped_storage",
    "storage",
}

# operators whose Tensor dunder maps onto the ``operator`` module (readable, export friendly)
_DUNDER_TO_OPERATOR = {
    "__add__": operator.add,
    "__sub__": operator.sub,
    "__mul__": operator.mul,
    "__truediv__": operator.truediv,
    "__floordiv__": operator.floordiv,
    "__mod__": operator.mod,
    "__pow__": operator.pow,
    "__matmul__": operator.matmul,
    "__and__": operator.and_,
    "__or__": operator.or_,
    "__xor__": operator.xor,
    "__lshift__": operator.lshift,
    "__rshift__": operator.rshift,
    "__neg__": operator.neg,
    "__pos__": operator.pos,
    "__abs__": operator.abs,
    "__invert__": operator.invert,
    "__eq__": operator.eq,
    "__ne__": operator.ne,
    "__lt__": operator.lt,
    "__le__": operator.le,
    "__gt__": operator.gt,
    "__ge__": operator.ge,
    "__getitem__": operator.getitem,
}
_REFLECTED = {
    f"__r{name[2:]}": fn
    for name, fn in _DUNDER_TO_OPERATOR.items()
    if name[2:-2] in BINARY_OPERATORS
}
_REFLECTED["__rdiv__"] = operator.truediv  # torch's name of __rtruediv__ (``1.0 / t``)
_INPLACE_DUNDER = {
    f"__i{name[2:]}": name for name in _DUNDER_TO_OPERATOR if f"__r{name[2:]}" in _REFLECTED
}
_INPLACE_DUNDER["__idiv__"] = "__truediv__"  # torch's name of __itruediv__ (``t /= 2``)


class PlanKind(enum.Enum):
    """How a torch callable on traced tensors is recorded (decided once per callable)."""

    CALL = "call"  # one graph node, the callable itself or a method/operator
    SWAP = "swap"  # a reflected operator (``__radd__``): the operator, arguments swapped
    INPLACE = "inplace"  # an in-place variant: its functional form, rebound to the target
    SETITEM = "setitem"  # ``t[i] = v``: recorded by the indexing module
    GETATTR = "getattr"  # a property read (``t.T``, ``t.data``)
    LOSS = "loss"  # leaves torch (``tolist``, ``item``...): trace loss reported
    NUMPY = "numpy"  # ``t.numpy()``: continues on the NumPy side
    FLAG = "flag"  # an autograd flag setter (``requires_grad_``): no value changes, no node


class DispatchPlan(NamedTuple):
    """``kind`` of recording, the graph ``target`` and the fx ``op`` it becomes."""

    kind: PlanKind
    target: Any
    op: str


_PLAN: dict[Any, DispatchPlan] = {}
# Tensor methods that set autograd state and return the tensor itself, its values unchanged
_FLAG_SETTERS = frozenset({"requires_grad_", "retain_grad"})
# autograd's backward pass runs in its engine, not as torch calls a graph could record
_AUTOGRAD = frozenset({torch.autograd.grad, torch.autograd.backward, torch.Tensor.backward})
_AUTOGRAD_HINT = (
    "autograd's backward pass is not recorded, so the gradient is this sample's constant; "
    "write the derivative as operations (a closed-form Jacobian, finite differences)"
)


def _plan(func: Callable) -> DispatchPlan:
    """Decide once per torch callable how to record it."""
    plan = _PLAN.get(func)
    if plan is not None:
        return plan
    attribute = tensor_attribute(func)
    name = attribute or getattr(func, "__name__", "")
    owner = getattr(func, "__self__", None)
    if func in _AUTOGRAD or (name == "__get__" and getattr(owner, "__name__", "") == "grad"):
        plan = DispatchPlan(PlanKind.LOSS, "autograd", "")
    elif name == "__get__" and owner is not None and hasattr(owner, "__name__"):
        plan = DispatchPlan(PlanKind.GETATTR, owner.__name__, "call_function")
    elif name in LOSS_NAMES:
        plan = DispatchPlan(PlanKind.LOSS, name, "")
    elif name == "__setitem__":
        plan = DispatchPlan(PlanKind.SETITEM, None, "")
    elif name in ("numpy", "__array__") or name == "__array_wrap__":
        plan = DispatchPlan(PlanKind.LOSS, name, "")
    elif attribute is not None:
        if name in _FLAG_SETTERS:
            plan = DispatchPlan(PlanKind.FLAG, None, "")
        elif name in _DUNDER_TO_OPERATOR:
            plan = DispatchPlan(PlanKind.CALL, _DUNDER_TO_OPERATOR[name], "call_function")
        elif name in _REFLECTED:
            plan = DispatchPlan(PlanKind.SWAP, _REFLECTED[name], "call_function")
        elif name in _INPLACE_DUNDER:
            plan = DispatchPlan(
                PlanKind.INPLACE, _DUNDER_TO_OPERATOR[_INPLACE_DUNDER[name]], "call_function"
            )
        elif name.endswith("_") and not name.startswith("_"):
            plan = DispatchPlan(PlanKind.INPLACE, name[:-1], "call_method")
        else:
            plan = DispatchPlan(PlanKind.CALL, name, "call_method")
    elif name.endswith("_") and not name.startswith("_") and _functional_of(name) is not None:
        plan = DispatchPlan(PlanKind.INPLACE, _functional_of(name), "call_function")
    else:
        plan = DispatchPlan(PlanKind.CALL, func, "call_function")
    if plan.kind is PlanKind.LOSS and plan.target == "numpy":
        plan = DispatchPlan(PlanKind.NUMPY, None, "")
    _PLAN[func] = plan
    return plan


def _functional_of(name: str) -> Callable | None:
    """The out-of-place twin of an in-place torch function such as ``torch.relu_``."""
    for module in (torch, torch.nn.functional, torch.special):
        fn = getattr(module, name[:-1], None)
        if callable(fn):
            return fn
    return None


def _fill(x: torch.Tensor, value: Any) -> torch.Tensor:
    """Functional ``fill_``."""
    if isinstance(value, torch.Tensor):
        return torch.broadcast_to(value.to(x.dtype), x.shape).clone()
    return torch.full_like(x, value)


def _copy(x: torch.Tensor, src: torch.Tensor, non_blocking: bool = False) -> torch.Tensor:
    """Functional ``copy_`` (src is a tensor, as copy_ requires): src cast to x's dtype and
    broadcast to its shape; typed for TorchScript, which scripts it into jit exports."""
    return torch.broadcast_to(src.to(x.dtype), x.shape).clone()


def _zero(x: torch.Tensor) -> torch.Tensor:
    """Functional ``zero_``."""
    return torch.zeros_like(x)


_SPECIAL_INPLACE = {"fill": _fill, "copy": _copy, "zero": _zero}


def _contains_tensor(value: Any) -> bool:
    if isinstance(value, torch.Tensor):
        return True
    if isinstance(value, (tuple, list)):
        return any(_contains_tensor(v) for v in value)
    return False


_FAST_ARG_TYPES = (int, float, bool)


def torch_function(func: Callable, args: tuple, kwargs: dict) -> Any:
    """Run ``func`` eagerly (subclass dispatch off) and record it on the graph."""
    if func in _SIZE_READERS:
        return _read_size(func, args, kwargs)
    if not kwargs and args:
        fast = _fast_call(func, args)
        if fast is not None:
            return fast
    rec = find_recorder(args, kwargs)
    if rec is None:
        with _DISABLE():
            return func(*args, **kwargs)
    if rec.unhooked:
        check_numbers(rec, args, kwargs)
    if type(func) is _SCRIPT_METHOD:
        return record_script_call(rec, func, args, kwargs)
    kind, target, op = _plan(func)
    if kind is PlanKind.SETITEM:
        return _setitem(rec, args, kwargs)
    if kind is PlanKind.NUMPY:
        return _to_numpy(rec, args[0])
    out = kwargs.get("out")
    inplace_kw = kwargs.get("inplace") is True
    written = (
        out if out is not None else args[0] if kind is PlanKind.INPLACE or inplace_kw else None
    )
    if type(written) is torch.Tensor:
        adopt_tensor(rec, written)  # a fresh buffer: traced before the write runs
    eager_args = args
    if any(type(a) is TracedArray for a in args):
        # a 0-d traced array stands for a NumPy scalar, which torch takes as a number
        eager_args = tuple(
            np.ndarray.view(a, np.ndarray)[()] if type(a) is TracedArray and a._pp.scalar else a
            for a in args
        )
    with _DISABLE():
        result = func(*eager_args, **kwargs)
    if kind is PlanKind.FLAG:
        return result  # the same traced tensor (or None): nothing to record
    if kind is PlanKind.LOSS:
        hint = python_value_hint(getattr(func, "__name__", ""), "torch.where")
        hint = _AUTOGRAD_HINT if target == "autograd" else hint
        report_loss(rec, f"{_torch_name(func)} on a traced tensor", hint)
        return result
    if kind is PlanKind.GETATTR:
        if not _contains_tensor(result):
            return result
        if target == "data":  # detach() in the graph: torch.export lifts a getattr .data
            node = rec.call("detach", (arg_of(rec, args[0]),), None, "call_method")
        else:
            node = rec.call(getattr, (arg_of(rec, args[0]), target))
        wrapped = _wrap(rec, result, node)
        if type(result) is torch.Tensor and (result._is_view() or target == "data"):
            _link_layout(rec, func, args, kwargs, wrapped)
        return wrapped
    if not _contains_tensor(result):
        return result  # shape, dtype, size(), dim(): static metadata
    if out is not None:
        return _out_kwarg(rec, func, args, kwargs, out, result)
    if inplace_kw:
        fkwargs = dict(kwargs)
        fkwargs["inplace"] = False
        node = rec.call(func, arg_of(rec, args), arg_of(rec, fkwargs))
        return _rebind(rec, args[0], node, result)
    if kind is PlanKind.INPLACE:
        return _inplace(rec, target, op, args, kwargs, result)
    if kind is PlanKind.SWAP:
        node = rec.call(target, (arg_of(rec, args[1]), arg_of(rec, args[0])))
    else:
        record = rec.call
        if target is operator.getitem and len(args) > 1 and is_mask_index(args[1]):
            record = rec.call_sized_by_data  # t[t > 0]: as many rows as the data says
        elif target is operator.getitem and rec.track_shapes and type(args[0]) is TracedTensor:
            with _DISABLE():
                length = args[0].shape[0] if args[0].dim() else 0
            note_pick(rec, args[0]._pp.node, args[1], length)
        node = record(target, arg_of(rec, args), arg_of(rec, kwargs) if kwargs else None, op)
    wrapped = _wrap(rec, result, node)
    if target is operator.getitem and active_recorder(args[0]) is rec and _basic(args[1]):
        link_view(args[0], wrapped, args[1])
    elif type(result) is torch.Tensor and (result._is_view() or target in _ALIASING):
        _link_layout(rec, func, args, kwargs, wrapped)
    return wrapped


_SIZE_READERS = {torch.Tensor.shape.__get__, torch.Tensor.size, torch.Tensor.__len__}


def _read_size(func: Callable, args: tuple, kwargs: dict) -> Any:
    """``t.shape`` / ``t.size()`` / ``len(t)``: sizes noted where used in a dynamic node."""
    with _DISABLE():
        result = func(*args, **kwargs)
    x = args[0]
    rec = active_recorder(x)
    if rec is None or not rec.track_shapes:
        return result
    if isinstance(result, int):
        if func is torch.Tensor.__len__:
            note_len(rec, x._pp.node, result)
        axis = args[1] if len(args) > 1 else kwargs.get("dim", 0)
        return tag_size(rec, x._pp.node, axis % max(x.dim(), 1), result)
    return tag_shape(rec, x._pp.node, result)


# calls that may return a tensor sharing memory without being an autograd view
_ALIASING = {"detach", "contiguous", "view_as", "reshape_as", "expand_as", torch.detach}


def _link_layout(rec: Recorder, func: Callable, args: tuple, kwargs: dict, view: Any) -> None:
    """A torch view of a traced tensor (view, permute, unsqueeze...) is linked to it."""
    base = args[0] if args else None
    if type(base) is not TracedTensor or active_recorder(base) is not rec:
        return
    with _DISABLE():
        same = view.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()
    if same:
        link_view(base, view, torch_layout_link(func, args, kwargs, base))


def _fast_call(func: Callable, args: tuple) -> Any:
    """The common case: a plain call on tensors of one recorder and numbers; else None."""
    plan = _PLAN.get(func)
    if plan is None or plan.kind is not PlanKind.CALL or plan.target is operator.getitem:
        return None
    first = args[0]
    if type(first) is not TracedTensor:
        return None
    rec = first._pp.rec
    if rec is None or not rec.active:
        return None
    if rec.unhooked:
        check_numbers(rec, args)
    nodes = []
    for a in args:
        kind = type(a)
        if kind is TracedTensor:
            state = a._pp
            if state.rec is not rec or state.node is None:
                return None
            nodes.append(state.node)
        elif kind in _FAST_ARG_TYPES or (kind is tuple and _all_ints(a)):
            nodes.append(a)  # numbers, and sizes / dims such as flip((-1,)), permute((2, 0, 1))
        else:
            return None
    with _DISABLE():
        result = func(*args)
    if type(result) is not torch.Tensor:
        return (
            _wrap(rec, result, rec.call(plan.target, tuple(nodes), None, plan.op))
            if (_contains_tensor(result))
            else result
        )
    out = result.as_subclass(TracedTensor)
    out._pp = TraceState(rec, rec.call(plan.target, tuple(nodes), None, plan.op))
    if result._is_view() or plan.target in _ALIASING:
        _link_layout(rec, func, args, {}, out)
    return out


def _all_ints(items: tuple) -> bool:
    for item in items:
        if type(item) is not int:
            return False
    return True


def _torch_name(func: Callable) -> str:
    name = getattr(func, "__name__", repr(func))
    if getattr(func, "__module__", None) == "torch.autograd":
        return f"torch.autograd.{name}"
    if name == "__get__":
        return f"Tensor.{getattr(getattr(func, '__self__', None), '__name__', name)}"
    attribute = tensor_attribute(func)
    return f"Tensor.{attribute}" if attribute is not None else f"torch.{name}"


def _basic(index: Any) -> bool:
    items = index if isinstance(index, tuple) else (index,)
    return all(i is None or i is Ellipsis or type(i) in (int, slice) for i in items)


def _wrap(rec: Recorder, result: Any, node: Any) -> Any:
    """Wrap tensors in ``result`` (nested tuples/lists) with node / getitem nodes."""
    if isinstance(result, torch.Tensor):
        return make_traced(rec, result, node)
    if isinstance(result, (tuple, list)):
        items = [
            _wrap(rec, r, rec.call(operator.getitem, (node, i))) if _contains_tensor(r) else r
            for i, r in enumerate(result)
        ]
        if isinstance(result, list):
            return items
        if hasattr(result, "_fields") or type(result).__module__.startswith("torch"):
            try:
                return type(result)(items)
            except TypeError:
                return type(result)(*items)
        return tuple(items)
    return result


def _rebind(rec: Recorder, target: Any, node: Any, result: Any) -> Any:
    """Point an in-place target at its new functional node (and its traced parents)."""
    if active_recorder(target) is rec:
        rebind(target, node)
        return target if result is target else _wrap(rec, result, node)
    report_loss(rec, "an in-place torch operation writing traced data into an untraced tensor")
    return result


def _inplace(rec: Recorder, name: Any, op: str, args: tuple, kwargs: dict, result: Any) -> Any:
    """Record ``x.op_(...)`` as ``x = x.op(...)`` cast back to x's dtype."""
    x = args[0]
    special = _SPECIAL_INPLACE.get(name) if op == "call_method" else None
    fargs = arg_of(rec, args)
    fkwargs = arg_of(rec, kwargs) if kwargs else None
    if special is not None:
        node = rec.call(special, fargs, fkwargs)
    elif op == "call_method" and not callable(getattr(torch.Tensor, name, None)):
        report_loss(rec, f"Tensor.{name}_() (no functional form to record)")
        node = rec.constant(x.detach().as_subclass(torch.Tensor).clone())
    else:
        node = rec.call(name, fargs, fkwargs, op)
        if _may_change_dtype(x, args[1:], kwargs):
            node = rec.cast(node, x.dtype)
    return _rebind(rec, x, node, result)


def _may_change_dtype(x: torch.Tensor, others: tuple, kwargs: dict) -> bool:
    for value in (*others, *kwargs.values()):
        if isinstance(value, torch.Tensor) and value.dtype != x.dtype:
            return True
        if isinstance(value, float) and not x.dtype.is_floating_point:
            return True
    return False


def _out_kwarg(
    rec: Recorder, func: Callable, args: tuple, kwargs: dict, out: Any, result: Any
) -> Any:
    """``out=``: recorded functionally when out is traced, otherwise a trace loss."""
    fkwargs = {k: v for k, v in kwargs.items() if k != "out"}
    if isinstance(out, torch.Tensor) and active_recorder(out) is rec:
        node = rec.call(func, arg_of(rec, args), arg_of(rec, fkwargs))
        if _contains_tensor(result) and not isinstance(result, torch.Tensor):
            return result
        return _rebind(rec, out, rec.cast(node, out.dtype), result)
    report_loss(rec, f"{_torch_name(func)}(out=...) writing into an untraced tensor")
    return result


def _setitem(rec: Recorder, args: tuple, kwargs: dict) -> None:
    x, index, value = args
    if type(x) is torch.Tensor:
        adopt_tensor(rec, x)  # a fresh buffer: traced before the write runs
    with _DISABLE():
        x[index] = value
    if active_recorder(x) is not rec:
        report_loss(rec, "writing traced data into an untraced tensor with [...] =")
        return
    rebind(x, record_setitem(rec, x, index, value))


def _to_numpy(rec: Recorder, x: Any) -> Any:
    """``tensor.numpy()`` keeps tracing: same graph value, NumPy eager data."""
    with _DISABLE():
        result = x.numpy()
    if active_recorder(x) is not rec:
        return result
    return make_traced(rec, result, to_numpy_side(rec, x._pp.node, result.dtype))


def _traced_torch_function(cls, func, types, args=(), kwargs=None):
    """``TracedTensor.__torch_function__``: run ``func`` eagerly on plain tensors and
    record it."""
    return torch_function(func, args, kwargs or {})


def _scalar_aware(name: str) -> Any:
    """Tensor operator that, like torch untraced, takes a traced NumPy scalar as a number."""
    base = getattr(torch.Tensor, name)

    def op(self: TracedTensor, other: Any) -> Any:
        if type(other) is TracedArray and other._pp.scalar:
            return torch_function(base, (self, other), {})
        return base(self, other)

    op.__name__ = name
    return op


_SCALAR_AWARE = ("__radd__", "__rsub__", "__rmul__", "__rtruediv__", "__rfloordiv__", "__rmod__",
                 "__rpow__", "__rmatmul__", "__rand__", "__ror__", "__rxor__", "__gt__", "__ge__",
                 "__lt__", "__le__", "__eq__", "__ne__")  # fmt: skip


def _deepcopy(self: TracedTensor, memo: dict) -> Any:
    """``copy.deepcopy``: a copy recorded as ``clone`` while the node records; once it is
    finished, the plain tensor's deep copy (a plain tensor, as torch gives one)."""
    if active_recorder(self) is not None:
        copied = torch_function(torch.Tensor.clone, (self,), {})
    else:
        copied = torch.Tensor.__deepcopy__(plain(self), memo)
    memo[id(self)] = copied
    return copied


def _reduce_ex(self: TracedTensor, protocol: int) -> Any:
    """Pickling (``pickle``, ``torch.save``) stores the plain tensor: the recorder and its
    graph are not data, and a loaded copy is ordinary data."""
    return plain(self).__reduce_ex__(protocol)


def install(cls: type) -> None:
    """Make ``cls`` (TracedTensor) record through :func:`torch_function`; deep copies and
    pickles of its values are ordinary tensors once their node is finished."""
    cls.__torch_function__ = classmethod(_traced_torch_function)
    cls.__deepcopy__ = _deepcopy
    cls.__reduce_ex__ = _reduce_ex
    for name in _SCALAR_AWARE:
        setattr(cls, name, _scalar_aware(name))
    cls.__hash__ = torch.Tensor.__hash__  # defining __eq__ must not drop hashing
