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
            face = ("__doc__", "__name__", "__qualname__", "__module__", "__text_signature__")
            for attribute in face:
                assert getattr(installed, attribute, None) == getattr(original, attribute, None), (
                    f"{attribute} of {where}"
                )
            assert inspect.unwrap(installed, stop=lambda f, o=original: f is o) is original, where
            try:
                expected = str(inspect.signature(original))
            except (TypeError, ValueError):
                continue
            assert str(inspect.signature(installed)) == expected, where


def _named_positionals(signature):
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p for p in signature.parameters.values() if p.kind in kinds]


def test_every_installed_wrapper_binds_arguments_as_the_original_does(tmp_path):
    """A keyword call valid for the original (``np.array(object=3)``) is valid for the
    wrapper: each positional parameter the replacement names is the original's, by name
    and place (NumPy's test_array_as_keyword failed inside a session)."""
    with patchport.session("bind", save_path=tmp_path, patching=["opencv"]):
        for info in current_session().patches:
            original = info.original_callable()
            layer = getattr(info.owner, info.attribute)
            try:
                theirs = _named_positionals(inspect.signature(original))
            except (TypeError, ValueError):
                continue
            while callable(layer) and layer is not original:  # each wrapper down to it
                ours = _named_positionals(inspect.signature(layer, follow_wrapped=False))
                for mine, expected in zip(ours, theirs):
                    assert mine.name == expected.name or mine.kind is expected.kind is (
                        inspect.Parameter.POSITIONAL_ONLY
                    ), f"{info.target_name}: parameter {mine.name!r} is {expected.name!r} there"
                layer = getattr(layer, "__wrapped__", None)


def test_numpy_keyword_and_text_signature_forms_inside_a_session(tmp_path):
    import numpy as np

    with patchport.session("kw", save_path=tmp_path):
        assert np.array(object=3) == 3 and np.asarray(a=[1, 2]).tolist() == [1, 2]
        assert np.arange.__text_signature__ is not None  # NumPy's own test reads it


def test_a_builtin_kept_as_a_class_attribute_does_not_bind(tmp_path):
    """``array = np.array`` in a class body run during a session (NumPy's own linalg tests,
    a preprocessing class with ``convert = cv2.cvtColor``): the installed wrapper must not
    receive the instance, as the C function it replaces never does; it still pickles by
    name and reads like the original."""
    import pickle

    import cv2
    import numpy as np
    import torch

    with patchport.session("unbound", save_path=tmp_path, patching=["opencv"]):
        assert inspect.unwrap(np.array) is not np.array  # installed

        class Holder:
            array = np.array
            convert = cv2.cvtColor

        holder = Holder()
        assert holder.array([[1, 3], [5, 7]], dtype=np.float32).shape == (2, 2)
        image = np.zeros((4, 4, 3), np.uint8)
        assert holder.convert(image, cv2.COLOR_BGR2GRAY).shape == (4, 4)
        # torch's stay Python functions: dynamo traces through them in exports run during
        # a session, and took a partial's call for another (a float64 pi became float32)
        assert inspect.isfunction(torch.from_numpy)
        assert pickle.loads(pickle.dumps(np.array)) is np.array
        assert repr(np.asarray) == repr(inspect.unwrap(np.asarray))
    assert pickle.loads(pickle.dumps(np.array)) is np.array
