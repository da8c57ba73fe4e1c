"""np.arctan2 / np.angle / np.signbit exported to ONNX keep C's rules on signed zeros and
infinities (torch.onnx's own atan2 puts atan2(+0, -1) at -pi, its signbit misses -0.0)."""

from __future__ import annotations

import logging
import warnings

import numpy as np
import onnx
import pytest
import torch

import patchport
from patchport import annotate
from patchport.errors import OnnxPrecisionWarning
from patchport.export.onnx.decompositions import onnx_atan2

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
        warnings.simplefilter("error", patchport.PatchportWarning)
        result = patchport.compile_graph(visualize=False)
    fresh_y, fresh_x = Y[::-1].copy(), X[::-1].copy()
    out = patchport.InferenceManager(result.yaml_path).run_policy({"n/y": fresh_y, "n/x": fresh_x})
    np.testing.assert_allclose(np.asarray(out["n/a"]), np.arctan2(fresh_y, fresh_x), rtol=4e-16)
    np.testing.assert_allclose(np.asarray(out["n/phase"]), np.angle(fresh_x), rtol=4e-16)
    np.testing.assert_array_equal(np.asarray(out["n/sign"]), np.signbit(fresh_x))


def test_float64_arctan_in_onnx_keeps_float64_precision(tmp_path) -> None:  # noqa: ANN001
    """ONNX Runtime has no float64 Atan: the export computes atan from float64 operations
    instead of running Atan in float32 (which warned and lost half the digits)."""
    rng = np.random.default_rng(0)
    ys = np.concatenate([rng.normal(size=200) * 10.0 ** rng.integers(-8, 8, 200), Y])
    xs = np.concatenate([rng.normal(size=200), X])
    with patchport.session("atan64", save_path=tmp_path):
        y, x = annotate.input_tensors("n", {"y": ys, "x": xs})
        annotate.output_tensors(
            "n", {"a2": np.arctan2(y, x), "a": np.arctan(y)}, export_with="onnx"
        )
    with warnings.catch_warnings():
        warnings.simplefilter("error", OnnxPrecisionWarning)
        result = patchport.compile_graph(visualize=False)
    fresh_y, fresh_x = ys[::-1] * 0.7, xs[::-1] * 1.3
    out = patchport.InferenceManager(result.yaml_path).run_policy({"n/y": fresh_y, "n/x": fresh_x})
    for got, want in (
        (out["n/a2"], np.arctan2(fresh_y, fresh_x)),
        (out["n/a"], np.arctan(fresh_y)),
    ):
        np.testing.assert_allclose(np.asarray(got), want, rtol=4e-16, atol=0)
        np.testing.assert_array_equal(np.signbit(np.asarray(got)), np.signbit(want))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_arctan_is_written_by_the_direct_translator(tmp_path, caplog, dtype) -> None:  # noqa: ANN001
    """Both dtypes stay with the direct translator (no torch.onnx); float32 keeps ONNX's
    Atan, float64 is computed without it."""
    from patchport.export.backends import ExportJob, load_runner, write_model
    from patchport.tracing import Recorder, finish, trace_input

    y, x = Y.astype(dtype), X.astype(dtype)
    rec = Recorder("atan", strict=True)
    ty, tx = trace_input(rec, "y", y), trace_input(rec, "x", x)
    path = tmp_path / "m.onnx"
    job = ExportJob(
        finish(rec, [np.arctan2(ty, tx), np.arctan(ty)]), [y, x], ["y", "x"], ["a2", "a"], path
    )
    with caplog.at_level(logging.DEBUG, logger="patchport.export.backends"):
        write_model("onnx", job)
    assert "written by the direct FX->ONNX translator" in caplog.text
    assert ("Atan" in {n.op_type for n in onnx.load(path).graph.node}) == (dtype == np.float32)
    got = load_runner("onnx", path, ["y", "x"])([y, x])
    for value, want in zip(got, (np.arctan2(y, x), np.arctan(y))):
        value = np.asarray(value)
        assert value.dtype == dtype
        np.testing.assert_allclose(value, want, rtol=2 * np.finfo(dtype).eps, atol=0)
        np.testing.assert_array_equal(np.signbit(value), np.signbit(want))


def test_atan2_decomposition_promotes_as_torch_does() -> None:
    """A float64 y over an integer x stays float64 (it was cast to float32 before)."""
    y = torch.tensor([1.0, -3.0, 0.1], dtype=torch.float64)
    x = torch.tensor([3, -7, 0])
    got = onnx_atan2(y, x)
    assert got.dtype == torch.atan2(y, x).dtype == torch.float64
    torch.testing.assert_close(got, torch.atan2(y, x), rtol=4e-16, atol=0)
    ints = onnx_atan2(torch.tensor([1, -2]), torch.tensor([2, 0]))
    assert ints.dtype == torch.atan2(torch.tensor([1]), torch.tensor([2])).dtype
