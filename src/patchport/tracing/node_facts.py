"""What LEAPP programs read off a traced value: its node, whether that node is still
tracing, and the output port the value was handed to.

LEAPP's traced types answer ``is_tracing``, ``context`` (the node's name),
``context_obj`` (the node itself), ``output_port`` and ``tensor``; its tests and tools
check a value's state through them. Ours answer the same questions from the value's
:class:`~patchport.tracing.trace_state.TraceState` and its recorder, read-only: setting
them would change nothing we record. ``.data`` keeps its NumPy / torch meaning.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch


class NodeFacts:
    """Read-only node facts of a traced array or tensor (mixed into both traced types)."""

    __slots__ = ()

    @property
    def is_tracing(self) -> bool:
        """True while the node this value belongs to is still recording (before its
        ``output_tensors``); False once it is finished, and for a value of no node."""
        rec = self._pp.rec  # type: ignore[attr-defined]
        return rec is not None and rec.active

    @property
    def context(self) -> str | None:
        """The name of the node this value belongs to (None for a value of no node)."""
        rec = self._pp.rec  # type: ignore[attr-defined]
        return rec.name.partition("#")[0] if rec is not None else None

    @property
    def context_obj(self) -> Any:
        """The node this value belongs to (``ExportManager().nodes[context]``), else None."""
        rec = self._pp.rec  # type: ignore[attr-defined]
        return getattr(rec, "owner", None) if rec is not None else None

    @property
    def output_port(self) -> str | None:
        """The output name this very value was given under to ``output_tensors``, else None."""
        return self._pp.port  # type: ignore[attr-defined]

    @property
    def tensor(self) -> torch.Tensor:
        """The eager data as a plain torch tensor (shared memory where the layout allows)."""
        if isinstance(self, torch.Tensor):
            return self.as_subclass(torch.Tensor)
        array = np.ascontiguousarray(np.ndarray.view(self, np.ndarray))  # type: ignore[call-overload]
        return torch.from_numpy(array)
