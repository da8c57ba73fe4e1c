"""The README's commands are the ones CI runs, so the README stays true."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ci_runs_the_readme_install_and_test_commands():
    readme = ROOT.joinpath("README.md").read_text(encoding="utf-8")
    ci = ROOT.joinpath(".ci", "run").read_text(encoding="utf-8")
    commands = [
        'python -m pip install "torch==2.13.0" "transformers==5.24.0" -e ".[all]"',
        "python -m pytest -q",
    ]
    for command in commands:
        assert f"\n{command}\n" in readme, command
        assert f"\n{command}\n" in ci, command
    assert "python examples/seed_004/export_with_builtin_patches.py" in readme
    assert ROOT.joinpath("examples", "seed_004", "export_with_builtin_patches.py").exists()
