"""np.arctan2 / np.angle / np.signbit exported to ONNX keep C's rules on signed zeros and
infinities (torch.onnx's own atan2 puts atan2(+0, -1) at -pi, its signbit misses -0.0)."""

from __future__ import annotations

import warnings

import numpy as np

import patchport
from patchport import annotate

Y = np.array([0.0, -0.0, 0.0, -0.0, 1.0, -1.0, 0.0, 1.0, -2.0, np.inf, -np.inf, np.nan, 3.0])
X = np.array([-1.0, -1.0, -0.0, -0.0, -1.0, -1.0, 0.0, 0.0, -0.0, -np.inf, np.inf, 1.0, 4.0])


def test_arctan2_and_angle_in_onnx_follow_numpy_on_signed_zeros(tmp_path) -> None:  # noqa: ANN001
    with patchport.session("atan2", save_path=tmp_path):
        y, x = annotate.input_tensors("n", {"y": Y, "x": X})
        annotate.output_tensors(
            "n",
            {"a": np.arctan2(y, x), "phase": np.angle(x), "sign": np.signbit(x)},
            export_with="onnx",
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", patchport.PatchportWarning)  # float64 Atan in float32
        result = patchport.compile_graph(visualize=False, rtol=1e-6, atol=1e-6)
    fresh_y, fresh_x = Y[::-1].copy(), X[::-1].copy()
    out = patchport.InferenceManager(result.yaml_path).run_policy({"n/y": fresh_y, "n/x": fresh_x})
    np.testing.assert_allclose(np.asarray(out["n/a"]), np.arctan2(fresh_y, fresh_x), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(out["n/phase"]), np.angle(fresh_x), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(out["n/sign"]), np.signbit(fresh_x))
