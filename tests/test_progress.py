"""compile_graph's progress lines: silent unless verbose; verbose prints them to stderr
when the program has not configured logging, and puts the logger back afterwards."""

import logging

import numpy as np

import patchport
from patchport import annotate
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


def _compile_lines(tmp_path, session_verbose, verbose):
    """The progress lines compile_graph(verbose=verbose) logs after a session started with
    verbose=session_verbose."""
    with patchport.session("lines", save_path=tmp_path, verbose=session_verbose):
        x = annotate.input_tensors("n", {"x": np.arange(3.0)})
        annotate.output_tensors("n", {"y": x * 2})
    log = logging.getLogger("patchport")
    seen: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: seen.append(record.getMessage())
    log.addHandler(handler)
    level = log.level
    log.setLevel(logging.NOTSET)  # the default (start(verbose=True) raised it to INFO)
    try:
        patchport.compile_graph(visualize=False, verbose=verbose)
    finally:
        log.removeHandler(handler)
        log.setLevel(level)
    return [line for line in seen if line.startswith("compile_graph: [1/1] n [onnx]")]


def test_the_compiled_sessions_verbose_is_the_default_and_the_argument_wins(tmp_path):
    assert len(_compile_lines(tmp_path / "a", session_verbose=True, verbose=None)) == 2
    assert _compile_lines(tmp_path / "b", session_verbose=True, verbose=False) == []
    assert _compile_lines(tmp_path / "c", session_verbose=False, verbose=None) == []
    assert len(_compile_lines(tmp_path / "d", session_verbose=False, verbose=True)) == 2
