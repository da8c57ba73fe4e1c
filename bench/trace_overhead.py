"""Cost of tracing: per traced NumPy op, per traced torch op, and the seed's stereo workflow.

Prints patchport's figures next to the peer package's (``leapp==0.7.2``), measured in a
separate virtual environment (``/tmp/leappenv`` or ``$PEER_PYTHON``) through a subprocess;
patchport never imports the peer. Run: ``python bench/trace_overhead.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
import warnings
from collections.abc import Callable

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
    import json, time, numpy as np, torch
    import leapp
    from leapp import annotate
    CHAIN = %d
    def best(fn, n=3):
        t = []
        for _ in range(n):
            s = time.perf_counter(); fn(); t.append(time.perf_counter() - s)
        return min(t)
    def chain(x):
        for _ in range(CHAIN):
            x = x + 1.0
        return x
    out = {}
    for kind, value in (("numpy", np.zeros((4, 4))), ("torch", torch.zeros(4, 4))):
        def run(value=value):
            leapp.start("bench", save_path="/tmp/leapp_bench")
            x = annotate.input_tensors("node", {"x": value})
            x = x[0] if isinstance(x, (list, tuple)) else x
            y = chain(x)
            annotate.output_tensors("node", {"y": y})
            leapp.stop()
        try:
            out[kind] = best(run) / CHAIN
        except Exception as exc:
            out[kind] = repr(exc)[:200]
    print(json.dumps(out))
    """
    % CHAIN
)


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


def main() -> None:
    warnings.simplefilter("ignore")
    rows = {
        "numpy": per_op(np.zeros((4, 4))),
        "torch": per_op(torch.zeros(4, 4)),
    }
    peer = peer_figures() if "--no-peer" not in sys.argv else {"error": "skipped"}
    print(f"chain of {CHAIN} `x = x + 1.0` on a 4x4 float array; best of {REPEATS}")
    print(f"{'':8} {'plain':>11} {'traced':>11} {'+finish':>11} {'+codegen':>11} {'peer':>14}")
    for kind, r in rows.items():
        peer_value = peer.get(kind, peer.get("error", "n/a"))
        peer_text = _us(peer_value) if isinstance(peer_value, float) else "unavailable"
        print(
            f"{kind:8} {_us(r['plain'])} {_us(r['record'])} {_us(r['finish'])} "
            f"{_us(r['codegen'])} {peer_text:>14}"
        )
        print(
            f"{'':8} {'':>11} {'':>11} ratio {r['finish'] / r['plain']:5.1f}x "
            f"(with codegen {r['codegen'] / r['plain']:5.1f}x)"
        )
    if "error" in peer:
        print(f"peer unavailable: {peer['error']}")
    s = stereo_ratio()
    print(
        f"stereo workflow (2 x 48x64x3 uint8, cvtColor via replacement): plain "
        f"{_us(s['plain'])}, traced+finish {_us(s['traced'])}, ratio {s['ratio']:.1f}x"
    )
    print("targets: <= 10 us/numpy op, <= 15 us/torch op (finishing included), stereo <= 12x")


if __name__ == "__main__":
    main()
