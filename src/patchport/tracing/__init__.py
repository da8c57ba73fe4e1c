"""patchport's tracing engine: NumPy and torch code recorded into a ``torch.fx`` graph.

Typical use (a session builds on this)::

    rec = Recorder("preprocess", strict=False)
    x = trace_input(rec, "image", image)        # traced copy; `image` is untouched
    y = (x.astype(np.float32) / 255.0).transpose(2, 0, 1)
    gm = finish(rec, y)                          # torch.fx.GraphModule; rec is closed
    rec.constants()                              # what was frozen, with shapes and origins

Modules, one job each:

- ``recorder``: :class:`Recorder` owns the ``fx.Graph``; ``trace_input`` / ``finish``.
- ``values``: :class:`TracedArray` / :class:`TracedTensor`, ``is_traced``,
  ``contains_traced``, ``plain``; NumPy/torch dtype mapping.
- ``numpy_table``: the one NumPy -> torch table (ufuncs, functions, methods).
- ``numpy_dispatch`` / ``torch_dispatch``: how each traced type records operations.
- ``indexing`` / ``views``: NumPy indexing in torch; aliasing between views and bases.
- ``interop``: traced ``torch.from_numpy`` / ``np.asarray`` ... (``INTEROP_REPLACEMENTS``).
- ``native``: ``watch_natives`` warns when traced data reaches ``cv2`` (or other) functions.
- ``loss`` / ``location``: ``TraceLossWarning`` / ``TraceLossError`` at the user's line.
- ``constants``: :class:`ConstantInfo`.
"""

from __future__ import annotations

from .constants import ConstantInfo
from .interop import REPLACEMENTS as INTEROP_REPLACEMENTS
from .interop import interop_patches
from .loss import report_loss
from .native import watch_natives
from .recorder import Recorder, finish, trace_input
from .values import (
    TracedArray,
    TracedTensor,
    active_recorder,
    contains_traced,
    find_recorder,
    is_traced,
    plain,
)

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
