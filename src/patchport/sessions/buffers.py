"""annotate.module: a model's registered buffers traced as node inputs, then sorted.

``forward`` code such as ``self.h = h_out`` (a GRU hidden state) reassigns a buffer:
that buffer becomes recurrent state. A buffer left as it was is baked into the graph
as a constant. Either way the model gets plain buffers back afterwards.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from ..tracing import Recorder
from .verify import plain_copy


class BufferTracker:
    """Swaps a module's buffers for traced inputs, tells which were reassigned, restores."""

    def __init__(
        self, model: torch.nn.Module, names: list[str] | None, only: list[str] | None = None
    ) -> None:
        self.model = model
        self.names = None if names is None else set(names)
        self.only = only  # on a later pass: just the buffers that were state in the first
        self.slots: dict[str, tuple[torch.nn.Module, str, torch.Tensor, Any, bool]] = {}

    def inject(self, declare: Callable[[dict[str, torch.Tensor]], dict[str, Any]]) -> None:
        """Declare each tracked buffer as an input (``a.b`` is named ``a_b``) and put the
        traced value in its place on the module."""
        found: dict[str, tuple[torch.nn.Module, str, torch.Tensor]] = {}
        for full_name, buffer in self.model.named_buffers():
            clean = full_name.replace(".", "_")
            if self.names is not None and full_name not in self.names:
                continue
            if self.only is not None and clean not in self.only:
                continue
            *path, attribute = full_name.split(".")
            owner = self.model.get_submodule(".".join(path)) if path else self.model
            found[clean] = (owner, attribute, buffer)
        if self.names is not None:
            known = {name for name, _ in self.model.named_buffers()}
            unknown = sorted(self.names - known)
            if unknown:
                from ..errors import PatchDefinitionError

                raise PatchDefinitionError(
                    f"annotate.module(..., buffer_names={sorted(self.names)}): {unknown} are not "
                    f"registered buffers of {type(self.model).__name__}; it has {sorted(known)}."
                )
        if not found:
            return
        traced = declare({clean: buffer for clean, (_, _, buffer) in found.items()})
        for clean, (owner, attribute, buffer) in found.items():
            persistent = attribute not in owner._non_persistent_buffers_set
            setattr(owner, attribute, traced[clean])
            self.slots[clean] = (owner, attribute, buffer, traced[clean], persistent)

    def collect(self) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
        """``({name: new value} for reassigned buffers, {name: original} for the others)``."""
        changed, unchanged = {}, {}
        for clean, (owner, attribute, original, traced, _) in self.slots.items():
            current = getattr(owner, attribute)
            if current is traced:
                unchanged[clean] = original
            else:
                changed[clean] = current
        return changed, unchanged

    def restore(self) -> None:
        """Plain buffers back on the module: reassigned ones keep their new eager value."""
        for owner, attribute, original, traced, persistent in self.slots.values():
            current = getattr(owner, attribute)
            value = original if current is traced or current is None else plain_copy(current)
            owner.register_buffer(attribute, value, persistent=persistent)
        self.slots.clear()


def bake_input(recorder: Recorder, name: str, value: torch.Tensor) -> None:
    """Replace graph input ``name`` by a constant holding ``value`` (an unchanged buffer)."""
    graph = recorder.graph
    placeholder = next(n for n in graph.nodes if n.op == "placeholder" and n.target == name)
    constant = recorder.constant(value, origin=f"buffer {name!r} of an annotate.module model")
    placeholder.replace_all_uses_with(constant)
    graph.erase_node(placeholder)
    recorder.input_names.remove(name)
