"""NumPy's own shipped tests inside an active session vs without: identical results.

An installed patch must be invisible to plain data (same ``__doc__``, ``__name__``,
signature...; library calls untouched). This runs a few of NumPy's test modules with
pytest twice in fresh interpreters, once plain and once inside
``patchport.start(..., patching=["opencv"])``, and compares the outcome of every test.
Not part of the test run (a minute or two). Run: python bench/numpy_own_tests.py [module ...]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
MODULES = [
    "_core/tests/test_numeric.py",
    "lib/tests/test_function_base.py",
    "ma/tests/test_core.py",
]

PLUGIN = textwrap.dedent(
    """
    import json, os
    OUTCOMES = {}

    def pytest_configure(config):
        if os.environ.get("PP_SESSION") == "1":
            import patchport
            patchport.start("numpy_tests", save_path=os.environ["PP_DIR"], patching=["opencv"])

    def pytest_runtest_logreport(report):
        if report.when == "call" or report.outcome != "passed":
            OUTCOMES.setdefault(report.nodeid, report.outcome)

    def pytest_unconfigure(config):
        if os.environ.get("PP_SESSION") == "1":
            import patchport
            patchport.stop()
        with open(os.environ["PP_OUT"], "w") as f:
            json.dump(OUTCOMES, f)
    """
)


def run(paths: list[str], session: bool, work: Path) -> dict[str, str]:
    """Outcome of each test id, with or without an active session."""
    out = work / f"outcomes_{int(session)}.json"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(work), str(ROOT / "src")]),
        "PP_SESSION": "1" if session else "0",
        "PP_OUT": str(out),
        "PP_DIR": str(work / "session"),
    }
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "pp_numpy_plugin", "-p", "no:cacheprovider"]
    subprocess.run([*cmd, "--tb=no", "-o", "addopts=", *paths], env=env, capture_output=True)
    return json.loads(out.read_text())


def main(argv: list[str]) -> int:
    base = Path(np.__file__).parent
    paths = [str(base / m) for m in (argv or MODULES)]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "pp_numpy_plugin.py").write_text(PLUGIN)
        plain = run(paths, False, work)
        inside = run(paths, True, work)
    differ = sorted(k for k in plain.keys() | inside.keys() if plain.get(k) != inside.get(k))
    for label, outcomes in (("plain", plain), ("in session", inside)):
        counts: dict[str, int] = {}
        for outcome in outcomes.values():
            counts[outcome] = counts.get(outcome, 0) + 1
        print(f"{label:>11}: {len(outcomes)} tests {dict(sorted(counts.items()))}")
    print(f"differing outcomes: {len(differ)}")
    for key in differ[:30]:
        print(f"  {key}: plain={plain.get(key)} session={inside.get(key)}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
