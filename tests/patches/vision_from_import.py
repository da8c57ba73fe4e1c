"""Run as a script: from-imported replacements of the vision probe (a cv2.dnn submodule
function included) are patched at their captured names, traced, exported and replayed."""

from __future__ import annotations

import sys
import warnings

import numpy as np
from cv2 import COLOR_BGR2GRAY, cvtColor, equalizeHist, filter2D, pyrDown
from cv2.dnn import blobFromImage

import patchport
from patchport import annotate

SHARPEN = np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], np.float32)  # a module-level table


def prepare(bgr: np.ndarray) -> dict[str, np.ndarray]:
    small = pyrDown(filter2D(bgr, -1, SHARPEN))
    return {
        "blob": blobFromImage(small, 1 / 255.0, (16, 12), (1.0, 2.0, 3.0), swapRB=True),
        "gray": equalizeHist(cvtColor(bgr, COLOR_BGR2GRAY)),
    }


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    frames = [rng.integers(0, 256, (24, 32, 3), dtype=np.uint8) for _ in range(3)]
    with warnings.catch_warnings():
        warnings.simplefilter("error", patchport.TraceLossWarning)
        with patchport.session("vision", sys.argv[1], patching=["opencv"], strict=True):
            for frame in frames[:2]:
                bgr = annotate.input_tensors("n", {"bgr": frame})
                annotate.output_tensors("n", prepare(bgr), export_with="onnx")
    manager = patchport.InferenceManager(patchport.compile_graph(visualize=False).yaml_path)
    outputs = manager.run_policy({"n/bgr": frames[2]})
    for name, expected in prepare(frames[2]).items():
        np.testing.assert_array_equal(outputs[f"n/{name}"].numpy(), expected)
    print("replayed", sorted(outputs))
