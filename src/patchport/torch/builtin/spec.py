"""BuiltinPatch: a shipped patch declared by name, resolved against what is installed.

A declaration names its target as text and the versions it was written for, so a
missing target or another version becomes a listed skip with a reason, never an
AttributeError in the middle of an export.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...patching import PatchFamily, PatchInfo, SkippedPatch
from ...patching.declaration import VersionedDeclaration
from ...versions import installed_version


@dataclass(frozen=True)
class BuiltinPatch(VersionedDeclaration):
    """One shipped replacement of ``module.attribute`` (``attribute`` may be ``Class.method``).

    A :class:`~patchport.patching.declaration.PatchDeclaration`: ``resolve()`` gives one
    PatchInfo, or one SkippedPatch saying why not.
    """

    family: PatchFamily
    module: str
    attribute: str
    replacement: Callable[..., Any]
    distribution: str
    versions: str
    why: str
    group: str = "attention"  # the TransformersPatch group of a transformers patch

    @property
    def name(self) -> str:
        """The replacement's function name, which is also the PatchInfo's name."""
        return self.replacement.__name__

    @property
    def target_name(self) -> str:
        """Dotted target, e.g. ``torch._refs._broadcast_shapes``."""
        return f"{self.module}.{self.attribute}"

    def skip_reason(self) -> str | None:
        """Why this patch cannot be applied here, or None when it can."""
        reason = self.version_skip_reason()
        if reason is not None:
            return reason
        try:
            self._owner_and_name()
        except (ImportError, AttributeError) as exc:
            version = installed_version(self.distribution)
            return f"target {self.target_name} not found in {self.distribution} {version}: {exc}"
        return None

    def _owner_and_name(self) -> tuple[Any, str]:
        owner: Any = importlib.import_module(self.module)
        *path, name = self.attribute.split(".")
        for part in path:
            owner = getattr(owner, part)
        if not hasattr(owner, name):
            raise AttributeError(f"{type(owner).__name__} {owner!r} has no attribute {name!r}")
        return owner, name

    def resolve(self, model: Any = None) -> list[PatchInfo | SkippedPatch]:
        """``[PatchInfo]`` ready to apply, or ``[SkippedPatch]`` explaining why not.

        The target is named, not found from a model, so ``model`` is not used.
        """
        reason = self.skip_reason()
        if reason is not None:
            return [SkippedPatch(self.name, self.family, self.target_name, reason)]
        owner, name = self._owner_and_name()
        return [
            PatchInfo.make(
                self.replacement,
                owner,
                name,
                family=self.family,
                versions=self.written_for,
                description=self.why,
            )
        ]
