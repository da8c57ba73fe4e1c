"""LEAPP's module paths exist under patchport, so LEAPP programs and tests whose imports
were rewritten ``leapp`` -> ``patchport`` import and behave: ``patchport.leapp._MANAGER``,
``patchport.export_manager``, ``patchport.inference_manager`` and the traced types of
``patchport.leapp_graph.datatypes`` (checked with ``isinstance`` as LEAPP's tests do)."""

import numpy as np
import pytest
import torch

import patchport
from patchport import annotate


def test_module_paths_name_the_public_objects():
    from patchport.export_manager import ExportManager
    from patchport.inference_manager import InferenceManager
    from patchport.leapp import _MANAGER, compile_graph, start, stop
    from patchport.leapp import annotate as leapp_annotate

    assert ExportManager is patchport.ExportManager and _MANAGER is ExportManager()
    assert InferenceManager is patchport.InferenceManager
    assert (start, stop, compile_graph) == (
        patchport.start,
        patchport.stop,
        patchport.compile_graph,
    )
    assert leapp_annotate is annotate


def test_traced_types_are_recognised_by_isinstance(tmp_path):
    from patchport.leapp_graph.datatypes import TracedData, TracedNpArray, TracedTensor

    x, a = torch.ones(2), np.ones(2)
    for plain in (x, a, 1.0):
        assert not isinstance(plain, (TracedTensor, TracedNpArray, TracedData))
    with patchport.session("types", save_path=tmp_path):
        tx, ta = annotate.input_tensors("n", {"x": x, "a": a})
        assert isinstance(tx, TracedTensor) and not isinstance(tx, TracedNpArray)
        assert isinstance(ta, TracedNpArray) and not isinstance(ta, TracedTensor)
        assert isinstance(tx, TracedData) and isinstance(ta, TracedData)
        assert isinstance(tx * 2, TracedTensor)
        annotate.output_tensors("n", {"y": tx * 2, "b": ta + 1})


def test_reset_nodes_forgets_the_stopped_session(tmp_path):
    from patchport.leapp import _MANAGER

    with patchport.session("forget", save_path=tmp_path):
        x = annotate.input_tensors("n", {"x": torch.ones(2)})
        annotate.output_tensors("n", {"y": x + 1}, export_with="jit")
        with pytest.raises(patchport.PatchStateError, match="stop"):
            _MANAGER.reset_nodes()  # the active session's graph is not dropped mid-trace
    assert list(_MANAGER.nodes) == ["n"]
    _MANAGER.reset_nodes()
    assert _MANAGER.nodes == {} and _MANAGER.session is None


def test_set_interpret_graph_follows_the_session(tmp_path):
    from patchport.export_manager import ExportManager

    ExportManager.set_interpret_graph(False)  # LEAPP's tests call it in tearDown: harmless
    assert not ExportManager.is_interpret_graph_enabled()
    with pytest.raises(patchport.PatchStateError, match="start"):
        ExportManager.set_interpret_graph(True)
    with patchport.session("flag", save_path=tmp_path):
        with pytest.raises(patchport.PatchStateError, match="stop"):
            ExportManager.set_interpret_graph(False)


def test_annotate_answers_the_manager_questions(tmp_path, monkeypatch):
    """Revisions of LEAPP where ``from leapp import annotate`` is the manager itself call
    ``annotate.start`` / ``stop`` / ``compile_graph`` and read ``detected_pipeline`` on it."""
    monkeypatch.chdir(tmp_path)
    annotate.start(name="as_manager")
    x = annotate.input_tensors("n", {"x": torch.ones(2)})
    assert set(annotate.nodes) == {"n"} and not hasattr(annotate, "detected_pipeline")
    annotate.output_tensors("n", {"y": x + 1}, export_with="jit")
    annotate.stop()
    annotate.compile_graph(visualize=False)
    assert list(annotate.detected_nodes) == ["n"]
    assert (
        annotate.detected_pipeline["inputs"]
        == patchport.ExportManager().detected_pipeline["inputs"]
    )
    with pytest.raises(AttributeError):
        annotate.no_such_thing  # noqa: B018 - an unknown name still fails


def test_traced_type_modules_by_their_leapp_file_names():
    from patchport.leapp_graph.datatypes import TracedData, TracedTensor
    from patchport.leapp_graph.datatypes.traced_data import TracedData as data_cls
    from patchport.leapp_graph.datatypes.traced_tensor import TracedTensor as tensor_cls

    assert tensor_cls is TracedTensor and data_cls is TracedData
