"""start / stop / session: install a session's patches as one PatchDetails, remove them.

Everything a session replaces goes through :class:`~patchport.patching.PatchDetails`
(interop conversions, watched native functions, the user's FunctionPatches and their
from-import aliases), so it is validated before anything changes, applied all or
nothing, restored in reverse order, and listed with diffs and call counts afterwards.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import types
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from .._stack import user_stacklevel
from ..errors import (
    PatchDefinitionError,
    PatchportWarning,
    PatchStateError,
    PatchTargetError,
    TraceLossError,
    TraceLossWarning,
)
from ..patching import PatchDetails, PatchFamily, PatchInfo
from ..patching.function_patch import FunctionPatch, validate_function_patches
from .aliases import find_aliases, find_aliases_of
from .collector import hold_collector, release_collector
from .dispatch import PatchedCall
from .names import check_start_arguments
from .state import SESSIONS, Session

logger = logging.getLogger("patchport")


def current_session() -> Session | None:
    """The active session, if any."""
    return SESSIONS.current


def last_session() -> Session | None:
    """The active session, or the last one stopped."""
    return SESSIONS.current or SESSIONS.last


def forget_last_session() -> None:
    """Drop the last stopped session (what ``compile_graph`` would compile); no-op if none."""
    SESSIONS.last = None


def require_session(caller: str) -> Session:
    """The active session, or a clear error naming ``caller``."""
    session = SESSIONS.current
    if session is None:
        raise PatchStateError(
            f"{caller}: no tracing session is active; call patchport.start(name) first."
        )
    return session


def session_patches() -> PatchDetails:
    """The patches of the active session, or of the last one (diffs and call counts stay)."""
    session = last_session()
    if session is None:
        raise PatchStateError("session_patches(): no session has been started yet.")
    return session.patches


def _named_patches(names: list[str]) -> list[FunctionPatch]:
    from ..patches import named_patch_sets

    known = named_patch_sets()
    found: list[FunctionPatch] = []
    for name in names:
        if name not in known:
            raise PatchTargetError(
                f"start(patching=[{name!r}]): unknown patch set {name!r}; known sets: "
                f"{', '.join(sorted(known)) or 'none'}."
            )
        found.extend(known[name]())
    return found


def _expand_patching(patching: Iterable[Any] | None) -> list[FunctionPatch]:
    if patching is None:
        return []
    if isinstance(patching, (FunctionPatch, str)):
        raise PatchDefinitionError(
            "start(patching=...) expects a list, e.g. patching=[FunctionPatch(cv2, 'cvtColor', "
            "fn)]; wrap the single patch in a list."
        )
    if not isinstance(patching, Iterable):
        raise PatchDefinitionError(
            f"patchport.start(patching=...): expected a list of FunctionPatch (or patch-set "
            f"names), got {type(patching).__name__} {patching!r}; e.g. "
            f"patching=[FunctionPatch(cv2, 'cvtColor', my_cvt_color)]."
        )
    items = list(patching)
    names = [item for item in items if isinstance(item, str)]
    declared = [item for item in items if not isinstance(item, str)]
    return validate_function_patches(declared + _named_patches(names))


def _interop_patches(patch_aliases: bool = True) -> list[PatchInfo]:
    """The conversion patches, also where user code from-imported them
    (``from torch import from_numpy``)."""
    from ..tracing.interop import interop_patch_infos
    from ..tracing.legacy_tensors import legacy_tensor_patch_infos
    from ..tracing.list_arguments import list_argument_patch_infos

    aliases = find_aliases_of if patch_aliases else None
    infos = interop_patch_infos(aliases, fresh_buffers=True) + list_argument_patch_infos()
    return infos + legacy_tensor_patch_infos(aliases)


def _watch_patches(
    watch: Any, patched: set[tuple[int, str]], watch_aliases: bool = True
) -> list[PatchInfo]:
    from ..tracing.native import default_watched_modules, watch_patch_infos

    if watch is False:
        return []
    if watch is None or watch is True:
        modules = default_watched_modules()
    else:
        modules = list(watch)
        for module in modules:
            if not isinstance(module, types.ModuleType):
                raise PatchDefinitionError(
                    f"start(watch=...): expected modules whose native functions to watch, got "
                    f"{type(module).__name__}; pass e.g. watch=[cv2, my_native_module]."
                )
    return watch_patch_infos(modules, patched, find_aliases_of if watch_aliases else None)


def _function_patches(
    session: Session, declarations: list[FunctionPatch], patch_aliases: bool
) -> list[PatchInfo]:
    infos: list[PatchInfo] = []
    for declaration in declarations:
        original = getattr(declaration.module, declaration.function_name)
        call = PatchedCall(
            declaration, original, session.verify, session.record_nodes, session.record_check
        )
        points = [(declaration.module, declaration.function_name, PatchFamily.USER)]
        aliases = list(find_aliases(original, declaration.module, declaration.function_name))
        if patch_aliases:
            points += [(module, name, PatchFamily.ALIAS) for module, name in aliases]
        else:
            for module, name in aliases:
                message = (
                    f"{module.__name__}.{name} is a from-import of {declaration.target_name} made "
                    f"before the session; with patch_aliases=False calls through it reach the "
                    f"original with traced data (module file {getattr(module, '__file__', '?')})."
                )
                if session.strict:
                    raise TraceLossError(message)
                warnings.warn(message, TraceLossWarning, stacklevel=user_stacklevel())
        infos += [
            PatchInfo(
                call.make_dispatcher(),
                owner,
                name,
                family=family,
                count_calls=False,  # the dispatcher counts traced calls only
                description=f"{declaration.target_name} -> traced replacement",
            )
            for owner, name, family in points
        ]
    return infos


def start(
    name: str,
    save_path: str | Path = ".",
    *,
    patching: Iterable[Any] | None = None,
    global_patching: bool = True,
    strict: bool = False,
    watch: Any = None,
    verbose: bool = False,
    patch_aliases: bool = True,
    verify: bool | None = None,
    dry_run: bool = False,
    non_traced: Iterable[str] | str | None = None,
    max_cached_io: int = 5,
) -> Session:
    """Open a tracing session: validate and apply its patches (all or nothing).

    ``patching`` lists :class:`FunctionPatch` declarations (or names of shipped sets);
    ``watch`` names modules whose native functions warn when traced data reaches them
    (default: cv2; ``False`` turns watching off); ``strict`` turns trace-loss warnings
    into errors. Each traced call of a replacement is also run through the original:
    beyond the patch's declared accuracy it warns (``PatchMismatchWarning``);
    ``verify=True`` raises instead, ``verify=False`` skips the check.
    As in LEAPP: ``dry_run`` traces and writes the YAML but no model, ``non_traced`` names
    nodes described but not exported, ``max_cached_io`` passes per node are kept for
    validation.
    """
    check_start_arguments(name, save_path)
    _check_flags(
        strict=strict,
        verbose=verbose,
        dry_run=dry_run,
        global_patching=global_patching,
        patch_aliases=patch_aliases,
    )
    if verify not in (None, True, False):
        raise PatchDefinitionError(
            f"patchport.start(verify={verify!r}): expected True, False or None (the default: "
            f"warn on a mismatch)."
        )
    options = _leapp_options(dry_run, non_traced, max_cached_io)
    declarations = _expand_patching(patching)
    if declarations and not global_patching:
        raise PatchDefinitionError(
            "patchport.start(patching=..., global_patching=False): function patches replace "
            "module attributes for the whole process, which global_patching=False forbids. "
            "Use global_patching=True (the default) or drop patching=."
        )
    if SESSIONS.current is not None:  # after the arguments are known valid
        _replace_unstopped(name)
    session = Session(
        name=name,
        directory=Path(save_path) / name,
        strict=strict,
        verify=verify,
        verbose=verbose,
        patches=PatchDetails(),
    )
    session.dry_run, session.non_traced, session.max_cached_io = options
    session.collector = hold_collector()  # before the session's own allocations
    try:  # all or nothing, up to the return: an interrupt anywhere leaves no session
        details = session.patches
        details.extend(_interop_patches(patch_aliases))
        if global_patching:
            details.extend(_function_patches(session, declarations, patch_aliases))
        patched = {(id(p.owner), p.attribute) for p in details}
        details.extend(_watch_patches(watch, patched, patch_aliases))
        details.apply()
        session.user_arrays.watch()  # arrays made before the session: see user_arrays
        SESSIONS.current = session
        if verbose:
            logger.setLevel(logging.INFO)
        logger.info("patchport: session %r started with %d patches", name, details.n_patches)
        return session
    except BaseException:
        _release(session, remember=False)
        raise


def _check_flags(**flags: Any) -> None:
    """start()'s on/off options are booleans (0 and 1 accepted): ``strict='yes'`` is refused."""
    for key, value in flags.items():
        if not isinstance(value, (bool, int)) or value not in (0, 1):
            raise PatchDefinitionError(f"patchport.start({key}={value!r}): expected True or False.")


def _leapp_options(
    dry_run: Any, non_traced: Any, max_cached_io: Any
) -> tuple[bool, frozenset, int]:
    """Check start()'s LEAPP options (before anything changes); return them as stored."""
    if isinstance(non_traced, str):
        non_traced = [non_traced]
    try:
        names = list(non_traced or [])
    except TypeError:
        names = [non_traced]
    if not all(isinstance(n, str) for n in names):
        raise PatchDefinitionError(
            f"patchport.start(non_traced={non_traced!r}): expected node names (strings), e.g. "
            f"non_traced=['camera']."
        )
    if isinstance(max_cached_io, bool) or not isinstance(max_cached_io, int) or max_cached_io < 1:
        raise PatchDefinitionError(
            f"patchport.start(max_cached_io={max_cached_io!r}): expected a whole number >= 1 "
            f"(passes kept per node for validation)."
        )
    return bool(dry_run), frozenset(names), max_cached_io


def _replace_unstopped(name: str) -> None:
    """A second ``start`` while a session is active: refused inside ``with session(...)``
    (the block owns it); after a plain ``start`` it ends the old session with a warning and
    drops its nodes, as LEAPP's ``start`` begins a new graph (a failed test, a re-run cell)."""
    old = SESSIONS.current
    if old.scoped:
        raise PatchStateError(
            f"patchport.start({name!r}): session {old.name!r} is still active (its "
            f"`with patchport.session(...)` block owns it); start the new session after the "
            f"block ends."
        )
    warnings.warn(
        f"patchport.start({name!r}): session {old.name!r} was still active (never stopped); "
        f"it is ended now and its nodes are dropped, as LEAPP's start() does. Call "
        f"patchport.stop() first to compile it.",
        PatchportWarning,
        stacklevel=user_stacklevel(),
    )
    try:
        for node in old.nodes.values():
            node.close()
    finally:
        _release_surely(old, remember=False)


def stop() -> Session:
    """Close the active session: unfinished nodes are closed, every patch is restored."""
    return _stop(warn_unfinished=True)


def _stop(warn_unfinished: bool) -> Session:
    """``stop()``; without the unfinished-node warnings when an exception ends the
    session (the exception is the report)."""
    session = require_session("patchport.stop()")
    try:
        for node in session.nodes.values():
            if node.close() and warn_unfinished:  # it was never finished
                warnings.warn(
                    f"patchport.stop(): node {node.name!r} was never finished with "
                    f"annotate.output_tensors({node.name!r}, ...); it will not be exported.",
                    TraceLossWarning,
                    stacklevel=user_stacklevel(),
                )
    finally:
        _release_surely(session, remember=True)
    logger.info("patchport: session %r stopped", session.name)
    return session


def _release_surely(session: Session, remember: bool) -> None:
    """:func:`_release`, run again when an interrupt or error cut it short (it is
    idempotent), so a Ctrl-C inside ``stop()`` leaves no session half-active."""
    try:
        _release(session, remember)
    except BaseException:
        _release(session, remember)
        raise


def _release(session: Session, remember: bool) -> None:
    """Restore the session's patches and unset it; idempotent, so safe to run again.

    ``remember`` keeps it as the last session (for compile_graph) when it was started.
    """
    try:
        try:
            session.user_arrays.restore()  # arrays made before the session, given back
            session.restore_buffers()  # module buffers annotate.module replaced
        finally:
            try:
                session.patches.restore()
            finally:
                release_collector(session.collector)
    finally:
        if SESSIONS.current is session:
            if remember:
                SESSIONS.last = session
            SESSIONS.current = None
        session.active = False


@contextlib.contextmanager
def session(name: str, save_path: str | Path = ".", **options: Any) -> Iterator[Session]:
    """``with patchport.session(...)``: start on entry, stop on exit (exceptions included).

    Interrupt-proof: whatever line a Ctrl-C lands on, the session's patches are restored
    and no session is left active when the exception leaves the ``with``.
    """
    active = None
    try:
        try:
            active = start(name, save_path, **options)
            active.scoped = True
            yield active
        finally:
            if active is not None and SESSIONS.current is active:
                _stop(warn_unfinished=sys.exc_info()[0] is None)
    except BaseException:
        if active is not None:
            _release(active, remember=True)  # finishes a stop() an interrupt cut short
        raise
