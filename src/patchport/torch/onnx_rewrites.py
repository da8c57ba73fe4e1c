"""torch.onnx's graph optimiser without its absolute tolerance on pattern constants.

``torch.onnx.export`` optimises the graph with onnxscript's rewrite rules, and those match
a pattern constant with ``math.isclose(..., abs_tol=1e-8)``: an ``x + 1e-8`` (Helium's
RMS-norm epsilon, a ``norm + 1e-12`` guard against division by zero) matches ``x + 0``
and the Add is removed, so an all-zero row (a padding token's embedding) becomes
``0 * rsqrt(0) = NaN`` in the file while eager gives zeros. The replacement keeps the
rule's relative tolerance (fusions still match rounded constants) but matches a pattern 0
only with an exact 0.
"""

from __future__ import annotations

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


def onnx_rewrite_patches() -> list[PatchInfo]:
    """The patches applied while torch.onnx converts a program (none without onnxscript's
    matcher, e.g. another onnxscript version: then nothing is changed)."""
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
