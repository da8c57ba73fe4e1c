"""InferenceManager keeps LEAPP's runtime contract: torch in and out, "node/port" keys,
input buffers that persist between calls, set_input_value and reset."""

from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

import patchport
from patchport import annotate

WEIGHT = torch.linspace(-1.0, 1.0, 12).reshape(4, 3)


def normalise(raw):
    return (raw.float() - 128.0) / 64.0


def act(features, gain):
    return torch.tanh(features @ WEIGHT) * gain


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    """Two nodes: uint8 readings -> features -> action (jit; the backend does not matter)."""
    folder = tmp_path_factory.mktemp("contract")
    with patchport.session("contract", save_path=folder):
        for step in range(2):
            raw = torch.arange(4, dtype=torch.uint8) * (step + 3)
            x = annotate.input_tensors("sense", {"raw": raw})
            features = normalise(x)
            annotate.output_tensors("sense", {"features": features}, export_with="jit")
            f, g = annotate.input_tensors("act", {"features": features, "gain": torch.ones(1)})
            annotate.output_tensors("act", {"action": act(f, g)}, export_with="jit")
    return patchport.compile_graph(visualize=False).yaml_path


def test_keys_and_mock_inputs_are_torch(bundle):
    manager = patchport.InferenceManager(bundle)
    assert manager.inputs == ["sense/raw", "act/gain"]
    assert manager.outputs == ["act/action"] and manager.feedback_inputs == []
    mock = manager.get_mock_input()
    assert mock["sense/raw"].dtype == torch.uint8 and mock["sense/raw"].shape == (4,)
    assert mock["act/gain"].dtype == torch.float32 and mock["act/gain"].shape == (1,)


def test_run_policy_takes_torch_or_numpy_and_returns_torch(bundle):
    manager = patchport.InferenceManager(bundle)
    raw = torch.tensor([0, 50, 200, 255], dtype=torch.uint8)
    gain = torch.tensor([2.0])
    from_torch = manager.run_policy({"sense/raw": raw, "act/gain": gain})
    assert list(from_torch) == ["act/action"]
    assert type(from_torch["act/action"]) is torch.Tensor
    torch.testing.assert_close(from_torch["act/action"], act(normalise(raw), gain))
    from_numpy = manager({"sense/raw": raw.numpy(), "act/gain": gain.numpy()})
    torch.testing.assert_close(from_numpy["act/action"], from_torch["act/action"])


def test_buffers_persist_and_set_input_value_writes_one(bundle):
    manager = patchport.InferenceManager(bundle)
    raw = torch.tensor([10, 20, 30, 40], dtype=torch.uint8)
    manager.run_policy({"sense/raw": raw, "act/gain": torch.tensor([1.0])})
    manager.set_input_value("act", "gain", torch.tensor([-3.0]))
    again = manager.run_policy({"sense/raw": raw})  # gain keeps the value just set
    torch.testing.assert_close(again["act/action"], act(normalise(raw), torch.tensor([-3.0])))
    manager.reset()
    with pytest.raises(KeyError, match=r"missing inputs \['act/gain'\] \(never given"):
        manager.run_policy({"sense/raw": raw})


def test_unknown_keys_and_wrong_types_are_refused(bundle):
    manager = patchport.InferenceManager(bundle)
    with pytest.raises(KeyError, match="'sense/nope' is not a node input"):
        manager.run_policy({"sense/nope": torch.zeros(4)})
    with pytest.raises(TypeError, match="'act/gain' must be a torch tensor or a NumPy array"):
        manager.run_policy({"act/gain": [1.0]})
    assert np.isfinite(manager.get_mock_input()["act/gain"].numpy()).all()


def edited_copy(bundle, tmp_path, edit, name="edited.yaml"):
    """The bundle's YAML, changed by ``edit``, written beside its models."""
    spec = yaml.safe_load(Path(bundle).read_text())
    edit(spec)
    target = Path(bundle).with_name(name)
    target.write_text(yaml.safe_dump(spec))
    return target


def test_malformed_descriptions_are_refused_before_loading(bundle, tmp_path):
    text = tmp_path / "bundle.txt"
    text.write_text(Path(bundle).read_text())
    with pytest.raises(ValueError, match=r"a \.yaml file"):
        patchport.InferenceManager(text)
    no_md5 = edited_copy(bundle, tmp_path, lambda s: s["models"]["act"]["parameters"].pop("md5sum"))
    with pytest.raises(ValueError, match=r"'act' .* lacks parameters \['md5sum'\]"):
        patchport.InferenceManager(no_md5)
    lost = edited_copy(bundle, tmp_path, lambda s: s["pipeline"].pop("outputs"), "lost.yaml")
    with pytest.raises(ValueError, match=r"outputs \['act/action'\] go nowhere"):
        patchport.InferenceManager(lost)


def test_an_output_both_returned_and_routed_is_returned_as_its_own_tensor(bundle, tmp_path):
    def also_return_features(spec):
        spec["pipeline"]["outputs"]["sense"] = ["features"]

    manager = patchport.InferenceManager(edited_copy(bundle, tmp_path, also_return_features))
    raw = torch.tensor([0, 64, 128, 255], dtype=torch.uint8)
    result = manager.run_policy({"sense/raw": raw, "act/gain": torch.ones(1)})
    torch.testing.assert_close(result["sense/features"], normalise(raw))
    assert result["sense/features"].data_ptr() != manager.value_dict["act"]["features"].data_ptr()
    torch.testing.assert_close(manager.value_dict["==out=="]["act/action"], result["act/action"])
