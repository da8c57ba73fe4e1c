import sys
from pathlib import Path

from patchport.cli import main
from patchport.torch.catalog import render_patches_markdown

from .script_runs import Script

DOCS = Path(__file__).resolve().parents[1] / "docs" / "patches.md"


def test_patches_list(capsys):
    assert main(["patches", "list"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["family", "name", "target", "versions", "here"]
    row = next(line for line in out if "broadcast_shapes_any_size" in line)
    assert "torch._refs._broadcast_shapes" in row and row.rstrip().endswith("applies")


def test_patches_diff_one_and_unknown(capsys):
    assert main(["patches", "diff", "print_symbol_or_name"]) == 0
    out = capsys.readouterr().out
    assert "-def _print_Symbol(self, expr: sympy.Symbol) -> str:" in out
    assert "+def print_symbol_or_name(self: Any, expr: Any) -> str:" in out
    assert main(["patches", "diff", "nope"]) == 2
    assert "no shipped patch named 'nope'" in capsys.readouterr().err


CONSOLE = Script(
    "console_script",
    lambda folder: [sys.executable, "-m", "patchport.cli", "patches", "list", "--family", "torch"],
)
BACKGROUND = [CONSOLE]  # started in the background: tests/script_runs.py


def test_console_script_runs():
    assert "infer_size_any_size" in CONSOLE.result().output()


def test_docs_patches_md_is_up_to_date():
    assert DOCS.read_text(encoding="utf-8") == render_patches_markdown(), (
        "docs/patches.md is stale: run `patchport patches docs -o docs/patches.md`"
    )
