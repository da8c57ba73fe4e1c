"""The raw camera conversions (YUV 4:2:0, packed 4:2:2, Bayer) exported one per node at
720p and run by ONNX Runtime on one thread, against cv2.cvtColor on one thread: the least
CPU time of the calling thread for each (see opencv_replay.interleaved_cpu_ms), and a
check that the replay equals OpenCV bit for bit.
Not part of the tests. Run: python bench/opencv_camera_formats.py [repeats]
"""

from __future__ import annotations

import functools
import sys
import tempfile
from pathlib import Path

import cv2
import numpy as np
import onnxruntime

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import patchport  # noqa: E402
from bench.opencv_replay import interleaved_cpu_ms, set_threads  # noqa: E402
from patchport import annotate  # noqa: E402

HEIGHT, WIDTH = 720, 1280
CASES = {  # name -> (code, frame shape)
    "NV12 -> BGR": (cv2.COLOR_YUV2BGR_NV12, (HEIGHT * 3 // 2, WIDTH)),
    "I420 -> RGB": (cv2.COLOR_YUV2RGB_I420, (HEIGHT * 3 // 2, WIDTH)),
    "YUY2 -> BGR": (cv2.COLOR_YUV2BGR_YUY2, (HEIGHT, WIDTH, 2)),
    "BayerBG -> BGR": (cv2.COLOR_BayerBG2BGR, (HEIGHT, WIDTH)),
    "BayerBG -> GRAY": (cv2.COLOR_BayerBG2GRAY, (HEIGHT, WIDTH)),
}


def main(repeats: int = 20) -> None:
    rng = np.random.default_rng(0)
    set_threads(1)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    print(f"{'conversion':18} {'cv2 ms':>8} {'onnx ms':>8} {'ratio':>6}  exact")
    for name, (code, shape) in CASES.items():
        folder = tempfile.mkdtemp(prefix="patchport-camera-bench-")
        with patchport.session("camera", folder, patching=["opencv"]):
            sample = {"frame": rng.integers(0, 256, shape, np.uint8)}
            frame = annotate.input_tensors("cvt", sample)
            out = cv2.cvtColor(frame, code)
            annotate.output_tensors("cvt", {"out": out}, export_with="onnx")
        result = patchport.compile_graph(visualize=False)
        session = onnxruntime.InferenceSession(
            str(result.models["cvt"]), options, providers=["CPUExecutionProvider"]
        )
        fresh = rng.integers(0, 256, shape, np.uint8)
        feed = {session.get_inputs()[0].name: fresh}
        exact = np.array_equal(session.run(None, feed)[0], cv2.cvtColor(fresh, code))
        runs = {
            "cv2": functools.partial(cv2.cvtColor, fresh, code),
            "onnx": functools.partial(session.run, None, feed),
        }
        times = interleaved_cpu_ms(runs, repeats)
        ratio = times["onnx"] / times["cv2"]
        print(f"{name:18} {times['cv2']:8.2f} {times['onnx']:8.2f} {ratio:6.1f}  {exact}")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:2]))
