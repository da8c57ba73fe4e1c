"""Every code block of seed 004 runs as an example file and prints what the seed says.

Each example is its own ``python example.py`` process, started in the background once the
tests are collected (tests/script_runs.py); each test checks its example's output.
"""

import sys
from pathlib import Path

import pytest

from .script_runs import Script

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "seed_004"
NAMES = [
    "export_with_builtin_patches.py",
    "list_patches.py",
    "view_diffs.py",
    "custom_patch.py",
    "extra_patches.py",
    "patches_involved_in_graph.py",
]
BACKGROUND = [
    Script(name, lambda folder, name=name: [sys.executable, EXAMPLES / name], timeout=300)
    for name in NAMES
]

pytestmark = pytest.mark.slow


def run_example(name: str) -> str:
    return BACKGROUND[NAMES.index(name)].result().output()


def test_export_with_builtin_patches():
    out = run_example("export_with_builtin_patches.py")
    assert "Applied 5 patch(es)." in out
    assert "ExportedProgram:" in out
    assert "Max(s" in out  # the output dimension is max(d1, d2), not a specialized size


def test_list_patches():
    lines = run_example("list_patches.py").splitlines()
    assert lines[0] == "[torch] print_symbol_or_name"  # yobx's order
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
