"""Cache layers that start empty without a constant tensor.

``DynamicLayer.lazy_initialization`` starts keys and values as ``torch.tensor([])``. Traced
by ``torch.export`` (the cache is rebuilt from its inputs inside the program), each becomes
a lifted constant, and ``torch.onnx.export(program)`` then fails while decomposing the
program ("Constant tensor lifted_tensor_N is not in the constants dictionary"). The
replacement makes the same empty tensors from the incoming states, as graph operations.
"""

from __future__ import annotations

from typing import Any

import torch


def lazy_initialization_without_constants(
    self: Any, key_states: torch.Tensor, value_states: torch.Tensor
) -> None:
    """``DynamicLayer.lazy_initialization`` with ``new_empty(0)`` instead of ``tensor([])``."""
    self.device = key_states.device
    self.keys = key_states.new_empty((0,))
    self.values = value_states.new_empty((0,))
    self.is_initialized = True
