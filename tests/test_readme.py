"""The README's commands are the ones CI runs, so the README stays true."""

import re
import sys
from functools import partial
from pathlib import Path

import pytest

from .script_runs import Script

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


def readme_blocks() -> list[str]:
    readme = ROOT.joinpath("README.md").read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", readme, re.S)


def block_script(index: int, folder: Path) -> list:
    """The README's ``index``-th Python block as a script file in ``folder``; its argv."""
    script = folder / f"readme_{index}.py"
    script.write_text(readme_blocks()[index], encoding="utf-8")
    return [sys.executable, script]


BACKGROUND = [
    Script(f"readme_{i}", partial(block_script, i), timeout=300, in_folder=True) for i in (0, 1)
]


@pytest.mark.slow
def test_readme_python_examples_run():
    assert len(readme_blocks()) == 2
    done = [script.result() for script in BACKGROUND]  # each block its own process
    for run in done:
        run.output()
    assert (done[0].folder / "demo" / "prep.onnx").exists()


def test_readme_and_opencv_guide_name_every_opencv_replacement():
    """A replacement that ships is one a reader can find: the README's list and
    docs/opencv.md name each function ``patching=["opencv"]`` installs."""
    from patchport.patches import opencv

    readme = ROOT.joinpath("README.md").read_text(encoding="utf-8")
    guide = ROOT.joinpath("docs", "opencv.md").read_text(encoding="utf-8")
    for patch in opencv.all():
        owner = getattr(patch.module, "__name__", "")
        name = patch.function_name if owner.startswith("cv2") else f"{owner}.{patch.function_name}"
        short = name.removeprefix("cv2.dnn.")
        assert f"`{short}" in readme or f"`dnn.{short}" in readme, name
        assert short in guide, name
