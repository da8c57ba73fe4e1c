"""The data flow between nodes: edges, graph inputs and outputs, and a run order."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def data_flow(sources: dict[str, dict[str, str]]) -> list[dict[str, Any]]:
    """Edges ``{source: "a/out", targets: ["b/in", ...]}`` from each node's input sources."""
    targets: dict[str, list[str]] = {}
    for node, inputs in sources.items():
        for port, source in inputs.items():
            targets.setdefault(source, []).append(f"{node}/{port}")
    return [{"source": source, "targets": sorted(found)} for source, found in targets.items()]


def run_order(nodes: Iterable[str], flow: list[dict[str, Any]]) -> list[str]:
    """Nodes sorted so that every node runs after the nodes feeding it (Kahn's algorithm)."""
    names = list(nodes)
    needs: dict[str, set[str]] = {name: set() for name in names}
    for edge in flow:
        producer = edge["source"].split("/", 1)[0]
        for target in edge["targets"]:
            consumer = target.split("/", 1)[0]
            if producer != consumer:
                needs[consumer].add(producer)
    order: list[str] = []
    ready = [name for name in names if not needs[name]]
    while ready:
        name = ready.pop(0)
        order.append(name)
        for other in names:
            if name in needs[other]:
                needs[other].discard(name)
                if not needs[other] and other not in order and other not in ready:
                    ready.append(other)
    if len(order) != len(names):
        cycle = sorted(set(names) - set(order))
        raise ValueError(f"pipeline nodes {cycle} feed each other in a cycle; cannot order them.")
    return order
