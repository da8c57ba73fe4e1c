"""Cost of tracing sessions: import, an installed patch on ordinary data, export, replay.

Prints patchport's figures beside the peer package's (``leapp==0.7.2``), which runs in its
own subprocess (``$PEER_PYTHON``, else ``/tmp/leappenv/bin/python``, else this interpreter
where leapp is installed beside patchport); patchport never imports it. Both sides run the
same script in fresh interpreters, alternately, so machine load hits both alike; the
ratios are what counts. Not part of the tests.
Run: python bench/session_overhead.py [repeats]
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PEER_PYTHON = os.environ.get(
    "PEER_PYTHON",
    "/tmp/leappenv/bin/python" if Path("/tmp/leappenv/bin/python").exists() else sys.executable,
)

# The measured workload, shared by both sides: the seed's stereo workflow, one patch.
WORKFLOW = textwrap.dedent(
    """
    import cv2, numpy as np, torch

    def traced_cvt_color(src, code, dst=None, dstCn=0):
        return torch.from_numpy(src).flip((-1,)).numpy()

    def prepare_image(bgr):
        return np.transpose(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB), (2, 0, 1))

    def image_features(bgr):
        image = torch.from_numpy(prepare_image(bgr)).float() / 255.0
        return torch.nn.functional.adaptive_avg_pool2d(image.unsqueeze(0), (2, 2)).flatten()

    def stereo_features(left, right):
        return torch.cat([image_features(left), image_features(right)])

    rng = np.random.default_rng(0)
    sample = {k: rng.integers(0, 256, size=(48, 64, 3), dtype=np.uint8)
              for k in ("left_bgr", "right_bgr")}
    """
)

MEASURE = textwrap.dedent(
    """
    import json, sys, tempfile, time, timeit
    import numpy as np
    MOD = __import__(sys.argv[1])
    FunctionPatch, start, stop, compile_graph, annotate, InferenceManager = MOD.api()

    # one torch thread: on a shared machine OpenMP waits make tiny ops' timings erratic
    torch.set_num_threads(1)

    def per_call_us(fn, number=20000):
        return min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6

    # run_policy / the plain call in steady state: warmed up (TorchScript's profiling runs,
    # ORT's first runs), then rounds alternating a block of each, so load changes hit both;
    # medians of the per-round ratios of wall time and of CPU time: all the process's
    # threads for run_policy (a runtime's pool included), the calling thread for the plain
    # call (torch runs on it alone). A pause after each block lets a runtime's spinning pool
    # go idle, so it slows or bills neither the plain call nor the next block.
    def steady_ratios(policy, eager, rounds=25, number=20):
        for _ in range(30):
            policy()
            eager()
        wall, cpu = [], []
        for _ in range(rounds):
            time.sleep(0.02)
            t0, c0 = time.perf_counter(), time.process_time()
            for _ in range(number):
                policy()
            t1, c1 = time.perf_counter(), time.process_time()
            time.sleep(0.02)
            t2, c2 = time.perf_counter(), time.thread_time()
            for _ in range(number):
                eager()
            t3, c3 = time.perf_counter(), time.thread_time()
            wall.append((t1 - t0) / (t3 - t2))
            cpu.append((c1 - c0) / max(c3 - c2, 1e-9))
        return sorted(wall)[len(wall) // 2], sorted(cpu)[len(cpu) // 2]

    small = np.zeros((8, 12, 3), np.uint8)
    plain = per_call_us(lambda: cv2.cvtColor(small, cv2.COLOR_BGR2RGB))
    start("overhead", save_path=tempfile.mkdtemp(),
          patching=[FunctionPatch(cv2, "cvtColor", traced_cvt_color)])
    try:
        idle = per_call_us(lambda: cv2.cvtColor(small, cv2.COLOR_BGR2RGB))
        annotate.input_tensors("busy", {"x": small})
        busy = per_call_us(lambda: cv2.cvtColor(small, cv2.COLOR_BGR2RGB))
    finally:
        stop()
    out = {"patch_plain_us": plain, "patch_idle_us": idle, "patch_busy_us": busy}

    # one traced NumPy op (a traced uint8 image plus a number) and the same op on plain data
    image = np.zeros((8, 12, 3), np.uint8)
    out["numpy_op_plain_us"] = per_call_us(lambda: image + 1)
    start("numpy_op", save_path=tempfile.mkdtemp(), patching=[])
    try:
        x = annotate.input_tensors("op", {"x": image})
        x = x[0] if isinstance(x, (list, tuple)) else x
        out["numpy_op_traced_us"] = per_call_us(lambda: x + 1, number=2000)
    finally:
        stop()
    plain_call = min(timeit.repeat(lambda: stereo_features(*sample.values()), number=50,
                                   repeat=5)) / 50

    # later traced passes (input_tensors, the workflow, output_tensors) / the plain call:
    # median over passes 2..6 of one node; the first pass of each session is timed below
    for backend in ("jit", "onnx"):
        start(f"passes_{backend}", save_path=tempfile.mkdtemp(),
              patching=[FunctionPatch(cv2, "cvtColor", traced_cvt_color)])
        try:
            times = []
            for _ in range(6):
                t1 = time.perf_counter()
                traced = annotate.input_tensors("camera_preprocess", sample)
                features = stereo_features(*traced)
                annotate.output_tensors("camera_preprocess", {"stereo_features": features},
                                        export_with=MOD.backend_name(backend))
                times.append(time.perf_counter() - t1)
        finally:
            stop()
        out[f"later_{backend}"] = sorted(times[1:])[len(times[1:]) // 2] / plain_call

    for backend in ("jit", "onnx", "pt2", "jit_warm", "onnx_warm"):  # warm: a second run
        t0 = time.perf_counter()
        start("workflow", save_path=tempfile.mkdtemp(),
              patching=[FunctionPatch(cv2, "cvtColor", traced_cvt_color)])
        try:
            t1 = time.perf_counter()
            traced = annotate.input_tensors("camera_preprocess", sample)
            features = stereo_features(*traced)
            annotate.output_tensors("camera_preprocess", {"stereo_features": features},
                                    export_with=MOD.backend_name(backend.split("_")[0]))
            out[f"first_pass_{backend}"] = (time.perf_counter() - t1) / plain_call
        finally:
            stop()
        yaml_path = MOD.compile(compile_graph)
        out[f"workflow_{backend}_s"] = time.perf_counter() - t0
        if backend.endswith("_warm"):
            continue
        manager = InferenceManager(str(yaml_path))
        feed = {f"camera_preprocess/{k}": MOD.feed_value(backend, v) for k, v in sample.items()}
        wall, cpu = steady_ratios(lambda: manager.run_policy(feed),
                                  lambda: stereo_features(*sample.values()))
        out[f"run_policy_{backend}_ratio"] = wall
        out[f"run_policy_{backend}_cpu_ratio"] = cpu
    print("RESULT " + json.dumps(out))
    """
)

PATCHPORT_ADAPTER = textwrap.dedent(
    """
    import patchport
    def api():
        return (patchport.FunctionPatch, patchport.start, patchport.stop,
                patchport.compile_graph, patchport.annotate, patchport.InferenceManager)
    def backend_name(backend):
        return backend
    def feed_value(backend, array):
        return array  # run_policy takes the NumPy arrays the workflow has
    def compile(compile_graph):
        return compile_graph(visualize=False, validate=True).yaml_path
    """
)

PEER_ADAPTER = textwrap.dedent(
    """
    import glob, leapp
    from leapp import annotate
    _dirs = []
    def api():
        from leapp import InferenceManager
        def start(name, save_path, patching):
            _dirs.append((save_path, name))
            return leapp.start(name=name, save_path=save_path, patching=patching)
        return (leapp.FunctionPatch, start, leapp.stop, leapp.compile_graph, annotate,
                InferenceManager)
    def backend_name(backend):
        return {"onnx": "onnx-dynamo"}.get(backend, backend)
    def feed_value(backend, array):
        import torch
        return torch.from_numpy(array) if backend != "onnx" else array  # its torch wants tensors
    def compile(compile_graph):
        compile_graph(visualize=False, validate=True)
        save_path, name = _dirs[-1]
        return glob.glob(f"{save_path}/{name}/*.yaml")[0]
    """
)


FIRST_EXPORT = textwrap.dedent(
    """
    import sys, tempfile, time
    import cv2, numpy as np, torch
    backend = sys.argv[2]
    t0 = time.perf_counter()
    MOD = __import__(sys.argv[1])
    FunctionPatch, start, stop, compile_graph, annotate, InferenceManager = MOD.api()
    start("workflow", save_path=tempfile.mkdtemp(),
          patching=[FunctionPatch(cv2, "cvtColor", traced_cvt_color)])
    try:
        traced = annotate.input_tensors("camera_preprocess", sample)
        features = stereo_features(*traced)
        annotate.output_tensors("camera_preprocess", {"stereo_features": features},
                                export_with=MOD.backend_name(backend))
    finally:
        stop()
    MOD.compile(compile_graph)
    print("RESULT", time.perf_counter() - t0)
    """
)


def first_export(python: str, adapter: str, backend: str) -> float:
    """Seconds from ``import`` to a validated bundle in a fresh interpreter (torch, NumPy
    and OpenCV already imported, as in the user's script)."""
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "side.py").write_text(adapter)
        Path(folder, "first.py").write_text(WORKFLOW + FIRST_EXPORT)
        done = subprocess.run(
            [python, "first.py", "side", backend],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=900,
        )
    line = next((ln for ln in done.stdout.splitlines() if ln.startswith("RESULT ")), None)
    if line is None:
        raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr else "no result")
    return float(line.split()[1])


def import_cost(python: str, module: str, touch: str = "") -> float:
    """Median extra seconds of ``import module`` after ``import torch, numpy, cv2``."""
    code = (
        "import time, torch, numpy, cv2\n"
        f"t = time.perf_counter()\nimport {module}\n{touch}\n"
        "print(time.perf_counter() - t)"
    )
    runs = [
        float(
            subprocess.run(
                [python, "-c", code], capture_output=True, text=True, check=True
            ).stdout.split()[-1]
        )
        for _ in range(5)
    ]
    return statistics.median(runs)


def measure(python: str, adapter: str) -> dict[str, float]:
    """Run the shared measurement with one side's adapter in a fresh interpreter."""
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "side.py").write_text(adapter)
        Path(folder, "run.py").write_text(WORKFLOW + MEASURE)
        done = subprocess.run(
            [python, "run.py", "side"], cwd=folder, capture_output=True, text=True, timeout=900
        )
    line = next((ln for ln in done.stdout.splitlines() if ln.startswith("RESULT ")), None)
    if line is None:
        raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr else "no result")
    return json.loads(line[len("RESULT ") :])


def peer_available() -> bool:
    if not Path(PEER_PYTHON).exists():
        return False
    done = subprocess.run([PEER_PYTHON, "-c", "import leapp"], capture_output=True)
    return done.returncode == 0


def main(repeats: int = 3) -> None:
    peer_ok = peer_available()
    firsts: dict[tuple[str, str], list[float]] = {}
    for _ in range(repeats):  # alternate the sides so load changes hit both
        for backend in ("onnx", "jit"):
            sides = [("ours", sys.executable, PATCHPORT_ADAPTER)]
            if peer_ok:
                sides.append(("peer", PEER_PYTHON, PEER_ADAPTER))
            for side, python, adapter in sides:
                try:
                    seconds = first_export(python, adapter, backend)
                except Exception as exc:  # noqa: BLE001 - reported below
                    print(f"first export, {side} {backend}: failed: {exc}", file=sys.stderr)
                    continue
                firsts.setdefault((side, backend), []).append(seconds)
    ours = measure(sys.executable, PATCHPORT_ADAPTER)
    for backend in ("onnx", "jit"):
        if ("ours", backend) in firsts:
            ours[f"first_{backend}_s"] = statistics.median(firsts["ours", backend])
    ours["import_s"] = import_cost(sys.executable, "patchport")
    ours["import_full_s"] = import_cost(
        sys.executable, "patchport", "patchport.start; patchport.compile_graph"
    )
    peer: dict[str, float] = {}
    peer_note = ""
    if peer_ok:
        try:
            peer = measure(PEER_PYTHON, PEER_ADAPTER)
            peer["import_s"] = import_cost(PEER_PYTHON, "leapp")
            for backend in ("onnx", "jit"):
                if ("peer", backend) in firsts:
                    peer[f"first_{backend}_s"] = statistics.median(firsts["peer", backend])
        except Exception as exc:  # the peer's API may differ; say so instead of guessing
            peer_note = f"peer run failed: {exc}"
    else:
        peer_note = f"peer (leapp==0.7.2) not installed at {PEER_PYTHON}"

    def show(key: str, fmt: str) -> str:
        return fmt.format(peer[key]) if key in peer else "n/a"

    def ratio(key: str, fmt: str = "{:.2f}") -> str:
        if key not in peer or key not in ours or not peer[key]:
            return ""
        return f"{fmt.format(ours[key] / peer[key])}x peer"

    for side in (ours, peer):
        for backend in ("jit", "onnx"):
            if f"first_pass_{backend}" in side:
                side[f"traced_{backend}"] = min(
                    side[f"first_pass_{backend}"], side[f"first_pass_{backend}_warm"]
                )
    issue_rows = [
        (
            "fresh process: import+start..compile_graph(validate), onnx (s)",
            "first_onnx_s",
            "{:.2f}",
            "<= 0.5x LEAPP",
        ),
        (
            "fresh process: import+start..compile_graph(validate), jit (s)",
            "first_jit_s",
            "{:.2f}",
            "<= 0.5x LEAPP",
        ),
        (
            "first traced pass / plain call, stereo workflow, jit",
            "traced_jit",
            "{:.1f}x",
            "<= 0.25x LEAPP",
        ),
        (
            "first traced pass / plain call, stereo workflow, onnx",
            "traced_onnx",
            "{:.1f}x",
            "<= 0.25x LEAPP",
        ),
        ("  later traced passes of the node / plain call, jit", "later_jit", "{:.1f}x", ""),
        ("  later traced passes of the node / plain call, onnx", "later_onnx", "{:.1f}x", ""),
        (
            "one traced NumPy op, uint8 8x12x3 + 1 (us)",
            "numpy_op_traced_us",
            "{:.1f}",
            "<= 0.3x LEAPP",
        ),
        ("  same op on plain data (us)", "numpy_op_plain_us", "{:.2f}", ""),
    ]
    print("the issue's rows (medians; fresh processes alternate the two sides):")
    width = max(len(r[0]) for r in issue_rows)
    print(f"{'figure'.ljust(width)}  {'patchport':>10}  {'LEAPP':>10}  {'ratio':>12}  goal")
    for name, key, fmt, goal in issue_rows:
        mine = fmt.format(ours[key]) if key in ours else "n/a"
        print(f"{name.ljust(width)}  {mine:>10}  {show(key, fmt):>10}  {ratio(key):>12}  {goal}")
    print()
    rows = [
        (
            "import patchport after torch+numpy+cv2 (s)",
            f"{ours['import_s']:.3f}",
            show("import_s", "{:.3f}"),
            "< 0.2",
        ),
        ("  ... and first use of start/compile_graph (s)", f"{ours['import_full_s']:.3f}", "", ""),
        (
            "cvtColor 8x12x3 unpatched (us)",
            f"{ours['patch_plain_us']:.2f}",
            show("patch_plain_us", "{:.2f}"),
            "",
        ),
        (
            "added by installed patch, no node traced (us)",
            f"{ours['patch_idle_us'] - ours['patch_plain_us']:.2f}",
            show("patch_idle_us", "{:.2f}")
            if not peer
            else f"{peer['patch_idle_us'] - peer['patch_plain_us']:.2f}",
            "< 0.5",
        ),
        (
            "added by installed patch, node being traced (us)",
            f"{ours['patch_busy_us'] - ours['patch_plain_us']:.2f}",
            "n/a" if not peer else f"{peer['patch_busy_us'] - peer['patch_plain_us']:.2f}",
            "< 0.5",
        ),
        (
            "start..compile_graph(validate) jit (s)",
            f"{ours['workflow_jit_s']:.2f}",
            show("workflow_jit_s", "{:.2f}"),
            "<= half the peer",
        ),
        (
            "start..compile_graph(validate) onnx (s)",
            f"{ours['workflow_onnx_s']:.2f}",
            show("workflow_onnx_s", "{:.2f}"),
            "<= half the peer",
        ),
        (
            "  same, second run in the process, jit (s)",
            f"{ours['workflow_jit_warm_s']:.3f}",
            show("workflow_jit_warm_s", "{:.3f}"),
            "",
        ),
        (
            "  same, second run in the process, onnx (s)",
            f"{ours['workflow_onnx_warm_s']:.2f}",
            show("workflow_onnx_warm_s", "{:.2f}"),
            "",
        ),
        (
            "run_policy / plain Python, jit",
            f"{ours['run_policy_jit_ratio']:.2f}x",
            show("run_policy_jit_ratio", "{:.2f}x"),
            "<= peer",
        ),
        (
            "run_policy / plain Python, onnx",
            f"{ours['run_policy_onnx_ratio']:.2f}x",
            show("run_policy_onnx_ratio", "{:.2f}x"),
            "<= peer",
        ),
        (
            "run_policy / plain Python, pt2",
            f"{ours['run_policy_pt2_ratio']:.2f}x",
            show("run_policy_pt2_ratio", "{:.2f}x"),
            "<= peer",
        ),
    ]
    rows += [
        (
            f"  same, process CPU time, {backend}",
            f"{ours[f'run_policy_{backend}_cpu_ratio']:.2f}x",
            show(f"run_policy_{backend}_cpu_ratio", "{:.2f}x"),
            "",
        )
        for backend in ("jit", "onnx", "pt2")
    ]
    width = max(len(r[0]) for r in rows)
    print(f"{'metric'.ljust(width)}  {'patchport':>10}  {'peer':>10}  target")
    for name, mine, theirs, target in rows:
        print(f"{name.ljust(width)}  {mine:>10}  {theirs:>10}  {target}")
    if peer_note:
        print(f"\nnote: {peer_note}")
    print(
        "peer reference figures from the issue: import +1.3 s, patch +2.9 us, "
        "workflow 0.46 s jit / 1.7 s onnx, run_policy 1.1x jit / 4.1x onnx"
    )


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:2]))
