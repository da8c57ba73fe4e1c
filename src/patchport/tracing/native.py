"""Watch native functions (OpenCV's and SciPy's by default) for traced data reaching them
unpatched.

Native code reads an array's memory directly, so a traced value passed to it leaves the
trace. While watching, each public function of the watched modules, of their native
submodules (``cv2.fisheye``) and each native method of their classes (``CLAHE.apply``,
``StereoMatcher.compute``) is wrapped, and so is every C or Cython function of SciPy's
private compiled modules already imported (``Rotation``'s Cython backend, ``ndimage``'s
and ``signal``'s C code, which SciPy's Python code hands the user's arrays): a call
that receives traced data warns (or raises when strict), runs on plain data, and its
result's origin is remembered in case it later enters the graph as a constant.
:func:`watch_patch_infos` builds the wrappers as PatchInfo objects (what a session
installs); :func:`watch_natives` applies them for a block (the engine's tests).
"""

from __future__ import annotations

import contextlib
import importlib.machinery
import sys
import types
from collections.abc import Callable, Collection, Iterable, Iterator
from typing import Any

import numpy as np
import torch

from ..patching import PatchDetails, PatchFamily, PatchInfo
from ..patching.source_diff import wraps_original
from .loss import report_loss
from .recorder import _ACTIVE_COUNT
from .values import active_recorder, find_recorder, plain, plain_tree
from .views import rebind

_CALLABLE_TYPES = (types.BuiltinFunctionType, types.FunctionType)
# Cython's function types (SciPy's compiled backends), known by name: each Cython release
# makes its own class
_CYTHON_FUNCTIONS = frozenset({"cython_function_or_method", "fused_cython_function"})
# compiled packages whose loaded extension modules are watched by default, every function
# of a private one (``scipy.spatial.transform._rotation_cy.from_rotvec``) included
_NATIVE_PACKAGES = ("scipy.",)


_SCIPY_HINT = ' (patching=[..., "scipy"] traces the SciPy calls robotics code makes, docs/scipy.md)'


def make_watcher(qualname: str, original: Callable) -> Callable:
    """Wrap one native callable: traced arguments warn, run on plain data, results noted."""

    hint = _SCIPY_HINT if qualname.startswith("scipy.") else ""

    def watched(*args: Any, **kwargs: Any) -> Any:
        if not _ACTIVE_COUNT[0]:
            return original(*args, **kwargs)
        rec = find_recorder(args, kwargs)
        if rec is None:
            return original(*args, **kwargs)
        where = report_loss(rec, f"traced data passed to native {qualname}() without a patch{hint}")
        traced = [v for v in (*args, *kwargs.values()) if active_recorder(v) is rec]
        before = [np.array(plain(v), copy=True) for v in traced]
        result = original(*plain_tree(args), **plain_tree(kwargs))
        for value, old in zip(traced, before):
            _freeze_if_written(rec, value, old, f"{qualname}() at {where}")
        origin = f"result of native {qualname}() called at {where}"
        for item in result if isinstance(result, (tuple, list)) else (result,):
            if isinstance(item, (np.ndarray, torch.Tensor)):
                rec.note_origin(item, origin)
        return result

    watched = wraps_original(original)(watched)  # invisible to plain code
    watched._pp_watcher = True  # type: ignore[attr-defined]
    return watched


def _freeze_if_written(rec: Any, value: Any, old: np.ndarray, what: str) -> None:
    """A native call wrote into traced data (dst=...): its new content becomes a constant."""
    new = np.array(plain(value), copy=True)
    if new.shape == old.shape and np.array_equal(new, old, equal_nan=new.dtype.kind in "fc"):
        return
    report_loss(rec, f"native {what} wrote into traced data")
    if isinstance(value, torch.Tensor):
        new = torch.from_numpy(new)
    rebind(value, rec.constant(new, origin=f"data written by native {what}"))


def _is_native_function(value: Any) -> bool:
    """A plain or native function (C, Cython), not yet a watcher; classes, ufuncs (which
    dispatch to the trace themselves) and f2py's Fortran objects are not."""
    if isinstance(value, _CALLABLE_TYPES):
        return not getattr(value, "_pp_watcher", False)
    return type(value).__name__ in _CYTHON_FUNCTIONS


def _private_extension(module: types.ModuleType) -> bool:
    """A compiled module private to its package (``scipy.signal._sigtools``): its package
    calls all of its functions, underscored ones included."""
    name = module.__name__
    path = getattr(module, "__file__", None) or ""
    compiled = path.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))
    return compiled and any(part.startswith("_") for part in name.split(".")[1:])


def watchable_names(module: types.ModuleType, skip: Iterable[str] = ()) -> list[str]:
    """Public plain or native functions of ``module`` (classes, constants, submodules
    excluded); every function of a private compiled module, underscored ones included."""
    skipped = set(skip)
    private = _private_extension(module)
    names = []
    for name, value in vars(module).items():
        if name.startswith("__") or name in skipped or (name.startswith("_") and not private):
            continue
        if not _is_native_function(value):
            continue
        if private and getattr(value, "__module__", None) != module.__name__:
            continue  # what it imports (warnings.warn in a Cython module) is not its own
        names.append(name)
    return names


def loaded_native_modules(prefixes: tuple[str, ...] = _NATIVE_PACKAGES) -> list[types.ModuleType]:
    """Private compiled modules of ``prefixes``' packages already imported (SciPy's Cython
    and C backends, which its Python code hands the user's arrays): code that reaches them
    with traced data reads its memory with no hook. Public compiled modules
    (``scipy.special.cython_special``) are for Cython's cimport, not left to watch."""
    return [
        module
        for name, module in list(sys.modules.items())
        if name.startswith(prefixes)
        and isinstance(module, types.ModuleType)
        and _private_extension(module)
    ]


def native_submodules(module: types.ModuleType) -> list[types.ModuleType]:
    """Submodules of ``module``'s own package with native functions (``cv2.fisheye``)."""
    prefix = f"{module.__name__}."
    found = []
    for name, value in vars(module).items():
        if name.startswith("_") or not isinstance(value, types.ModuleType):
            continue
        if value.__name__.startswith(prefix) and any(
            isinstance(v, types.BuiltinFunctionType) for v in vars(value).values()
        ):
            found.append(value)
    return found


def native_classes(modules: Iterable[types.ModuleType]) -> list[type]:
    """Classes of ``modules`` with native methods (``cv2.CLAHE``, ``cv2.StereoMatcher``)."""
    seen: dict[int, type] = {}
    for module in modules:
        for value in vars(module).values():
            if isinstance(value, type) and id(value) not in seen and _native_methods(value):
                seen[id(value)] = value
    return list(seen.values())


def _native_methods(cls: type) -> list[str]:
    """Public native methods defined by ``cls`` itself (inherited ones are its bases')."""
    return [
        name
        for name, value in vars(cls).items()
        if not name.startswith("_") and isinstance(value, types.MethodDescriptorType)
    ]


def watch_points(module: types.ModuleType) -> list[tuple[str, Any, str]]:
    """``(qualname, owner, attribute)`` of every native callable ``module`` offers: its
    functions, its native submodules' functions and its classes' native methods."""
    points = [(f"{module.__name__}.{name}", module, name) for name in watchable_names(module)]
    submodules = native_submodules(module)
    for sub in submodules:
        for name, value in vars(sub).items():
            if not name.startswith("_") and isinstance(value, types.BuiltinFunctionType):
                if not getattr(value, "_pp_watcher", False):
                    points.append((f"{sub.__name__}.{name}", sub, name))
    for cls in native_classes([module, *submodules]):
        if _private_extension(module) and cls.__module__ != module.__name__:
            continue  # a class it imports (np.float64 in a Cython module) is not its own
        owner = cls.__module__ if cls.__module__.startswith(module.__name__) else module.__name__
        for name in _native_methods(cls):
            points.append((f"{owner}.{cls.__name__}.{name}", cls, name))
    return points


def default_watched_modules() -> list[types.ModuleType]:
    """The modules watched unless told otherwise: ``cv2`` when OpenCV is installed, and
    SciPy's compiled modules already imported (``Rotation``'s Cython backend, the
    ``ndimage`` and ``signal`` C code)."""
    try:
        import cv2
    except ImportError:  # pragma: no cover - OpenCV not installed
        return loaded_native_modules()
    return [cv2, *loaded_native_modules()]


def watch_patch_infos(
    modules: Iterable[types.ModuleType],
    exclude: Collection[tuple[int, str]] = (),
    aliases: Callable[[dict[int, Any]], Iterable[tuple[Any, str, Any]]] | None = None,
) -> list[PatchInfo]:
    """One watcher PatchInfo (family ``watch``) per watchable function of ``modules``.

    ``exclude`` holds ``(id(owner), name)`` targets left alone (patched otherwise); with
    ``aliases``, user-code from-imports of the originals (``from cv2 import erode``,
    found by ``aliases(originals)``) are watched too.
    """
    points: list[tuple[str, Any, str]] = []
    watched: dict[int, Any] = {}
    qualnames: dict[int, str] = {}
    taken: set[tuple[int, str]] = set()
    for module in modules:
        for qualname, owner, name in watch_points(module):
            if (id(owner), name) in exclude or (id(owner), name) in taken:
                continue
            taken.add((id(owner), name))
            original = vars(owner)[name]
            watched[id(original)] = original
            qualnames[id(original)] = qualname
            points.append((qualname, owner, name))
    if aliases is not None and watched:
        # an "alias" may be a watched slot itself (OpenCV 4's cv2.dnn functions name
        # another __module__): one watcher per slot
        seen = {(id(owner), name) for _, owner, name in points}
        for module, name, original in aliases(watched):
            if (id(module), name) not in exclude and (id(module), name) not in seen:
                seen.add((id(module), name))
                points.append((qualnames[id(original)], module, name))
    return [
        PatchInfo(
            _watcher_at(qualname, owner, name),
            owner,
            name,
            family=PatchFamily.WATCH,
            count_calls=False,
            description="warns when traced data reaches native code",
        )
        for qualname, owner, name in points
    ]


# (id(owner), name) -> (original, its watcher): a session's start() builds ~1800 watchers
# (cv2), the same functions each time; later sessions in the process reuse them, so start()
# does a third less work and leaves the first traced pass less to catch up on (bounded)
_WATCHERS: dict[tuple[int, str], tuple[Any, str, Callable]] = {}


def _watcher_at(qualname: str, owner: Any, name: str) -> Callable:
    """The watcher of ``owner.name``: made once per install point and original (one
    object per point, as each PatchInfo marks the object it installs)."""
    original = vars(owner)[name]
    key = (id(owner), name)
    hit = _WATCHERS.get(key)
    if hit is None or hit[0] is not original or hit[1] != qualname:
        if len(_WATCHERS) > 16384:
            _WATCHERS.clear()
        hit = _WATCHERS[key] = (original, qualname, make_watcher(qualname, original))
    return hit[2]


@contextlib.contextmanager
def watch_natives(
    modules: Iterable[types.ModuleType] | None = None, skip: Iterable[str] = ()
) -> Iterator[list[tuple[types.ModuleType, str]]]:
    """Wrap native functions (default: ``cv2``'s) for the block; yields what was wrapped.

    Install this before function patches so that a patch sees traced calls first.
    Restores only attributes that still hold our wrapper.
    """
    chosen = default_watched_modules() if modules is None else list(modules)
    exclude = {(id(module), name) for module in chosen for name in skip}
    with PatchDetails(watch_patch_infos(chosen, exclude)) as details:
        yield [(patch.owner, patch.attribute) for patch in details]
