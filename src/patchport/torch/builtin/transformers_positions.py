"""Sinusoidal position tables that grow in Python, replaced by a table sized for the call.

M2M100, NLLB, XGLM, Speech2Text, SpeechT5, Kosmos-2, MusicGen, SeamlessM4T... keep their
sinusoidal positions in a table buffer and, ``if max_pos > self.weights.size(0)``, rebuild
it larger before reading it. Under ``torch.export`` that branch is a guard on the traced
sizes: the program accepts only sequences (and pasts) that fit the table it was traced
with, while eager grows it for any length. The replacement runs the model's own
``forward`` with, for the call, a table built by the class's own ``get_embedding`` a few
rows longer than any position the call can read (sized from the input and
``cache_length``), so torch proves the branch false for every size and adds no guard.
Rows are computed the same way whatever the table's length, so the positions are the
same values as eager's, bit for bit.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import torch

_INPUTS = ("input_ids", "inputs_embeds", "position_ids")


def grows_sinusoidal_table(module: Any) -> bool:
    """True for a positions module that builds its table with ``get_embedding`` /
    ``make_weights`` and whose ``forward`` takes ``cache_length`` (transformers' idiom)."""
    klass = type(module)
    forward = getattr(klass, "forward", None)
    if not (callable(getattr(klass, "get_embedding", None)) and hasattr(klass, "make_weights")):
        return False
    if not isinstance(getattr(module, "weights", None), torch.Tensor) or forward is None:
        return False
    parameters = inspect.signature(forward).parameters
    return "cache_length" in parameters and any(name in parameters for name in _INPUTS)


def table_sized_for_the_call(forward: Callable[..., Any]) -> Callable[..., Any]:
    """``forward`` of a positions module run with a table long enough for its inputs."""
    signature = inspect.signature(forward)

    def sinusoidal_table_sized_for_the_call(self: Any, *args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        rows = _rows_needed(self, bound.arguments)
        if rows is None:  # a tensor cache length or no input: the model's own code
            return forward(self, *args, **kwargs)
        stored = self._buffers["weights"]
        self._buffers["weights"] = _table(self, rows).to(stored)
        try:
            return forward(self, *args, **kwargs)
        finally:
            self._buffers["weights"] = stored

    sinusoidal_table_sized_for_the_call.__doc__ = table_sized_for_the_call.__doc__
    return sinusoidal_table_sized_for_the_call


def _rows_needed(module: Any, arguments: dict[str, Any]) -> Any:
    """More rows than the highest position the call can read: padding index, offset,
    sequence and cache lengths, plus 2 (every variant's ``max_pos`` is below it)."""
    cache = arguments.get("cache_length", 0)
    if not isinstance(cache, (int, torch.SymInt)):
        return None
    values = next((arguments[n] for n in _INPUTS if arguments.get(n) is not None), None)
    if not isinstance(values, torch.Tensor) or values.dim() < 2:
        return None
    # ids and positions (batch[, codebooks], seq); embeddings (batch, seq, dim)
    seq = values.shape[-2] if values.is_floating_point() else values.shape[-1]
    padding = getattr(module, "padding_idx", None) or 0
    return padding + 1 + getattr(module, "offset", 0) + seq + cache + 2


def _table(module: Any, rows: Any) -> torch.Tensor:
    build = type(module).get_embedding
    if "padding_idx" in inspect.signature(build).parameters:
        return build(rows, module.embedding_dim, module.padding_idx)
    return build(rows, module.embedding_dim)
