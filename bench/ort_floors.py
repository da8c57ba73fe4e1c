"""What ONNX Runtime cannot go below on this CPU, beside the OpenCV calls it is compared to.

Issue 25 asks for the exported camera pipeline at OpenCV's pace and every single call
within 3x. This measures the floors any lowering meets, one thread, fastest of the runs:
one ``session.run`` that does nothing but hand a 480x640x3 uint8 frame back (the cost of a
call, against ``cv2.cvtColor(BGR2RGB)``); one full-frame elementwise pass (``Min``); and
the four ``GatherElements`` of a bilinear remap with the pipeline's own undistortion maps
(the least an exact or float remap needs: one gather per tap), against ``cv2.remap``.
Not part of the tests. Run: python bench/ort_floors.py [repeats]
"""

from __future__ import annotations

import sys
from pathlib import Path

import cv2
import numpy as np
import onnxruntime
from onnx import TensorProto, helper, numpy_helper

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.patches import pipelines  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from opencv_replay import fastest_cpu_ms  # noqa: E402

HEIGHT, WIDTH = 480, 640


def fastest_us(run, repeats: int) -> float:
    """The least thread CPU time of ``repeats`` runs, in microseconds (the replay bench's
    measure, so the two benches' figures compare)."""
    return fastest_cpu_ms(run, repeats) * 1e3


def session(nodes: list, inputs: list, outputs: list[str], initializers=()) -> object:
    graph = helper.make_graph(
        nodes,
        "floor",
        inputs,
        [helper.make_tensor_value_info(o, TensorProto.UINT8, None) for o in outputs],
        initializer=list(initializers),
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    return onnxruntime.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )


def remap_taps() -> list[np.ndarray]:
    """Flat element indices of the four bilinear taps of the pipeline's undistortion."""
    map_x, map_y = pipelines.undistort_maps(HEIGHT, WIDTH)
    x0 = np.clip(np.floor(map_x).astype(np.int64), 0, WIDTH - 2)
    y0 = np.clip(np.floor(map_y).astype(np.int64), 0, HEIGHT - 2)
    taps = []
    for dy, dx in ((0, 0), (0, 1), (1, 0), (1, 1)):
        start = ((y0 + dy) * WIDTH + (x0 + dx)) * 3
        taps.append((start[..., None] + np.arange(3)).reshape(-1))
    return taps


def main(repeats: int = 200) -> None:
    cv2.setNumThreads(1)
    frame = np.random.default_rng(0).integers(0, 256, (HEIGHT, WIDTH, 3), dtype=np.uint8)
    image = helper.make_tensor_value_info("x", TensorProto.UINT8, (HEIGHT, WIDTH, 3))
    flat = helper.make_tensor_value_info("x", TensorProto.UINT8, (HEIGHT * WIDTH * 3,))
    identity = session([helper.make_node("Identity", ["x"], ["y"])], [image], ["y"])
    elementwise = session([helper.make_node("Min", ["x", "x"], ["y"])], [image], ["y"])
    taps = remap_taps()
    gathers = session(
        [helper.make_node("GatherElements", ["x", f"i{k}"], [f"y{k}"]) for k in range(4)],
        [flat],
        [f"y{k}" for k in range(4)],
        [numpy_helper.from_array(t, f"i{k}") for k, t in enumerate(taps)],
    )
    maps = pipelines.undistort_maps(HEIGHT, WIDTH)
    feed, feed_flat = {"x": frame}, {"x": frame.reshape(-1)}
    runs = {
        "cv2.cvtColor BGR2RGB": lambda: cv2.cvtColor(frame, cv2.COLOR_BGR2RGB),
        "ORT run, Identity (a call's floor)": lambda: identity.run(None, feed),
        "ORT run, one Min pass": lambda: elementwise.run(None, feed),
        "cv2.remap INTER_LINEAR": lambda: cv2.remap(frame, *maps, cv2.INTER_LINEAR),
        "ORT run, 4 GatherElements (taps)": lambda: gathers.run(None, feed_flat),
    }
    rows = [(name, fastest_us(run, repeats)) for name, run in runs.items()]
    print(f"floors at {HEIGHT}x{WIDTH}x3 uint8, one thread, least CPU time of {repeats} runs")
    print(f"onnxruntime {onnxruntime.__version__}, cv2 {cv2.__version__}")
    for name, micros in rows:
        print(f"  {name:38} {micros:9.1f} us")
    print(f"Identity / cvtColor BGR2RGB: {rows[1][1] / rows[0][1]:.2f}x (no reorder can go below)")
    print(f"4 gathers / cv2.remap:       {rows[4][1] / rows[3][1]:.2f}x (before any arithmetic)")


if __name__ == "__main__":
    main(*[int(a) for a in sys.argv[1:2]])
