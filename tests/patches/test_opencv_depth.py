"""uint16 depth images through the OpenCV replacements: traced, exported to ONNX, replayed
on fresh frames against real OpenCV (depth cameras deliver uint16 millimetres)."""

from __future__ import annotations

import warnings

import cv2
import numpy as np

import patchport
from patchport import annotate
from patchport.patches import opencv

from .helpers import assert_matches

GRID = np.meshgrid(
    np.linspace(-1.3, 33.6, 20, dtype=np.float32), np.linspace(-1.2, 25.7, 16, dtype=np.float32)
)


def depth_pipeline(depth):
    """Typical depth preprocessing, results keyed by the replaced function."""
    scaled = cv2.convertScaleAbs(depth, alpha=255 / 8000)
    return {
        "resize": cv2.resize(depth, (48, 36)),
        "flip": cv2.flip(depth, 1),
        "copyMakeBorder": cv2.copyMakeBorder(depth, 1, 2, 3, 4, cv2.BORDER_CONSTANT, value=7e4),
        "medianBlur": cv2.medianBlur(depth, 5),
        "threshold": cv2.threshold(depth, 4000, 65535, cv2.THRESH_TRUNC)[1],
        "inRange": cv2.inRange(depth, 500, 6000),
        "convertScaleAbs": scaled,
        "normalize": cv2.normalize(depth, None, 0, 65535, cv2.NORM_MINMAX),
        "applyColorMap": cv2.applyColorMap(scaled, cv2.COLORMAP_JET),
        "erode": cv2.erode(depth, None),
        "remap": cv2.remap(depth, *GRID, cv2.INTER_LINEAR),
    }


def test_uint16_depth_pipeline_exports_to_onnx_and_replays(tmp_path):
    rng = np.random.default_rng(16)
    frames = [rng.integers(0, 8000, (24, 32), dtype=np.uint16) for _ in range(4)]
    with warnings.catch_warnings():
        warnings.simplefilter("error", patchport.TraceLossWarning)
        with patchport.session("depth", tmp_path, patching=opencv.all()):
            for frame in frames[:2]:
                depth = annotate.input_tensors("n", {"depth": frame})
                annotate.output_tensors("n", depth_pipeline(depth), export_with="onnx")
    result = patchport.compile_graph(visualize=False)
    assert result.ok
    manager = patchport.InferenceManager(result.yaml_path)
    for frame in frames[2:]:
        outputs = manager.run_policy({"n/depth": frame})
        for name, expected in depth_pipeline(frame).items():
            got = np.asarray(outputs[f"n/{name}"])
            assert_matches(name, expected, got)


def test_float64_average_shown_by_convert_scale_abs_replays(tmp_path):
    """A float64 running average (NumPy's default float) shown as uint8 by convertScaleAbs,
    as motion detectors do: OpenCV takes float64 input, so the replacement must too."""

    def show(frame0, frame1):
        avg = frame0.astype("float") * 0.5 + frame1.astype("float") * 0.5
        return {"delta": cv2.absdiff(frame1, cv2.convertScaleAbs(avg, alpha=1.5, beta=-3))}

    rng = np.random.default_rng(64)
    frames = [rng.integers(0, 256, (24, 32), dtype=np.uint8) for _ in range(4)]
    with warnings.catch_warnings():
        warnings.simplefilter("error", patchport.TraceLossWarning)
        with patchport.session("avg", tmp_path, patching=opencv.all()):
            traced = annotate.input_tensors("n", {"frame0": frames[0], "frame1": frames[1]})
            annotate.output_tensors("n", show(*traced), export_with="onnx")
    result = patchport.compile_graph(visualize=False)
    assert result.ok
    got = patchport.InferenceManager(result.yaml_path).run_policy(
        {"n/frame0": frames[2], "n/frame1": frames[3]}
    )
    np.testing.assert_array_equal(got["n/delta"], show(frames[2], frames[3])["delta"])
