"""patchport's tracing engine: NumPy and torch code recorded into a ``torch.fx`` graph.

Typical use (a session builds on this)::

    rec = Recorder("preprocess")
    x = trace_input(rec, "image", image)        # traced copy; `image` is untouched
    y = (x.astype(np.float32) / 255.0).transpose(2, 0, 1)
    gm = finish(rec, y)                          # torch.fx.GraphModule
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
