"""The graph recorder: a plain ``torch.fx.Graph`` builder (calls, inputs, constants).

A :class:`Recorder` is what one traced node of a session records into. Traced values
point at their recorder and at the ``fx.Node`` that computes them in the graph; turning
traced values into graph inputs and outputs is ``graph_io``'s job.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import torch
from torch import fx

from .constants import ConstantInfo
from .data_sized import SIZE_DECIDING, mark, sized_by_data
from .dtypes import HELD_AS_INT64
from .located_calls import LOCATED_CALLS
from .location import user_location
from .shape_reads import symbolic_args

# number of recorders currently active; lets "is this traced?" answer without lookups
_ACTIVE_COUNT = [0]

_ids = itertools.count()

# call_function target (or ("placeholder", name)) -> fx's name candidate for it (shared by
# recorders; bounded)
_CANDIDATES: dict[Any, str] = {}

# whether fx.Graph exposes what the fast node path uses (None: not checked yet)
_FAST_NODES: list[bool | None] = [None]

# a session's stand-in for a torch function -> that function: graphs record the torch
# function itself, so what reads a graph by its targets (ONNX decompositions) finds it
RECORDED_AS: dict[Any, Any] = {}

# targets that take the slower path: size-deciding ops and calls that keep the user's line
_NOTED = SIZE_DECIDING | LOCATED_CALLS


def _target_name(graph: fx.Graph, target: Any) -> str:
    """fx's name candidate for ``target`` (``Graph._target_to_str``) without its regex when
    the name has no capital letter to snake-case: the regex's first use in a process
    compiles its template, a cost the first traced pass paid."""
    name = getattr(target, "__name__", None) if callable(target) else target
    if type(name) is str and name.isascii() and name.islower():
        if not callable(target) and name.startswith("__") and name.endswith("__"):
            name = name[2:-2]
        return name
    return graph._target_to_str(target)


def _fast_node_supported(graph: fx.Graph) -> bool:
    """Whether this torch's Graph exposes the internals used by the fast node path."""
    return all(
        hasattr(graph, name)
        for name in ("_graph_namespace", "_insert", "_find_nodes_lookup_table", "_len", "_root")
    )


class Recorder:
    """Records torch equivalents of traced NumPy/torch operations into one ``fx.Graph``."""

    def __init__(self, name: str = "traced", *, strict: bool = False) -> None:
        self.name = name
        self.strict = strict
        self.owner: Any = None  # the annotated node recording here (set by the session)
        self.graph = fx.Graph()
        self._root: torch.nn.Module | None = None  # holds the constants; made on the first
        self._module: fx.GraphModule | None = None  # made on first use, after the pass
        self.active = True
        self.finished = False
        self.losses: list[str] = []
        # target -> the user's line that first recorded it (one frame walk per distinct
        # operation, not per node): a backend refusing an operation names that line
        self.first_recorded: dict[Any, str] = {}
        # arrays NumPy copied from traced data without dispatch, recorded as casts; checked
        # when the graph is sealed (see unhooked_copies)
        self.assumed_copies: list[tuple[Any, Any, Any, tuple[str, int]]] = []
        # content of arrays made before the session at their first traced write; checked
        # when the graph is sealed (see prior_buffers)
        self.prior_starts: list[tuple[Any, tuple[int, ...], str, str]] = []
        # numbers copied out of the trace with no hook (np.float32(x)), see unhooked
        self.unhooked: dict[Any, Any] = {}
        self.input_names: list[str] = []
        self._constants: list[ConstantInfo] = []
        self._const_nodes: dict[int, tuple[Any, fx.Node]] = {}
        self._origins: dict[int, tuple[Any, str]] = {}
        self._fast = _FAST_NODES[0]
        if self._fast is None:  # whether this torch's Graph has them: checked once
            self._fast = _FAST_NODES[0] = _fast_node_supported(self.graph)
        self._id = next(_ids)
        # a node with dynamic input axes: shape reads and op locations are noted
        self.track_shapes = False
        self.shape_reads: list[tuple[Any, int | None, str, str]] = []  # node, axis, what, where
        _ACTIVE_COUNT[0] += 1

    @property
    def root(self) -> torch.nn.Module:
        """The module holding the graph's constants (made when first needed: most passes
        record none, and a later pass's recorder is thrown away)."""
        if self._root is None:
            self._root = torch.nn.Module()
        return self._root

    def __repr__(self) -> str:
        state = "active" if self.active else "closed"
        return f"Recorder({self.name!r}, {state}, {len(self.graph.nodes)} nodes)"

    # ------------------------------------------------------------------ nodes
    def call(
        self, target: Any, args: tuple = (), kwargs: dict | None = None, op: str = "call_function"
    ) -> fx.Node:
        """Append ``target(*args, **kwargs)`` to the graph; args hold fx.Nodes or literals.

        ``op`` is ``"call_function"`` or ``"call_method"`` (then ``target`` is the name).
        """
        try:
            if op == "call_function":
                target = RECORDED_AS.get(target, target)
            noted = target in _NOTED
            if target not in self.first_recorded:
                self.first_recorded[target] = user_location(3)
        except TypeError:  # an unhashable target (a bound method of a dict): not a stand-in
            noted = False
        graph = self.graph
        if noted:
            if target in SIZE_DECIDING and sized_by_data(target, args):
                return self.call_sized_by_data(target, args, kwargs, op)
            if target in LOCATED_CALLS:
                return self._call_located(target, args, kwargs, op)
        if self.track_shapes:
            return self._call_noted(target, args, kwargs, op)
        if not self._fast:
            return graph.create_node(op, target, args, kwargs or {})
        if op == "call_method":
            candidate = target
        else:
            candidate = _CANDIDATES.get(target)
            if candidate is None:
                if len(_CANDIDATES) > 4096:
                    _CANDIDATES.clear()
                candidate = _CANDIDATES[target] = _target_name(graph, target)
        name = graph._graph_namespace.create_name(candidate, None)
        node = fx.Node(graph, name, op, target, args, kwargs or {})
        graph._graph_namespace.associate_name_with_obj(name, node)
        graph._insert(node)
        graph._find_nodes_lookup_table.insert(node)
        graph._len += 1
        return node

    def last_node(self) -> fx.Node | None:
        """The graph's last node (None while it has none), without listing the graph."""
        graph = self.graph
        if self._fast:
            root = graph._root
            return None if root._prev is root else root._prev
        return next(reversed(graph.nodes), None)

    def call_sized_by_data(
        self, target: Any, args: tuple, kwargs: dict | None = None, op: str = "call_function"
    ) -> fx.Node:
        """``call`` for an op whose result's size the data decides (nonzero, a boolean
        selection): from here on this node's size reads are noted (see data_sized)."""
        self.track_shapes = True
        node = self._call_noted(target, args, kwargs, op)
        mark(node)
        return node

    def _call_located(self, target: Any, args: tuple, kwargs: dict | None, op: str) -> fx.Node:
        """``call`` keeping the user's line on the node (a factorisation a backend may refuse)."""
        if self.track_shapes:
            return self._call_noted(target, args, kwargs, op)
        node = self.graph.create_node(op, target, args, kwargs or {})
        node.meta["pp_location"] = user_location(3)
        return node

    def _call_noted(self, target: Any, args: tuple, kwargs: dict | None, op: str) -> fx.Node:
        """``call`` in a node with dynamic axes: sizes read in Python that become arguments
        are computed in the graph from the inputs' sizes (see shape_reads), and the node
        keeps the user's line (for reports in words)."""
        args = symbolic_args(self, target, args)
        kwargs = symbolic_args(self, target, kwargs) if kwargs else kwargs
        node = self.graph.create_node(op, target, args, kwargs or {})
        node.meta["pp_location"] = user_location(3)
        return node

    def cast(self, node: Any, dtype: torch.dtype) -> fx.Node:
        """Append a cast of ``node`` to ``dtype``."""
        return self.call("to", (node, dtype), None, "call_method")

    def placeholder(self, name: str) -> fx.Node:
        """Add a graph input called ``name`` (inputs come before every other node)."""
        if name in self.input_names:
            raise ValueError(f"input name {name!r} is already used in recorder {self.name!r}")
        graph = self.graph
        with graph.inserting_before(_first_node_not_in(graph, ("placeholder",))):
            if self._fast:  # graph.placeholder(name), its name's snake-casing remembered
                candidate = _CANDIDATES.get(("placeholder", name))
                if candidate is None:
                    if len(_CANDIDATES) > 4096:
                        _CANDIDATES.clear()
                    candidate = _CANDIDATES[("placeholder", name)] = _target_name(graph, name)
                node = graph.create_node("placeholder", name, name=candidate)
            else:
                node = graph.placeholder(name)
        self.input_names.append(name)
        return node

    # -------------------------------------------------------------- constants
    def note_origin(self, value: Any, origin: str) -> None:
        """Remember where an untraced value came from, for when it becomes a constant."""
        self._origins[id(value)] = (value, origin)

    def origin_of(self, value: Any) -> str | None:
        """Return the remembered origin of ``value``, if any."""
        seen = 0
        while value is not None and seen < 32:
            hit = self._origins.get(id(value))
            if hit is not None and hit[0] is value:
                return hit[1] if not seen else f"a view of the {hit[1]}"
            value = getattr(value, "base", None) if isinstance(value, np.ndarray) else None
            seen += 1
        return None

    def constant(self, value: np.ndarray | torch.Tensor, origin: str | None = None) -> fx.Node:
        """Return a ``get_attr`` node holding a copy of ``value``, listed with its origin."""
        hit = self._const_nodes.get(id(value))
        if hit is not None and hit[0] is value:
            return hit[1]
        if origin is None:
            origin = self.origin_of(value) or f"entered the graph at {user_location(2)}"
        if isinstance(value, torch.Tensor):
            tensor = value.detach().as_subclass(torch.Tensor).clone()
        else:
            array = np.asarray(value)
            if array.dtype.byteorder not in ("=", "|"):
                array = array.astype(array.dtype.newbyteorder("="))
            if array.dtype in HELD_AS_INT64:
                array = array.astype(np.int64)
            tensor = torch.from_numpy(np.array(array, copy=True))
        name = f"_const_{len(self._constants)}"
        self.root.register_buffer(name, tensor, persistent=True)
        with self.graph.inserting_before(_first_node_not_in(self.graph, _INPUT_OPS)):
            node = self.graph.get_attr(name)
        self._constants.append(
            ConstantInfo(
                name=name,
                shape=tuple(tensor.shape),
                dtype=str(tensor.dtype).replace("torch.", ""),
                nbytes=tensor.numel() * tensor.element_size(),
                origin=origin,
            )
        )
        self._const_nodes[id(value)] = (value, node)
        return node

    def constants(self) -> list[ConstantInfo]:
        """List the constants recorded so far, with shape, size and origin."""
        return list(self._constants)

    # ---------------------------------------------------------------- finish
    def build(self, output: Any) -> fx.GraphModule:
        """Close the graph on ``output`` (fx nodes nested in tuples/lists/dicts) and
        return it as a GraphModule (see :meth:`seal` and :meth:`module`)."""
        self.seal(output)
        return self.module()

    def seal(self, output: Any) -> None:
        """Close the graph on ``output`` (fx nodes nested in tuples/lists/dicts).

        The recorder is closed afterwards; unused nodes and constants are dropped. The
        GraphModule is not made here: :meth:`module` makes it when first asked for.
        """
        if self.finished:
            raise RuntimeError(f"recorder {self.name!r} was already finished")
        # graph.output(output), its candidate name given: fx's own would snake-case "output"
        self.graph.create_node("output", "output", (output,), name="output")
        _drop_unused(self.graph)
        kept = {n.target for n in self.graph.nodes if n.op == "get_attr"}
        self._constants = [c for c in self._constants if c.name in kept]
        for name in list(self.root._buffers if self._root is not None else ()):
            if name not in kept:
                del self.root._buffers[name]
        self.finished = True
        self.close()

    def module(self) -> fx.GraphModule:
        """The finished graph as a GraphModule, made once, on the first call: fx makes a
        class per GraphModule, which a traced pass need not pay for (export does)."""
        if not self.finished:
            raise RuntimeError(f"recorder {self.name!r} is not finished; call finish() first")
        if self._module is None:
            self._module = _make_graph_module(self.root, self.graph, self.name)
            self._module.meta["pp_first_recorded"] = self.first_recorded
        return self._module

    def close(self) -> None:
        """Deactivate the recorder: its traced values behave like plain data afterwards."""
        if self.active:
            self.active = False
            _ACTIVE_COUNT[0] -= 1

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _drop_unused(graph: fx.Graph) -> None:
    """Remove nodes nobody uses, last to first (recorded calls are functional, so pure)."""
    for node in reversed(graph.nodes):
        if node.op not in ("placeholder", "output") and not node.users:
            graph.erase_node(node)


_INPUT_OPS = ("placeholder", "get_attr")


def _first_node_not_in(graph: fx.Graph, ops: tuple[str, ...]) -> fx.Node:
    """The node before which new inputs (or constants) go: inputs first, then constants."""
    for node in graph.nodes:
        if node.op not in ops:
            return node
    return graph._root  # the sentinel: inserting before it appends


def _make_graph_module(root: torch.nn.Module, graph: fx.Graph, name: str) -> fx.GraphModule:
    """Build the GraphModule; its Python code is generated on first use where torch allows."""
    try:
        from torch.fx._lazy_graph_module import _LazyGraphModule as cls
    except ImportError:  # pragma: no cover - older torch
        cls = fx.GraphModule
    return cls(root, graph, class_name=_class_name(name))


def _class_name(name: str) -> str:
    cleaned = "".join(ch if ch.isalnum() else "_" for ch in name) or "traced"
    return cleaned if cleaned[0].isalpha() else f"g_{cleaned}"
