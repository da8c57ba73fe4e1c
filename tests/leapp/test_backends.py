"""One registry of backends under LEAPP's names; every entry writes a file its loader
runs, including a node with state (one port name on both sides)."""

import ast
from pathlib import Path

import pytest
import torch
import yaml

import patchport
from patchport import annotate, backend_names
from patchport.bundle.loaders import LOADERS, MODEL_TYPE_OF_SUFFIX
from patchport.errors import ExportBackendError
from patchport.export.backends import BACKENDS, backend_named


def test_names_and_aliases_resolve_to_one_entry_each():
    assert backend_named("jit") is backend_named("jit-script")
    assert backend_named("onnx") is backend_named("onnx-dynamo")
    assert backend_named("pt2") is backend_named("exported-program")
    kinds = {name: (entry.model_type, entry.suffix) for name, entry in BACKENDS.items()}
    assert kinds["jit-trace"] == ("jit", ".pt") and kinds["onnx-torchscript"] == ("onnx", ".onnx")
    assert kinds["pt2"] == ("pt2", ".pt2")
    with pytest.raises(ExportBackendError, match="'tflite': unknown backend"):
        backend_named("tflite")


def test_backends_loaders_and_suffixes_come_from_the_one_table():
    assert list(BACKENDS) == list(backend_names.NAMES)
    for name, kind in backend_names.BACKEND_TYPES.items():
        entry = BACKENDS[name]
        assert (entry.name, entry.model_type) == (name, kind)
        assert entry.suffix == backend_names.MODEL_SUFFIXES[kind]
        assert entry.load is LOADERS[kind]
    for alias, name in backend_names.ALIASES.items():
        assert BACKENDS[alias] is BACKENDS[name]
    assert set(LOADERS) == set(backend_names.MODEL_SUFFIXES)
    assert MODEL_TYPE_OF_SUFFIX == {".pt": "jit", ".onnx": "onnx", ".pt2": "pt2"}


def test_the_names_module_is_a_leaf_that_sessions_can_import():
    tree = ast.parse(Path(backend_names.__file__).read_text(encoding="utf-8"))
    assert not [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert backend_names.canonical_name("onnx") == "onnx-dynamo"
    assert backend_names.canonical_name("jit-trace") == "jit-trace"
    assert backend_names.canonical_name("tflite") is None
    assert backend_names.canonical_name(["onnx"]) is None


@pytest.mark.parametrize(
    ("backend", "model_type", "state_ports"),
    [
        ("jit-trace", "jit", ("level", "level")),
        ("onnx", "onnx", ("level", "level")),
        ("onnx-torchscript", "onnx", ("level", "level")),
        ("exported-program", "pt2", ("level", "level")),
    ],
)
def test_each_backend_exports_a_stateful_node_that_replays(
    tmp_path, backend, model_type, state_ports
):
    with patchport.session("tank", save_path=tmp_path):
        level = torch.tensor([1.0])
        for step in range(2):
            inflow = annotate.input_tensors("tank", {"inflow": torch.tensor([0.5 * step])})
            state = annotate.state_tensors("tank", {"level": level})
            level = 0.9 * state + inflow
            annotate.update_state("tank", {"level": level})
            annotate.output_tensors("tank", {"overflow": torch.relu(level - 2.0)}, backend)
    result = patchport.compile_graph(visualize=False)
    model = yaml.safe_load(result.yaml_path.read_text())["models"]["tank"]
    assert model["parameters"]["backend"] == model_type
    assert model["parameters"]["export_with"] == backend
    assert (model["inputs"][1]["name"], model["outputs"][1]["name"]) == state_ports
    manager = patchport.InferenceManager(result.yaml_path)
    level = torch.tensor([1.0])
    for value in (1.0, 1.0, 0.0, 3.0):
        level = 0.9 * level + value
        got = manager.run_policy({"tank/inflow": torch.tensor([value])})["tank/overflow"]
        torch.testing.assert_close(got, torch.relu(level - 2.0))


@pytest.mark.parametrize("backend", ["jit", "jit-trace"])
def test_a_torchscript_node_of_one_output_returns_the_tensor_itself_as_leapps_do(tmp_path, backend):
    """LEAPP's TorchScript files return a single output bare (a 1-tuple costs each replay
    call about 3 us); a node of several outputs still returns them as a tuple."""
    with patchport.session("shapes", save_path=tmp_path):
        x = annotate.input_tensors("one", {"x": torch.arange(6.0).reshape(2, 3)})
        annotate.output_tensors("one", {"y": (x * 2).sum(0)}, backend)
        x = annotate.input_tensors("two", {"x": torch.arange(6.0).reshape(2, 3)})
        annotate.output_tensors("two", {"a": x + 1, "b": x.mean(1)}, backend)
    result = patchport.compile_graph(visualize=False)
    folder = result.yaml_path.parent
    given = torch.arange(6.0).reshape(2, 3) + 10
    single = torch.jit.load(str(folder / "one.pt"))(given)
    assert type(single) is torch.Tensor
    torch.testing.assert_close(single, (given * 2).sum(0))
    both = torch.jit.load(str(folder / "two.pt"))(given)
    assert isinstance(both, tuple) and len(both) == 2
    torch.testing.assert_close(both[1], given.mean(1))
    manager = patchport.InferenceManager(result.yaml_path)
    outputs = manager.run_policy({"one/x": given, "two/x": given})
    torch.testing.assert_close(outputs["one/y"], (given * 2).sum(0))
    torch.testing.assert_close(outputs["two/b"], given.mean(1))
