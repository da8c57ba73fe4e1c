"""Session behaviour that only shows in a real script (``python script.py``).

pytest's own ``__main__`` hides what a script's globals do (torch registers a script's
module a second time as ``__mp_main__``), so these checks run scripts in a subprocess.
"""

import subprocess
import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parent / "scripts"


def run_script(path: Path, *args: str, cwd: Path | None = None) -> str:
    done = subprocess.run(
        [sys.executable, str(path), *args],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=cwd,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_from_imported_functions_in_a_script():
    out = run_script(SCRIPTS / "from_import_aliases.py").splitlines()
    assert out == [
        "started",
        "erode alias warned at the script line",
        "from-imported conversions keep data traced",
        "alias patched once and restored",
        "erode alias raises when strict",
    ]


def test_camera_pipeline_with_from_imports_exports_on_every_backend(tmp_path):
    out = run_script(SCRIPTS / "camera_from_import.py", str(tmp_path)).splitlines()
    assert out == [f"{b}: replays like OpenCV" for b in ("onnx", "pt2", "jit")] * 2
