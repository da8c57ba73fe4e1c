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
    assert "\npython examples/function_patch.py\n" in readme
    assert ROOT.joinpath("examples", "function_patch.py").exists()


def test_readme_python_examples_run(tmp_path, monkeypatch):
    import re
    import subprocess
    import sys

    readme = ROOT.joinpath("README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    assert len(blocks) == 2
    for index, block in enumerate(blocks):
        script = tmp_path / f"readme_{index}.py"
        script.write_text(block, encoding="utf-8")
        done = subprocess.run(
            [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr
    assert (tmp_path / "demo" / "prep.onnx").exists()
