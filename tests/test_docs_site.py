"""The documentation site builds in strict mode: a broken link or reference fails CI."""

import os
import sys
from pathlib import Path

from .script_runs import Script

ROOT = Path(__file__).resolve().parents[1]
BUILD = Script(
    "docs_site",
    lambda folder: [
        sys.executable,
        "-m",
        "mkdocs",
        "build",
        "--strict",
        "-f",
        "mkdocs.yml",
        "-d",
        folder / "site",
    ],  # fmt: skip
    timeout=300,
    options={"cwd": ROOT, "env": {**os.environ, "PYTHONPATH": str(ROOT / "src")}},
)
BACKGROUND = [BUILD]  # started in the background: tests/script_runs.py


def test_docs_site_builds_strict():
    done = BUILD.result()
    site = done.folder / "site"
    log = done.stdout + done.stderr
    assert done.returncode == 0, log
    assert "WARNING" not in log, log  # strict aborts on these; never hide them with -q
    for page in ("guide", "bundles", "leapp", "patches", "opencv"):
        assert (site / page / "index.html").is_file(), page
    api = (site / "api" / "export" / "index.html").read_text(encoding="utf-8")
    for name in (
        "export.compile.compile_graph",
        "bundle.inference.InferenceManager",
        "bundle.bundle_view.load_view",
        "export.drawing.draw_bundle",
        "export.layout.layout_scene",
    ):
        assert f'id="patchport.{name}"' in api, name
    sessions = (site / "api" / "sessions" / "index.html").read_text(encoding="utf-8")
    assert 'id="patchport.sessions.lifecycle.start"' in sessions
