"""torch.onnx's graph optimiser without its absolute tolerance on pattern constants, and
without failing the conversion when one of its constant-folding evaluators raises.

``torch.onnx.export`` optimises the graph with onnxscript's rewrite rules, and those match
a pattern constant with ``math.isclose(..., abs_tol=1e-8)``: an ``x + 1e-8`` (Helium's
RMS-norm epsilon, a ``norm + 1e-12`` guard against division by zero) matches ``x + 0``
and the Add is removed, so an all-zero row (a padding token's embedding) becomes
``0 * rsqrt(0) = NaN`` in the file while eager gives zeros. The replacement keeps the
rule's relative tolerance (fusions still match rounded constants) but matches a pattern 0
only with an exact 0.

Its constant folding asks per-op evaluators to simplify each node; an evaluator that
raises fails the whole conversion. ``SplitToSequence`` with a split size known only at
run time (ZoeDepth's ``hidden_states.split(batch_size)``, ProphetNet's ``x.chunk(n)`` on
a dynamic dimension) reads the size's value without checking it exists
("'NoneType' object has no attribute 'ndim'"). Folding is only an optimisation, so an
evaluator that raises now leaves its node as it is (the file is still checked in ONNX
Runtime against eager).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

import numpy as np

from ..patching import PatchFamily, PatchInfo, original_of


def match_constant_exact_zero(self: Any, pattern_constant: Any, value: Any) -> bool:
    """onnxscript's ``_match_constant``, refusing a nonzero constant where the pattern
    has a 0 (its absolute tolerance took anything within 1e-8 of 0 as 0)."""
    from onnxscript.rewriter import _matcher

    original = original_of(_matcher.SimplePatternMatcher, "_match_constant")
    if not original(self, pattern_constant, value):
        return False
    expected = np.ravel(np.asarray(pattern_constant.value, dtype=np.float64))
    actual = np.ravel(np.asarray(value.const_value.numpy(), dtype=np.float64))
    if expected.size == actual.size and np.any((expected == 0) & (actual != 0)):
        return self.fail(
            f"Constant {value.name} is {actual.tolist()}, not exactly "
            f"{pattern_constant.value}: a small epsilon is not a 0."
        )
    return True


_LOG = logging.getLogger(__name__)


def _unfolded_on_error(evaluator: Callable[..., Any]) -> Callable[..., Any]:
    """``evaluator`` returning ``None`` (node left as it is) where it would raise."""

    @functools.wraps(evaluator)
    def guarded(node: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return evaluator(node, *args, **kwargs)
        except Exception as exc:  # an optimisation that cannot apply: keep the node
            _LOG.debug(
                "constant folding of %s (%s) left as it is: %s: %s",
                getattr(node, "name", "?"),
                getattr(node, "op_type", "?"),
                type(exc).__name__,
                exc,
            )
            return None

    return guarded


def lookup_evaluators_unfolded_on_error(self: Any, *args: Any, **kwargs: Any) -> list:
    """onnxscript's ``PartialEvaluatorRegistry.lookup_evaluators``, each evaluator
    leaving its node unfolded where it would raise."""
    from onnxscript.optimizer import _constant_folding

    original = original_of(_constant_folding.PartialEvaluatorRegistry, "lookup_evaluators")
    return [_unfolded_on_error(evaluator) for evaluator in original(self, *args, **kwargs)]


def _folding_patches() -> list[PatchInfo]:
    try:
        from onnxscript.optimizer import _constant_folding
    except ImportError:
        return []
    registry = getattr(_constant_folding, "PartialEvaluatorRegistry", None)
    if registry is None or not hasattr(registry, "lookup_evaluators"):
        return []
    return [
        PatchInfo.make(
            lookup_evaluators_unfolded_on_error,
            registry,
            "lookup_evaluators",
            family=PatchFamily.EXPORT,
            description="torch.onnx's constant folding leaves a node unfolded where its "
            "evaluator raises (SplitToSequence with a split size known only at run time)",
        )
    ]


def onnx_rewrite_patches() -> list[PatchInfo]:
    """The patches applied while torch.onnx converts a program (each one absent where
    onnxscript lacks what it replaces, e.g. another onnxscript version: then nothing is
    changed there)."""
    return [*_matcher_patches(), *_folding_patches()]


def _matcher_patches() -> list[PatchInfo]:
    try:
        from onnxscript.rewriter import _matcher
    except ImportError:
        return []
    if not hasattr(_matcher.SimplePatternMatcher, "_match_constant"):
        return []
    return [
        PatchInfo.make(
            match_constant_exact_zero,
            _matcher.SimplePatternMatcher,
            "_match_constant",
            family=PatchFamily.EXPORT,
            description="torch.onnx's rewrites take only an exact 0 for a pattern's 0, so "
            "an epsilon of 1e-8 or less is not removed from the file",
        )
    ]
