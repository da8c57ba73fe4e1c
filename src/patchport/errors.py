"""patchport's exceptions and warning categories.

Every library error subclasses :class:`PatchportError` and the builtin it matches, so
``except ValueError`` keeps working for callers who do not know patchport.
"""

from __future__ import annotations


class PatchportError(Exception):
    """Base class of every error raised by patchport."""


class PatchDefinitionError(PatchportError, TypeError):
    """A patch was declared wrongly (not callable, wrong kind of target, ...)."""


class PatchTargetError(PatchportError, ValueError):
    """The attribute a patch should replace does not exist or cannot be replaced."""


class PatchStateError(PatchportError, RuntimeError):
    """A patch was applied twice, undone while not applied, or its target is taken."""


class TraceLossError(PatchportError, RuntimeError):
    """Traced data left the traced world while the session was strict."""


class PatchMismatchError(PatchportError, ValueError):
    """A replacement returned something else than the original function on the same data."""


class PatchportWarning(UserWarning):
    """Base class of patchport's warnings."""


class TraceLossWarning(PatchportWarning):
    """Traced data left the traced world: what follows may be frozen as a constant."""


class PatchMismatchWarning(PatchportWarning):
    """A replacement's result differs from the original's beyond its declared accuracy."""


class PatchRestoreWarning(PatchportWarning):
    """On restore, an attribute no longer held our replacement; the newer value was kept."""
