"""Our refusals keep their own wording and also carry LEAPP's phrase for the same failure,
so a user's (or CI's) grep for LEAPP's message still finds it."""

import warnings

import pytest
import torch
import yaml

import patchport
from patchport import InferenceManager, TensorSemantics, TraceLossWarning, annotate


@pytest.fixture
def bundle(tmp_path):
    """node_a (two outputs: one routed to node_b, one a pipeline output) -> node_b."""
    with patchport.session("phrases", save_path=tmp_path):
        x = annotate.input_tensors("node_a", {"x": torch.tensor([1.0, 2.0, 3.0])})
        to_b, _ = annotate.output_tensors(
            "node_a", {"to_b": x * 2.0, "final_a": x + 10.0}, export_with="jit"
        )
        y = annotate.input_tensors("node_b", {"y": to_b})
        annotate.output_tensors("node_b", {"final_b": y - 1.0}, export_with="jit")
    return patchport.compile_graph(visualize=False).yaml_path


def _edit(path, change):
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data))


def test_missing_file_and_wrong_suffix(bundle):
    with pytest.raises(FileNotFoundError, match="Leapp description file not found"):
        InferenceManager(bundle.parent / "does_not_exist.yaml")
    copy = bundle.parent / "graph.txt"
    copy.write_bytes(bundle.read_bytes())
    with pytest.raises(ValueError, match="must end with .yaml"):
        InferenceManager(copy)


@pytest.mark.parametrize("section", ["models", "pipeline", "system information"])
def test_missing_top_level_section(bundle, section):
    _edit(bundle, lambda data: data.pop(section))
    with pytest.raises(
        ValueError, match="Leapp description file must contain models, pipeline, and system_info"
    ):
        InferenceManager(bundle)


@pytest.mark.parametrize("key", ["model_path", "md5sum", "sha256sum", "backend"])
def test_missing_model_parameter(bundle, key):
    _edit(bundle, lambda data: data["models"]["node_a"]["parameters"].pop(key))
    with pytest.raises(
        ValueError,
        match="Model description must contain model_path, md5sum, sha256sum, and backend",
    ):
        InferenceManager(bundle)


def test_changed_model_file(bundle):
    with open(bundle.parent / "node_b.pt", "ab") as handle:
        handle.write(b"\x00\xff\x00\xff")
    with pytest.raises(ValueError, match="SHA256 checksum mismatch"):
        InferenceManager(bundle)


def test_unroutable_output_names_its_node(bundle):
    _edit(bundle, lambda data: data["pipeline"]["outputs"].update(node_a=[]))
    with pytest.raises(ValueError, match=r"unroutable outputs of node_a\b"):
        InferenceManager(bundle)


def test_duplicate_names(tmp_path):
    with patchport.session("dup", save_path=tmp_path):
        annotate.input_tensors("node", {"x": torch.ones(2)})
        with pytest.raises(patchport.PatchDefinitionError, match="Duplicate name"):
            annotate.input_tensors("node", {"x": torch.ones(2)})
        semantics = [TensorSemantics("a", torch.ones(2)), TensorSemantics("a", torch.ones(2))]
        with pytest.raises(patchport.PatchDefinitionError, match="Duplicate name"):
            annotate.input_tensors("other", semantics)


def test_a_value_of_an_open_node_is_not_an_input_of_another(tmp_path):
    with patchport.session("mix", save_path=tmp_path):
        a = annotate.input_tensors("a", {"x": torch.ones(3)})
        with pytest.raises(
            patchport.PatchDefinitionError, match="Mixing active contexts is not allowed"
        ) as refused:
            annotate.input_tensors("b", {"y": a * 2.0})
        assert "annotate.output_tensors('a'" in str(refused.value)
        # once 'a' is finished its output is an ordinary edge
        out = annotate.output_tensors("a", {"out": a * 2.0}, export_with="jit")
        y = annotate.input_tensors("b", {"y": out})
        annotate.output_tensors("b", {"z": y + 1.0}, export_with="jit")
    spec = patchport.compile_graph(visualize=False, validate=False)
    assert yaml.safe_load(spec.yaml_path.read_text())["pipeline"]["data_flow"] == {"a/out": ["b/y"]}


def test_mixing_two_open_nodes_is_loud_at_the_users_line(tmp_path):
    with patchport.session("mix", save_path=tmp_path):
        a = annotate.input_tensors("a", {"x": torch.ones(3)})
        b = annotate.input_tensors("b", {"y": torch.ones(3)})
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            mixed = a + b
        (warning,) = [w for w in caught if issubclass(w.category, TraceLossWarning)]
        assert "Cannot mix multiple active TracedTensors from different contexts" in str(
            warning.message
        )
        assert warning.filename == __file__
        annotate.output_tensors("b", {"z": mixed}, export_with="jit")
        annotate.output_tensors("a", {"w": a * 2.0}, export_with="jit")
    with patchport.session("strict", save_path=tmp_path, strict=True):
        a = annotate.input_tensors("a", {"x": torch.ones(3)})
        b = annotate.input_tensors("b", {"y": torch.ones(3)})
        with pytest.raises(patchport.TraceLossError, match="Cannot mix multiple active"):
            a + b  # noqa: B018
        annotate.output_tensors("a", {"w": a * 2.0}, export_with="jit")
        annotate.output_tensors("b", {"z": b * 2.0}, export_with="jit")


def test_a_nested_state_is_refused_with_leapp_phrase(tmp_path):
    with patchport.session("nested_state", save_path=tmp_path):
        annotate.input_tensors("policy", {"obs": torch.zeros(3)})
        with pytest.raises(TypeError, match="does not support nested state structures"):
            annotate.state_tensors("policy", {"s": {"inner": torch.zeros(3)}})
        s = annotate.state_tensors("policy", {"s": torch.zeros(3)})
        with pytest.raises(TypeError, match="does not support nested state structures"):
            annotate.update_state("policy", {"s": [s + 1]})
        annotate.update_state("policy", {"s": s + 1})
        annotate.output_tensors("policy", {"y": s * 2})
