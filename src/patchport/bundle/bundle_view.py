"""A read-only view of a bundle's description: nodes in run order, ports, edges, system.

The YAML is read by :func:`~patchport.bundle.spec.read_spec`; this module only gives its
content one shape, whichever layout wrote it: patchport's (``backend``/``model_path``/
``sha256`` on the model, ``data_flow`` as a list of edges, ``system_info``) or LEAPP's
(a ``parameters`` mapping, ``data_flow``/``feedback_flow`` as mappings, ``system
information``). The CLI and the pipeline picture use this view, never raw keys.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .spec import read_spec

# Port keys that describe the value itself; every other key is semantics (LEAPP flattens
# TensorSemantics fields such as kind, element_names, temporal_period_ms into the port).
_VALUE_KEYS = frozenset(
    {"name", "shape", "dtype", "type", "dynamic", "dynamic_dims", "dynamic_axes", "value"}
    | {"dynamic_ranges"}
)
_VALUE_KINDS = frozenset({"torch", "numpy", "tensor", "ndarray"})


@dataclass(frozen=True)
class PortView:
    """One input or output of a node: shape (dynamic dims as names), dtype, semantics."""

    node: str
    name: str
    shape: tuple[Any, ...]
    dtype: str
    dynamic: tuple[int, ...] = ()
    semantics: dict[str, Any] = field(default_factory=dict)
    dim_names: tuple[tuple[int, str], ...] = ()  # (axis, name) from annotate's dynamic=

    @property
    def key(self) -> str:
        """The ``"node/port"`` key used by the pipeline's edges and ``run_policy``."""
        return f"{self.node}/{self.name}"

    def describe(self) -> str:
        """``dtype[d0, d1]`` with dynamic dimensions shown by name (or ``?``)."""
        names = dict(self.dim_names)
        dims = [
            str(d) if i not in self.dynamic or isinstance(d, str) else names.get(i, "?")
            for i, d in enumerate(self.shape)
        ]
        return f"{self.dtype}[{', '.join(dims)}]"


@dataclass(frozen=True)
class NodeView:
    """One exported model: backend, file (relative to the YAML), hash, ports, constants."""

    name: str
    backend: str
    model_path: str
    sha256: str | None
    inputs: tuple[PortView, ...]
    outputs: tuple[PortView, ...]
    constants: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class EdgeView:
    """A connection from an output port to an input port; feedback edges cross run steps."""

    source: str
    target: str
    feedback: bool = False


@dataclass(frozen=True)
class BundleView:
    """Everything a person asks of a bundle before loading its models."""

    path: Path
    name: str
    nodes: dict[str, NodeView]  # in run order
    edges: tuple[EdgeView, ...]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    system: dict[str, Any]
    extra: dict[str, Any] = field(default_factory=dict)

    def port(self, key: str, side: str = "in") -> PortView | None:
        """The input (``side="in"``) or output port named by a ``"node/port"`` key, or None.

        An input and an output may share a name (LEAPP's state ports do), hence ``side``.
        """
        node, _, name = key.partition("/")
        found = self.nodes.get(node)
        if found is None:
            return None
        ports = found.inputs if side == "in" else found.outputs
        return next((p for p in ports if p.name == name), None)

    def model_file(self, node: str) -> Path:
        """Where the model of ``node`` lies, resolved against the YAML's folder."""
        return (self.path.parent / self.nodes[node].model_path).resolve()

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready description (what ``patchport bundle info --json`` prints)."""

        def port(p: PortView) -> dict[str, Any]:
            return {
                "name": p.name,
                "shape": list(p.shape),
                "dtype": p.dtype,
                "dynamic_dims": list(p.dynamic),
                "semantics": p.semantics,
            }

        return {
            "name": self.name,
            "yaml": str(self.path),
            "run_order": list(self.nodes),
            "nodes": [
                {
                    "name": n.name,
                    "backend": n.backend,
                    "model_path": n.model_path,
                    "sha256": n.sha256,
                    "inputs": [port(p) for p in n.inputs],
                    "outputs": [port(p) for p in n.outputs],
                    "constants": list(n.constants),
                }
                for n in self.nodes.values()
            ],
            "data_flow": [
                {"source": e.source, "target": e.target} for e in self.edges if not e.feedback
            ],
            "feedback_flow": [
                {"source": e.source, "target": e.target} for e in self.edges if e.feedback
            ],
            "inputs": list(self.inputs),
            "outputs": list(self.outputs),
            "system_info": self.system,
            **self.extra,
        }


def _shape(raw: Any) -> list[Any]:
    if isinstance(raw, str):  # LEAPP may write a shape as a JSON string
        try:
            raw = json.loads(raw)
        except ValueError:
            return [raw]
    if raw is None:
        return []
    return list(raw) if isinstance(raw, (list, tuple)) else [raw]


def _port(node: str, raw: dict[str, Any]) -> PortView:
    shape = _shape(raw.get("shape"))
    dynamic = {i for i, d in enumerate(shape) if not isinstance(d, int) or d < 0}
    names: tuple[tuple[int, str], ...] = ()
    declared = raw.get("dynamic_axes", raw.get("dynamic_dims", raw.get("dynamic")))
    if isinstance(declared, dict):
        dynamic |= {int(k) for k in declared}
        names = tuple((int(k), v) for k, v in declared.items() if isinstance(v, str))
    elif isinstance(declared, (list, tuple)):
        dynamic |= {int(k) for k in declared if isinstance(k, int) or str(k).isdigit()}
    semantics = {k: v for k, v in raw.items() if k not in _VALUE_KEYS}
    if semantics.get("kind") in _VALUE_KINDS:  # patchport's value kind, not a semantic kind
        semantics.pop("kind")
    return PortView(
        node=node,
        name=str(raw["name"]),
        shape=tuple(shape),
        dtype=str(raw.get("dtype", "?")),
        dynamic=tuple(sorted(dynamic)),
        semantics=semantics,
        dim_names=names,
    )


def _node(name: str, raw: dict[str, Any]) -> NodeView:
    params = raw.get("parameters") or {}
    merged = {**params, **{k: v for k, v in raw.items() if k != "parameters"}}
    return NodeView(
        name=name,
        backend=str(merged.get("backend", "?")),
        model_path=str(merged.get("model_path", "")),
        sha256=merged.get("sha256", merged.get("sha256sum")),
        inputs=tuple(_port(name, p) for p in raw.get("inputs") or []),
        outputs=tuple(_port(name, p) for p in raw.get("outputs") or []),
        constants=tuple(merged.get("constants") or ()),
    )


def _edges(raw: Any, feedback: bool) -> list[EdgeView]:
    """Edges from a list of ``{source, targets}`` or a mapping ``source -> [targets]``."""
    if not raw:
        return []
    items = raw.items() if isinstance(raw, dict) else ((e["source"], e["targets"]) for e in raw)
    edges = []
    for source, targets in items:
        for target in [targets] if isinstance(targets, str) else targets:
            edges.append(EdgeView(str(source), str(target), feedback))
    return edges


def _keys(raw: Any) -> tuple[str, ...]:
    """``"node/port"`` keys from a mapping ``node -> [ports]`` or a list of keys."""
    if not raw:
        return ()
    if isinstance(raw, dict):
        return tuple(f"{node}/{port}" for node, ports in raw.items() for port in ports or [])
    return tuple(str(key) for key in raw)


def _run_order(nodes: list[str], edges: list[EdgeView]) -> list[str]:
    """Nodes after the nodes that feed them forward; among ready nodes the written order
    is kept (the rule of :func:`patchport.bundle.pipeline.run_order`, on the normalised
    edges, whichever layout the YAML has). Feedback edges do not order."""
    needs = {name: set() for name in nodes}
    for edge in edges:
        producer, consumer = edge.source.split("/", 1)[0], edge.target.split("/", 1)[0]
        if not edge.feedback and producer != consumer and consumer in needs:
            needs[consumer].add(producer)
    order: list[str] = []
    while len(order) < len(nodes):
        ready = [n for n in nodes if n not in order and not (needs[n] - set(order))]
        if not ready:
            cycle = sorted(set(nodes) - set(order))
            raise ValueError(f"pipeline nodes {cycle} feed each other forward in a cycle.")
        order.append(ready[0])
    return order


def view_from_spec(spec: dict[str, Any], path: str | Path) -> BundleView:
    """The view of an already parsed description (``path``: where its YAML lies)."""
    path = Path(path)
    pipeline = spec.get("pipeline") or {}
    edges = _edges(pipeline.get("data_flow"), False) + _edges(pipeline.get("feedback_flow"), True)
    nodes = {name: _node(name, raw) for name, raw in (spec.get("models") or {}).items()}
    order = _run_order(list(nodes), edges)
    system = spec.get("system_info") or spec.get("system information") or {}
    known = {"name", "models", "pipeline", "system_info", "system information"}
    extra = {k: v for k, v in spec.items() if k not in known}
    extra.update({k: v for k, v in pipeline.items() if k not in _PIPELINE_KEYS})
    return BundleView(
        path=path,
        name=str(spec.get("name") or path.stem),
        nodes={name: nodes[name] for name in order},
        edges=tuple(edges),
        inputs=_keys(pipeline.get("inputs")),
        outputs=_keys(pipeline.get("outputs")),
        system=dict(system),
        extra=extra,
    )


def load_view(yaml_path: str | Path) -> BundleView:
    """Read a bundle's YAML (patchport's or LEAPP's layout) into a :class:`BundleView`."""
    return view_from_spec(read_spec(Path(yaml_path)), yaml_path)


_PIPELINE_KEYS = frozenset({"data_flow", "feedback_flow", "inputs", "outputs"})
