"""Session behaviour that only shows in a real script (``python script.py``).

pytest's own ``__main__`` hides what a script's globals do (torch registers a script's
module a second time as ``__mp_main__``), so these checks run scripts in a subprocess
(started in the background once the tests are collected: see tests/script_runs.py).
"""

import sys
from pathlib import Path

import pytest

from ..script_runs import Script

HERE = Path(__file__).resolve().parent / "scripts"
ALIASES = Script(
    "from_import_aliases", lambda folder: [sys.executable, HERE / "from_import_aliases.py"]
)
CAMERA = Script(
    "camera_from_import", lambda folder: [sys.executable, HERE / "camera_from_import.py", folder]
)
SIGNAL = Script("signal_script", lambda folder: [sys.executable, HERE / "signal_script.py", folder])
FILTER = Script(
    "filter_from_import", lambda folder: [sys.executable, HERE / "filter_from_import.py", folder]
)
BACKGROUND = [ALIASES, CAMERA, SIGNAL, FILTER]

pytestmark = pytest.mark.slow


def test_from_imported_functions_in_a_script():
    out = ALIASES.result().output().splitlines()
    assert out == [
        "started",
        "erode alias warned at the script line",
        "from-imported conversions keep data traced",
        "alias patched once and restored",
        "erode alias raises when strict",
    ]


def test_camera_pipeline_with_from_imports_exports_on_every_backend():
    out = CAMERA.result().output().splitlines()
    assert out == [f"{b}: replays like OpenCV" for b in ("onnx", "pt2", "jit")] * 2


def test_spectral_pipeline_with_from_imports_in_a_script():
    out = SIGNAL.result().output().splitlines()
    assert out == [
        "from-imported spectral pipeline replays",
        "np.float32 of a traced value reported at the script line",
    ]


def test_filter_and_pose_code_with_from_imports_exports_on_every_backend():
    out = FILTER.result().output().splitlines()
    assert out == [f"{b}: replays like NumPy and torch" for b in ("onnx", "pt2", "jit")] * 2
