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
    patch_transformers: bool = False,
    extra_patches: Iterable[PatchInfo] | None = None,
) -> PatchDetails:
    """Build (without applying) the PatchDetails for the requested families."""
    extras = list(extra_patches or [])
    for index, patch in enumerate(extras):
        if not isinstance(patch, PatchInfo):
            raise PatchDefinitionError(
                f"apply_patches_for_model(extra_patches=...): item {index} is a "
                f"{type(patch).__name__}, not a PatchInfo; build it with "
                f"PatchInfo.make(replacement, module_or_class, 'name', family='custom')."
            )
    details = PatchDetails()
    families = [
        name
        for name, wanted in (("torch", patch_torch), ("transformers", patch_transformers))
        if wanted
    ]
    if families:
        from .builtin import builtin_patches

        for family in families:
            declared = builtin_patches(family)
            if family == "transformers" and not declared:
                details.skipped.append(
                    SkippedPatch(
                        "*",
                        "transformers",
                        "transformers",
                        "this release ships no transformers patches yet; patch_transformers=True "
                        "applies nothing",
                    )
                )
            for spec in declared:
                resolved = spec.resolve()
                if isinstance(resolved, SkippedPatch):
                    details.skipped.append(resolved)
                else:
                    details.append(resolved)
    details.extend(extras)
    return details


@contextmanager
def apply_patches_for_model(
    patch_torch: bool = False,
    patch_transformers: bool = False,
    verbose: int = 0,
    model: Any = None,
    extra_patches: Iterable[PatchInfo] | None = None,
) -> Iterator[PatchDetails]:
    """Apply patches for the duration of the ``with`` block and yield their PatchDetails.

    ``patch_torch`` applies the built-in fixes of torch's symbolic-shape handling;
    ``patch_transformers`` is accepted (its patches come later); ``extra_patches`` adds
    your own :class:`PatchInfo`. Everything is restored on exit, exceptions included.
    ``model`` is reserved for model-aware patches and state restoration.
    """
    details = collect_patches(patch_torch, patch_transformers, extra_patches)
    for skipped in details.skipped:
        logger.info("patchport: skipped %s (%s): %s", skipped.name, skipped.target, skipped.reason)
    with details:
        if verbose:
            for patch in details:
                print(f"[patchport] applied [{patch.family}] {patch.name} on {patch.target_name}")
            for skipped in details.skipped:
                print(f"[patchport] skipped [{skipped.family}] {skipped.name}: {skipped.reason}")
        yield details
    if verbose:
        for patch in details:
            print(f"[patchport] restored {patch.target_name} ({patch.calls} call(s))")
