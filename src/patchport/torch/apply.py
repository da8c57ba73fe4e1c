"""apply_patches_for_model: built-in and custom patches around ``torch.export.export``."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import PatchDefinitionError
from ..patching import PatchDetails, PatchInfo, SkippedPatch

logger = logging.getLogger("patchport")


def collect_patches(
    patch_torch: bool = False,
    patch_transformers: Any = False,
    extra_patches: Iterable[PatchInfo] | None = None,
    model: Any = None,
) -> PatchDetails:
    """Build (without applying) the PatchDetails for the requested families.

    With ``model``, transformers patches are also looked for in the model's own modules.
    """
    extras = list(extra_patches or [])
    for index, patch in enumerate(extras):
        if not isinstance(patch, PatchInfo):
            raise PatchDefinitionError(
                f"apply_patches_for_model(extra_patches=...): item {index} is a "
                f"{type(patch).__name__}, not a PatchInfo; build it with "
                f"PatchInfo.make(replacement, module_or_class, 'name', family='custom')."
            )
    details = PatchDetails()
    if patch_torch:
        from .builtin import builtin_patches

        for spec in builtin_patches("torch"):
            for resolved in spec.resolve(model):
                if isinstance(resolved, SkippedPatch):
                    details.skipped.append(resolved)
                else:
                    details.append(resolved)
    if patch_transformers:
        from .transformers_patches import iter_transformers_patches, transformers_groups

        transformers_groups(patch_transformers)  # refuse a wrong value before any import
        for resolved in iter_transformers_patches(model, patch_transformers):
            if isinstance(resolved, SkippedPatch):
                details.skipped.append(resolved)
            else:
                details.append(resolved)
    details.extend(extras)
    return details


def torch_module_type() -> type:
    """``torch.nn.Module``, imported when first needed."""
    import torch

    return torch.nn.Module


@contextmanager
def apply_patches_for_model(
    patch_torch: bool = False,
    patch_transformers: Any = False,
    verbose: int = 0,
    model: Any = None,
    extra_patches: Iterable[PatchInfo] | None = None,
) -> Iterator[PatchDetails]:
    """Apply patches for the duration of the ``with`` block and yield their PatchDetails.

    ``patch_torch`` applies the built-in fixes of torch's symbolic-shape handling;
    ``patch_transformers`` the transformers ones: True for all, or some
    :class:`~patchport.torch.transformers_patches.TransformersPatch` groups (with ``model``,
    also those found from the model's own modules, e.g. its rotary embedding class);
    ``extra_patches`` adds your own :class:`PatchInfo`. With ``model``, every buffer,
    parameter and attribute of the model that changed inside the block is put back on
    exit (what changed is listed in ``details.model_changes``). Everything is restored on
    exit, exceptions included.
    ``patch_transformers=True`` also registers transformers' ``DynamicCache`` as a pytree
    node; that registration is kept, since running the exported program needs it.
    """
    if model is not None and not isinstance(model, torch_module_type()):
        raise PatchDefinitionError(
            f"apply_patches_for_model(model=...): expected a torch.nn.Module, got "
            f"{type(model).__name__}; pass the model you export, or leave model=None."
        )
    details = collect_patches(patch_torch, patch_transformers, extra_patches, model=model)
    for skipped in details.skipped:
        logger.info("patchport: skipped %s (%s): %s", skipped.name, skipped.target, skipped.reason)
    if patch_transformers:
        from .transformers_inputs import register_cache_pytrees

        register_cache_pytrees()
    state = None
    try:
        try:
            if model is not None:
                from .model_state import ModelState

                state = ModelState.capture(model)
            with details:
                if verbose:
                    for patch in details:
                        print(
                            f"[patchport] applied [{patch.family}] {patch.name} on "
                            f"{patch.target_name}"
                        )
                    for skipped in details.skipped:
                        print(
                            f"[patchport] skipped [{skipped.family}] {skipped.name}: "
                            f"{skipped.reason}"
                        )
                yield details
        finally:
            _put_back(details, state)
    except BaseException:
        _put_back(details, state)  # an interrupt may have cut the first one short
        _print_model_changes(details, verbose)
        raise
    _print_model_changes(details, verbose)
    if verbose:
        for patch in details:
            print(f"[patchport] restored {patch.target_name} ({patch.calls} call(s))")


def _print_model_changes(details: PatchDetails, verbose: int) -> None:
    if verbose:
        for change in details.model_changes:
            print(f"[patchport] model state: {change}")


def _put_back(details: PatchDetails, state: Any) -> None:
    """Restore the patches, then the model's state; safe to run again (idempotent)."""
    try:
        details.restore()
    finally:
        if state is not None:
            details.model_changes += state.restore()
