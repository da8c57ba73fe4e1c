"""Which graph nodes were produced by which patch, read from the nodes' stack traces."""

from __future__ import annotations

import os
import re
from typing import Any

from .patch_info import PatchInfo
from .source_diff import source_span

_FRAME = re.compile(r'File "([^"]+)", line (\d+)')


def _same_file(a: str, b: str) -> bool:
    return os.path.normcase(os.path.abspath(a)) == os.path.normcase(os.path.abspath(b))


def nodes_by_patch(patches: list[PatchInfo], graph: Any) -> dict[PatchInfo, list[Any]]:
    """Map each patch to the nodes whose ``meta["stack_trace"]`` passes through its source."""
    if not hasattr(graph, "nodes"):
        raise TypeError(
            f"patches_involved_in_graph(graph=...): expected an object with .nodes (for example "
            f"ExportedProgram.graph), got {type(graph).__name__}."
        )
    spans = [(patch, source_span(patch.patch)) for patch in patches]
    spans = [(patch, span) for patch, span in spans if span is not None]
    found: dict[PatchInfo, list[Any]] = {}
    for node in graph.nodes:
        meta = getattr(node, "meta", None)
        if not isinstance(meta, dict):
            raise TypeError(
                f"patches_involved_in_graph: node {getattr(node, 'name', node)!r} has no .meta "
                f"dict; each node needs meta['stack_trace'] to be matched."
            )
        stack = meta.get("stack_trace")
        if not stack:
            continue
        frames = [(name, int(line)) for name, line in _FRAME.findall(stack)]
        for patch, (filename, first, last) in spans:
            if any(first <= line <= last and _same_file(name, filename) for name, line in frames):
                nodes = found.setdefault(patch, [])
                if not nodes or nodes[-1] is not node:
                    nodes.append(node)
    return found
