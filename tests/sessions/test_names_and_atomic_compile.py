"""Names cannot write outside save_path; a failed compile loses nothing (issue 13)."""

from pathlib import Path

import numpy as np
import pytest

import patchport
from patchport import annotate


def files_under(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize("name", ["../victim", "/tmp/abs_victim", "a/b", "..", "c:x", "", 7])
def test_session_names_that_are_paths_are_refused_before_anything_changes(tmp_path, name):
    save = tmp_path / "save"
    with pytest.raises(patchport.PatchportError, match=r"start\(name=...\)") as info:
        patchport.start(name, save)
    assert isinstance(info.value, TypeError)
    assert patchport.sessions.current_session() is None
    assert not any(tmp_path.iterdir())  # nothing written, not even save_path


@pytest.mark.parametrize("node", ["../../x", "/abs", "a\\b", "."])
def test_node_names_that_are_paths_are_refused_at_annotate_time(tmp_path, node):
    with patchport.session("nodes", tmp_path):
        with pytest.raises(TypeError, match=r"annotate.input_tensors: node=.*plain name"):
            annotate.input_tensors(node, {"x": np.zeros(2)})
        with pytest.raises(TypeError, match=r"annotate.output_tensors: node="):
            annotate.output_tensors(node, {"y": np.zeros(2)})
    assert not any(tmp_path.iterdir())


def test_port_names_that_are_paths_are_refused_at_annotate_time(tmp_path):
    with patchport.session("ports", tmp_path):
        with pytest.raises(TypeError, match=r"port name '../../x' must be a Python identifier"):
            annotate.input_tensors("node", {"../../x": np.zeros(2)})
    assert not any(tmp_path.iterdir())


def test_start_arguments_of_the_wrong_kind_get_clear_errors(tmp_path):
    with pytest.raises(TypeError, match=r"start\(patching=...\): expected a list.*got int 42"):
        patchport.start("s", tmp_path, patching=42)
    with pytest.raises(TypeError, match=r"start\(save_path=...\): expected a folder.*got int"):
        patchport.start("s", 123)
    assert patchport.sessions.current_session() is None


def gain_session(name, save, node="gain", freeze=False, passes=2):
    rng = np.random.default_rng(3)
    with patchport.session(name, save_path=save):
        for _ in range(passes):
            x = annotate.input_tensors(node, {"x": rng.standard_normal(4)})
            y = x * float(x.max()) if freeze else x * 2.0
            annotate.output_tensors(node, {"y": y}, export_with="jit")


def test_failed_compile_keeps_the_previous_bundle_and_sets_the_rejected_one_aside(tmp_path):
    gain_session("bundle", tmp_path)
    good = patchport.compile_graph(visualize=False)
    before = {p: (good.directory / p).read_bytes() for p in files_under(good.directory)}
    with pytest.warns(patchport.TraceLossWarning):
        gain_session("bundle", tmp_path, freeze=True)  # validation will reject this one
    with pytest.raises(patchport.ValidationError, match="previous bundle .* is untouched"):
        patchport.compile_graph(visualize=False)
    after = {p: (good.directory / p).read_bytes() for p in files_under(good.directory)}
    assert after == before
    aside = tmp_path / "bundle.failed"
    assert "sample 1, output y" in (aside / "FAILED.txt").read_text()
    assert {"bundle.yaml", "gain.pt"} <= files_under(aside)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bundle", "bundle.failed"]
    patchport.InferenceManager(good.yaml_path)  # still loads, still the accepted model


def test_a_second_session_of_the_same_name_leaves_no_orphan_model(tmp_path):
    gain_session("same", tmp_path, node="first")
    patchport.compile_graph(visualize=False)
    gain_session("same", tmp_path, node="second")
    result = patchport.compile_graph(visualize=False)
    assert result.directory == tmp_path / "same"
    assert result.yaml_path == tmp_path / "same" / "same.yaml"
    assert result.models == {"second": tmp_path / "same" / "second.pt"}
    assert files_under(tmp_path / "same") == {"same.yaml", "second.pt"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["same"]


@pytest.mark.slow
def test_ctrl_c_at_any_line_of_compile_keeps_the_previous_bundle_and_leaves_nothing(tmp_path):
    """A cancelled compile is not a rejected one: no ``.failed`` folder, no hidden staging
    folder; the bundle folder is the previous complete one or the new complete one."""
    from tests.patching.interrupts import count_points, run_interrupted

    gain_session("bundle", tmp_path)
    patchport.compile_graph(visualize=False)
    complete = files_under(tmp_path / "bundle")

    def compile_again():
        patchport.compile_graph(visualize=False)

    total = count_points(compile_again)
    stride = max(1, total // 150)
    for point in range(1, total + 1, stride):
        where = run_interrupted(compile_again, point)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["bundle"], where
        assert files_under(tmp_path / "bundle") == complete, where
