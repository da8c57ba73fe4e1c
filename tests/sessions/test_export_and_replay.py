"""compile_graph, the pipeline YAML, replay validation and InferenceManager."""

import numpy as np
import pytest
import torch

import patchport
from patchport import annotate
from patchport.export import ModelIntegrityError

SCALE = np.array([0.5, 2.0, 4.0], dtype=np.float32)  # a calibration table: a real constant


def preprocess(raw):
    scaled = raw.astype(np.float32) / 255.0 * SCALE
    return np.clip(scaled - scaled.mean(axis=0), -1.0, 1.0)


class Policy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.linear = torch.nn.Linear(3, 2)

    def forward(self, features):
        return torch.tanh(self.linear(features))


def run_two_nodes(tmp_path, backend="jit", passes=3):
    policy = Policy()
    rng = np.random.default_rng(1)
    eager = []
    with patchport.session("two_nodes", save_path=tmp_path):
        for _ in range(passes):
            raw = rng.integers(0, 256, size=(5, 3), dtype=np.uint8)
            x = annotate.input_tensors("pre", {"raw": raw})
            feats = annotate.output_tensors("pre", {"features": preprocess(x)}, export_with="onnx")
            f = annotate.input_tensors("policy", {"features": feats})
            with torch.no_grad():
                action = policy(torch.from_numpy(f))
            action = annotate.output_tensors("policy", {"action": action}, export_with=backend)
            eager.append((raw, np.asarray(action)))
    return policy, eager


def test_two_node_pipeline_replayed_by_inference_manager(tmp_path):
    policy, eager = run_two_nodes(tmp_path)
    result = patchport.compile_graph(visualize=False)
    assert result.ok and [v.samples for v in result.validation] == [3, 3]
    assert result.validation[0].constants[0]["origin"].startswith("entered the graph at ")
    assert "test_export_and_replay.py" in result.validation[0].constants[0]["origin"]
    manager = patchport.InferenceManager(result.yaml_path)
    assert manager.inputs == ["pre/raw"] and manager.outputs == ["policy/action"]
    assert manager.data_flow == {"pre/features": ["policy/features"]}
    mock = manager.get_mock_input()
    assert mock["pre/raw"].shape == (5, 3) and mock["pre/raw"].dtype == torch.uint8
    fresh = np.random.default_rng(99).integers(0, 256, size=(5, 3), dtype=np.uint8)
    outputs = manager.run_policy({"pre/raw": fresh})
    with torch.no_grad():
        expected = policy(torch.from_numpy(preprocess(fresh))).numpy()
    np.testing.assert_allclose(outputs["policy/action"], expected, rtol=1e-5, atol=1e-6)
    assert isinstance(outputs["policy/action"], torch.Tensor)
    with pytest.raises(KeyError, match="never given"):
        patchport.InferenceManager(result.yaml_path).run_policy({})


def test_tampered_model_is_refused(tmp_path):
    run_two_nodes(tmp_path, passes=1)
    result = patchport.compile_graph(visualize=False)
    with open(result.models["policy"], "ab") as handle:
        handle.write(b"tampered")
    with pytest.raises(ModelIntegrityError, match="policy.pt.*changed after export"):
        patchport.InferenceManager(result.yaml_path)


def frozen_gain(x):
    gain = float(x.max())  # leaves the trace: the first pass's value is frozen
    return x * gain


def test_replay_on_later_passes_finds_a_frozen_value(tmp_path):
    rng = np.random.default_rng(3)
    with pytest.warns(patchport.TraceLossWarning, match="float"):
        with patchport.session("frozen", save_path=tmp_path):
            for _ in range(2):
                x = annotate.input_tensors("gain", {"x": rng.standard_normal(4)})
                annotate.output_tensors("gain", {"y": frozen_gain(x)}, export_with="jit")
    with pytest.raises(patchport.ValidationError, match="sample 1, output y"):
        patchport.compile_graph(visualize=False)
    result = patchport.compile_graph(visualize=False, strict=False)
    assert not result.ok and result.validation[0].problems


def test_compile_needs_a_stopped_session(tmp_path):
    with patchport.session("active", save_path=tmp_path):
        with pytest.raises(RuntimeError, match="call patchport.stop\\(\\) first"):
            patchport.compile_graph()


def test_annotation_errors_name_the_node():
    with patchport.session("errors"):
        with pytest.raises(RuntimeError, match="node 'nope' has no inputs"):
            annotate.output_tensors("nope", {"y": np.zeros(2)})
        x = annotate.input_tensors("n", {"x": np.zeros(2)})
        with pytest.raises(TypeError, match="export_with='tflite'"):
            annotate.output_tensors("n", {"y": x + 1}, export_with="tflite")
        with pytest.raises(TypeError, match="expected a NumPy array or a torch tensor .*got list"):
            annotate.input_tensors("m", {"x": [1, 2]})
        annotate.output_tensors("n", {"y": x + 1})


def test_inputs_are_not_modified_and_single_input_returns_one_value():
    data = np.arange(6, dtype=np.float64)
    tensor = torch.ones(3)
    with patchport.session("inputs"):
        x = annotate.input_tensors("one", {"x": data})
        assert isinstance(x, np.ndarray) and type(x) is not np.ndarray
        x += 1
        a, t = annotate.input_tensors("two", {"a": data, "t": tensor})
        t.mul_(5)
        annotate.output_tensors("one", {"y": x})
        annotate.output_tensors("two", {"y": t + a.sum()})
    assert type(data) is np.ndarray and data.tolist() == [0, 1, 2, 3, 4, 5]
    assert type(tensor) is torch.Tensor and tensor.tolist() == [1.0, 1.0, 1.0]


def test_port_names_that_match_operator_names_export_to_onnx(tmp_path):
    with patchport.session("names", save_path=tmp_path):
        x = annotate.input_tensors("n", {"mul": np.arange(6, dtype=np.float32).reshape(2, 3)})
        annotate.output_tensors(
            "n", {"transpose": np.transpose(x * 2), "add": x + 1}, export_with="onnx"
        )
    result = patchport.compile_graph(visualize=False)
    manager = patchport.InferenceManager(result.yaml_path)
    fresh = np.full((2, 3), 4.0, dtype=np.float32)
    outputs = manager.run_policy({"n/mul": fresh})
    np.testing.assert_array_equal(outputs["n/transpose"], np.transpose(fresh * 2))
    np.testing.assert_array_equal(outputs["n/add"], fresh + 1)


def test_later_passes_keep_the_node_signature():
    with patchport.session("signature"):
        a, b = annotate.input_tensors("n", {"a": np.ones(2), "b": np.ones(2)})
        annotate.output_tensors("n", {"y": a + b})
        with pytest.raises(TypeError, match="input 'c' was not declared in the first pass"):
            annotate.input_tensors("n", {"a": np.ones(2), "c": np.ones(2)})
        a = annotate.input_tensors("n", {"a": np.ones(2)})
        with pytest.raises(TypeError, match=r"this pass did not declare inputs \['b'\]"):
            annotate.output_tensors("n", {"y": a + 1})
