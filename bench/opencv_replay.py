"""The camera pipeline of the OpenCV end-to-end test at 480x640: plain OpenCV + torch vs the
model exported with patchport's OpenCV replacements, run by ONNX Runtime.

Undistort (cv2.remap with initUndistortRectifyMap maps), resize to 320x240, BGR->RGB,
GaussianBlur 5x5, normalisation to CHW float, a small CNN. Prints median times and ratios.
Not part of the tests. Run: python bench/opencv_replay.py [repeats]
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
from patchport.patches import opencv  # noqa: E402
from tests.patches import pipelines  # noqa: E402

HEIGHT, WIDTH, SIZE = 480, 640, (320, 240)


def frame(rng: np.random.Generator) -> np.ndarray:
    return rng.integers(0, 256, (HEIGHT, WIDTH, 3), dtype=np.uint8)


def median_ms(run, repeats: int) -> float:
    run()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def main(repeats: int = 30) -> None:
    maps = pipelines.undistort_maps(HEIGHT, WIDTH)
    model = pipelines.TinyCNN().eval()
    rng = np.random.default_rng(0)
    folder = tempfile.mkdtemp(prefix="patchport-opencv-bench-")
    start = time.perf_counter()
    with patchport.session("camera", folder, patching=opencv.all()):
        bgr = annotate.input_tensors("camera", {"bgr": frame(rng)})
        action = pipelines.policy(bgr, maps, SIZE, model)
        annotate.output_tensors("camera", {"action": action}, export_with="onnx")
    traced = time.perf_counter() - start
    result = patchport.compile_graph(visualize=False)
    exported = time.perf_counter() - start - traced
    manager = patchport.InferenceManager(result.yaml_path)

    fresh = frame(rng)
    expected = pipelines.policy(fresh, maps, SIZE, model).numpy()
    got = manager.run_policy({"camera/bgr": fresh})["camera/action"]
    rows = []
    for threads in (None, 1):  # library defaults, then everything on one thread
        label = "default threads" if threads is None else "1 thread"
        if threads is not None:
            cv2.setNumThreads(threads)
            torch.set_num_threads(threads)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads or 0
        session = onnxruntime.InferenceSession(
            str(result.models["camera"]), options, providers=["CPUExecutionProvider"]
        )
        feed = {session.get_inputs()[0].name: fresh}
        plain = median_ms(lambda: pipelines.policy(fresh, maps, SIZE, model), repeats)
        raw = median_ms(functools.partial(session.run, None, feed), repeats)
        rows.append((f"OpenCV + torch (eager), {label}", plain, 1.0))
        rows.append((f"exported ONNX in onnxruntime, {label}", raw, raw / plain))
        if threads is None:
            managed = median_ms(lambda: manager.run_policy({"camera/bgr": fresh}), repeats)
            rows.append(("exported ONNX via InferenceManager.run_policy", managed, managed / plain))
    print(f"pipeline at {HEIGHT}x{WIDTH} -> {SIZE[1]}x{SIZE[0]}, median of {repeats} runs")
    print(
        f"torch {torch.__version__}, onnxruntime {onnxruntime.__version__}, cv2 {cv2.__version__}"
    )
    print(f"{'run':48}  {'ms':>8}  {'ratio':>6}")
    for name, ms, ratio in rows:
        print(f"{name:48}  {ms:8.2f}  {ratio:6.2f}")
    print(f"max |diff| exported vs OpenCV on a fresh frame: {np.abs(got - expected).max():.2e}")
    print(f"trace {traced:.2f} s, export + replay validation {exported:.2f} s")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:2]))
