"""Compile into a fresh folder and swap it in only when it is complete.

A compile that fails (an export error, or a strict validation that rejects a model)
must not have replaced the previous bundle of the same name. The new bundle is built
in a hidden sibling folder inside ``save_path``; on success it replaces the old folder
as a whole (so no model file of the old bundle is left behind); on failure the old one
is untouched and the rejected one is kept aside as ``<name>.failed/`` with a report. A
compile cancelled with Ctrl-C leaves only the previous bundle (no ``.failed``, no
staging folder).
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
    staging = previous = None
    try:  # one try: an interrupt between two statements here is caught too
        staging = Path(tempfile.mkdtemp(prefix=f".{final.name}.compiling-", dir=final.parent))
        result = build(staging)
        previous = _swap_in(staging, final)
        _remove(previous)
        return _rebase(result, staging, final)
    except Exception as exc:
        if staging is None or not staging.exists():  # nothing built, or swapped in already
            raise
        aside = _keep_aside(staging, final, exc)
        if exc.args and isinstance(exc.args[0], str):
            exc.args = (
                f"{exc.args[0]}\nThe previous bundle in {final} is untouched; the rejected "
                f"one is kept in {aside} (see {REPORT_NAME}).",
                *exc.args[1:],
            )
        raise
    except BaseException:  # Ctrl-C: a cancelled compile, not a rejected one; leave nothing
        _remove(staging)  # a no-op once swapped in
        _remove(previous)  # the old bundle, once the new one is in place
        raise


def _remove(folder: Path | None) -> None:
    """Delete ``folder`` (if any), again if an interrupt cut the first try short."""
    try:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
    except BaseException:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
        raise


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


def _swap_in(staging: Path, final: Path) -> Path | None:
    """Replace ``final`` by ``staging``; return where the old folder went (to delete).

    Interrupted at any line, ``final`` is the old complete folder or the new one."""
    previous = None
    try:
        if final.exists():
            previous = Path(tempfile.mkdtemp(prefix=f".{final.name}.previous-", dir=final.parent))
            previous.rmdir()
            final.rename(previous)
        staging.rename(final)
        return previous
    except BaseException:
        if previous is not None and previous.exists():
            if final.exists():
                _remove(previous)  # the new folder is in place: the old one goes
            else:
                previous.rename(final)  # put the old one back
        raise


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
