"""End to end: an OpenCV + torch camera pipeline traced with the OpenCV patch set, exported
to ONNX, replayed on fresh frames by InferenceManager and compared with real OpenCV."""

from __future__ import annotations

import warnings

import cv2
import numpy as np

import patchport
from patchport import annotate
from patchport.patches import opencv

from . import pipeline_from_import, pipelines

HEIGHT, WIDTH, SIZE = 120, 160, (80, 60)
ONE_UNIT = 1.0 / 255.0 / float(pipelines.STD.min())  # one uint8 step after normalisation


def frames(seed: int, count: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    base = cv2.resize(rng.integers(0, 256, (15, 20, 3), dtype=np.uint8), (WIDTH, HEIGHT))
    noise = rng.integers(-40, 40, (count, HEIGHT, WIDTH, 3))
    return [np.clip(base + n, 0, 255).astype(np.uint8) for n in noise]


def test_pipeline_traced_with_all_exports_to_onnx_and_replays_like_opencv(tmp_path):
    maps = pipelines.undistort_maps(HEIGHT, WIDTH)
    model = pipelines.TinyCNN().eval()
    originals = {name: getattr(cv2, name) for name in ("remap", "resize", "GaussianBlur")}
    aliased = pipeline_from_import.resize
    session = patchport.session("camera", tmp_path, patching=opencv.all())
    with warnings.catch_warnings(record=True) as caught, session:
        warnings.simplefilter("always")
        for frame in frames(0, 2):  # two passes: replay also checks the second sample
            bgr = annotate.input_tensors("camera", {"bgr": frame})
            chw = pipelines.preprocess(bgr, maps, SIZE)
            action = pipelines.policy(bgr, maps, SIZE, model)
            annotate.output_tensors("camera", {"chw": chw, "action": action}, export_with="onnx")
            bgr = annotate.input_tensors("from_import", {"bgr": frame})
            action = pipeline_from_import.policy(bgr, maps, SIZE, model)
            annotate.output_tensors("from_import", {"action": action}, export_with="onnx")
        found = patchport.session_patches()
    assert not [w for w in caught if issubclass(w.category, patchport.TraceLossWarning)]
    assert all(getattr(cv2, name) is fn for name, fn in originals.items())
    assert pipeline_from_import.resize is aliased
    # every pass is traced (later ones only for replay samples): preprocess runs twice per
    # pass through the module attribute, the from-import alias once per pass
    assert [found.find(f"cv2.{name}").calls for name in originals] == [4, 4, 4]
    alias = found.find("tests.patches.pipeline_from_import.resize")
    assert alias is not None and alias.family == "alias" and alias.calls == 2

    result = patchport.compile_graph(visualize=False)
    assert result.ok and [v.samples for v in result.validation] == [2, 2]
    manager = patchport.InferenceManager(result.yaml_path)
    for frame in frames(7, 3):  # fresh frames: values frozen at trace time would show here
        outputs = manager.run_policy({"camera/bgr": frame, "from_import/bgr": frame})
        chw = pipelines.preprocess(frame, maps, SIZE)
        expected = pipelines.policy(frame, maps, SIZE, model).numpy()
        assert outputs["camera/chw"].shape == (3, SIZE[1], SIZE[0])
        assert np.abs(outputs["camera/chw"] - chw).max() <= ONE_UNIT + 1e-6
        np.testing.assert_allclose(outputs["camera/action"], expected, rtol=1e-3, atol=1e-3)
        np.testing.assert_allclose(outputs["from_import/action"], expected, rtol=1e-3, atol=1e-3)
