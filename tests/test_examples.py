"""Every example runs as the user runs it: ``python examples/<name>.py`` in a subprocess.

(seed 004's examples: tests/test_examples_seed_004.py; the transformers example:
tests/torch/test_transformers_example.py.)
"""

import sys
from pathlib import Path

import pytest
import yaml

from .script_runs import Script

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "function_patch.py"
FUNCTION_PATCH = Script(
    "function_patch", lambda folder: [sys.executable, EXAMPLE, "onnx,pt2,jit", folder]
)
BACKGROUND = [FUNCTION_PATCH]  # started in the background: tests/script_runs.py


@pytest.mark.slow
def test_function_patch_example_runs_as_a_script_on_every_backend():
    done = FUNCTION_PATCH.result()
    out, tmp_path = done.output(), done.folder
    for backend in ("onnx", "pt2", "jit"):
        assert f"camera_preprocess [{backend}]: ok on 1 sample(s)" in out
    assert out.count("traced_cvt_color replaced cv2.cvtColor on 2 traced call(s)") == 3
    assert out.count("matches OpenCV: max |diff| = 0.00e+00") == 3
    assert "patch cv2.cvtColor: largest difference from cv2.cvtColor 0 over 2 traced call(s)" in out
    folder = tmp_path / "function_patch_example"
    assert (folder / "function_patch_example.png").stat().st_size > 1000
    spec = yaml.safe_load((folder / "function_patch_example.yaml").read_text())
    model = spec["models"]["camera_preprocess"]
    assert model["parameters"]["backend"] == "jit"  # the last run wrote the folder
    assert [p["name"] for p in model["inputs"]] == ["left_bgr", "right_bgr"]
    assert model["outputs"] == [
        {"name": "stereo_features", "dtype": "float32", "shape": [24], "type": "tensor"}
    ]
    assert spec["system information"]["torch version"].startswith("2.")
