"""ONNX-only lowering: decompositions torch.onnx can convert, dtypes ORT has kernels for."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest
import torch
from onnx import TensorProto, helper

from patchport.errors import OnnxKernelError, OnnxPrecisionWarning
from patchport.export.onnx.decompositions import (
    onnx_cumprod,
    onnx_det,
    onnx_inv,
    onnx_solve,
)
from patchport.export.onnx.kernels import fit_to_onnx_runtime


def _model(path: Path, op: str, elem: int, n_inputs: int = 1) -> Path:
    names = [f"x{i}" for i in range(n_inputs)]
    graph = helper.make_graph(
        [helper.make_node(op, names, ["y"], name=f"node_{op}")],
        "g",
        [helper.make_tensor_value_info(n, elem, [3]) for n in names],
        [helper.make_tensor_value_info("y", elem, [3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    onnx.save(model, str(path))
    return path


def _run(path: Path, *inputs: np.ndarray) -> np.ndarray:
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    feed = {i.name: a for i, a in zip(session.get_inputs(), inputs)}
    return session.run(None, feed)[0]


def test_double_atan_runs_in_float32_and_says_so(tmp_path: Path) -> None:
    path = _model(tmp_path / "atan.onnx", "Atan", TensorProto.DOUBLE)
    with pytest.warns(OnnxPrecisionWarning, match=r"Atan on float64.*float32.*'pt2'"):
        lowered = fit_to_onnx_runtime(path)
    assert [(lw.op_type, lw.have, lw.runs_in) for lw in lowered] == [("Atan", "float64", "float32")]
    x = np.array([-2.0, 0.3, 7.0])
    out = _run(path, x)
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, np.arctan(x), rtol=1e-7)
    meta = {p.key: p.value for p in onnx.load(str(path)).metadata_props}
    assert "Atan float64->float32" in meta["patchport.onnx_runtime_stand_ins"]


def test_int16_where_is_widened_exactly_and_silently(tmp_path: Path) -> None:
    names = ["c", "a", "b"]
    graph = helper.make_graph(
        [helper.make_node("Where", names, ["y"], name="node_where")],
        "g",
        [helper.make_tensor_value_info("c", TensorProto.BOOL, [3])]
        + [helper.make_tensor_value_info(n, TensorProto.INT16, [3]) for n in names[1:]],
        [helper.make_tensor_value_info("y", TensorProto.INT16, [3])],
    )
    path = tmp_path / "where.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), str(path))
    with warnings.catch_warnings():
        warnings.simplefilter("error", OnnxPrecisionWarning)
        lowered = fit_to_onnx_runtime(path)
    assert [(lw.op_type, lw.have, lw.precision) for lw in lowered] == [("Where", "int16", "exact")]
    a = np.array([-32768, 5, 32767], dtype=np.int16)
    b = np.array([1, -2, 3], dtype=np.int16)
    c = np.array([True, False, True])
    out = _run(path, c, a, b)
    assert out.dtype == np.int16 and np.array_equal(out, np.where(c, a, b))


def test_models_ort_runs_as_they_are_are_left_untouched(tmp_path: Path) -> None:
    path = _model(tmp_path / "add.onnx", "Add", TensorProto.DOUBLE, 2)
    before = path.read_bytes()
    assert fit_to_onnx_runtime(path) == []
    assert path.read_bytes() == before


def test_no_kernel_in_any_exact_dtype_is_refused_naming_op_dtype_and_fix(tmp_path: Path) -> None:
    path = _model(tmp_path / "floor.onnx", "Floor", TensorProto.INT64)
    before = path.read_bytes()
    with pytest.raises(OnnxKernelError, match=r"Floor on int64 \(node 'node_Floor'\)") as err:
        fit_to_onnx_runtime(path)
    assert "export_with='pt2' or 'jit'" in str(err.value)
    assert path.read_bytes() == before  # refused before anything was written


def test_uint64_refusal_suggests_int64(tmp_path: Path) -> None:
    path = _model(tmp_path / "neg.onnx", "Sqrt", TensorProto.UINT64)
    with pytest.raises(OnnxKernelError, match=r"Sqrt on uint64.*int64"):
        fit_to_onnx_runtime(path)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_gauss_jordan_matches_lapack(dtype: torch.dtype) -> None:
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(2, 4, 4, generator=gen, dtype=dtype)
    a[0, 0, 0] = 0.0  # first pivot needs a row swap
    b = torch.randn(2, 4, generator=gen, dtype=dtype)
    bm = torch.randn(2, 4, 3, generator=gen, dtype=dtype)
    tol = {"rtol": 1e-10, "atol": 1e-10} if dtype == torch.float64 else {}
    torch.testing.assert_close(onnx_inv(a), torch.linalg.inv(a), **tol)
    torch.testing.assert_close(onnx_det(a), torch.linalg.det(a), **tol)
    torch.testing.assert_close(onnx_solve(a, b), torch.linalg.solve(a, b), **tol)
    torch.testing.assert_close(onnx_solve(a, bm), torch.linalg.solve(a, bm), **tol)
    torch.testing.assert_close(onnx_det(a[0]), torch.linalg.det(a[0]), **tol)


@pytest.mark.parametrize("dtype", [torch.int16, torch.int64, torch.float32, torch.bool])
def test_prefix_product_matches_cumprod(dtype: torch.dtype) -> None:
    x = torch.arange(1, 25).reshape(2, 12).remainder(7).to(dtype)
    for dim in (0, 1, -1):
        torch.testing.assert_close(onnx_cumprod(x, dim), torch.cumprod(x, dim))
    assert onnx_cumprod(x, 1, dtype=torch.float64).dtype == torch.float64


def _depth_pipeline(depth: np.ndarray, offset: np.ndarray) -> tuple:
    """Depth-camera preprocessing on uint16: clip, scale, mask, re-offset with wrap-around."""
    clipped = np.clip(depth, 200, 60000)
    metres = clipped.astype(np.float32) * np.float32(0.001)
    near = np.where(depth < 1000, depth, 0)
    shifted = (depth.astype(np.int32) - offset).astype(np.uint16)  # negative values wrap
    total = depth + offset  # uint16 + uint16 wraps at 65536
    halves = depth >> 1
    return metres, near, shifted, total, halves, depth.max(axis=0), np.sort(depth, axis=1)


@pytest.mark.parametrize("backend", ["onnx", "pt2", "jit"])
def test_uint16_depth_pipeline_exports_with_numpy_dtypes_and_values(
    backend: str, tmp_path: Path
) -> None:
    from patchport.export.backends import ExportJob, backend_named, load_runner, write_model
    from patchport.tracing import Recorder, finish, trace_input

    from .helpers import assert_same, make

    depth = make((4, 6), np.uint16, 1, low=0, high=65535)
    offset = make((4, 6), np.uint16, 2, low=0, high=65535)
    rec = Recorder("depth", strict=True)
    outs = _depth_pipeline(trace_input(rec, "depth", depth), trace_input(rec, "offset", offset))
    gm = finish(rec, outs)
    names = [f"y{i}" for i in range(len(outs))]
    path = tmp_path / f"m{backend_named(backend).suffix}"
    write_model(backend, ExportJob(gm, [depth, offset], ["depth", "offset"], names, path))
    run = load_runner(backend_named(backend).model_type, path, ["depth", "offset"])
    fresh = [make((4, 6), np.uint16, s, low=0, high=65535) for s in (7, 8)]
    with np.errstate(over="ignore"):
        expected = _depth_pipeline(*fresh)
    got = run(fresh)
    for g, e in zip(got, expected):
        assert_same(np.asarray(g), e)


def test_float64_literals_and_edge_values_export_exactly(tmp_path: Path) -> None:
    """torch.onnx builds Python floats as float32; float64 pipelines must not lose digits."""
    from patchport.export.backends import ExportJob, load_runner, write_model
    from patchport.tracing import Recorder, finish, trace_input

    def pipeline(x: np.ndarray) -> tuple:
        with np.errstate(divide="ignore"):
            edges = (np.nan_to_num(x / 0), np.spacing(x), np.nextafter(x, 0.0))
            return (x * 0.1, np.degrees(x), np.full_like(x, 1e300) * x, x - 1e-9, *edges)

    x = np.linspace(0.5, 3.0, 6)
    rec = Recorder("f64", strict=True)
    outs = pipeline(trace_input(rec, "x", x))
    gm = finish(rec, outs)
    names = [f"y{i}" for i in range(len(outs))]
    with warnings.catch_warnings():
        warnings.simplefilter("error", OnnxPrecisionWarning)
        path = tmp_path / "m.onnx"
        write_model("onnx", ExportJob(gm, [x], ["x"], names, path))
    fresh = np.linspace(-2.0, 5.0, 6)
    for got, expected in zip(load_runner("onnx", path, ["x"])([fresh]), pipeline(fresh)):
        got = np.asarray(got)
        assert got.dtype == np.float64
        np.testing.assert_array_equal(got, expected)
