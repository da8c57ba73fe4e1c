"""annotate.*: where a traced node starts and ends, its state, buffers and labels.

The first pass through a node records its graph. Later passes (a control loop calling
the same code again) are kept as samples: their concrete inputs and eager outputs let
validation replay the exported model on data it was not traced with, and a later pass
is also where a value produced downstream is first seen feeding an earlier node (a
feedback edge). Outside a session every annotation returns its values unchanged, so
production code keeps its annotations.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from .._stack import user_stacklevel
from ..backend_names import canonical_name, unknown_backend
from ..errors import PatchDefinitionError, PatchportWarning, PatchStateError, TraceLossWarning
from ..tracing import Recorder
from ..tracing.fresh import untraced_as_plain
from ..tracing.values import plain
from .buffers import BufferTracker
from .dynamic_dims import check_dynamic
from .lifecycle import current_session
from .method import bind_ports, check_node_name, named_outputs, star_ports
from .names import check_file_name
from .node_trace import NodeTrace, PassOutputs, shape_of
from .output_views import equal_output, mark_port, output_source, remember_output
from .payload import Payload, normalize, passthrough, rebuild, single_or_tuple
from .state import Session

__all__ = [
    "input_tensors",
    "method",
    "mirror_leapp_tags",
    "module",
    "output_tensors",
    "register_buffer",
    "state_tensors",
    "update_state",
]


def _node(caller: str, session: Session, node: str, create: bool) -> NodeTrace:
    trace = session.nodes.get(node)
    if trace is None:
        check_file_name(caller, "node", node)  # it names the node's model file
        if not create:
            raise PatchStateError(
                f"{caller}({node!r}, ...): node {node!r} does not exist yet; call "
                f"annotate.input_tensors({node!r}, {{...}}) first."
            )
        skip = session.dry_run or node in session.non_traced
        trace = NodeTrace(node, Recorder(node, strict=session.strict), skip_export=skip)
        trace.recorder.owner = trace
        session.nodes[node] = trace
    return trace


def _declare(
    caller: str,
    session: Session,
    trace: NodeTrace,
    payload: Payload,
    state: bool = False,
    dynamic: dict[str, dict[int, str]] | None = None,
) -> dict[str, Any]:
    """Make each flat port an input of this pass; return ``{port: traced value}``."""
    trace.check_inputs(caller, payload.flat)  # every refusal before anything changes
    sources = {}
    for key, value in payload.flat.items():
        if trace.sources.get(key) is None:
            source = output_source(session, value)
            if source is not None:
                sources[key] = source  # on a later pass: how feedback is found
            elif not trace.finished and not state:
                _warn_if_copy(caller, session, trace.name, key, value)
    return trace.declare(payload, sources, state, dynamic)


def _returned(payload: Payload, traced: dict[str, Any]) -> Any:
    values = [
        rebuild(name, value, lambda port, _leaf: traced[port])
        for name, value in payload.entries.items()
    ]
    return single_or_tuple(values)


def input_tensors(node: str, tensors: Any, dynamic: dict[str, dict[int, str]] | None = None) -> Any:
    """Declare ``node``'s inputs; return traced values (one value, or a tuple in order).

    ``tensors`` is ``{name: value}`` (values may be nested lists/tuples/dicts) or a list
    of :class:`~patchport.TensorSemantics`. The given arrays and tensors are not
    modified; the traced values are new objects. Outside a session: the values as given.
    ``dynamic={"image": {0: "batch", 2: "width"}}`` lets those axes change size in the
    exported model (one name on several ports: equal sizes).
    """
    session = current_session()
    if session is None:
        return passthrough(tensors)
    tensors = untraced_as_plain(tensors)  # a fresh buffer not yet traced is plain data
    payload = normalize("annotate.input_tensors", node, tensors)
    existing = session.nodes.get(node)
    axes = _dynamic_axes(node, dynamic, payload, existing)
    trace = _node("annotate.input_tensors", session, node, create=True)
    traced = _declare("annotate.input_tensors", session, trace, payload, dynamic=axes)
    return _returned(payload, traced)


def _dynamic_axes(
    node: str, dynamic: Any, payload: Payload, trace: NodeTrace | None
) -> dict[str, dict[int, str]]:
    """Checked ``dynamic=`` of this call; a later pass may repeat the first pass's axes."""
    shapes = {key: shape_of(value) for key, value in payload.flat.items()}
    ports = trace.inputs if trace is not None else []
    earlier = {p.name: p.dynamic for p in ports if p.dynamic and p.name not in shapes}
    axes = check_dynamic(node, dynamic, shapes, earlier, {p.name: p.shape for p in ports})
    if trace is not None and trace.finished and dynamic is not None:
        first = {p.name: p.dynamic for p in ports if p.name in shapes and p.dynamic}
        if axes != first:
            raise PatchDefinitionError(
                f"annotate.input_tensors({node!r}, ..., dynamic=...): {axes} differs from the "
                f"first pass {first}; a node keeps one signature (omit dynamic= on later passes)."
            )
    return axes


def state_tensors(node: str, tensors: dict[str, Any], dynamic: Any = None) -> Any:
    """Declare recurrent state: each tensor is an input now and, once given to
    :func:`update_state`, an output of the same name fed back on the next call.

    The value given here is the state's initial value in the exported bundle. A state
    keeps that shape: ``dynamic=`` is refused (see :func:`_refuse_dynamic_state`).
    """
    _check_flat_state("annotate.state_tensors", node, tensors)
    _refuse_dynamic_state(node, tensors, dynamic)
    session = current_session()
    if session is None:
        return passthrough(tensors)
    tensors = untraced_as_plain(tensors)
    payload = normalize("annotate.state_tensors", node, tensors)
    trace = _node("annotate.state_tensors", session, node, create=False)
    if trace.finished:
        unknown = [k for k in payload.flat if k not in trace.states]
        if unknown:
            raise PatchDefinitionError(
                f"annotate.state_tensors({node!r}, ...): {unknown} were not state in the first "
                f"pass (state: {trace.states}); a node keeps one signature."
            )
    traced = _declare("annotate.state_tensors", session, trace, payload, state=not trace.finished)
    return _returned(payload, traced)


def _refuse_dynamic_state(node: str, tensors: dict[str, Any], dynamic: Any) -> None:
    """States cannot change size: the bundle stores one initial value and the runtime
    feeds each state back at its shape (a batch change would need a state of new size)."""
    if not dynamic:
        return
    ports = sorted(dynamic) if isinstance(dynamic, dict) else sorted(tensors)
    raise PatchDefinitionError(
        f"annotate.state_tensors({node!r}, ..., dynamic=...): state {', '.join(map(repr, ports))} "
        f"cannot have dynamic axes: its initial value is stored at one shape and fed back "
        f"at that shape on every call. Declare the state at its full size without dynamic=, "
        f"or pass it as an input (annotate.input_tensors(..., dynamic=...)) that your code "
        f"feeds back itself."
    )


def update_state(node: str, tensors: dict[str, Any]) -> Any:
    """Give each state declared by :func:`state_tensors` its value for the next call."""
    _check_flat_state("annotate.update_state", node, tensors)
    session = current_session()
    if session is None:
        return passthrough(tensors)
    trace = _node("annotate.update_state", session, node, create=False)
    trace.set_states("annotate.update_state", tensors)
    return passthrough(tensors)


def _check_flat_state(caller: str, node: str, tensors: Any) -> None:
    if not isinstance(tensors, dict):
        raise PatchDefinitionError(
            f"{caller}({node!r}, ...): expected a dict {{name: tensor}}, got "
            f"{type(tensors).__name__}."
        )
    for name, value in tensors.items():
        if not isinstance(value, (np.ndarray, torch.Tensor)):
            raise PatchDefinitionError(
                f"{caller}({node!r}, {{{name!r}: ...}}): state must be one tensor per name, got "
                f"{type(value).__name__} (patchport, as LEAPP, does not support nested state "
                f"structures); list each state tensor under its own name."
            )


def register_buffer(node: str, tensors: Any) -> Any:
    """Use constant tensors inside ``node``'s graph (baked into the exported model).

    ``tensors`` is a tensor, a list of them (named ``buffer_0``, ...), or a dict.
    Returns traced values to compute with; outside a session the values unchanged.
    """
    session = current_session()
    if session is None:
        return passthrough(tensors)
    trace = _node("annotate.register_buffer", session, node, create=False)
    tensors = untraced_as_plain(tensors)
    if isinstance(tensors, (np.ndarray, torch.Tensor)):
        named, single = {"buffer_0": tensors}, True
    elif isinstance(tensors, dict):
        named, single = dict(tensors), len(tensors) == 1
    else:
        named = {f"buffer_{i}": t for i, t in enumerate(tensors)}
        single = len(named) == 1
    for name, value in named.items():
        if not isinstance(value, (np.ndarray, torch.Tensor)) or plain(value) is not value:
            raise PatchDefinitionError(
                f"annotate.register_buffer({node!r}, {{{name!r}: ...}}): a buffer is a plain "
                f"tensor or array (not {type(value).__name__} / traced data); compute with it "
                f"after registering."
            )
    out = trace.add_buffers(named)
    return out[0] if single else tuple(out)


def module(node: str, model: torch.nn.Module, buffer_names: list[str] | None = None) -> None:
    """Track ``model``'s registered buffers in ``node`` (a GRU hidden state, ...).

    Buffers that ``forward`` reassigns become state (input and output, fed back); the
    others are baked into the graph. At ``output_tensors`` the model gets plain buffers
    back: a reassigned buffer holds its new eager value, as without tracing.
    """
    session = current_session()
    if session is None:
        return
    if not isinstance(model, torch.nn.Module):
        raise PatchDefinitionError(
            f"annotate.module({node!r}, model): expected a torch.nn.Module, got "
            f"{type(model).__name__}."
        )
    trace = _node("annotate.module", session, node, create=False)
    tracker = BufferTracker(model, buffer_names, only=trace.states if trace.finished else None)

    def declare(values: dict[str, torch.Tensor]) -> dict[str, Any]:
        payload = normalize("annotate.module", node, values)
        return _declare("annotate.module", session, trace, payload, state=not trace.finished)

    tracker.inject(declare)
    trace.track_buffers(tracker)


def mirror_leapp_tags(source: Any, target: Any) -> Any:
    """Give ``target`` (equal data computed outside tracing) the traced identity of
    ``source``; outside a session return ``target``.

    For a value of a node still recording, the traced ``source`` is returned (in the
    target's kind) to compute on. For a finished node's output, ``target`` itself becomes
    that output (as LEAPP promotes it): handed to ``input_tensors``, it is wired as the
    output's edge, whether or not the caller keeps the returned value (``target``).
    """
    session = current_session()
    if session is None or plain(source) is source:
        return target
    a, b = plain(source), plain(target)
    a_np = a.detach().cpu().numpy() if isinstance(a, torch.Tensor) else np.asarray(a)
    b_np = b.detach().cpu().numpy() if isinstance(b, torch.Tensor) else np.asarray(b)
    if a_np.shape != b_np.shape or a_np.dtype != b_np.dtype or not np.array_equal(a_np, b_np):
        raise PatchDefinitionError(
            "annotate.mirror_leapp_tags(source, target): target must hold exactly the data "
            f"of source (source {a_np.dtype}{list(a_np.shape)}, target "
            f"{b_np.dtype}{list(b_np.shape)})."
        )
    port = None if source.is_tracing else output_source(session, source)
    if port is not None:
        remember_output(session, target, port)
        return target
    if isinstance(target, torch.Tensor) == isinstance(a, torch.Tensor):
        return source
    return torch.from_numpy(source) if isinstance(target, torch.Tensor) else source.numpy()


def output_tensors(
    node: str,
    tensors: Any,
    static_outputs: Any = None,
    export_with: str | None = "onnx",
    backend_params: dict[str, Any] | None = None,
) -> Any:
    """Finish ``node`` with these outputs; return the values given (one, or a tuple), as
    LEAPP does: each traced output now answers ``output_port`` and ``is_tracing`` False.

    ``static_outputs`` are constant tensors the model also returns (parameters in LEAPP's
    order; a backend name given third is taken as ``export_with``);
    ``backend_params`` go to the backend (``opset_version``; with ``export_with=None``,
    ``model_path`` of a model you bring). Outside a session: the values as given.
    """
    if isinstance(static_outputs, str):  # the older form: export_with as third argument
        export_with, static_outputs = static_outputs, None
    session = current_session()
    if session is None:
        return passthrough(tensors)
    payload, given = _checked_outputs(
        session, node, tensors, static_outputs, export_with, backend_params
    )
    trace = session.nodes.get(node)
    if trace is None or not trace.pending_inputs:
        raise PatchStateError(
            f"annotate.output_tensors({node!r}, ...): node {node!r} has no inputs in this pass; "
            f"call annotate.input_tensors({node!r}, {{...}}) first."
        )
    if trace.finished:
        flat = trace.finish_later_pass(given, keep=session.max_cached_io)
    else:
        flat = trace.finish_first_pass(given, index=session.completed, keep=session.max_cached_io)
        session.completed += 1
    for key, value in flat.items():
        remember_output(session, value, f"{node}/{key}")
        mark_port(value, key)
    return passthrough(tensors)


def _checked_outputs(
    session: Session,
    node: str,
    tensors: Any,
    static_outputs: Any,
    export_with: str | None,
    backend_params: dict[str, Any] | None,
) -> tuple[Payload, PassOutputs]:
    """output_tensors' arguments, checked before the node changes."""
    check_file_name("annotate.output_tensors", "node", node)  # it names the model file
    payload = normalize("annotate.output_tensors", node, tensors)
    statics = (
        normalize("annotate.output_tensors(static_outputs=...)", node, static_outputs)
        if static_outputs is not None
        else None
    )
    if export_with is not None:
        if canonical_name(export_with) is None:
            raise PatchDefinitionError(
                f"annotate.output_tensors({node!r}, export_with={export_with!r}): "
                f"{unknown_backend(export_with)}"
            )
    if backend_params is not None and not isinstance(backend_params, dict):
        raise PatchDefinitionError(
            f"annotate.output_tensors({node!r}, backend_params=...): expected a dict such as "
            f"{{'opset_version': 18}} or {{'model_path': 'model.onnx'}}, got "
            f"{type(backend_params).__name__}."
        )
    params = dict(backend_params or {})
    if export_with is None and "model_path" not in params and not session.dry_run:
        warnings.warn(
            f"annotate.output_tensors({node!r}, export_with=None): no model is written for "
            f"this node; pass backend_params={{'model_path': ...}} to bring your own.",
            PatchportWarning,
            stacklevel=user_stacklevel(),
        )
    static_flat = statics.flat if statics is not None else {}
    for name, value in static_flat.items():
        if plain(value) is not value:
            raise PatchDefinitionError(
                f"annotate.output_tensors({node!r}, static_outputs={{{name!r}: ...}}): a static "
                f"output is a constant tensor, not traced data; return it as a regular output."
            )
    labels = {**payload.semantics, **(statics.semantics if statics else {})}
    return payload, PassOutputs(dict(payload.flat), dict(static_flat), labels, export_with, params)


def _warn_if_copy(caller: str, session: Session, node: str, key: str, value: Any) -> None:
    """Say when an input holds an earlier output's values in other memory: it becomes
    a pipeline input instead of that output's edge."""
    port = equal_output(session, plain(value))
    if port is not None:
        warnings.warn(
            f"{caller}({node!r}, ...): input '{node}/{key}' holds the same values as output "
            f"'{port}' but is a copy of it, so it becomes an input of the exported pipeline "
            f"instead of that output's edge. Pass the value annotate.output_tensors returned, "
            f"or a view of it (torch.from_numpy, .numpy(), np.asarray), to connect them.",
            TraceLossWarning,
            stacklevel=user_stacklevel(),
        )


def method(
    node_name: str | None = None,
    export_with: str | None = "onnx",
    backend_params: dict[str, Any] | None = None,
    environment_constants: list[str] | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: each call of the function inside a session is a pass through a node.

    Tensor arguments are the node's inputs, tensor defaults its buffers, the returned
    values its outputs (named as in the ``return`` statement). Outside a session the
    function runs untouched. ``environment_constants`` (LEAPP's list of the globals the
    function reads) is accepted and needs nothing: what the function computes from them
    is traced like any other code.
    """
    check_node_name(node_name)
    if environment_constants is not None and (
        isinstance(environment_constants, str)
        or not all(isinstance(n, str) for n in environment_constants)
    ):
        raise PatchDefinitionError(
            f"annotate.method(environment_constants={environment_constants!r}): expected a "
            f"list of global names such as ['model']."
        )

    def decorator(func: Callable[..., Any]) -> Callable[..., Any]:
        name = node_name or func.__name__
        signature = inspect.signature(func)

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if current_session() is None:
                return func(*args, **kwargs)
            bound, inputs, buffers = bind_ports(signature, args, kwargs)
            star = star_ports(signature, bound)
            if not inputs and not star:
                raise PatchDefinitionError(
                    f"annotate.method: this call of {name!r} passes no tensor or array; a node "
                    f"needs at least one input (tensor defaults are constants of the node). "
                    f"Pass the tensor as an argument."
                )
            for param in inputs:  # inputs first: they open the node's pass
                bound.arguments[param] = input_tensors(name, {param: bound.arguments[param]})
            for port, (param, key) in star:
                packed = bound.arguments[param]
                traced = input_tensors(name, {port: packed[key]})
                if isinstance(packed, tuple):
                    bound.arguments[param] = (*packed[:key], traced, *packed[key + 1 :])
                else:
                    bound.arguments[param] = {**packed, key: traced}
            for param in buffers:  # a tensor default: a constant of the node
                bound.arguments[param] = register_buffer(name, {param: bound.arguments[param]})
            result = func(*bound.args, **bound.kwargs)
            output_tensors(
                name,
                named_outputs(func, result),
                export_with=export_with,
                backend_params=backend_params,
            )
            return result

        return wrapper

    return decorator
