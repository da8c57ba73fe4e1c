"""Ports keep the names the user gave, also when an input and an output share one."""

import numpy as np

import patchport
from patchport import annotate

BACKENDS = ("onnx", "pt2", "jit")


def step(obs, gain):
    return np.tanh(obs * gain).astype(np.float32)


def test_input_and_output_with_the_same_name_on_every_backend(tmp_path):
    rng = np.random.default_rng(0)
    gain = np.float32(0.5)
    with patchport.session("same_names", save_path=tmp_path):
        for _ in range(2):
            obs = rng.standard_normal(5).astype(np.float32)
            for backend in BACKENDS:
                x = annotate.input_tensors(backend, {"obs": obs})
                annotate.output_tensors(backend, {"obs": step(x, gain)}, export_with=backend)
    result = patchport.compile_graph(visualize=False)
    assert result.ok and [v.samples for v in result.validation] == [2, 2, 2]
    manager = patchport.InferenceManager(result.yaml_path)
    assert manager.inputs == [f"{b}/obs" for b in BACKENDS] == manager.outputs
    for backend in BACKENDS:
        model = manager.models[backend]
        assert (
            [p["name"] for p in model["inputs"]] == ["obs"] == [p["name"] for p in model["outputs"]]
        )
    fresh = {f"{b}/obs": rng.standard_normal(5).astype(np.float32) for b in BACKENDS}
    outputs = manager.run_policy(fresh)
    assert sorted(outputs) == sorted(fresh)
    for key, value in fresh.items():
        np.testing.assert_allclose(outputs[key], step(value, gain), rtol=1e-6, atol=1e-6)
