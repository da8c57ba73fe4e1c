"""The data flow between nodes: forward and feedback edges, graph inputs and outputs,
and a run order.

Edges are LEAPP's mapping ``{"node/output": ["node/input", ...]}``. An edge whose
source node finished its first pass before the target node did is forward; any other
(a later node feeding an earlier one, or a node feeding itself) is feedback: its value
reaches the target on the next call.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

Flow = dict[str, list[str]]


def split_edges(
    sources: dict[str, dict[str, str]], index: dict[str, int], outputs: dict[str, list[str]]
) -> tuple[Flow, Flow]:
    """``(data_flow, feedback_flow)`` from each node's ``{input: "node/output"}`` sources.

    A source naming a node or output that does not exist is ignored (the input stays a
    graph input).
    """
    forward: Flow = {}
    feedback: Flow = {}
    for node in sorted(sources, key=index.__getitem__):
        for port, source in sources[node].items():
            producer, _, output = source.partition("/")
            if producer not in index or output not in outputs.get(producer, []):
                continue
            bucket = forward if index[producer] < index[node] else feedback
            bucket.setdefault(source, []).append(f"{node}/{port}")
    return forward, feedback


def merge_flows(*flows: Flow) -> Flow:
    """One mapping holding every edge of the given flows."""
    merged: Flow = {}
    for flow in flows:
        for source, targets in (flow or {}).items():
            merged.setdefault(source, []).extend(targets)
    return merged


def run_order(nodes: Iterable[str], data_flow: Flow) -> list[str]:
    """Nodes sorted so that every node runs after the nodes feeding it forward (Kahn's
    algorithm; among ready nodes the given order is kept). Feedback edges do not order."""
    names = list(nodes)
    needs: dict[str, set[str]] = {name: set() for name in names}
    for source, targets in (data_flow or {}).items():
        producer = source.split("/", 1)[0]
        for target in targets:
            consumer = target.split("/", 1)[0]
            if producer != consumer and consumer in needs:
                needs[consumer].add(producer)
    order: list[str] = []
    while len(order) < len(names):
        ready = [n for n in names if n not in order and not (needs[n] - set(order))]
        if not ready:
            cycle = sorted(set(names) - set(order))
            raise ValueError(
                f"pipeline nodes {cycle} feed each other in a cycle through data_flow; a loop "
                f"must go through feedback_flow."
            )
        order.append(ready[0])
    return order


def graph_ports(
    ports: dict[str, list[str]], flows: Iterable[Flow], side: str
) -> dict[str, list[str]]:
    """Per node, the ports no edge connects: inputs no edge feeds (``side="targets"``) or
    outputs no edge reads (``side="sources"``)."""
    used: set[str] = set()
    for flow in flows:
        for source, targets in flow.items():
            used.update(targets if side == "targets" else [source])
    found: dict[str, list[str]] = {}
    for node, names in ports.items():
        free = [name for name in names if f"{node}/{name}" not in used]
        if free:
            found[node] = free
    return found


def as_edges(flow: Flow) -> list[dict[str, Any]]:
    """The flow as a list of ``{source, targets}`` (for pictures and reports)."""
    return [{"source": source, "targets": list(targets)} for source, targets in flow.items()]
