"""The contract of every shipped patch declaration: ``resolve(model)`` into patches or skips.

A declaration is data (what to replace, with what, written for which versions). Resolving
it against what is installed, and optionally a model, gives ready :class:`PatchInfo`
objects and a :class:`SkippedPatch` with a reason for each one that cannot apply here,
never an AttributeError in the middle of an export. The version check lives here, once.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol, runtime_checkable

from ..versions import installed_version, version_matches
from .patch_details import SkippedPatch
from .patch_info import PatchInfo

Resolved = PatchInfo | SkippedPatch


@runtime_checkable
class PatchDeclaration(Protocol):
    """A shipped patch declared as data; ``resolve`` turns it into patches and skips."""

    name: str
    family: str

    def resolve(self, model: Any = None) -> list[PatchInfo | SkippedPatch]:
        """Ready patches and skipped ones (with reasons) for what is installed and ``model``."""
        ...


def version_skip_reason(distribution: str, versions: str) -> str | None:
    """Why a patch written for ``distribution`` at ``versions`` cannot apply here, or None."""
    version = installed_version(distribution)
    if version is None:
        return f"{distribution} is not installed"
    if not version_matches(version, versions):
        return f"written for {distribution}{versions}, installed {version}"
    return None


class VersionedDeclaration:
    """Base of declarations written for a range of versions of one distribution.

    Subclasses (frozen dataclasses) declare the ``distribution`` and ``versions`` fields.
    """

    distribution: str
    versions: str

    @property
    def written_for(self) -> str:
        """The distribution and version range, e.g. ``torch>=2.13,<2.15``."""
        return f"{self.distribution}{self.versions}"

    def version_skip_reason(self) -> str | None:
        """Why the installed distribution does not fit this declaration, or None."""
        return version_skip_reason(self.distribution, self.versions)


def split_resolved(
    items: Iterable[PatchInfo | SkippedPatch],
) -> tuple[list[PatchInfo], list[SkippedPatch]]:
    """Resolved items as ``(patches, skipped)``, each in the given order."""
    patches: list[PatchInfo] = []
    skipped: list[SkippedPatch] = []
    for item in items:
        (skipped if isinstance(item, SkippedPatch) else patches).append(item)  # type: ignore[arg-type]
    return patches, skipped
