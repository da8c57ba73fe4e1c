"""Put a model back as it was: its buffers, parameters, submodules and plain attributes.

An export runs the model's Python code, and that code may store what it computed on
the modules (transformers' longrope keeps a tensor attribute, dynamic RoPE re-registers
a buffer). During ``torch.export`` those values are fake tensors, so the eager model
afterwards computes something else, or cannot be exported again. A snapshot taken
before and restored after undoes every such change.

Submodules are state too: BigBird swaps its block-sparse attention module for a full one
on a short input and records the type in an attribute; putting the attribute back and not
the module left them disagreeing (a TypeError on the next long input).

Hooks are state too: transformers installs its output-recording hooks on the first forward
that records outputs and marks the model ``_output_capturing_hooks_installed``. Putting
back the attributes alone removed the mark and kept the hooks, so the next forward
installed them again (SegFormer, whose head always records, then failed). Each module's
hook registries are put back with the rest, in place (handles stay valid).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from ..errors import PatchDefinitionError

_SLOTS = ("_parameters", "_buffers", "_modules")


@dataclass
class _ModuleState:
    module: torch.nn.Module
    attributes: dict[str, Any]
    parameters: dict[str, Any]
    buffers: dict[str, Any]
    buffer_values: dict[str, torch.Tensor]
    submodules: dict[str, Any] = field(default_factory=dict)
    hooks: dict[str, dict[Any, Any]] = field(default_factory=dict)


def _hook_registries(module: torch.nn.Module) -> dict[str, dict[Any, Any]]:
    """The module's hook dictionaries (``_forward_hooks``, ``_forward_pre_hooks``...)."""
    return {
        name: value
        for name, value in vars(module).items()
        if name.startswith("_") and name.endswith("hooks") and isinstance(value, dict)
    }


@dataclass
class ModelState:
    """A snapshot of every submodule of a model; :meth:`restore` puts it back."""

    modules: list[_ModuleState] = field(default_factory=list)
    changes: list[str] = field(default_factory=list)

    @classmethod
    def capture(cls, model: torch.nn.Module) -> ModelState:
        """Record attribute values, parameter and buffer objects, and buffer contents
        (buffers are copied; they are small next to the parameters, which are not)."""
        if not isinstance(model, torch.nn.Module):
            raise PatchDefinitionError(
                f"apply_patches_for_model(model=...): expected a torch.nn.Module, got "
                f"{type(model).__name__}; pass the model you export (or leave model=None)."
            )
        state = cls()
        for module in model.modules():
            attributes = {k: v for k, v in vars(module).items() if k not in _SLOTS}
            buffers = dict(module._buffers)
            values = {
                name: buffer.detach().clone()
                for name, buffer in buffers.items()
                if isinstance(buffer, torch.Tensor) and not _is_fake(buffer)
            }
            hooks = {name: dict(value) for name, value in _hook_registries(module).items()}
            state.modules.append(
                _ModuleState(
                    module,
                    attributes,
                    dict(module._parameters),
                    buffers,
                    values,
                    dict(module._modules),
                    hooks,
                )
            )
        return state

    def restore(self) -> list[str]:
        """Undo every change since :meth:`capture`; return one line per change undone."""
        changes: list[str] = []
        for saved in self.modules:
            module = saved.module
            name = type(module).__name__
            current = {k: v for k, v in vars(module).items() if k not in _SLOTS}
            for key in current.keys() - saved.attributes.keys():
                delattr(module, key)
                changes.append(f"{name}.{key}: removed (added while patched)")
            for key, value in saved.attributes.items():
                if key not in current or current[key] is not value:
                    object.__setattr__(module, key, value)
                    if key not in current or not _same_value(current[key], value):
                        changes.append(f"{name}.{key}: put back")
            changes.extend(_restore_slot(module, "_parameters", saved.parameters, name))
            changes.extend(_restore_slot(module, "_buffers", saved.buffers, name))
            changes.extend(_restore_slot(module, "_modules", saved.submodules, name))
            changes.extend(_restore_hooks(module, saved.hooks, name))
            # written through a detached alias, not under torch.no_grad(): a Ctrl-C at the
            # with-line's exit skips __exit__ and would leave grad mode off for the process
            for key, value in saved.buffer_values.items():
                buffer = module._buffers.get(key)
                if (
                    isinstance(buffer, torch.Tensor)
                    and buffer.shape == value.shape
                    and not torch.equal(buffer, value)
                ):
                    buffer.detach().copy_(value)
                    changes.append(f"{name}.{key}: contents put back")
        self.changes.extend(changes)
        return changes


def _restore_slot(module: torch.nn.Module, slot: str, saved: dict[str, Any], name: str) -> list:
    current = getattr(module, slot)
    changes = []
    for key in list(current.keys() - saved.keys()):
        del current[key]
        changes.append(f"{name}.{key}: removed from {slot[1:]}")
    for key, value in saved.items():
        if current.get(key, _MISSING) is not value:
            current[key] = value
            changes.append(f"{name}.{key}: {slot[1:-1]} put back")
    return changes


def _restore_hooks(module: torch.nn.Module, saved: dict[str, dict], name: str) -> list[str]:
    """Hooks registered since the snapshot removed, hooks removed put back (in the same
    dictionaries, so the handles of the hooks kept still work)."""
    changes = []
    for key, registry in _hook_registries(module).items():
        before = saved.get(key, {})
        if list(registry.items()) != list(before.items()):
            added = len(registry.keys() - before.keys())
            registry.clear()
            registry.update(before)
            changes.append(f"{name}.{key}: {added} hook(s) registered while patched removed")
    return changes


_MISSING = object()


def _same_value(a: Any, b: Any) -> bool:
    """Equal plain values (a dict rebuilt with the same content is no change worth a line);
    tensors and objects without a usable ``==`` count as different."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return False
    try:
        return bool(type(a) is type(b) and a == b)
    except Exception:
        return False


def _is_fake(tensor: torch.Tensor) -> bool:
    from torch._subclasses.fake_tensor import FakeTensor

    return isinstance(tensor, FakeTensor)
