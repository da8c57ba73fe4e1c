"""A patched torch builtin still compiles in TorchScript as that builtin, and only while
the patch is applied."""

from __future__ import annotations

import torch
from torch.jit import _builtins

from patchport.patching import PatchInfo


def _shifted(x: torch.Tensor) -> torch.Tensor:
    return x + torch.ones(2)


def test_a_patched_builtin_scripts_as_the_builtin_while_applied():
    original = torch.ones

    def ones(*args, **kwargs):
        return original(*args, **kwargs)

    patch = PatchInfo(ones, torch, "ones")
    patch.do()
    try:
        installed = torch.ones
        assert installed is not original
        scripted = torch.jit.script(_shifted)
        assert torch.equal(scripted(torch.zeros(2)), torch.ones(2))
        assert _builtins._find_builtin(installed) == "aten::ones"
    finally:
        patch.undo()
    assert torch.ones is original
    assert _builtins._find_builtin(installed) is None  # its id may be reused once it is gone
