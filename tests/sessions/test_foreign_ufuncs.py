"""Ufuncs of other libraries (SciPy's ``scipy.special``) met on traced data without a patch.

A YOLO decode written with ``scipy.special.expit`` reaches the traced array's
``__array_ufunc__`` with SciPy's ufunc: the loss is reported at the user's line, and the
report must name the function the user wrote and the patch set that traces it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.special import expit

import patchport
from patchport import annotate


def test_an_unpatched_scipy_ufunc_names_itself_and_the_scipy_patch_set(tmp_path: Path):
    logits = np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)
    with pytest.warns(patchport.TraceLossWarning) as caught:
        with patchport.session("yolo", save_path=tmp_path, patching=["opencv"]):
            traced = annotate.input_tensors("n", {"logits": logits})
            expit(traced)
    messages = [str(w.message) for w in caught if Path(w.filename).name == Path(__file__).name]
    assert any("scipy.special.expit" in m and '"scipy"' in m for m in messages), messages
    assert not any("np.expit" in m for m in messages), messages


def test_the_scipy_patch_set_traces_expit(tmp_path: Path):
    logits = np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)
    with patchport.session("yolo", save_path=tmp_path, patching=["opencv", "scipy"]):
        traced = annotate.input_tensors("n", {"logits": logits})
        annotate.output_tensors("n", {"p": expit(traced)}, export_with="onnx")
    result = patchport.compile_graph(visualize=False)
    fresh = logits[::-1].copy()
    got = patchport.InferenceManager(result.yaml_path).run_policy({"n/logits": fresh})
    np.testing.assert_allclose(got["n/p"], expit(fresh), rtol=1e-6)
