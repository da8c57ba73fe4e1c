"""Every code block of seed 004 runs as an example file and prints what the seed says."""

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "seed_004"


def run_example(name: str) -> str:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_export_with_builtin_patches():
    out = run_example("export_with_builtin_patches.py")
    assert "Applied 5 patch(es)." in out
    assert "ExportedProgram:" in out
    assert "Max(s" in out  # the output dimension is max(d1, d2), not a specialized size


def test_list_patches():
    lines = run_example("list_patches.py").splitlines()
    assert lines[0] == "[torch] broadcast_shapes_any_size"
    assert len(lines) == 5 and all(line.startswith("[torch] ") for line in lines)


def test_view_diffs():
    out = run_example("view_diffs.py")
    assert "=== broadcast_shapes_any_size ===" in out
    assert "--- original" in out and "+++ rewritten" in out
    assert out.splitlines().count("...") == 5


@pytest.mark.parametrize(
    "name, expected",
    [
        (
            "custom_patch.py",
            [
                "active patch: my_broadcast_shapes",
                "patched function: my_broadcast_shapes",
                "after undo: _broadcast_shapes",
            ],
        ),
        (
            "extra_patches.py",
            [
                "Total patches: 1",
                "  [custom] my_broadcast_shapes",
                "patched function: my_broadcast_shapes",
                "after context, function restored: _broadcast_shapes",
            ],
        ),
    ],
)
def test_custom_patches(name, expected):
    assert run_example(name).splitlines() == expected


def test_patches_involved_in_graph():
    out = run_example("patches_involved_in_graph.py")
    assert "Patches that contributed nodes: 0" in out
    assert "patches exercised without adding nodes" in out
    assert "infer_size_any_size on torch._subclasses.fake_impls.infer_size" in out
