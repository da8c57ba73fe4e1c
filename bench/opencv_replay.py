"""The camera pipeline of the OpenCV end-to-end test at 480x640: plain OpenCV + torch vs the
model exported with patchport's OpenCV replacements, run by ONNX Runtime.

Undistort (cv2.remap with initUndistortRectifyMap maps), resize to 320x240, BGR->RGB,
GaussianBlur 5x5, normalisation to CHW float, a small CNN. Prints median times and ratios
(reference and fast levels); then each step of that pipeline and each replacement of the
elementwise, morphology, filter and colour families alone (one exported node each) against
the cv2 call, fastest of the runs, with library default threads and on one thread.
Not part of the tests. Run: python bench/opencv_replay.py [repeats] [single call names...]
"""

from __future__ import annotations

import functools
import statistics
import sys
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np
import onnxruntime
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import patchport  # noqa: E402
from patchport import annotate  # noqa: E402
from patchport.bundle.spec import read_spec  # noqa: E402
from patchport.patches import opencv  # noqa: E402
from tests.patches import pipelines  # noqa: E402

HEIGHT, WIDTH, SIZE = 480, 640, (320, 240)


def frame(rng: np.random.Generator) -> np.ndarray:
    return rng.integers(0, 256, (HEIGHT, WIDTH, 3), dtype=np.uint8)


def fastest_ms(run, repeats: int) -> float:
    """The fastest of ``repeats`` runs after a warm-up: on a shared machine the least
    disturbed run, closest to what the code costs."""
    run()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def interleaved_fastest_ms(runs: dict, repeats: int) -> dict[str, float]:
    """The fastest run of each, taking turns: a before/after comparison that load on a
    shared machine disturbs alike."""
    best = dict.fromkeys(runs, float("inf"))
    for run in runs.values():
        run()
    for _ in range(repeats):
        for name, run in runs.items():
            start = time.perf_counter()
            run()
            best[name] = min(best[name], time.perf_counter() - start)
    return {name: seconds * 1e3 for name, seconds in best.items()}


def interleaved_cpu_ms(runs: dict, repeats: int) -> dict[str, float]:
    """The least CPU time of the calling thread for each, taking turns: on one thread cv2,
    torch and ONNX Runtime all compute in this thread, so the time spent waiting for a
    core that other work shares (which wall time counts) is left out."""
    best = dict.fromkeys(runs, float("inf"))
    for run in runs.values():
        run()
    for _ in range(repeats):
        for name, run in runs.items():
            start = time.thread_time()
            run()
            best[name] = min(best[name], time.thread_time() - start)
    return {name: seconds * 1e3 for name, seconds in best.items()}


def median_ms(run, repeats: int) -> float:
    run()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def profile(model_path: str, feed: dict, threads: int | None, runs: int = 10) -> None:
    """Run the model with ONNX Runtime's profiler; print the time per op type and the
    slowest nodes (kernel time averaged over ``runs`` runs, the first included)."""
    import json

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads or 0
    options.enable_profiling = True
    options.profile_file_prefix = str(Path(tempfile.mkdtemp()) / "ort")
    session = onnxruntime.InferenceSession(model_path, options, providers=["CPUExecutionProvider"])
    for _ in range(runs):
        session.run(None, feed)
    events = json.loads(Path(session.end_profiling()).read_text())
    by_type: dict[str, float] = {}
    by_node: dict[str, tuple[str, float, str]] = {}
    for event in events:
        args = event.get("args", {})
        if event.get("cat") != "Node" or not event["name"].endswith("_kernel_time"):
            continue
        op = args.get("op_name", "?")
        micros = event["dur"] / runs
        by_type[op] = by_type.get(op, 0.0) + micros
        node = event["name"][: -len("_kernel_time")]
        shape = str(args.get("output_type_shape", ""))[:60]
        by_node[node] = (op, by_node.get(node, (op, 0.0, ""))[1] + micros, shape)
    total = sum(by_type.values())
    label = "default threads" if threads is None else f"{threads} thread"
    print(f"\nONNX Runtime profile ({label}), kernel time per run: {total / 1e3:.2f} ms")
    for op, micros in sorted(by_type.items(), key=lambda kv: -kv[1])[:12]:
        print(f"  {op:24} {micros / 1e3:8.2f} ms  {micros / total:6.1%}")
    print("  slowest nodes:")
    for node, (op, micros, shape) in sorted(by_node.items(), key=lambda kv: -kv[1][1])[:10]:
        print(f"    {node[:40]:40} {op:14} {micros / 1e3:7.2f} ms  {shape}")


def unoptimised(folder: str) -> bytes:
    """The camera node as the direct translator writes it before graph optimisation."""
    from patchport.export.backends import onnx_output_names
    from patchport.export.onnx import driver
    from patchport.sessions.lifecycle import last_session

    node = last_session().nodes["camera"]
    names = [p.name for p in node.inputs]
    outputs = onnx_output_names(names, [p.name for p in node.outputs])
    example = [torch.as_tensor(node.samples[0].inputs[n]) for n in names]
    return driver.translate(node.graph_module, example, names, outputs)[0]


def node_counts(model: bytes) -> dict[str, int]:
    """Nodes per op type of an ONNX model, most frequent first."""
    import onnx

    from patchport.export.onnx.optimize import op_counts

    return op_counts(onnx.load_from_string(model).graph.node)


DEFAULT_THREADS = (cv2.getNumThreads(), torch.get_num_threads())


def set_threads(threads: int | None) -> None:
    """One thread for cv2 and torch, or their defaults back (None)."""
    cv2.setNumThreads(threads or DEFAULT_THREADS[0])
    torch.set_num_threads(threads or DEFAULT_THREADS[1])


def main(repeats: int = 30, level: str = "reference", profiles: bool = True) -> None:
    """The camera pipeline exported with the OpenCV patch set at ``level`` ("fast": the
    opt-in fast level, patching=["opencv:fast"]), timed against OpenCV + torch."""
    maps = pipelines.undistort_maps(HEIGHT, WIDTH)
    model = pipelines.TinyCNN().eval()
    rng = np.random.default_rng(0)
    folder = tempfile.mkdtemp(prefix="patchport-opencv-bench-")
    start = time.perf_counter()
    with patchport.session("camera", folder, patching=opencv.all(level=level)):
        bgr = annotate.input_tensors("camera", {"bgr": frame(rng)})
        action = pipelines.policy(bgr, maps, SIZE, model)
        annotate.output_tensors("camera", {"action": action}, export_with="onnx")
    traced = time.perf_counter() - start
    result = patchport.compile_graph(visualize=False)
    exported = time.perf_counter() - start - traced
    manager = patchport.InferenceManager(result.yaml_path)
    translated = unoptimised(folder)
    spec = read_spec(result.yaml_path)
    record = spec["models"]["camera"]["parameters"].get("onnx optimisation") or {}

    fresh = frame(rng)
    expected = pipelines.policy(fresh, maps, SIZE, model).numpy()
    got = manager.run_policy({"camera/bgr": fresh})["camera/action"]
    rows = []
    for threads in (None, 1):  # library defaults, then everything on one thread
        label = "default threads" if threads is None else "1 thread"
        set_threads(threads)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads or 0
        session = onnxruntime.InferenceSession(
            str(result.models["camera"]), options, providers=["CPUExecutionProvider"]
        )
        before = onnxruntime.InferenceSession(
            translated, options, providers=["CPUExecutionProvider"]
        )
        feed = {session.get_inputs()[0].name: fresh}
        plain = median_ms(lambda: pipelines.policy(fresh, maps, SIZE, model), repeats)
        raw = median_ms(functools.partial(session.run, None, feed), repeats)
        rows.append((f"OpenCV + torch (eager), {label}", plain, 1.0))
        rows.append((f"exported ONNX in onnxruntime, {label}", raw, raw / plain))
        best = interleaved_fastest_ms(
            {
                "opencv": lambda: pipelines.policy(fresh, maps, SIZE, model),
                "optimised": functools.partial(session.run, None, feed),
                "translated": functools.partial(before.run, None, feed),
            },
            repeats,
        )
        for key in ("optimised", "translated"):
            ratio = best[key] / best["opencv"]
            rows.append((f"  fastest, {key} graph / OpenCV, {label}", best[key], ratio))
        if threads == 1:  # everything computes in this thread: CPU time, load left out
            cpu = interleaved_cpu_ms(
                {
                    "opencv": lambda: pipelines.policy(fresh, maps, SIZE, model),
                    "optimised": functools.partial(session.run, None, feed),
                },
                repeats,
            )
            rows.append(("OpenCV + torch, least thread CPU time, 1 thread", cpu["opencv"], 1.0))
            ratio = cpu["optimised"] / cpu["opencv"]
            rows.append(
                ("  ONNX, least thread CPU time / OpenCV, 1 thread", cpu["optimised"], ratio)
            )
        if threads is None:
            managed = median_ms(lambda: manager.run_policy({"camera/bgr": fresh}), repeats)
            rows.append(("exported ONNX via InferenceManager.run_policy", managed, managed / plain))
    print(
        f"pipeline at {HEIGHT}x{WIDTH} -> {SIZE[1]}x{SIZE[0]}, {level} level, "
        f"median of {repeats} runs"
    )
    print(
        f"torch {torch.__version__}, onnxruntime {onnxruntime.__version__}, cv2 {cv2.__version__}"
    )
    print(f"{'run':48}  {'ms':>8}  {'ratio':>6}")
    for name, ms, ratio in rows:
        print(f"{name:48}  {ms:8.2f}  {ratio:6.2f}")
    worst = np.abs(np.asarray(got) - np.asarray(expected)).max()
    print(f"max |diff| exported vs OpenCV on a fresh frame: {worst:.2e}")
    counts = (node_counts(translated), node_counts(Path(result.models["camera"]).read_bytes()))
    print(f"nodes as translated: {sum(counts[0].values())} {counts[0]}")
    print(f"nodes as written:    {sum(counts[1].values())} {counts[1]}")
    print(f"onnx optimisation recorded in the bundle: {record}")
    print(f"trace {traced:.2f} s, export + replay validation {exported:.2f} s")
    set_threads(None)
    for threads in (None, 1) if profiles else ():
        profile(str(result.models["camera"]), {session.get_inputs()[0].name: fresh}, threads)


KERNEL = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5))
RECT5 = np.ones((5, 5), np.uint8)
MAPS = pipelines.undistort_maps(HEIGHT, WIDTH)
LUT3 = np.random.default_rng(3).integers(0, 256, (1, 256, 3)).astype(np.uint8)  # per channel
SINGLE_CALLS = {  # name -> the call on a BGR uint8 frame (and a second one: TWO_INPUTS)
    "remap (pipeline)": lambda x: cv2.remap(x, MAPS[0], MAPS[1], cv2.INTER_LINEAR),
    "resize (pipeline)": lambda x: cv2.resize(x, SIZE, interpolation=cv2.INTER_LINEAR),
    "cvtColor_RGB": lambda x: cv2.cvtColor(x, cv2.COLOR_BGR2RGB),
    "GaussianBlur_5x5": lambda x: cv2.GaussianBlur(x, (5, 5), 1.2),
    "add": lambda x: cv2.add(x, (10, 20, 30)),
    "add_frames": lambda x, y: cv2.add(x, y),
    "subtract": lambda x, y: cv2.subtract(x, y),
    "multiply": lambda x: cv2.multiply(x, x, scale=1 / 255),
    "absdiff": lambda x, y: cv2.absdiff(x, y),
    "bitwise_and": lambda x, y: cv2.bitwise_and(x, y),
    "bitwise_and_masked": lambda x, y: cv2.bitwise_and(x, x, mask=y[..., 0]),  # masked copy
    "add_masked": lambda x, y: cv2.add(x, y, mask=y[..., 1]),
    "bitwise_not": lambda x: cv2.bitwise_not(x),
    "LUT": lambda x: cv2.LUT(x, (255 - np.arange(256)).astype(np.uint8)),
    "erode": lambda x: cv2.erode(x, None),
    "erode_5x5": lambda x: cv2.erode(x, RECT5),
    "erode_gray": lambda x: cv2.erode(x, None),
    "dilate_ellipse": lambda x: cv2.dilate(x, KERNEL),
    "dilate_iterations_3": lambda x: cv2.dilate(x, None, iterations=3),  # a 7x7 rectangle
    "morphologyEx_open": lambda x: cv2.morphologyEx(x, cv2.MORPH_OPEN, KERNEL),
    "morphologyEx_close_5x5": lambda x: cv2.morphologyEx(x, cv2.MORPH_CLOSE, RECT5),
    "morphologyEx_gradient": lambda x: cv2.morphologyEx(x, cv2.MORPH_GRADIENT, None),
    "medianBlur_3": lambda x: cv2.medianBlur(x, 3),
    "medianBlur_3_gray": lambda x: cv2.medianBlur(x, 3),
    "flip_columns": lambda x: cv2.flip(x, 1),
    "medianBlur_5": lambda x: cv2.medianBlur(x, 5),
    "medianBlur_5_gray": lambda x: cv2.medianBlur(x, 5),
    "Sobel": lambda x: cv2.Sobel(x, cv2.CV_16S, 1, 0),
    "cvtColor_YCrCb": lambda x: cv2.cvtColor(x, cv2.COLOR_BGR2YCrCb),
    "cvtColor_GRAY": lambda x: cv2.cvtColor(x, cv2.COLOR_BGR2GRAY),
    "cvtColor_GRAY2BGR": lambda x: cv2.cvtColor(x, cv2.COLOR_GRAY2BGR),
    "cvtColor_BGRA": lambda x: cv2.cvtColor(x, cv2.COLOR_BGR2BGRA),
    "cvtColor_HSV": lambda x: cv2.cvtColor(x, cv2.COLOR_BGR2HSV),
    "flip_both": lambda x: cv2.flip(x, -1),
    "LUT_per_channel": lambda x: cv2.LUT(x, LUT3),
    "applyColorMap": lambda x: cv2.applyColorMap(x, cv2.COLORMAP_JET),
    "resize_area": lambda x: cv2.resize(x, (213, 160), interpolation=cv2.INTER_AREA),
    "resize_linear_half": lambda x: cv2.resize(x, (320, 240)),  # the pipeline's resize
    "resize_linear": lambda x: cv2.resize(x, (213, 160)),
}
# two frames in, both model inputs: the call alone is timed, no flip to make a second one
TWO_INPUTS = {"add_frames", "subtract", "absdiff", "bitwise_and", "bitwise_and_masked"}
TWO_INPUTS |= {"add_masked"}
GRAY = {"erode_gray", "medianBlur_3_gray", "medianBlur_5_gray", "cvtColor_GRAY2BGR"}


FAST_CALLS = {  # the same calls with the opt-in fast level (patching=["opencv:fast"])
    "remap (pipeline), fast": SINGLE_CALLS["remap (pipeline)"],
}


def fastest_cpu_ms(run, repeats: int) -> float:
    """The least CPU time of the calling thread over ``repeats`` runs: on one thread, cv2
    and ONNX Runtime compute in this thread, so time spent waiting for a core shared with
    other work (which wall time counts, more for longer calls) is left out."""
    run()
    best = float("inf")
    for _ in range(repeats):
        start = time.thread_time()
        run()
        best = min(best, time.thread_time() - start)
    return best * 1e3


def call_inputs(name: str, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """The named call's inputs: one BGR frame, its first channel (GRAY), or two frames."""
    if name in GRAY:
        return {"gray": np.ascontiguousarray(frame(rng)[..., 0])}
    if name in TWO_INPUTS:
        return {"bgr": frame(rng), "other": frame(rng)}
    return {"bgr": frame(rng)}


def single_calls(
    repeats: int = 30, names: list[str] | None = None, level: str = "reference"
) -> None:
    """Each replacement exported alone, run by ONNX Runtime, against the cv2 call (only the
    calls in ``names`` when given); ``level="fast"``: the fast level's calls. Each row
    also gives the exported graph's node count."""
    import onnx

    table = FAST_CALLS if level == "fast" else SINGLE_CALLS
    calls = {n: c for n, c in table.items() if not names or n in names}
    if not calls:
        return
    rng = np.random.default_rng(1)
    folder = tempfile.mkdtemp(prefix="patchport-opencv-bench-ops-")
    with patchport.session("ops", folder, patching=opencv.all(level=level)):
        for name, call in calls.items():
            traced = annotate.input_tensors(name, call_inputs(name, rng))
            args = traced if isinstance(traced, (list, tuple)) else (traced,)
            annotate.output_tensors(name, {"out": call(*args)}, export_with="onnx")
    result = patchport.compile_graph(visualize=False)
    print(
        f"single calls at {HEIGHT}x{WIDTH}, {level} level, fastest of {repeats} runs (ms; "
        "the machine is shared: the least disturbed run)"
    )
    header = f"{'cv2':>8}  {'onnx':>8}  {'ratio':>6}"
    print(
        f"{'call':22}  {header} (default threads)  {header} (1 thread)  cpu ratio  "
        "max |diff|  nodes"
    )
    for name, call in calls.items():
        fresh = list(call_inputs(name, rng).values())
        row = f"{name:22}"
        for threads in (None, 1):
            set_threads(threads)
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = threads or 0
            session = onnxruntime.InferenceSession(
                str(result.models[name]), options, providers=["CPUExecutionProvider"]
            )
            feed = {i.name: a for i, a in zip(session.get_inputs(), fresh)}
            plain = fastest_ms(functools.partial(call, *fresh), repeats)
            raw = fastest_ms(functools.partial(session.run, None, feed), repeats)
            row += f"  {plain:8.3f}  {raw:8.3f}  {raw / plain:6.1f}" + " " * 18
        # one thread: the ratio of thread CPU times too (a shared machine delays wall time)
        cpu = fastest_cpu_ms(functools.partial(session.run, None, feed), repeats)
        cpu /= fastest_cpu_ms(functools.partial(call, *fresh), repeats)
        set_threads(None)
        diff = np.abs(session.run(None, feed)[0].astype(np.int64) - call(*fresh)).max()
        nodes = len(onnx.load(str(result.models[name])).graph.node)
        print(f"{row[:-18]}  {cpu:9.1f}  {diff:10d}  {nodes:5d}")


if __name__ == "__main__":
    # python bench/opencv_replay.py [repeats] [call names...]: only those single calls
    counts = [int(a) for a in sys.argv[1:2]]
    chosen = sys.argv[2:]
    if not chosen:
        main(*counts)
        main(*counts, level="fast", profiles=False)
    single_calls(*counts, names=chosen)
    single_calls(*counts, names=chosen, level="fast")
