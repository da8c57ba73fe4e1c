"""apply_patches_for_model: built-in and custom patches around ``torch.export.export``."""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import PatchDefinitionError, PatchportWarning
from ..patching import PatchDetails, PatchInfo, SkippedPatch
from ..verbose import say

logger = logging.getLogger(__name__)


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
    *,
    tracing: bool = False,
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
    Each patch applied, skipped or restored is an INFO record of the ``patchport.torch``
    loggers; ``verbose`` also prints those lines on stdout. ``tracing`` is yobx's switch
    for patches of ``torch.fx.symbolic_trace``; patchport ships none, so ``tracing=True``
    warns and applies the same patches as ``tracing=False``.
    """
    if tracing:
        warnings.warn(
            "apply_patches_for_model(tracing=True): patchport ships no patches for "
            "torch.fx symbolic tracing; the export patches are applied as with "
            "tracing=False. Use torch.export (or patchport.torch.export) on the model.",
            PatchportWarning,
            stacklevel=3,
        )
    if model is not None and not isinstance(model, torch_module_type()):
        raise PatchDefinitionError(
            f"apply_patches_for_model(model=...): expected a torch.nn.Module, got "
            f"{type(model).__name__}; pass the model you export, or leave model=None."
        )
    details = collect_patches(patch_torch, patch_transformers, extra_patches, model=model)
    for skipped in details.skipped:
        logger.debug("skipped %s (%s): %s", skipped.name, skipped.target, skipped.reason)
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
                for patch in details:
                    say(logger, verbose, "applied [%s] %s on %s", *_names(patch))
                for skipped in details.skipped:
                    say(logger, verbose, "skipped [%s] %s: %s", *_names(skipped))
                yield details
        finally:
            _put_back(details, state)
    except BaseException:
        _put_back(details, state)  # an interrupt may have cut the first one short
        _print_model_changes(state, verbose)
        raise
    _print_model_changes(state, verbose)
    for patch in details:
        say(logger, verbose, "restored %s (%d call(s))", patch.target_name, patch.calls)


def _names(patch: PatchInfo | SkippedPatch) -> tuple[str, str, str]:
    """``(family, name, target)`` of an applied patch, ``(family, name, reason)`` of a
    skipped one: what the applied/skipped lines show."""
    if isinstance(patch, SkippedPatch):
        return patch.family, patch.name, patch.reason
    return patch.family, patch.name, patch.target_name


def _print_model_changes(state: Any, verbose: int) -> None:
    for change in state.changes if state is not None else ():
        say(logger, verbose, "model state: %s", change)


def _put_back(details: PatchDetails, state: Any) -> None:
    """Restore the patches, then the model's state; safe to run again (idempotent).

    What was put back stays listed in ``state.changes``; the yielded details show it as
    their read-only ``model_changes`` (kept for compatibility).
    """
    try:
        details.restore()
    finally:
        if state is not None:
            state.restore()
            details._model_changes = tuple(state.changes)


@contextmanager
def apply_patches(
    patch_torch: bool = False, patch_transformers: Any = False, verbose: int = 0
) -> Iterator[list[PatchInfo]]:
    """yobx's ``apply_patches``: the patches of :func:`apply_patches_for_model`, yielded as a
    plain list of the applied :class:`PatchInfo` (use ``apply_patches_for_model`` for the
    report, the skipped patches and the model's restored state)."""
    with apply_patches_for_model(
        patch_torch=patch_torch, patch_transformers=patch_transformers, verbose=verbose
    ) as details:
        yield list(details.patched)
