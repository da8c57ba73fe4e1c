"""NumPy's own shipped tests inside an active session vs without: identical results.

An installed patch must be invisible to plain data (same ``__doc__``, ``__name__``,
signature...; library calls untouched). This runs a few of NumPy's test modules with
pytest three times in fresh interpreters: plain, inside ``patchport.start(...)`` with its
default patches, and inside ``patchport.start(..., patching=["opencv", "scipy"])`` (SciPy's
where installed); it compares the outcome of every test.
Not part of the test run (several minutes). Run: python bench/numpy_own_tests.py [module ...]
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
    "_core/tests/test_ufunc.py",
    "_core/tests/test_umath.py",
    "_core/tests/test_indexing.py",
    "_core/tests/test_multiarray.py",
    "_core/tests/test_shape_base.py",
    "_core/tests/test_item_selection.py",
    "_core/tests/test_overrides.py",
    "lib/tests/test_function_base.py",
    "lib/tests/test_arraypad.py",
    "lib/tests/test_stride_tricks.py",
    "lib/tests/test_shape_base.py",
    "lib/tests/test_index_tricks.py",
    "lib/tests/test_twodim_base.py",
    "lib/tests/test_nanfunctions.py",
    "ma/tests/test_core.py",
]

PLUGIN = textwrap.dedent(
    """
    import json, os
    OUTCOMES = {}

    def pytest_configure(config):
        mode = os.environ.get("PP_SESSION", "plain")
        import torch  # noqa: F401 - a session imports it; the baseline does too, so what
        # torch itself changes (pickle's whichmodule meeting torch.classes) is not counted
        if mode != "plain":
            import patchport
            patching = None
            if mode == "patches":
                import importlib.util
                patching = ["opencv"] + (["scipy"] if importlib.util.find_spec("scipy") else [])
            patchport.start("numpy_tests", save_path=os.environ["PP_DIR"], patching=patching)

    def pytest_runtest_logreport(report):
        if report.when == "call" or report.outcome != "passed":
            OUTCOMES.setdefault(report.nodeid, report.outcome)

    def pytest_unconfigure(config):
        if os.environ.get("PP_SESSION", "plain") != "plain":
            import patchport
            patchport.stop()
        with open(os.environ["PP_OUT"], "w") as f:
            json.dump(OUTCOMES, f)
    """
)


def run(paths: list[str], mode: str, work: Path) -> dict[str, str]:
    """Outcome of each test id: ``mode`` is "plain", "default" (a session with its default
    patches) or "patches" (``patching=["opencv", "scipy"]`` too)."""
    out = work / f"outcomes_{mode}.json"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(work), str(ROOT / "src")]),
        "PP_SESSION": mode,
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
        plain = run(paths, "plain", work)
        sessions = {mode: run(paths, mode, work) for mode in ("default", "patches")}
    failed = 0
    for label, outcomes in (("plain", plain), *sessions.items()):
        counts: dict[str, int] = {}
        for outcome in outcomes.values():
            counts[outcome] = counts.get(outcome, 0) + 1
        print(f"{label:>8}: {len(outcomes)} tests {dict(sorted(counts.items()))}")
    for mode, inside in sessions.items():
        differ = sorted(k for k in plain.keys() | inside.keys() if plain.get(k) != inside.get(k))
        failed += len(differ)
        print(f"differing outcomes ({mode}): {len(differ)}")
        for key in differ[:40]:
            print(f"  {key}: plain={plain.get(key)} session={inside.get(key)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
