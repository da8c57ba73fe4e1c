"""Cost of tracing: per traced NumPy op, per traced torch op, and the seed's stereo workflow.

Prints patchport's figures next to the peer package's (``leapp==0.7.2``), measured in a
separate virtual environment (``/tmp/leappenv`` or ``$PEER_PYTHON``) through a subprocess;
patchport never imports the peer. Last, the first traced pass of a session (the seed's stereo
workflow through ``annotate``) over the plain call, for both sides in fresh interpreters
(``--first-pass`` prints only that). Run: ``python bench/trace_overhead.py``.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import timeit
import warnings
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np
import torch

from patchport.tracing import Recorder, contains_traced, finish, interop_patches, trace_input

CHAIN = 500
REPEATS = 5


def best(fn: Callable[[], object], repeats: int = REPEATS) -> float:
    """Best wall time of ``fn`` over ``repeats`` runs, in seconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def chain_plain(x: object) -> object:
    for _ in range(CHAIN):
        x = x + 1.0
    return x


def traced_chain(value: object, compile_code: bool) -> Callable[[], object]:
    """Trace the 500-op chain and finish it into a GraphModule (optionally run once)."""

    def run() -> object:
        rec = Recorder("chain")
        x = chain_plain(trace_input(rec, "x", value))
        gm = finish(rec, x)
        if compile_code:
            gm.recompile() if not hasattr(gm, "real_recompile") else gm.real_recompile()
        return gm

    return run


def per_op(value: object) -> dict[str, float]:
    plain = best(lambda: chain_plain(value)) / CHAIN
    record_only = best(lambda: chain_plain(_traced(value))) / CHAIN
    finished = best(traced_chain(value, compile_code=False)) / CHAIN
    compiled = best(traced_chain(value, compile_code=True)) / CHAIN
    return {"plain": plain, "record": record_only, "finish": finished, "codegen": compiled}


def _traced(value: object) -> object:
    rec = Recorder("chain")
    return trace_input(rec, "x", value)


# ------------------------------------------------------------------ stereo workflow
def traced_cvt_color(src, code, dst=None, dstCn=0):  # noqa: ANN001, ANN201, N803
    """The seed's BGR->RGB replacement."""
    if code != cv2.COLOR_BGR2RGB or dst is not None or dstCn not in (0, 3):
        raise ValueError("only BGR2RGB without dst")
    return torch.from_numpy(src).flip((-1,)).numpy()


def prepare_image(bgr: np.ndarray) -> np.ndarray:
    rgb = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)
    return np.transpose(rgb, (2, 0, 1))


def image_features(bgr: np.ndarray) -> np.ndarray:
    chw = prepare_image(bgr).astype(np.float32) / 255.0
    return chw.mean(axis=(1, 2))


def stereo(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    return np.concatenate([image_features(left), image_features(right)])


def stereo_ratio() -> dict[str, float]:
    rng = np.random.default_rng(0)
    frames = [rng.integers(0, 256, (48, 64, 3), dtype=np.uint8) for _ in range(2)]
    plain = best(lambda: stereo(*frames), 20)
    original = cv2.cvtColor

    def patched(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        if contains_traced(args, kwargs):
            return traced_cvt_color(*args, **kwargs)
        return original(*args, **kwargs)

    def traced() -> object:
        rec = Recorder("stereo")
        left, right = (trace_input(rec, n, f) for n, f in zip(("left", "right"), frames))
        return finish(rec, stereo(left, right))

    cv2.cvtColor = patched
    try:
        with interop_patches():
            traced_time = best(traced, 20)
    finally:
        cv2.cvtColor = original
    return {"plain": plain, "traced": traced_time, "ratio": traced_time / plain}


# ----------------------------------------------------------------------------- peer
PEER_SCRIPT = textwrap.dedent(
    """
    import json, time, warnings, cv2, numpy as np, torch
    import leapp
    from leapp import annotate
    warnings.simplefilter("ignore")
    CHAIN = __CHAIN__
    def best(fn, n=3):
        t = []
        for _ in range(n):
            t.append(fn())
        return min(t)
    def chain(x):
        for _ in range(CHAIN):
            x = x + 1.0
        return x
    out = {}
    for kind, value in (("numpy", np.zeros((4, 4))), ("torch", torch.zeros(4, 4))):
        def run(value=value):
            leapp.start("bench", save_path="/tmp/leapp_bench")
            try:
                x = annotate.input_tensors("node", {"x": value})
                x = x[0] if isinstance(x, (list, tuple)) else x
                s = time.perf_counter()
                y = chain(x)
                m = time.perf_counter()
                annotate.output_tensors("node", {"y": y})
                e = time.perf_counter()
            finally:
                leapp.stop()
            return (m - s, e - s)
        try:
            rec, fin = best(lambda: run()[0]), best(lambda: run()[1])
            out[kind] = {"record": rec / CHAIN, "finish": fin / CHAIN}
        except Exception as exc:
            out[kind] = repr(exc)[:200]
    def cvt(src, code, dst=None, dstCn=0):
        return torch.from_numpy(src).flip((-1,)).numpy()
    def stereo(left, right):
        feats = []
        for im in (left, right):
            chw = np.transpose(cv2.cvtColor(im, cv2.COLOR_BGR2RGB), (2, 0, 1))
            feats.append((chw.astype(np.float32) / 255.0).mean(axis=(1, 2)))
        return np.concatenate(feats)
    rng = np.random.default_rng(0)
    frames = [rng.integers(0, 256, (48, 64, 3), dtype=np.uint8) for _ in range(2)]
    def plain():
        s = time.perf_counter(); stereo(*frames); return time.perf_counter() - s
    def traced():
        leapp.start("stereo", save_path="/tmp/leapp_bench",
                    patching=[leapp.FunctionPatch(cv2, "cvtColor", cvt)])
        try:
            s = time.perf_counter()
            left, right = annotate.input_tensors("n", {"left": frames[0], "right": frames[1]})
            annotate.output_tensors("n", {"y": stereo(left, right)})
            return time.perf_counter() - s
        finally:
            leapp.stop()
    try:
        out["stereo"] = best(traced, 10) / best(plain, 20)
    except Exception as exc:
        out["stereo"] = repr(exc)[:200]
    print(json.dumps(out))
    """
).replace("__CHAIN__", str(CHAIN))


def peer_figures() -> dict[str, object]:
    python = os.environ.get("PEER_PYTHON", "/tmp/leappenv/bin/python")
    if not os.path.exists(python):
        return {"error": f"peer environment not found ({python})"}
    try:
        done = subprocess.run(
            [python, "-c", PEER_SCRIPT], capture_output=True, text=True, timeout=600, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"error": repr(exc)}
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr else "failed"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:8.2f} us"


def _peer_cell(peer: dict, kind: str, key: str) -> str:
    value = peer.get(kind)
    if isinstance(value, dict):
        return _us(value[key])
    return "unavailable"


def plain_data_checks() -> dict[str, float]:
    """What an installed patch pays to look for traced data in ordinary arguments."""
    from patchport.tracing import is_traced

    rec = Recorder("idle")  # an active recorder: the check cannot short-cut on "nothing active"
    trace_input(rec, "x", np.ones(3))
    plain_array = np.ones((4, 4))
    args = (plain_array, 3, "BGR")
    n = 20_000
    figures = {
        "is_traced": min(timeit.repeat(lambda: is_traced(plain_array), number=n, repeat=5)) / n,
        "contains_traced": min(timeit.repeat(lambda: contains_traced(args), number=n, repeat=5))
        / n,
    }
    rec.close()
    return figures


def replacement_call() -> dict[str, float]:
    """One traced call of a FunctionPatch replacement (the seed's cvtColor on a 48x64x3
    frame: the replacement, the purity checks, the check against OpenCV), best thread CPU
    time of many calls, beside the plain OpenCV call."""
    import patchport

    frame = np.random.default_rng(0).integers(0, 256, (48, 64, 3), dtype=np.uint8)
    plain = min(
        timeit.repeat(
            lambda: cv2.cvtColor(frame, cv2.COLOR_BGR2RGB), number=200, repeat=9,
            timer=time.thread_time,
        )
    ) / 200  # fmt: skip
    patch = patchport.FunctionPatch(cv2, "cvtColor", traced_cvt_color)
    with tempfile.TemporaryDirectory() as folder:
        with patchport.session("replacement_call", save_path=folder, patching=[patch]):
            traced = patchport.annotate.input_tensors("n", {"bgr": frame})
            call = lambda: cv2.cvtColor(traced, cv2.COLOR_BGR2RGB)  # noqa: E731
            traced_time = min(timeit.repeat(call, number=50, repeat=15, timer=time.thread_time))
            patchport.annotate.output_tensors("n", {"rgb": call()}, export_with=None)
    return {"plain": plain, "traced": traced_time / 50}


# ------------------------------------------------- first traced pass of a session
# input_tensors .. output_tensors of a session's first pass (no compile_graph, no export,
# no replay), over the plain call, in fresh interpreters; both sides run the same script.
FIRST_PASS = textwrap.dedent(
    """
    import json, statistics, sys, tempfile, time, timeit
    MOD = __import__(sys.argv[1])
    FunctionPatch, start, stop, compile_graph, annotate, InferenceManager = MOD.api()
    torch.set_num_threads(1)  # one thread: thread CPU time is the pass's whole cost
    clocks = {"wall": time.perf_counter, "cpu": time.thread_time}
    plain = {
        k: min(timeit.repeat(lambda: stereo_features(*sample.values()), number=50,
                             repeat=5, timer=c)) / 50
        for k, c in clocks.items()
    }
    passes = []
    for _ in range(int(sys.argv[2])):  # each session: one node, its first pass
        start("first", save_path=tempfile.mkdtemp(),
              patching=[FunctionPatch(cv2, "cvtColor", traced_cvt_color)])
        try:
            t0 = {k: c() for k, c in clocks.items()}
            traced = annotate.input_tensors("camera_preprocess", sample)
            features = stereo_features(*traced)
            annotate.output_tensors("camera_preprocess", {"stereo_features": features},
                                    export_with=MOD.backend_name("onnx"))
            passes.append({k: (c() - t0[k]) / plain[k] for k, c in clocks.items()})
        finally:
            stop()
    out = {f"first_{k}": passes[0][k] for k in clocks}
    out.update({f"later_{k}": statistics.median(p[k] for p in passes[1:]) for k in clocks})
    print("RESULT " + json.dumps(out))
    """
)


def first_pass_ratios(rounds: int = 5, sessions: int = 6) -> dict[str, dict[str, float]]:
    """Median over fresh interpreters (the two sides alternating, so load hits both) of
    the first traced pass / the plain call: in the process's first session (``first_*``)
    and the median of its later sessions (``later_*``); wall and thread CPU time."""
    from session_overhead import PATCHPORT_ADAPTER, PEER_ADAPTER, PEER_PYTHON, WORKFLOW

    sides = {"patchport": (sys.executable, PATCHPORT_ADAPTER), "leapp": (PEER_PYTHON, PEER_ADAPTER)}
    runs: dict[str, list[dict[str, float]]] = {side: [] for side in sides}
    errors: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "first_pass.py").write_text(WORKFLOW + FIRST_PASS)
        for _ in range(rounds):
            for side, (python, adapter) in sides.items():
                Path(folder, "side.py").write_text(adapter)
                done = subprocess.run(
                    [python, "first_pass.py", "side", str(sessions)],
                    cwd=folder, capture_output=True, text=True, timeout=600, check=False,
                )  # fmt: skip
                line = next((x for x in done.stdout.splitlines() if x.startswith("RESULT ")), "")
                if not line:
                    errors[side] = (done.stderr.strip().splitlines() or ["failed"])[-1]
                    continue
                runs[side].append(json.loads(line[len("RESULT ") :]))
    figures = {
        side: {key: statistics.median(r[key] for r in found) for key in found[0]}
        for side, found in runs.items()
        if found
    }
    figures["errors"] = errors  # type: ignore[assignment]
    return figures


def print_first_pass(figures: dict[str, dict[str, float]]) -> None:
    ours, peer = figures.get("patchport"), figures.get("leapp")
    print("first traced pass / plain call, stereo workflow, onnx (input_tensors..output_tensors;")
    print("no export or replay; medians over fresh interpreters, sides alternating)")
    print(f"{'':22} {'patchport':>10} {'LEAPP':>10} {'ratio':>8}  goal")
    for key, label in (
        ("first_cpu", "1st session, CPU"),
        ("later_cpu", "later sessions, CPU"),
        ("first_wall", "1st session, wall"),
        ("later_wall", "later sessions, wall"),
    ):
        mine = f"{ours[key]:.1f}x" if ours else "n/a"
        theirs = f"{peer[key]:.1f}x" if peer else "n/a"
        ratio = f"{ours[key] / peer[key]:.2f}x" if ours and peer else ""
        print(f"{label:22} {mine:>10} {theirs:>10} {ratio:>8}  <= 0.25x LEAPP")
    for side, error in figures.get("errors", {}).items():  # type: ignore[union-attr]
        print(f"{side}: unavailable ({error})")


def main() -> None:
    warnings.simplefilter("ignore")
    if "--first-pass" in sys.argv:  # only the session's first traced pass, both sides
        print_first_pass(first_pass_ratios())
        return
    rows = {
        "numpy": per_op(np.zeros((4, 4))),
        "torch": per_op(torch.zeros(4, 4)),
    }
    stereo_figures = stereo_ratio()
    peer = peer_figures() if "--no-peer" not in sys.argv else {"error": "skipped (--no-peer)"}
    print(f"per op, chain of {CHAIN} `x = x + 1.0` on a 4x4 float array (best of {REPEATS})")
    header = ("", "plain", "traced", "+finish", "ratio", "+codegen", "peer rec", "peer +fin")
    print("{:8} {:>11} {:>11} {:>11} {:>7} {:>11} {:>11} {:>11}".format(*header))
    for kind, r in rows.items():
        print(
            f"{kind:8} {_us(r['plain'])} {_us(r['record'])} {_us(r['finish'])} "
            f"{r['finish'] / r['plain']:6.1f}x {_us(r['codegen'])} "
            f"{_peer_cell(peer, kind, 'record'):>11} {_peer_cell(peer, kind, 'finish'):>11}"
        )
    peer_stereo = peer.get("stereo")
    peer_text = f"{peer_stereo:.1f}x" if isinstance(peer_stereo, float) else "unavailable"
    print(
        f"stereo workflow (2 x 48x64x3 uint8, cvtColor via replacement): plain "
        f"{_us(stereo_figures['plain'])}, traced+finish {_us(stereo_figures['traced'])}, "
        f"ratio {stereo_figures['ratio']:.1f}x; peer {peer_text}"
    )
    for key, value in peer.items():
        if isinstance(value, str):
            print(f"peer {key}: unavailable ({value})")
    checks = plain_data_checks()
    print(
        f"looking for traced data in plain arguments: is_traced(array) "
        f"{checks['is_traced'] * 1e9:.0f} ns, contains_traced((array, 3, 'BGR')) "
        f"{checks['contains_traced'] * 1e9:.0f} ns (target < 500 ns)"
    )
    call = replacement_call()
    print(
        f"one traced FunctionPatch call (cvtColor 48x64x3 via its replacement, checks "
        f"included): {_us(call['traced'])}, plain OpenCV {_us(call['plain'])}"
    )
    print("+finish: op plus its share of finish() into a (lazily compiled) GraphModule;")
    print("+codegen: also generating and compiling the GraphModule's Python code.")
    print("targets: <= 10 us/numpy op, <= 15 us/torch op (finishing included), stereo <= 12x")
    print()
    print_first_pass(first_pass_ratios())


if __name__ == "__main__":
    main()
