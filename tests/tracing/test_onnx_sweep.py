"""Every table entry x every dtype NumPy accepts: traced, exported to ONNX, replayed in ORT.

Ops of one dtype share one exported graph (export cost is per graph node, so the sweep
also shares work: a pair whose graph only casts its inputs to a float dtype and then
computes exactly what that float dtype's pair computes is counted as covered by it).
Each pair ends in exactly one bucket, and the buckets are printed and checked: exported
and replayed on fresh inputs, covered by its float loop, or rejected by NumPy itself.

The twelve exports are independent and are most of the suite's time, so they start in worker
processes, one per CPU core, as soon as pytest has collected (``Sweep``); the tests that read
them stay the suite's longest wait (marked ``slow``).
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import tempfile
import warnings
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from patchport.errors import OnnxPrecisionWarning
from patchport.export.backends import _onnx_export_patches, as_tensor, load_runner
from patchport.export.onnx.decompositions import decompose_for_onnx
from patchport.export.onnx.kernels import fit_to_onnx_runtime
from patchport.tracing import Recorder, finish, trace_input

from ..script_runs import on_session_end
from .helpers import assert_same, fresh_like, make
from .numpy_catalog import OPS, Op, covered_entries, table_entries

DTYPES = [np.bool_, np.uint8, np.int8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
          np.uint64, np.float16, np.float32, np.float64]  # fmt: skip
FLOATS = {np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)}


def sweep_inputs(dtype: Any) -> list[np.ndarray]:
    """x, y with small values (every op) and xf, yf over the dtype's range (full_range ops).

    uint64 stays below 2**63: the graph holds uint64 as int64 (torch has no uint64
    kernels); ``test_uint64_at_or_above_2_63`` states what that means beyond.
    """
    dt = np.dtype(dtype)
    if dt.kind == "i":
        small = [make((3, 4), dt, s, low=-5, high=6) for s in (1, 2)]
    elif dt.kind == "u":
        small = [make((3, 4), dt, s, low=0, high=9) for s in (1, 2)]
    else:
        small = [make((3, 4), dt, s) for s in (1, 2)]
    if dt.kind in "iu":
        info = np.iinfo(dt)
        high = min(int(info.max), 2**63 - 1)
        full = [make((3, 4), dt, s, low=info.min, high=high) for s in (3, 4)]
    else:
        full = [make((3, 4), dt, s, low=-300, high=300) for s in (3, 4)]
    return small + full


def _leaves(value: Any) -> list:
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]


def _call(op: Op, x: Any, y: Any) -> list:
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return _leaves(op.fn(x, y))


def _numpy_accepts(op: Op, x: np.ndarray, y: np.ndarray) -> bool:
    try:
        _call(op, x.copy(), y.copy())
    except (TypeError, ValueError, np.linalg.LinAlgError):
        return False
    return True


def _float_loop_only(op: Op, x: np.ndarray, y: np.ndarray) -> np.dtype | None:
    """The float dtype this pair's graph starts by casting every input to, else None."""
    rec = Recorder("probe", strict=True)
    tx, ty = trace_input(rec, "x", x), trace_input(rec, "y", y)
    outs = _call(op, tx, ty)
    gm = finish(rec, tuple(outs))
    targets = set()
    for node in gm.graph.nodes:
        if node.op == "placeholder" and node.users:
            for user in node.users:
                if not (user.op == "call_method" and user.target == "to"):
                    return None
                targets.add(user.args[1])
    if len(targets) != 1:
        return None
    (target,) = targets
    dtype = {torch.float16: np.float16, torch.float32: np.float32, torch.float64: np.float64}
    return np.dtype(dtype[target]) if target in dtype else None


def _export_and_replay(dtype: Any, ops: list[tuple[Op, bool]], folder: Path) -> dict:
    """Trace ``ops`` on one graph, export, replay on fresh inputs; op name -> error."""
    arrays = sweep_inputs(dtype)
    names = ["x", "y", "xf", "yf"]
    rec = Recorder(f"sweep_{np.dtype(dtype).name}", strict=True)
    traced = [trace_input(rec, n, a) for n, a in zip(names, arrays)]
    outs: list = []
    spans = []
    for op, full in ops:
        x, y = (traced[2], traced[3]) if full else (traced[0], traced[1])
        leaves = _call(op, x, y)
        spans.append((op, full, len(outs), len(leaves)))
        outs += leaves
    gm = finish(rec, tuple(outs))
    path = folder / f"{np.dtype(dtype).name}.onnx"
    args = tuple(as_tensor(a) for a in arrays)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", OnnxPrecisionWarning)
        with warnings.catch_warnings(), _onnx_export_patches():
            warnings.simplefilter("ignore")  # exporter chatter
            program = torch.onnx.export(decompose_for_onnx(gm, args), args, str(path), dynamo=True,
                                        optimize=False, external_data=False,
                                        input_names=names)  # fmt: skip
        lowerings = fit_to_onnx_runtime(path, program)
    lossy = [str(w.message) for w in caught if issubclass(w.category, OnnxPrecisionWarning)]
    assert bool(lossy) == any(lw.precision != "exact" for lw in lowerings)
    fresh = [fresh_like(a, i) for i, a in enumerate(arrays)]
    got = load_runner("onnx", path, names)(fresh)
    errors = {}
    for op, full, start, count in spans:
        x, y = (fresh[2], fresh[3]) if full else (fresh[0], fresh[1])
        expected = _call(op, x.copy(), y.copy())
        # float64 nodes without an ORT double kernel run in float32 (the warning says so)
        rtol = 1e-4 if lossy and np.dtype(dtype) != np.float16 else None
        try:
            for g, e in zip(got[start : start + count], expected):
                assert_same(g, e, rtol)
        except AssertionError as exc:
            errors[f"{op.name}{' (full range)' if full else ''}"] = str(exc)[:300]
    return {"errors": errors, "lowerings": lowerings, "lossy": lossy}


def _quiet_worker() -> None:
    """A worker's stdout (the exporter's progress lines) would land in pytest's report."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)


def _export_in_worker(dtype_name: str, chosen: list[tuple[str, bool]], folder: str) -> dict:
    """``_export_and_replay`` in a worker process: ops travel by name (they hold lambdas)."""
    by_name = {op.name: op for op in OPS}
    ops = [(by_name[name], full) for name, full in chosen]
    return _export_and_replay(dtype_name, ops, Path(folder))


def _buckets_and_jobs() -> tuple[dict[str, list], dict[str, list[tuple[Op, bool]]]]:
    """Every (op, dtype, range) pair in one bucket; the pairs each dtype's graph exports."""
    buckets: dict[str, list] = {"onnx": [], "via float loop": [], "numpy rejects": []}
    jobs: dict[str, list[tuple[Op, bool]]] = {}
    for dtype in DTYPES:
        x, y, xf, yf = sweep_inputs(dtype)
        chosen = []
        for op in OPS:
            for full, (a, b) in ((False, (x, y)), (True, (xf, yf))):
                if full and not (op.full_range and np.dtype(dtype).kind in "iu"):
                    continue
                pair = (op.name, np.dtype(dtype).name, full)
                if not _numpy_accepts(op, a, b):
                    buckets["numpy rejects"].append(pair)
                    continue
                loop = _float_loop_only(op, a, b) if np.dtype(dtype) not in FLOATS else None
                if loop is not None and not full and _numpy_accepts(op, *_as(a, b, loop)):
                    buckets["via float loop"].append((*pair, loop.name))
                    continue
                chosen.append((op, full))
                buckets["onnx"].append(pair)
        jobs[np.dtype(dtype).name] = chosen
    return buckets, jobs


class Sweep:
    """The whole sweep, started once collected (see tests/script_runs.py): the buckets are
    computed here, and the twelve independent exports run in spawned worker processes, one
    per core (a fork of a process that ran torch can hang in its thread pools), biggest first.
    """

    def __init__(self) -> None:
        self._collect: Any = None

    def wanted_by(self, items: list) -> bool:
        return any("sweep" in item.fixturenames for item in items)

    def start(self) -> None:
        if self._collect is not None:
            return
        try:
            buckets, jobs = _buckets_and_jobs()
        except Exception as exc:  # fails the tests that read the sweep, not the collection
            self._collect = partial(_reraise, exc)
            return
        folder = tempfile.mkdtemp(prefix="onnx-sweep-")
        on_session_end(lambda: shutil.rmtree(folder, ignore_errors=True))
        workers = min(len(jobs), os.cpu_count() or 1)
        if workers < 2:
            self._collect = lambda: (buckets, {
                name: _export_and_replay(name, ops, Path(folder)) for name, ops in jobs.items()
            })  # fmt: skip
            return
        context = multiprocessing.get_context("spawn")
        pool = ProcessPoolExecutor(workers, mp_context=context, initializer=_quiet_worker)
        on_session_end(lambda: pool.shutdown(wait=False, cancel_futures=True))
        futures = {
            name: pool.submit(
                _export_in_worker, name, [(op.name, full) for op, full in jobs[name]], folder
            )
            for name in sorted(jobs, key=lambda name: -len(jobs[name]))
        }

        def collect() -> tuple[dict, dict]:
            graphs = {name: futures[name].result() for name in jobs}
            pool.shutdown()
            return buckets, graphs

        self._collect = collect

    def result(self) -> dict:
        """Every pair's bucket and every dtype's graph (waits for the workers)."""
        self.start()
        buckets, graphs = self._collect()
        counts = Counter({k: len(v) for k, v in buckets.items()})
        print(f"\nONNX sweep: {len(OPS)} ops x {len(DTYPES)} dtypes: {dict(counts)}")
        for name, graph in graphs.items():
            changed = sorted({(lw.op_type, lw.have, lw.runs_in) for lw in graph["lowerings"]})
            print(f"  {name}: stand-in dtypes for {changed}")
        return {"buckets": buckets, "graphs": graphs}


def _reraise(exc: Exception) -> None:
    raise exc


SWEEP = Sweep()
BACKGROUND = [SWEEP]


@pytest.fixture(scope="module")
def sweep() -> dict:
    """Run the whole sweep once; every (op, dtype, range) pair lands in one bucket."""
    return SWEEP.result()


def _as(a: np.ndarray, b: np.ndarray, dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    return a.astype(dtype), b.astype(dtype)


def test_catalog_covers_the_whole_table() -> None:
    missing = table_entries() - covered_entries()
    assert not missing, f"table entries no catalog op calls: {sorted(map(str, missing))}"


@pytest.mark.slow
def test_every_pair_exports_and_replays_in_onnx_runtime(sweep: dict) -> None:
    failures = {name: g["errors"] for name, g in sweep["graphs"].items() if g["errors"]}
    assert not failures, failures
    buckets = sweep["buckets"]
    assert len(buckets["onnx"]) > 1000  # the sweep really ran the table
    # a float-loop pair is only skipped when its float dtype's pair was exported itself
    exported = {(op, dt) for op, dt, full in buckets["onnx"] if not full}
    for op, _dt, _full, loop in buckets["via float loop"]:
        assert (op, loop) in exported


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_pair_replays_in_the_recorded_graph(dtype: Any) -> None:
    """The torch graph itself (what pt2 and jit export) matches NumPy on fresh inputs."""
    arrays = sweep_inputs(dtype)
    rec = Recorder("graph_sweep", strict=True)
    traced = [trace_input(rec, n, a) for n, a in zip("abcd", arrays)]
    pairs, outs = [], []
    for op in OPS:
        for full in (False, True):
            if full and not (op.full_range and np.dtype(dtype).kind in "iu"):
                continue
            x, y = (arrays[2], arrays[3]) if full else (arrays[0], arrays[1])
            if _numpy_accepts(op, x, y):
                leaves = _call(op, *(traced[2:] if full else traced[:2]))
                pairs.append((op, full, len(outs), len(leaves)))
                outs += leaves
    gm = finish(rec, tuple(outs))
    fresh = [fresh_like(a, i) for i, a in enumerate(arrays)]
    got = gm(*[torch.from_numpy(f.copy()) for f in fresh])
    errors = {}
    for op, full, start, count in pairs:
        expected = _call(op, *[f.copy() for f in (fresh[2:] if full else fresh[:2])])
        try:
            for g, e in zip(got[start : start + count], expected):
                assert_same(g, e)
        except AssertionError as exc:
            errors[op.name + (" (full range)" if full else "")] = str(exc)[:300]
    assert not errors, errors
    assert len(pairs) > 80


@pytest.mark.slow
def test_float64_precision_loss_is_stated(sweep: dict) -> None:
    graph = sweep["graphs"]["float64"]
    lossy_ops = {lw.op_type for lw in graph["lowerings"] if lw.precision != "exact"}
    assert "Sinh" in lossy_ops
    assert "Atan" not in lossy_ops  # float64 atan is written in float64 operations instead
    stated = " ".join(graph["lossy"])
    assert "Sinh on float64" in stated and "float32" in stated and "'pt2'" in stated
    assert not any(lw.precision != "exact" for lw in sweep["graphs"]["float32"]["lowerings"])


@pytest.mark.slow
def test_int16_where_runs_in_a_wider_integer_exactly(sweep: dict) -> None:
    lowered = {(lw.op_type, lw.have) for lw in sweep["graphs"]["int16"]["lowerings"]}
    assert ("Where", "int16") in lowered
    assert all(lw.precision == "exact" for lw in sweep["graphs"]["int16"]["lowerings"])


@pytest.mark.xfail(
    strict=True,
    reason="torch has no uint64 comparison or division kernels, so the graph holds uint64 "
    "as int64: values at or above 2**63 compare, divide and convert as negative numbers",
)
def test_uint64_at_or_above_2_63() -> None:
    from .helpers import conform

    big = np.array([2**63 + 5, 3, 2**64 - 1], dtype=np.uint64)
    conform(lambda x: (x > 4, x // 3, x.astype(np.float64)), big)
