"""LEAPP's traced types by their LEAPP names, for ``isinstance`` checks.

``TracedTensor`` is patchport's traced ``torch.Tensor``, ``TracedNpArray`` its traced
``np.ndarray``; ``TracedData`` is true for either (LEAPP's common base).
"""

from __future__ import annotations

from abc import ABC

from ...tracing.values import TracedArray as TracedNpArray
from ...tracing.values import TracedTensor


class TracedData(ABC):  # noqa: B024 - a virtual base: only isinstance/issubclass use it
    """True for a traced tensor or a traced NumPy array (LEAPP's ``TracedData``)."""


TracedData.register(TracedTensor)
TracedData.register(TracedNpArray)

__all__ = ["TracedData", "TracedNpArray", "TracedTensor"]
