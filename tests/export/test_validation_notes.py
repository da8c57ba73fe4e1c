"""What a replay mismatch says about its likely cause."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from patchport.export.compile import _validate


def _trace(want: np.ndarray) -> SimpleNamespace:
    port = SimpleNamespace(name="image")
    sample = SimpleNamespace(inputs={"x": np.zeros(1)}, outputs={"image": want})
    recorder = SimpleNamespace(constants=lambda: [])
    inputs = [SimpleNamespace(name="x")]
    return SimpleNamespace(name="n", export_with="onnx", samples=[sample], inputs=inputs,
                           outputs=[port], recorder=recorder, constant_outputs=[])  # fmt: skip


def test_integer_output_off_by_one_names_rounding_of_float_results() -> None:
    """openpi's resize-with-pad rounds a bilinear resize to uint8: ONNX Runtime's Resize
    differs from torch's in the last float bits, and a few pixels round the other way."""
    want = np.arange(200, dtype=np.uint8).reshape(10, 20)
    got = want.copy()
    got[3, 4] += 1
    result = _validate(_trace(want), lambda inputs: [got], rtol=1e-3, atol=1e-5)
    assert not result.ok
    assert "off by one" in result.problems[0] and "round" in result.problems[0]


def test_other_mismatches_do_not_claim_rounding() -> None:
    want = np.arange(200, dtype=np.uint8).reshape(10, 20)
    got = want.copy()
    got[3, 4] += 7
    result = _validate(_trace(want), lambda inputs: [got], rtol=1e-3, atol=1e-5)
    assert not result.ok and "off by one" not in result.problems[0]
