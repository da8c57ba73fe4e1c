"""patchport's tracing engine: NumPy and torch code recorded into a ``torch.fx`` graph.

Typical use (a session builds on this)::

    rec = Recorder("preprocess", strict=False)
    x = trace_input(rec, "image", image)        # traced copy; `image` is untouched
    y = (x.astype(np.float32) / 255.0).transpose(2, 0, 1)
    gm = finish(rec, y)                          # torch.fx.GraphModule; rec is closed
    rec.constants()                              # what was frozen, with shapes and origins

Modules, one job each (each imports only modules listed above it):

- ``constants`` / ``location`` / ``operator_names``: :class:`ConstantInfo`, the user's
  ``file:line``, the binary operators' names.
- ``dtypes``: NumPy <-> torch dtype tables; uint16/32/64 held as int64 in the graph.
- ``trace_state``: :class:`TraceState`, the declared fields each traced value holds.
- ``shape_reads``: sizes read in a node with dynamic axes, and where they were used.
- ``recorder``: :class:`Recorder`, a plain ``fx.Graph`` builder (calls, inputs, constants).
- ``loss``: ``TraceLossWarning`` / ``TraceLossError`` at the user's line.
- ``values``: :class:`TracedArray` / :class:`TracedTensor`, ``is_traced``,
  ``contains_traced``, ``plain``, ``arg_of``.
- ``graph_io``: ``trace_input`` (graph inputs) and ``finish`` (outputs, the GraphModule).
- ``indexing``: NumPy and torch indexing recorded as torch (getitem, functional setitem).
- ``views``: aliasing between views and bases after in-place writes.
- ``numpy_table``: the one NumPy -> torch table (ufuncs, functions, methods).
- ``torch_dispatch`` / ``numpy_dispatch``: how each traced type records operations;
  installed on the traced types here, explicitly.
- ``interop``: traced ``torch.from_numpy`` / ``np.asarray`` ... (``INTEROP_REPLACEMENTS``).
- ``native``: ``watch_natives`` warns when traced data reaches ``cv2`` (or other) functions.
- ``dependence``: does a traced output depend on the graph's inputs.
"""

from __future__ import annotations

from . import numpy_dispatch, torch_dispatch
from .constants import ConstantInfo
from .graph_io import finish, trace_input
from .interop import REPLACEMENTS as INTEROP_REPLACEMENTS
from .interop import interop_patches
from .loss import report_loss
from .native import watch_natives
from .recorder import Recorder
from .values import (
    TracedArray,
    TracedTensor,
    active_recorder,
    contains_traced,
    find_recorder,
    is_traced,
    plain,
)

numpy_dispatch.install(TracedArray)
torch_dispatch.install(TracedTensor)

__all__ = [
    "INTEROP_REPLACEMENTS",
    "ConstantInfo",
    "Recorder",
    "TracedArray",
    "TracedTensor",
    "active_recorder",
    "contains_traced",
    "find_recorder",
    "finish",
    "interop_patches",
    "is_traced",
    "plain",
    "report_loss",
    "trace_input",
    "watch_natives",
]
