"""LEAPP's ``leapp.leapp_graph.traced_node`` path: ``TracedTensorNode``, one node traced
on its own, as LEAPP's unit tests build it (``create_input``, ``compile_trace``, ``m``).

It is a view of patchport's public session API: inside a user's session the node joins
it; otherwise the node opens a private session (which writes nothing, since nothing is
compiled). As in LEAPP, a node lives as long as its traced values may be used: the private
session keeps it, and closes when its last node is finished, when a node name is traced
again by a new node, or when ``patchport.start`` begins a session of the user's.
"""

from __future__ import annotations

import warnings
from typing import Any

from ..errors import TraceLossWarning
from ..sessions import annotate
from ..sessions.lifecycle import current_session, start, stop

_PRIVATE_NAME = "leapp_graph.traced_node"
# The private session and its nodes still tracing (held, so a node made for one call,
# ``TracedTensorNode("n").create_input(x, "x")``, keeps tracing what it returned).
_private: dict[str, Any] = {"session": None, "open": {}}


class TracedTensorNode:
    """A node traced alone: ``create_input`` gives traced values, ``compile_trace`` finishes
    the node with named outputs, ``m`` is its graph module (one output: the value itself)."""

    def __init__(self, name: str, *args: Any, **kwargs: Any) -> None:
        # LEAPP ignores extra arguments such as node_index; so does this view.
        self.name = name
        self._trace: Any = None
        session = current_session()
        if session is not None and session is _private["session"]:
            if name in session.nodes:
                _close_private()  # a name traced again: a new graph, as in LEAPP
                session = None
        if session is None:
            _private["session"] = start(_PRIVATE_NAME)
        if current_session() is _private["session"]:
            _private["open"][id(self)] = self

    @property
    def is_tracing(self) -> bool:
        """True until :meth:`compile_trace` finished the node."""
        return self._trace is None

    def create_input(self, data: Any, name: str, semantics: Any = None) -> Any:
        """``data`` as this node's input ``name``: a traced value."""
        if semantics is not None:  # a TensorSemantics: its labels, this name and value
            import dataclasses

            labelled = dataclasses.replace(semantics, name=name, ref=data)
            return annotate.input_tensors(self.name, [labelled])
        return annotate.input_tensors(self.name, {name: data})

    def compile_trace(
        self, tensors: dict[str, Any], backend: str | None = None, backend_params: Any = None
    ) -> Any:
        """Finish the node with ``tensors`` (``{name: traced value}``); return the values
        (one, or a tuple in order). The node is exported only by ``compile_graph``."""
        session = current_session()
        result = annotate.output_tensors(
            self.name, tensors, export_with=backend or "jit", backend_params=backend_params
        )
        self._trace = session.nodes[self.name] if session is not None else None
        _finished(id(self))
        return result

    @property
    def m(self) -> Any:
        """The node's ``torch.fx.GraphModule``; with one output it returns that value, not
        a one-item tuple (as LEAPP builds it)."""
        if self._trace is None:
            return None
        module = self._trace.m
        outputs = next(n for n in module.graph.nodes if n.op == "output").args[0]
        if not (isinstance(outputs, (tuple, list)) and len(outputs) == 1):
            return module
        import copy

        import torch.fx

        graph = copy.deepcopy(module.graph)
        output = next(n for n in graph.nodes if n.op == "output")
        output.args = (output.args[0][0],)
        return torch.fx.GraphModule(module, graph)

    @property
    def graph(self) -> Any:
        """The node's ``torch.fx.Graph``."""
        return None if self._trace is None else self._trace.m.graph


def _close_private() -> None:
    """Stop the private session (its unfinished nodes are simply dropped)."""
    session = _private["session"]
    _private["session"] = None
    _private["open"] = {}
    if session is not None and current_session() is session:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TraceLossWarning)
            stop()


def _finished(node_id: int) -> None:
    """A private node was finished: close the session once none is tracing."""
    _private["open"].pop(node_id, None)
    if _private["session"] is not None and not _private["open"]:
        _close_private()
