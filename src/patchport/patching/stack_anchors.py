"""Keep replacement frames in exported nodes' stack traces.

Recent torch versions record only ``forward`` frames (plus registered anchors) in
``node.meta["stack_trace"]`` during export, which would hide every node a replacement
creates. While patches are applied, their code is registered as an anchor; the set is
put back as it was on restore. Nothing happens when torch is not imported.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

from .patch_info import PatchInfo


def _anchor_set() -> set[tuple[str, str]] | None:
    if "torch" not in sys.modules:
        return None
    try:
        import torch.fx.proxy as fx_proxy
    except ImportError:  # pragma: no cover - torch without fx
        return None
    anchors = getattr(fx_proxy, "_STACK_TRACE_ANCHORS", None)
    return anchors if isinstance(anchors, set) else None


def add_stack_anchors(patches: Iterable[PatchInfo], added: list[tuple[str, str]]) -> None:
    """Register each replacement's code as an anchor, listing in ``added`` what it added.

    An entry is listed before it is added, so an interrupt cannot leave an anchor that
    :func:`remove_stack_anchors` does not know about.
    """
    anchors = _anchor_set()
    if anchors is None:
        return
    for patch in patches:
        func: Any = getattr(patch.patch, "__func__", patch.patch)
        code = getattr(func, "__code__", None)
        if code is None:
            continue
        key = (code.co_filename, code.co_name)
        if key not in anchors:
            added.append(key)
            anchors.add(key)


def remove_stack_anchors(added: Iterable[tuple[str, str]]) -> None:
    """Remove the anchors :func:`add_stack_anchors` added, leaving others' entries alone."""
    anchors = _anchor_set()
    if anchors is not None:
        for key in added:
            anchors.discard(key)
