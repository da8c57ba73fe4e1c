"""patchport's exceptions and warning categories, grouped by the area that raises them.

Every library error subclasses :class:`PatchportError` and the builtin it matches, so
``except ValueError`` keeps working for callers who do not know patchport. Each class is
also importable from the module that raises it (its historical home). This module is a
leaf: it imports nothing from patchport, so any module may import it.
"""

from __future__ import annotations

from typing import Any


class PatchportError(Exception):
    """Base class of every error raised by patchport."""


class PatchportWarning(UserWarning):
    """Base class of patchport's warnings."""


# --- patches and sessions ------------------------------------------------------------


class PatchDefinitionError(PatchportError, TypeError):
    """A patch was declared wrongly (not callable, wrong kind of target, ...)."""


class PatchTargetError(PatchportError, ValueError):
    """The attribute a patch should replace does not exist or cannot be replaced."""


class PatchStateError(PatchportError, RuntimeError):
    """A patch was applied twice, undone while not applied, or its target is taken."""


class PatchRuleError(PatchportError, ValueError):
    """A replacement broke one of the rules for traced calls (purity, no buffers, ...)."""


class PatchMismatchError(PatchportError, ValueError):
    """A replacement returned something else than the original function on the same data."""


class PatchMismatchWarning(PatchportWarning):
    """A replacement's result differs from the original's beyond its declared accuracy."""


class PatchRestoreWarning(PatchportWarning):
    """On restore, an attribute no longer held our replacement; the newer value was kept."""


class UnsupportedCaseError(PatchportError, ValueError):
    """A call on traced data used an argument value that its replacement (a patched OpenCV
    function) or the tracer (an in-place resize of traced data) cannot support."""


# --- tracing -------------------------------------------------------------------------


class TraceLossError(PatchportError, RuntimeError):
    """Traced data left the traced world while the session was strict."""


class TraceLossWarning(PatchportWarning):
    """Traced data left the traced world: what follows may be frozen as a constant."""


# --- patchport.torch.export ----------------------------------------------------------


class ExportArgumentError(PatchportError, TypeError):
    """An argument of :func:`patchport.torch.export` is not usable; nothing was changed."""


class ExportFailedError(PatchportError, RuntimeError):
    """No configuration exported the model; ``attempts`` says why each one failed."""

    def __init__(self, message: str, attempts: list[Any]) -> None:
        super().__init__(message)
        self.attempts = attempts  # patchport.torch.export_report.Attempt records


class NarrowedExportError(PatchportError, ValueError):
    """Every configuration's program rejects inputs that were asked for, or computes a
    wrong value on one; ``result`` holds the best program and its report."""

    def __init__(self, message: str, result: Any) -> None:
        super().__init__(message)
        self.result = result  # a patchport.torch.export_report.ExportResult


# --- compiling a graph into a bundle -------------------------------------------------


class ValidationError(PatchportError, AssertionError):
    """An exported model does not reproduce the eager computation."""


class ExportBackendError(PatchportError, RuntimeError):
    """A backend failed to write or load a node's model."""


class DynamicShapeError(PatchportError, ValueError):
    """A dynamic axis cannot change size in the exported model; the message says why."""


class OnnxKernelError(PatchportError, TypeError):
    """An exported ONNX node has no ONNX Runtime CPU kernel for its dtype."""


class OnnxPrecisionWarning(PatchportWarning):
    """An ONNX node runs in a narrower dtype than NumPy's, for lack of an ORT kernel."""


class Untranslatable(Exception):
    """The graph uses something the direct translator does not write; use torch.onnx.

    An internal signal, not a user error: the ONNX backend catches it and falls back to
    ``torch.onnx``, so it deliberately does not subclass :class:`PatchportError`."""


# --- bundles: reading, loading and running -------------------------------------------


class NotInlinable(Exception):
    """Internal: a TorchScript module could not be turned into graph operations (the
    reason); the caller reports it as a trace loss at the user's line."""


class BundleFormatError(PatchportError, ValueError):
    """A bundle's YAML cannot be read or does not describe a pipeline."""


class BundleSafetyError(PatchportError, ValueError):
    """A bundle asks to open a file outside its folder, or to run code while loading."""


class ModelIntegrityError(PatchportError, ValueError):
    """A model file does not match the SHA-256 recorded in the pipeline description."""


class InputShapeError(PatchportError, ValueError):
    """An input's shape does not fit the shape its port declares; nothing was run."""


class PolicyInputError(PatchportError, ValueError):
    """An input of run_policy has the wrong shape or dtype, or is unknown to the bundle."""


class PolicyInputTypeError(PatchportError, TypeError):
    """run_policy was given something else than a dict of arrays or tensors."""


class UnknownPolicyInputError(PatchportError, KeyError, ValueError):
    """run_policy was given a key that is no node input of the bundle."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class MissingPolicyInputError(PatchportError, KeyError):
    """run_policy was not given every input the bundle needs."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class DrawingUnavailable(PatchportError, ImportError):
    """The picture needs the ``draw`` extra (fast-sugiyama, Pillow)."""


class BundleCommandError(Exception):
    """A problem ``patchport bundle`` reports in one line and exits 2 on."""
