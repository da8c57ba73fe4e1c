"""Image sizes in replacements: plain ints, or sizes read from a node's dynamic axes.

A size read from traced data in a node with dynamic axes is an ``int`` subclass whose
arithmetic the recorder keeps; a replacement whose tables depend on the size (resampling
weights) fixes it with :func:`fixed`, which notes why, so compile_graph reports the axis
that became static in words. Shared by every replacement set (OpenCV's, Pillow's).
"""

from __future__ import annotations

from typing import Any


def symbolic(size: Any) -> bool:
    """Whether ``size`` is computed in the graph: a size read from traced data in a node
    with dynamic axes is an ``int`` subclass whose arithmetic the recorder keeps."""
    return type(size) is not int


def fixed(size: Any, why: str) -> int:
    """``size`` as a plain int; a size read from traced data notes ``why`` it is fixed
    (compile_graph reports it in words when the axis is dynamic)."""
    note = getattr(type(size), "_use", None)
    if note is not None:
        note(size, why)
    return int.__int__(size)
