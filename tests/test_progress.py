"""compile_graph's progress lines: silent unless verbose; verbose prints them to stderr
when the program has not configured logging, and puts the logger back afterwards."""

import logging

from patchport.export import progress


def test_verbose_prints_to_stderr_without_logging_setup_and_restores(monkeypatch, capsys):
    log = logging.getLogger("patchport")
    monkeypatch.setattr(log, "propagate", False)  # as if nothing were configured (no pytest)
    monkeypatch.setattr(log, "level", logging.NOTSET)
    handlers = list(log.handlers)
    with progress.progress_output(False):
        progress.exported(1, 2, "pre", "onnx", progress.clock() - 0.5, "pre.onnx")
    assert capsys.readouterr().err == ""
    with progress.progress_output(True):
        progress.exported(1, 2, "pre", "onnx", progress.clock() - 0.5, "pre.onnx")
    assert (
        capsys.readouterr().err
        == "compile_graph: [1/2] pre [onnx] exported in 0.50 s -> pre.onnx\n"
    )
    assert log.level == logging.NOTSET and log.handlers == handlers
