"""docs/scipy.md and the CLI listing are generated from the SciPy replacements' declarations."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("scipy")  # SciPy is an optional dependency: these tests need it

from patchport.cli import main
from patchport.patches import scipy as sp

DOCS = Path(__file__).resolve().parents[2] / "docs" / "scipy.md"


def test_docs_scipy_md_is_up_to_date():
    assert DOCS.read_text(encoding="utf-8") == sp.render_markdown(), (
        "docs/scipy.md is stale: run `patchport patches scipy-docs -o docs/scipy.md`"
    )


def test_cli_lists_scipy_replacements_and_writes_their_docs(capsys, tmp_path):
    assert main(["patches", "list", "--family", "scipy"]) == 0
    out = capsys.readouterr().out.splitlines()
    rows = [line.split() for line in out[1:] if line.startswith("scipy ")]
    assert [row[1] for row in rows] == [spec.function for spec in sp.supported()]
    cases = next(line for line in out if line.strip().startswith("scipy.ndimage.zoom:"))
    assert "order: 0, 1" in cases and "accuracy: bit-exact" in cases
    assert main(["patches", "scipy-docs", "-o", str(tmp_path / "scipy.md")]) == 0
    assert (tmp_path / "scipy.md").read_text(encoding="utf-8") == sp.render_markdown()
