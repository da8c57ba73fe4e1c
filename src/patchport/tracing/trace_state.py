"""What a traced value knows about its trace: one declared, slotted record per value.

Every :class:`~patchport.tracing.values.TracedArray` / ``TracedTensor`` holds one
:class:`TraceState` as its ``_pp`` attribute; the tracing modules read and write these
fields and nothing else on the value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import weakref

    from torch import fx

    from .recorder import Recorder


@dataclass(slots=True, eq=False)
class TraceState:
    """The recorder a value belongs to, the node computing it, and its aliasing links.

    ``node`` is None for a view made outside the dispatch (not recorded yet); ``view_of``
    is ``(base, index)`` when the value shares memory with a traced base (see views);
    ``views`` holds weak references to the value's own live views; ``scalar`` marks a 0-d
    array standing for a NumPy scalar (torch takes those as numbers); ``made_at`` is the
    user's ``(file, line)`` where NumPy copied an untracked array off traced data;
    ``port`` is the output name this very value was given under to ``output_tensors``.
    """

    rec: Recorder | None
    node: fx.Node | None = None
    view_of: tuple[Any, Any] | None = None
    views: list[weakref.ref] | None = None
    scalar: bool = False
    fresh: str | None = None
    made_at: tuple[str, int] | None = None  # where NumPy copied it off traced data unseen
    port: str | None = None  # the output port it was handed to (LEAPP's output_port)
