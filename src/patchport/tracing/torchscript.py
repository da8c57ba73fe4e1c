"""TorchScript modules called on traced data: their graph is inlined into the node's graph.

A ``torch.jit.load``-ed or ``torch.jit.script``-ed module runs in C++, so nothing inside it
reaches ``__torch_function__``; only the call itself does (as a ``ScriptMethod``). Recording
that call as an opaque target would either crash fx (a ScriptMethod has no ``__name__``) or
give a graph no backend exports. Instead the module is converted with torch's own
TorchScript -> ExportedProgram converter on the call's concrete inputs, and the resulting
ATen operations are copied into the recorder's graph, with the module's weights as listed
constants. Every backend then sees ordinary operations. Where the conversion fails the call
is a trace loss reported at the user's line, naming the module.
"""

from __future__ import annotations

import contextlib
import logging
import warnings
from collections.abc import Iterator
from typing import Any

import torch
from torch import fx
from torch.utils import _pytree as pytree

from ..errors import NotInlinable as _NotInlinable
from ..patching.source_diff import wraps_original
from .loss import report_loss
from .recorder import _ACTIVE_COUNT, Recorder
from .values import arg_of, find_recorder, make_traced

_SCRIPT_METHOD = torch._C.ScriptMethod


def is_script_call(func: Any) -> bool:
    """Whether ``func`` (a ``__torch_function__`` target) is a TorchScript module's method."""
    return type(func) is _SCRIPT_METHOD


def module_label(func: Any) -> str:
    """Words naming the TorchScript module of ``func``, e.g. ``TorchScript module Policy``."""
    owner = getattr(func, "owner", None)
    try:
        name = owner._type().name()  # e.g. __torch__.policy.ActorCritic
    except Exception:  # noqa: BLE001 - a label only
        name = type(owner).__name__
    name = name.removeprefix("__torch__.")
    return f"TorchScript module {name}.{getattr(func, 'name', 'forward')}"


def record_script_call(rec: Recorder, func: Any, args: tuple, kwargs: dict, run: Any = None) -> Any:
    """Run ``func`` eagerly on plain values and inline its TorchScript graph into ``rec``
    (``func``: a module's ScriptMethod, or a ScriptFunction run by ``run``)."""
    plain_args, plain_kwargs = pytree.tree_map_only(torch.Tensor, _plain, (args, kwargs))
    if run is not None:
        result = run(func, *plain_args, **plain_kwargs)
        label = f"TorchScript function {getattr(func, 'name', None) or func.__name__}"
    else:
        with torch._C.DisableTorchFunctionSubclass():
            result = func(*args, **kwargs)
        label = module_label(func)
    try:
        program = _convert(func, plain_args, plain_kwargs)
        outputs = _inline(rec, program, (args, kwargs), label)
    except _NotInlinable as exc:
        report_loss(rec, f"{label} called on traced data ({exc})")
        return result
    leaves, spec = pytree.tree_flatten(result)
    if len(leaves) != len(outputs):
        report_loss(rec, f"{label} called on traced data (its outputs could not be matched)")
        return result
    wrapped = [
        make_traced(rec, leaf, node) if isinstance(leaf, torch.Tensor) else leaf
        for leaf, node in zip(leaves, outputs, strict=True)
    ]
    return pytree.tree_unflatten(wrapped, spec)


_FUNCTION_CALL = torch._C.ScriptFunction.__call__


@wraps_original(getattr(_FUNCTION_CALL, "__func__", _FUNCTION_CALL))  # pybind's instancemethod
def _script_function_call(self: Any, *args: Any, **kwargs: Any) -> Any:
    """``ScriptFunction.__call__`` in a session: a call on traced data is inlined (a
    scripted function runs in C++ and would otherwise return an untraced result)."""
    if _ACTIVE_COUNT[0]:
        rec = find_recorder(args, kwargs)
        if rec is not None:
            return record_script_call(rec, self, args, kwargs, _FUNCTION_CALL)
    return _FUNCTION_CALL(self, *args, **kwargs)


# (owner, attribute, replacement) the session installs with the conversion patches
SESSION_PATCHES = ((torch._C.ScriptFunction, "__call__", _script_function_call),)


@contextlib.contextmanager
def _quiet(name: str) -> Iterator[None]:
    """Silence a torch logger's notes (the converter logs every specialised size)."""
    logger = logging.getLogger(name)
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def _plain(value: torch.Tensor) -> torch.Tensor:
    return value.as_subclass(torch.Tensor)


def _convert(func: Any, args: tuple, kwargs: dict) -> Any:
    """The module's ``forward`` as an ExportedProgram (torch's TorchScript converter)."""
    function = type(func) is not _SCRIPT_METHOD
    if not function and getattr(func, "name", "forward") != "forward":
        raise _NotInlinable(f"only forward can be converted, not {func.name!r}")
    if kwargs:
        raise _NotInlinable("keyword arguments; pass the inputs positionally")
    try:
        from torch._export.converter import TS2EPConverter
    except ImportError as exc:  # pragma: no cover - a torch without the converter
        raise _NotInlinable("this torch has no TorchScript converter") from exc
    try:
        with warnings.catch_warnings(), torch.no_grad(), _quiet("torch._export"):
            warnings.simplefilter("ignore")
            target = func if function else torch.jit._recursive.wrap_cpp_module(func.owner)
            return TS2EPConverter(target, args).convert()
    except Exception as exc:  # the converter's own refusal, in its words
        first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
        raise _NotInlinable(
            f"torch's TorchScript converter refused it: {type(exc).__name__}: {first}; "
            f"keep the nn.Module (not its TorchScript file) in the traced code"
        ) from exc


def _scriptable(target: Any) -> Any:
    """An ATen overload as its packet (``aten.linear``, not ``aten.linear.default``):
    TorchScript resolves the packet by schema, it cannot look the overload attribute up."""
    packet = getattr(target, "overloadpacket", None)
    return packet if isinstance(target, torch._ops.OpOverload) and packet is not None else target


def _inline(rec: Recorder, program: Any, inputs: Any, label: str) -> list[Any]:
    """Copy the program's operations into ``rec``; return the nodes of its user outputs."""
    signature = program.graph_signature
    if signature.buffers_to_mutate or getattr(signature, "user_inputs_to_mutate", None):
        raise _NotInlinable("it writes into its buffers or inputs")
    weights = {
        **signature.inputs_to_parameters,
        **signature.inputs_to_buffers,
        **signature.inputs_to_lifted_tensor_constants,
    }
    state = {**program.state_dict, **program.constants}
    user = iter(pytree.tree_leaves(inputs))
    env: dict[fx.Node, Any] = {}
    outputs: list[Any] = []
    for node in program.graph.nodes:
        if node.op == "placeholder":
            if node.name in weights:
                target = weights[node.name]
                env[node] = rec.constant(state[target], origin=f"{target} of the {label}")
            else:
                env[node] = arg_of(rec, next(user))
        elif node.op == "call_function":
            args, kwargs = fx.node.map_arg((node.args, node.kwargs), env.__getitem__)
            env[node] = rec.call(_scriptable(node.target), args, kwargs)
        elif node.op == "output":
            user_outputs = len(signature.user_outputs)
            flat = pytree.tree_leaves(node.args[0])
            outputs = [fx.node.map_arg(item, env.__getitem__) for item in flat[-user_outputs:]]
        else:
            raise _NotInlinable(f"its converted graph has a {node.op} node")
    return outputs
