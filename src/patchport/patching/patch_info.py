"""PatchInfo: one reversible replacement of one attribute of a module or class.

A PatchInfo knows its target, the original it replaced, how often the replacement was
called while applied, and the diff between the two sources. Applying several patches
together (validation first, rollback, reverse restore) is :class:`PatchDetails`' job.
"""

from __future__ import annotations

import functools
import inspect
import re
import types
from collections.abc import Callable
from typing import Any

from ..errors import PatchDefinitionError, PatchStateError, PatchTargetError
from . import numpy_registry, script_builtins
from .families import PatchFamily
from .source_diff import source_of, unified_diff
from .unbound import binds, unbound

_MISSING = object()

# (id(owner), attribute) -> the PatchInfo currently applied there, across all PatchDetails
_ACTIVE_TARGETS: dict[tuple[int, str], PatchInfo] = {}


def describe_owner(owner: Any) -> str:
    """Return a dotted name for a module or a class, for messages and reports."""
    if isinstance(owner, types.ModuleType):
        return owner.__name__
    if isinstance(owner, type):
        return f"{owner.__module__}.{owner.__qualname__}"
    return repr(owner)


class PatchInfo:
    """One replacement of ``owner.attribute`` by ``patch``, applied by :meth:`do`, undone by
    :meth:`undo`.

    While applied, the attribute holds a thin wrapper around ``patch`` that counts calls
    (:attr:`calls`), so a report can tell which patches were exercised even when they add
    no node to an exported graph.
    """

    def __init__(
        self,
        patch: Callable[..., Any],
        owner: Any,
        attribute: str,
        family: str = "",  # a PatchFamily for patchport's own, any name for the user's
        depends_on: list[PatchInfo] | None = None,
        versions: str = "",
        description: str = "",
        count_calls: bool = True,
    ) -> None:
        if not callable(patch) and not isinstance(patch, (staticmethod, classmethod)):
            raise PatchDefinitionError(
                f"PatchInfo(patch=...) for {describe_owner(owner)}.{attribute}: the replacement "
                f"must be callable, got {type(patch).__name__}. Pass a function."
            )
        if not isinstance(owner, (types.ModuleType, type)):
            raise PatchDefinitionError(
                f"PatchInfo(module_or_class=...) for attribute {attribute!r}: expected a module "
                f"or a class, got {type(owner).__name__}. Pass the module or class that holds "
                f"the function (e.g. torch._refs, not torch._refs.{attribute})."
            )
        if not isinstance(attribute, str) or not attribute.isidentifier():
            raise PatchDefinitionError(
                f"PatchInfo(method_or_function_name=...) for {describe_owner(owner)}: expected an "
                f"attribute name, got {attribute!r}."
            )
        current = _raw_attribute(owner, attribute)
        if current is _MISSING:
            raise PatchTargetError(
                f"PatchInfo target {describe_owner(owner)}.{attribute} does not exist; check the "
                f"name and the installed version of {describe_owner(owner).split('.')[0]}."
            )
        if isinstance(current, property):
            raise PatchTargetError(
                f"PatchInfo target {describe_owner(owner)}.{attribute} is a property; patch its "
                f"getter function instead."
            )
        self.patch = patch
        self.owner = owner
        self.attribute = attribute
        self.family = family
        self.depends_on: list[PatchInfo] = list(depends_on or [])
        self.versions = versions
        self.description = description
        self.count_calls = count_calls
        self.calls = 0
        self.original: Any = None  # raw attribute value replaced by the last do()
        self.kept_external: Any = _MISSING  # value found at undo() instead of our wrapper
        self._original_at_creation = current
        self._installed: Any = None
        self._scripted = False  # installed registered as a TorchScript builtin (script_builtins)
        self._overridable = False  # installed listed by NumPy's registry (numpy_registry)
        self._was_own_attribute = False

    # -- construction ---------------------------------------------------------------------
    @classmethod
    def make(
        cls,
        patch: Callable[..., Any],
        module_or_class: Any,
        method_or_function_name: str,
        family: str = "",
        **kwargs: Any,
    ) -> PatchInfo:
        """Create a patch replacing ``module_or_class.method_or_function_name`` by ``patch``."""
        return cls(patch, module_or_class, method_or_function_name, family=family, **kwargs)

    # -- identity -----------------------------------------------------------------------
    @property
    def name(self) -> str:
        """The replacement's name, as the patched attribute reports it while applied."""
        func = getattr(self.patch, "__func__", self.patch)
        func = getattr(func, "__pp_source__", func)  # a wrapper wearing the original's face
        return getattr(func, "__name__", repr(func))

    @property
    def target_name(self) -> str:
        """Dotted name of the replaced attribute, e.g. ``torch._refs._broadcast_shapes``."""
        return f"{describe_owner(self.owner)}.{self.attribute}"

    @property
    def refid(self) -> str:
        """A stable id for rst anchors: family and target, made of safe characters only."""
        raw = f"patch-{self.family or PatchFamily.CUSTOM}-{self.target_name}"
        return re.sub(r"[^A-Za-z0-9-]+", "-", raw).strip("-").lower()

    @property
    def applied(self) -> bool:
        """True between a successful :meth:`do` and the matching :meth:`undo`."""
        return self._installed is not None

    def target_key(self) -> tuple[int, str]:
        """Identity of the patched slot, used to refuse two patches on one target."""
        return (id(self.owner), self.attribute)

    def __repr__(self) -> str:
        state = "applied" if self.applied else "not applied"
        return f"PatchInfo({self.name} -> {self.target_name}, family={str(self.family)!r}, {state})"

    # -- apply / restore ----------------------------------------------------------------
    def check_can_apply(self) -> None:
        """Raise a clear error if :meth:`do` would fail; change nothing."""
        if self.applied:
            raise PatchStateError(f"Patch {self.name} is already applied on {self.target_name}.")
        if _raw_attribute(self.owner, self.attribute) is _MISSING:
            raise PatchTargetError(
                f"Patch {self.name}: target {self.target_name} no longer exists; nothing to patch."
            )
        holder = _ACTIVE_TARGETS.get(self.target_key())
        if holder is not None:
            raise PatchStateError(
                f"Patch {self.name}: {self.target_name} is already patched by {holder.name} "
                f"(family {str(holder.family)!r}); restore that patch first."
            )

    def do(self) -> None:
        """Install the replacement; the previous value is kept in :attr:`original`.

        The target is claimed with one atomic ``dict.setdefault``, so of two threads
        patching one target only one succeeds (a lock held across lines could itself be
        leaked by an interrupt). All or nothing: an interrupt or error at any line is
        settled before it propagates.
        """
        self.check_can_apply()  # clear errors first; the claim below is the atomic check
        own = self.attribute in vars(self.owner) if isinstance(self.owner, type) else True
        raw = _raw_attribute(self.owner, self.attribute)
        installed = self._make_installed(raw)
        self.original = raw
        self._was_own_attribute = own
        self.kept_external = _MISSING
        self.calls = 0
        try:
            holder = _ACTIVE_TARGETS.setdefault(self.target_key(), self)
            if holder is not self:
                raise PatchStateError(
                    f"Patch {self.name}: {self.target_name} was just patched by {holder.name} "
                    f"(family {str(holder.family)!r}, another thread?); restore that patch first."
                )
            self._installed = installed  # applied from here: undo() settles the rest
            setattr(self.owner, self.attribute, installed)
            # flagged before each registration, so an interrupt inside one still has undo()
            # take the entry out again (both removals are no-ops for an absent entry)
            self._scripted = True
            self._scripted = script_builtins.register(raw, installed)
            self._overridable = True
            self._overridable = numpy_registry.register(raw, installed)
        except BaseException:
            self._settle()
            raise

    def _settle(self) -> None:
        """Leave this patch fully undone, whatever line an interrupt stopped at."""
        if self.applied:
            self.undo()
        else:
            self._release_claim()

    def undo(self) -> bool:
        """Put the original back; return False when someone replaced our wrapper meanwhile.

        In that case the newer value is kept (and stored in :attr:`kept_external`), because
        overwriting an assignment made by other code would silently undo their work.
        Calling it again after an interrupt cut it short finishes the job: an attribute
        already holding the original counts as restored.
        """
        if not self.applied:
            raise PatchStateError(
                f"Patch {self.name} is not applied on {self.target_name}; nothing to undo."
            )
        current = _raw_attribute(self.owner, self.attribute)
        if current is self._installed:
            if self._was_own_attribute:
                setattr(self.owner, self.attribute, self.original)
            else:
                delattr(self.owner, self.attribute)  # the class inherited it: inherit again
        elif current is not self.original:
            self.kept_external = current
        if self._scripted:
            script_builtins.unregister(self._installed)
            self._scripted = False
        if self._overridable:
            numpy_registry.unregister(self._installed)
            self._overridable = False
        self._release_claim()
        self._installed = None
        return not self.was_reassigned

    @property
    def was_reassigned(self) -> bool:
        """True when the last :meth:`undo` found (and kept) someone else's value."""
        return self.kept_external is not _MISSING

    def _release_claim(self) -> None:
        key = self.target_key()
        if _ACTIVE_TARGETS.get(key) is self:
            del _ACTIVE_TARGETS[key]

    def _make_installed(self, raw: Any) -> Any:
        """Build the installed object, shaped like the original (staticmethod, classmethod).

        By default a thin wrapper counts calls; with ``count_calls=False`` the replacement is
        installed as is and counts what it wants itself (e.g. only traced calls) on
        ``active_patch_of(itself).calls``: either way the installed object is marked with
        this PatchInfo, the one place calls are counted.
        """
        func = self.patch
        if isinstance(func, (staticmethod, classmethod)):
            func = func.__func__
        info = self
        if self.count_calls:

            @functools.wraps(func)
            def counted(*args: Any, **kwargs: Any) -> Any:
                info.calls += 1
                return func(*args, **kwargs)

        else:
            counted = func
        counted.__patchport_patch__ = self  # type: ignore[attr-defined]
        if isinstance(raw, staticmethod) or isinstance(self.patch, staticmethod):
            return staticmethod(counted)
        if isinstance(raw, classmethod) or isinstance(self.patch, classmethod):
            return classmethod(counted)
        if isinstance(self.owner, types.ModuleType) and callable(raw) and not binds(raw):
            # a C function never binds as a class attribute; torch's own stay functions, as
            # dynamo traces through them in an export run during a session; a replacement
            # that does not bind either (a callable object) is installed as it is
            if self.owner.__name__.partition(".")[0] != "torch" and binds(counted):
                return unbound(counted, raw)
        return counted

    # -- audit --------------------------------------------------------------------------
    def original_callable(self) -> Any:
        """The function this patch replaces (or replaced), unwrapped from descriptors."""
        raw = self.original if self.original is not None else self._original_at_creation
        return getattr(raw, "__func__", raw)

    @property
    def function_to_patch(self) -> Any:
        """yobx's name for :meth:`original_callable`."""
        return self.original_callable()

    def to_tuple(self) -> tuple[str, Any, Any]:
        """``(family, function_to_patch, patch)``, as yobx's ``PatchInfo.to_tuple``."""
        return (str(self.family), self.function_to_patch, self.patch)

    def make_diff(self) -> str:
        """Unified diff between the original source and the replacement source."""
        diff = unified_diff(source_of(self.original_callable()), source_of(self.patch))
        parts = [diff or "(identical sources)"]
        for dep in self.depends_on:
            parts.extend(["", dep.make_diff()])
        return "\n".join(parts)

    def format_diff(self, format: str = "raw") -> str:  # noqa: A002 - the seed's keyword
        """Return the diff with a title, as plain text (``"raw"``) or reStructuredText."""
        family = f"{self.family}: " if self.family else ""
        title = f"{family}{self.target_name} -> {self.name}"
        diff = self.make_diff()
        if format == "raw":
            return f"{title}\n{diff}"
        if format == "rst":
            indented = "\n".join(f"    {line}" if line else "" for line in diff.splitlines())
            return "\n".join(
                [f".. _{self.refid}:", "", title, "=" * len(title), "", ".. code-block:: diff", ""]
                + [indented, ""]
            )
        raise ValueError(f"PatchInfo.format_diff(format={format!r}): use 'raw' or 'rst'.")

    def to_dict(self) -> dict[str, Any]:
        """A row describing this patch, for tables and dataframes."""
        return {
            "name": self.name,
            "family": str(self.family),
            "target": self.target_name,
            "versions": self.versions,
            "applied": self.applied,
            "calls": self.calls,
            "depends_on": [d.name for d in self.depends_on],
            "description": self.description,
        }

    def add_dependency(self, other: PatchInfo) -> None:
        """Record that this patch only makes sense together with ``other``."""
        self.depends_on.append(other)


def _raw_attribute(owner: Any, attribute: str) -> Any:
    """The attribute as stored (descriptors not bound), searching a class's MRO."""
    if isinstance(owner, type):
        for klass in inspect.getmro(owner):
            if attribute in vars(klass):
                return vars(klass)[attribute]
        return _MISSING
    return getattr(owner, attribute, _MISSING)


def original_of(owner: Any, attribute: str) -> Any:
    """What ``owner.attribute`` holds when no patchport patch is applied on it.

    Replacements that delegate to the function they replace call this instead of
    capturing the original at import time, so they stay right whatever patched it first.
    """
    patch = _ACTIVE_TARGETS.get((id(owner), attribute))
    raw = patch.original if patch is not None else _raw_attribute(owner, attribute)
    if raw is _MISSING:
        raise PatchTargetError(f"original_of: {describe_owner(owner)}.{attribute} does not exist.")
    return raw


def active_patch_of(func: Any) -> PatchInfo | None:
    """Return the applied PatchInfo behind an installed wrapper, else None."""
    func = getattr(func, "__func__", func)
    return getattr(func, "__patchport_patch__", None)
