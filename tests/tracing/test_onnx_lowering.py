"""ONNX-only lowering: decompositions torch.onnx can convert, dtypes ORT has kernels for."""

from __future__ import annotations

import logging
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime
import pytest
import torch
from onnx import TensorProto, helper

from patchport.errors import OnnxKernelError, OnnxPrecisionWarning
from patchport.export.onnx.decompositions import (
    onnx_cholesky,
    onnx_cumprod,
    onnx_det,
    onnx_inv,
    onnx_matrix_norm,
    onnx_norm,
    onnx_solve,
)
from patchport.export.onnx.jacobi import onnx_eigvalsh, onnx_pinv, onnx_svdvals
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


def _conditioned(rng: np.random.Generator, m: int, n: int, kappa: float, rank: int) -> np.ndarray:
    """An m x n matrix with singular values from 1 down to 1/kappa, the last n - rank zero."""
    u, _ = np.linalg.qr(rng.normal(size=(m, m)))
    v, _ = np.linalg.qr(rng.normal(size=(n, n)))
    s = np.zeros((m, n))
    k = min(m, n)
    s[:k, :k] = np.diag(np.logspace(0, -np.log10(kappa), k) * (np.arange(k) < rank))
    return u @ s @ v.T


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_cholesky_by_columns_matches_lapack(dtype: type) -> None:
    rng = np.random.default_rng(0)
    for n in (1, 2, 3, 6):
        a = rng.normal(size=(2, n, n))
        spd = (a @ a.transpose(0, 2, 1) + n * np.eye(n)).astype(dtype)
        for upper in (False, True):
            got = onnx_cholesky(torch.from_numpy(spd), upper=upper).numpy()
            want = np.linalg.cholesky(spd, upper=upper)
            assert got.dtype == want.dtype
            np.testing.assert_allclose(
                got, want, rtol=1e-12 if dtype == np.float64 else 1e-5, atol=1e-12
            )


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(("m", "n"), [(1, 1), (2, 2), (3, 3), (4, 4), (5, 3), (3, 7), (16, 12)])
def test_jacobi_values_and_pseudo_inverse_match_lapack(dtype: type, m: int, n: int) -> None:
    rng = np.random.default_rng(m * 100 + n)
    eps = float(np.finfo(dtype).eps)
    for kappa, rank in (
        (1.0, n),
        (1e3, n),
        (1e5 if dtype == np.float64 else 1e2, n),
        (10.0, max(n - 2, 0)),
    ):
        a = _conditioned(rng, m, n, kappa, rank).astype(dtype)
        t = torch.from_numpy(a)
        values = onnx_svdvals(t).numpy()
        np.testing.assert_allclose(values, np.linalg.svd(a, compute_uv=False), atol=50 * eps)
        rcond = 1e-10 if dtype == np.float64 else 1e-4
        pseudo = onnx_pinv(t, rtol=rcond).numpy()
        want = np.linalg.pinv(a, rcond=rcond)
        scale = max(1.0, float(np.abs(want).max()))
        np.testing.assert_allclose(pseudo, want, atol=50 * eps * kappa * scale)
        sym = (a[: min(m, n), : min(m, n)] + a[: min(m, n), : min(m, n)].T) / 2
        for uplo in ("L", "U"):
            eig = onnx_eigvalsh(
                torch.from_numpy(np.tril(sym) if uplo == "L" else np.triu(sym)), uplo
            )
            np.testing.assert_allclose(eig.numpy(), np.linalg.eigvalsh(sym), atol=50 * eps)
        assert values.dtype == pseudo.dtype == dtype


def test_jacobi_on_batches_and_repeated_values() -> None:
    rotation = torch.linalg.matrix_exp(
        torch.tensor([[0.0, -0.3, 0.2], [0.3, 0.0, -0.1], [-0.2, 0.1, 0.0]], dtype=torch.float64)
    )
    reflection = torch.diag(torch.tensor([1.0, -1.0, 1.0], dtype=torch.float64)) @ rotation
    batch = torch.stack(
        [
            rotation,
            reflection,
            torch.zeros(3, 3, dtype=torch.float64),
            2 * torch.eye(3, dtype=torch.float64),
        ]
    )
    torch.testing.assert_close(onnx_svdvals(batch), torch.linalg.svdvals(batch))
    torch.testing.assert_close(onnx_pinv(batch, rtol=1e-12), torch.linalg.pinv(batch, rtol=1e-12))
    sym = (
        reflection @ torch.diag(torch.tensor([1.0, -1.0, 1.0], dtype=torch.float64)) @ reflection.T
    )
    torch.testing.assert_close(onnx_eigvalsh(sym), torch.linalg.eigvalsh(sym))


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


def _sigma_points(x: np.ndarray, p: np.ndarray) -> tuple:
    """An unscented filter's square root, gain and spectrum (filterpy's idioms)."""
    root = np.linalg.cholesky(3.0 * p)
    sigmas = np.concatenate([x[None], x + root.T, x - root.T])
    gain = p[:, :2] @ np.linalg.pinv(p[:2, :2] + np.eye(2))
    return sigmas, gain, np.linalg.eigvalsh(p), np.linalg.svd(p[:, :3], compute_uv=False)


def _covariance(rng: np.random.Generator, n: int) -> np.ndarray:
    a = rng.normal(size=(n, n))
    return a @ a.T + np.eye(n)


def test_filter_linear_algebra_exports_to_onnx_and_replays(tmp_path: Path, caplog) -> None:  # noqa: ANN001
    """Cholesky, pinv, eigvalsh, svdvals: decomposed, written by the direct translator."""
    from patchport.export.backends import ExportJob, load_runner, write_model
    from patchport.tracing import Recorder, finish, trace_input

    rng = np.random.default_rng(3)
    x, p = rng.normal(size=4), _covariance(rng, 4)
    rec = Recorder("ukf", strict=True)
    outs = _sigma_points(trace_input(rec, "x", x), trace_input(rec, "p", p))
    names = [f"y{i}" for i in range(len(outs))]
    path = tmp_path / "m.onnx"
    with caplog.at_level(logging.DEBUG, logger="patchport.export.backends"):
        write_model("onnx", ExportJob(finish(rec, outs), [x, p], ["x", "p"], names, path))
    assert "written by the direct FX->ONNX translator" in caplog.text
    run = load_runner("onnx", path, ["x", "p"])
    for _ in range(3):
        fresh = [rng.normal(size=4), _covariance(rng, 4)]
        for got, want in zip(run(fresh), _sigma_points(*fresh)):
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-9, atol=1e-12)


def test_jacobi_beyond_its_size_is_refused_for_onnx_naming_the_line(tmp_path: Path) -> None:
    from patchport.errors import ExportBackendError
    from patchport.export.backends import ExportJob, write_model
    from patchport.tracing import Recorder, finish, trace_input

    a = np.random.default_rng(0).normal(size=(40, 40))
    rec = Recorder("big", strict=True)
    out = np.linalg.pinv(trace_input(rec, "a", a))
    line = sys._getframe().f_lineno - 1
    job = ExportJob(finish(rec, (out,)), [a], ["a"], ["y"], tmp_path / "m.onnx")
    with pytest.raises(
        ExportBackendError, match=rf"np\.linalg\.pinv.*40x40.*:{line}\).*'pt2' or 'jit'"
    ):
        write_model("onnx", job)
    rec = Recorder("norms", strict=True)
    spectral = np.linalg.norm(trace_input(rec, "a", a), 2)
    line = sys._getframe().f_lineno - 1
    job = ExportJob(finish(rec, (spectral,)), [a], ["a"], ["y"], tmp_path / "s.onnx")
    with pytest.raises(ExportBackendError, match=rf"np\.linalg\.norm.*40x40.*:{line}\)"):
        write_model("onnx", job)
    rec = Recorder("rows", strict=True)  # a row-wise vector norm of it is exported
    rows = np.linalg.norm(trace_input(rec, "a", a), axis=1)
    write_model("onnx", ExportJob(finish(rec, (rows,)), [a], ["a"], ["y"], tmp_path / "r.onnx"))


@pytest.mark.parametrize(
    "ord", [None, 2, -2, 1, -1, float("inf"), float("-inf"), 0, 3, "fro", "nuc"]
)
def test_norms_in_elementwise_ops_match_torch(ord: Any) -> None:
    gen = torch.Generator().manual_seed(0)
    cases = [
        (torch.randn(6, generator=gen, dtype=torch.float64), [None, 0, -1]),
        (torch.randn(4, 3, generator=gen, dtype=torch.float64), [None, (0, 1), (1, 0), 0, 1]),
        (torch.randn(3, 4, 5, generator=gen, dtype=torch.float64), [None, (0, 2), (2, 1), 2]),
    ]
    checked = 0
    for x, dims in cases:
        for dim in dims:
            for keepdim in (False, True):
                try:
                    want = torch.linalg.norm(x, ord, dim, keepdim)
                except RuntimeError:  # an ord that dims do not take
                    continue
                torch.testing.assert_close(onnx_norm(x, ord, dim, keepdim), want)
                if isinstance(dim, tuple) and ord is not None:
                    got = onnx_matrix_norm(x, ord, dim, keepdim)
                    torch.testing.assert_close(got, torch.linalg.matrix_norm(x, ord, dim, keepdim))
                checked += 1
    assert checked


def _torch_linear_algebra(a: torch.Tensor, v: torch.Tensor) -> tuple:
    """torch's aliases and method forms of the decomposed linear algebra."""
    spd = a @ a.T + torch.eye(3, dtype=a.dtype)
    return (
        torch.inverse(a) @ v,
        a.inverse(),
        torch.pinverse(a[:2]),
        a[:, :2].pinverse(),
        torch.cholesky(spd),
        spd.cholesky(),
        torch.linalg.norm(a, 2),
        torch.linalg.norm(a, -2, dim=(0, 1)),
        torch.linalg.matrix_norm(a, "nuc"),
        torch.linalg.norm(a, "fro"),
        torch.linalg.norm(v, 2),
    )


def test_torch_linear_algebra_aliases_export_to_onnx(tmp_path: Path) -> None:
    from patchport.export.backends import ExportJob, load_runner, write_model
    from patchport.tracing import Recorder, finish, trace_input

    gen = torch.Generator().manual_seed(5)
    a = torch.randn(3, 3, generator=gen, dtype=torch.float64) + 3 * torch.eye(
        3, dtype=torch.float64
    )
    v = torch.randn(3, generator=gen, dtype=torch.float64)
    rec = Recorder("aliases", strict=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch.cholesky's deprecation
        outs = _torch_linear_algebra(trace_input(rec, "a", a), trace_input(rec, "v", v))
        names = [f"y{i}" for i in range(len(outs))]
        path = tmp_path / "m.onnx"
        write_model("onnx", ExportJob(finish(rec, outs), [a, v], ["a", "v"], names, path))
        fresh = [a + 0.3 * torch.randn(3, 3, generator=gen, dtype=torch.float64), v.flip(0)]
        want = _torch_linear_algebra(*fresh)
    for got, expected in zip(
        load_runner("onnx", path, ["a", "v"])([f.numpy() for f in fresh]), want
    ):
        np.testing.assert_allclose(np.asarray(got), expected.numpy(), rtol=1e-9, atol=1e-12)


def _factorisations(a: torch.Tensor) -> dict[str, Any]:
    """Calls ONNX has no operator for and patchport no decomposition of, one per line."""
    return {
        "torch.linalg.svd": lambda: torch.linalg.svd(a)[0],
        "torch.svd": lambda: torch.svd(a)[2],
        "svd": lambda: a.svd()[0],
        "torch.linalg.eigh": lambda: torch.linalg.eigh(a + a.T)[1],
        "torch.linalg.qr": lambda: torch.linalg.qr(a)[0],
        "torch.linalg.slogdet": lambda: torch.linalg.slogdet(a)[1],
        "torch.linalg.matrix_exp": lambda: torch.linalg.matrix_exp(a),
    }


@pytest.mark.parametrize("name", list(_factorisations(torch.eye(2))))
def test_factorisation_without_onnx_operator_is_refused_naming_the_line(
    tmp_path: Path, name: str
) -> None:
    """A Kabsch fit's torch.linalg.svd: ONNX has no SVD (nor QR, eigh, slogdet, expm), so
    the refusal names the call and the user's line and suggests pt2 / jit, which write it."""
    from patchport.errors import ExportBackendError
    from patchport.export.backends import ExportJob, load_runner, write_model
    from patchport.tracing import Recorder, finish, trace_input

    a = torch.randn(3, 3, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    rec = Recorder("fit", strict=True)
    call = _factorisations(trace_input(rec, "a", a))[name]
    out, line = call(), call.__code__.co_firstlineno  # the lambda's line is the user's
    graph = finish(rec, (out,))
    job = ExportJob(graph, [a], ["a"], ["y"], tmp_path / "m.onnx")
    with pytest.raises(ExportBackendError, match=rf"{name}.*:{line}\).*'pt2' or 'jit'"):
        write_model("onnx", job)
    write_model("pt2", ExportJob(graph, [a], ["a"], ["y"], tmp_path / "m.pt2"))
    got = load_runner("pt2", tmp_path / "m.pt2", ["a"])([a.numpy()])[0]
    np.testing.assert_allclose(np.asarray(got), _factorisations(a)[name]().numpy())


def _extremes(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """Whole-tensor amax / amin (no dim), beside torch.sign (which sends the graph to
    torch.onnx: its translator has no amax without a dim)."""
    return (
        torch.sign(x - 0.5) * torch.amax(x),
        x.amin() + x.amax(dim=()),
        torch.amax(x, dim=(), keepdim=True),
    )


def test_whole_tensor_amax_and_amin_export_through_torch_onnx(tmp_path: Path) -> None:
    from patchport.export.backends import ExportJob, load_runner, write_model
    from patchport.tracing import Recorder, finish, trace_input

    x = torch.rand(4, 5, generator=torch.Generator().manual_seed(0))
    rec = Recorder("extremes", strict=True)
    outs = _extremes(trace_input(rec, "x", x))
    names = [f"y{i}" for i in range(len(outs))]
    write_model("onnx", ExportJob(finish(rec, outs), [x], ["x"], names, tmp_path / "m.onnx"))
    fresh = torch.rand(4, 5, generator=torch.Generator().manual_seed(1)) * 3
    for got, want in zip(
        load_runner("onnx", tmp_path / "m.onnx", ["x"])([fresh.numpy()]), _extremes(fresh)
    ):
        np.testing.assert_allclose(np.asarray(got), want.numpy(), rtol=1e-6)
