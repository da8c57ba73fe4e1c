"""ONNX files stay right under ONNX Runtime's default graph optimisations.

ORT's Transpose+MatMul fusion (levels >= EXTENDED, the default) computes ``A.T @ v`` with
a 1-D ``v`` as if ``A`` were not transposed (onnxruntime 1.32; float32 and float64 alike):
``R.T @ gravity`` in every AHRS filter came out wrong. A matrix-vector product is written
as a matrix-matrix product instead, which the fusion handles.
"""

from __future__ import annotations

import logging
import warnings

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper

import patchport
from patchport import annotate
from patchport.export.onnx.kernels import fit_to_onnx_runtime

pytestmark = pytest.mark.filterwarnings("ignore:annotate.output_tensors")


def _run_optimised(path, feeds):
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


@pytest.mark.parametrize(
    ("a_shape", "perm", "v_shape"),
    [((2, 3), [1, 0], (2,)), ((4, 2, 3), [0, 2, 1], (2,)), ((3, 3), [1, 0], (3,))],
)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matrix_vector_products_of_transposes_survive_ort_optimisation(
    tmp_path, a_shape, perm, v_shape, dtype
):
    elem = TensorProto.FLOAT if dtype == np.float32 else TensorProto.DOUBLE
    graph = helper.make_graph(
        [
            helper.make_node("Transpose", ["a"], ["at"], perm=perm),
            helper.make_node("MatMul", ["at", "v"], ["y"]),
        ],
        "g",
        [helper.make_tensor_value_info("a", elem, a_shape)]
        + [helper.make_tensor_value_info("v", elem, v_shape)],
        [helper.make_tensor_value_info("y", elem, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 9
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    rng = np.random.default_rng(0)
    a = rng.normal(size=a_shape).astype(dtype)
    v = rng.normal(size=v_shape).astype(dtype)
    fit_to_onnx_runtime(path)
    (got,) = _run_optimised(path, {"a": a, "v": v})
    np.testing.assert_allclose(got, np.matmul(a.transpose(perm), v), rtol=1e-5)
    assert got.dtype == dtype


def _rotate_back(r, g):
    return {"body": r.T @ g, "batch": np.swapaxes(r[None], 1, 2) @ g, "row": g @ r.T}


@pytest.mark.parametrize("backend", ["onnx", "onnx-torchscript"])
def test_traced_transposed_matrix_times_vector_replays_right(tmp_path, backend, caplog):
    rng = np.random.default_rng(1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", patchport.TraceLossWarning)
        with patchport.session("quirk", tmp_path):
            r, g = annotate.input_tensors(
                "n", {"r": rng.normal(size=(3, 3)), "g": rng.normal(size=3)}
            )
            annotate.output_tensors("n", _rotate_back(r, g), export_with=backend)
    with caplog.at_level(logging.DEBUG, logger="patchport.export.backends"):
        result = patchport.compile_graph(visualize=False)
    if backend == "onnx":  # the direct translator writes it: nothing to fall back for
        assert "written by the direct FX->ONNX translator" in caplog.text
    manager = patchport.InferenceManager(result.yaml_path)
    for _ in range(3):
        fresh = {"r": rng.normal(size=(3, 3)), "g": rng.normal(size=3)}
        got = manager.run_policy({f"n/{k}": v for k, v in fresh.items()})
        for name, want in _rotate_back(**fresh).items():
            np.testing.assert_allclose(got[f"n/{name}"].numpy(), want, rtol=1e-10)


CHANNEL_MIX = """
import sys, numpy as np, onnxruntime, patchport
from patchport import annotate
rng = np.random.default_rng(0)
MIX = rng.random((3, 3))

def to_float_rgb(bgr):
    return np.ascontiguousarray(bgr[:, :, {channels}]).astype(np.float64) @ MIX

with patchport.session("mix", sys.argv[1]):
    frame = rng.integers(0, 256, (12, 16, 3), dtype=np.uint8)
    traced = annotate.input_tensors("mix", {{"bgr": frame}})
    annotate.output_tensors("mix", {{"rgb": to_float_rgb(traced)}}, export_with="onnx")
result = patchport.compile_graph(visualize=False)
fresh = rng.integers(0, 256, (12, 16, 3), dtype=np.uint8)
model = sys.argv[1] + "/mix/mix.onnx"
session = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])
got = session.run(None, {{"bgr": fresh}})[0]
np.testing.assert_allclose(got, to_float_rgb(fresh), rtol=1e-12)
print("RIGHT", result.ok)
"""


@pytest.mark.parametrize("channels", ["::-1", "[2, 0, 1]"])
def test_reordered_bytes_cast_and_multiplied_do_not_crash_onnx_runtime(tmp_path, channels):
    """An integer Transpose cast to float and multiplied (a channel reorder, then a colour
    matrix) made ONNX Runtime's NCHWc transformer crash the process (SIGSEGV) as the
    session opened, at its default level; run in a subprocess, so a crash fails the test."""
    import subprocess
    import sys

    script = tmp_path / "mix.py"
    script.write_text(CHANNEL_MIX.format(channels=channels))
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "out")],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "RIGHT True" in done.stdout
