"""apply_patches_for_model(verbose=...) logs through the ``patchport`` logger hierarchy:
every line is an INFO record; ``verbose`` also prints it on stdout, as before."""

import logging
import types

import torch

from patchport.patching import PatchInfo
from patchport.torch import apply_patches_for_model


def _target() -> types.ModuleType:
    module = types.ModuleType("verbose_target")
    module.scale = lambda x: x * 2
    return module


def _run(verbose: int) -> None:
    module, model = _target(), torch.nn.Linear(2, 2)
    patch = PatchInfo.make(lambda x: x * 3, module, "scale", family="custom")
    with apply_patches_for_model(model=model, extra_patches=[patch], verbose=verbose):
        module.scale(1)
        model.added = True  # put back on exit, and said so


def test_verbose_prints_the_lines_on_stdout(capsys):
    _run(verbose=1)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("[patchport] applied [custom] <lambda> on verbose_target.scale")
    assert "[patchport] model state: Linear.added: removed (added while patched)" in lines
    assert lines[-1] == "[patchport] restored verbose_target.scale (1 call(s))"


def test_quiet_prints_nothing_but_logs_the_same_lines(capsys, caplog):
    with caplog.at_level(logging.INFO, logger="patchport"):
        _run(verbose=0)
    assert capsys.readouterr().out == ""
    messages = [r.getMessage() for r in caplog.records if r.name == "patchport.torch.apply"]
    assert messages[0].startswith("applied [custom] <lambda> on verbose_target.scale")
    assert messages[-1] == "restored verbose_target.scale (1 call(s))"
    assert not logging.getLogger("patchport").handlers  # verbose left no handler behind
