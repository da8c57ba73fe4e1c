"""examples/dynamic_camera.py runs as a script: one export, replayed through ONNX Runtime
at two resolutions and two batch sizes (cv2.resize by fx/fy included); a resize to a fixed
dsize with a dynamic size is refused in words."""

import sys
from pathlib import Path

import pytest
import yaml

from .script_runs import Script

ROOT = Path(__file__).resolve().parents[1]
DYNAMIC_CAMERA = Script(
    "dynamic_camera",
    lambda folder: [sys.executable, ROOT / "examples" / "dynamic_camera.py", folder],
)
BACKGROUND = [DYNAMIC_CAMERA]  # started in the background: tests/script_runs.py


@pytest.mark.slow
def test_dynamic_camera_example_runs_as_a_script():
    done = DYNAMIC_CAMERA.result()
    out, tmp_path = done.output(), done.folder
    assert "height is fixed to 96 by a size read from traced data" in out
    refusal = out.split("cv2.resize to a fixed dsize with a dynamic size is refused")[1]
    assert "dynamic_camera.py:" in refusal and "give fx and fy instead of dsize" in refusal
    for line in (
        "1 frame(s) of 480x640: features [1, 3, 240, 320] max |diff| 0.00e+00",
        "3 frame(s) of 480x640: features [3, 3, 240, 320]",
        "1 frame(s) of 120x200: features [1, 3, 60, 100]",
        "3 frame(s) of 120x200: features [3, 3, 60, 100]",
    ):
        assert line in out
    assert "refused: run_policy: input 'camera/bgr' has shape [96, 128, 4]" in out
    assert "camera [onnx]: ok" in out and "policy [onnx]: ok" in out
    spec = yaml.safe_load((tmp_path / "dynamic_camera" / "dynamic_camera.yaml").read_text())
    images = spec["models"]["policy"]["inputs"][0]
    assert images["dynamic_axes"] == {0: "batch", 2: "height", 3: "width"}
