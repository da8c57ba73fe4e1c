"""Compile into a fresh folder and swap it in only when it is complete.

A compile that fails (an export error, or a strict validation that rejects a model)
must not have replaced the previous bundle of the same name. The new bundle is built
in a hidden sibling folder inside ``save_path``; on success it replaces the old folder
as a whole (so no model file of the old bundle is left behind); on failure the old one
is untouched and the rejected one is kept aside as ``<name>.failed/`` with a report.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

FAILED_SUFFIX = ".failed"
REPORT_NAME = "FAILED.txt"


def build_then_swap(final: Path, build: Callable[[Path], T]) -> T:
    """Run ``build(staging_folder)``; on success move the folder to ``final`` and return
    the result with its paths rebased there; on failure keep ``final`` as it was."""
    final.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{final.name}.compiling-", dir=final.parent))
    try:
        result = build(staging)
    except BaseException as exc:
        aside = _keep_aside(staging, final, exc)
        if isinstance(exc, Exception) and exc.args and isinstance(exc.args[0], str):
            exc.args = (
                f"{exc.args[0]}\nThe previous bundle in {final} is untouched; the rejected "
                f"one is kept in {aside} (see {REPORT_NAME}).",
                *exc.args[1:],
            )
        raise
    _swap_in(staging, final)
    return _rebase(result, staging, final)


def _keep_aside(staging: Path, final: Path, exc: BaseException) -> Path:
    aside = final.with_name(final.name + FAILED_SUFFIX)
    if aside.exists():
        shutil.rmtree(aside)
    staging.rename(aside)
    (aside / REPORT_NAME).write_text(
        f"compile_graph failed; {final} was left as it was.\n\n{type(exc).__name__}: {exc}\n",
        encoding="utf-8",
    )
    return aside


def _swap_in(staging: Path, final: Path) -> None:
    """Replace ``final`` by ``staging``; the old folder is removed only once replaced."""
    previous = None
    if final.exists():
        previous = Path(tempfile.mkdtemp(prefix=f".{final.name}.previous-", dir=final.parent))
        previous.rmdir()
        final.rename(previous)
    try:
        staging.rename(final)
    except BaseException:
        if previous is not None:
            previous.rename(final)
        raise
    if previous is not None:
        shutil.rmtree(previous, ignore_errors=True)


def _rebase(value: Any, old: Path, new: Path) -> Any:
    """``value`` with every path under ``old`` moved under ``new`` (dataclasses, dicts)."""
    if isinstance(value, Path):
        try:
            return new / value.relative_to(old)
        except ValueError:
            return value
    if isinstance(value, dict):
        return {key: _rebase(item, old, new) for key, item in value.items()}
    if isinstance(value, list):
        return [_rebase(item, old, new) for item in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {
            f.name: _rebase(getattr(value, f.name), old, new)
            for f in dataclasses.fields(value)
            if f.init
        }
        return dataclasses.replace(value, **changes)
    return value
