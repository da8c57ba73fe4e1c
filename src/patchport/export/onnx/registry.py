"""The emitter table: torch function name -> the function writing its ONNX nodes.

An emitter takes the :class:`~.builder.Builder`, the eager result and the call's arguments
and returns the ONNX value name of the result. Each op-family module registers its own
with :func:`emits` when imported; the driver imports them all."""

from __future__ import annotations

from collections.abc import Callable

Emitter = Callable[..., str]
TABLE: dict[str, Emitter] = {}


def emits(*names: str) -> Callable[[Emitter], Emitter]:
    """Decorator: register the emitter under each torch function name in ``names``."""

    def register(fn: Emitter) -> Emitter:
        for name in names:
            TABLE[name] = fn
        return fn

    return register
