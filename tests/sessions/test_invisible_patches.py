"""Installed patches are invisible to plain data: metadata kept, NumPy internals work."""

import inspect
import os
import subprocess
import sys
from pathlib import Path

import patchport
from patchport.sessions.lifecycle import current_session

SRC = str(Path(patchport.__file__).resolve().parents[1])


def test_import_numpy_ma_inside_a_session(tmp_path):
    # numpy.ma checks np.arange's docstring at import: a fresh interpreter imports it late
    code = (
        "import numpy as np, patchport\n"
        f"patchport.start('s', save_path={str(tmp_path)!r}, patching=['opencv'])\n"
        "import numpy.ma\n"
        "print(np.median(np.arange(5.0)))\n"
        "patchport.stop()\n"
    )
    env = {**os.environ, "PYTHONPATH": SRC}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "2.0"


def test_every_installed_wrapper_keeps_the_originals_face(tmp_path):
    with patchport.session("face", save_path=tmp_path, patching=["opencv"]):
        session = current_session()
        for info in session.patches:
            original = info.original_callable()
            installed = getattr(info.owner, info.attribute)
            if not callable(original) or isinstance(original, type):
                continue
            where = info.target_name
            for attribute in ("__doc__", "__name__", "__qualname__", "__module__"):
                assert getattr(installed, attribute, None) == getattr(original, attribute, None), (
                    f"{attribute} of {where}"
                )
            assert inspect.unwrap(installed, stop=lambda f, o=original: f is o) is original, where
            try:
                expected = str(inspect.signature(original))
            except (TypeError, ValueError):
                continue
            assert str(inspect.signature(installed)) == expected, where
