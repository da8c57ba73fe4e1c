"""docs/opencv.md and the CLI listing are generated from the replacements' declarations."""

from __future__ import annotations

from pathlib import Path

from patchport.cli import main
from patchport.patches import opencv

DOCS = Path(__file__).resolve().parents[2] / "docs" / "opencv.md"


def test_docs_opencv_md_is_up_to_date():
    assert DOCS.read_text(encoding="utf-8") == opencv.render_markdown(), (
        "docs/opencv.md is stale: run `patchport patches opencv-docs -o docs/opencv.md`"
    )


def test_docs_list_every_function_with_its_cases():
    text = opencv.render_markdown()
    for spec in opencv.supported():
        row = next(
            line for line in text.splitlines() if line.startswith(f"| `cv2.{spec.function}`")
        )
        for _, values in spec.arguments:
            assert all(value.replace("|", "\\|") in row for value in values)
        assert ", ".join(spec.dtypes) in row


def test_cli_lists_opencv_replacements_and_their_cases(capsys, tmp_path):
    assert main(["patches", "list", "--family", "opencv"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["family", "name", "target", "versions", "here"]
    rows = [line.split() for line in out[1:] if line.startswith("opencv ")]
    assert [row[1] for row in rows] == [spec.function for spec in opencv.supported()]
    cases = next(line for line in out if line.strip().startswith("cv2.remap:"))
    assert "borderMode: BORDER_CONSTANT, BORDER_REPLICATE" in cases
    assert main(["patches", "opencv-docs", "-o", str(tmp_path / "opencv.md")]) == 0
    assert (tmp_path / "opencv.md").read_text(encoding="utf-8") == opencv.render_markdown()
