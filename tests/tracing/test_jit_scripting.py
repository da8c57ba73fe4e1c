"""``export_with="jit"`` scripts patchport's own graph targets instead of tracing the node.

TorchScript compiles every function a scripted graph calls; when one of the recorded
``np_*`` helpers could not be compiled, the jit backend fell back to ``jit-trace`` (shapes
fixed, a warning at the user's line). These tests script each helper on its own and a node
made of the NumPy idioms real pipelines use, then replay the saved TorchScript file.
"""

from __future__ import annotations

import inspect
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

import patchport
from patchport import annotate
from patchport.tracing.numpy_table import targets

GRAPH_TARGETS = [
    fn
    for name, fn in vars(targets).items()
    if name.startswith("np_") and inspect.isfunction(fn) and fn.__module__ == targets.__name__
]


@pytest.mark.parametrize("fn", GRAPH_TARGETS, ids=lambda fn: fn.__name__)
def test_every_graph_target_compiles_in_torchscript(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TorchScript's own deprecation notice
        torch.jit.script(fn)


def features(raw: np.ndarray, state: np.ndarray) -> dict[str, np.ndarray]:
    """Image statistics and an observation vector, written as plain NumPy."""
    image = raw.astype(np.float32) / 255.0
    chw = image.transpose((2, 0, 1))
    flat = chw.reshape((3, -1))
    mean = flat.mean(axis=1, keepdims=True)
    spread = flat.std(axis=1, ddof=1, keepdims=True)
    norm = np.clip((flat - mean) / (spread + 1e-6), -3.0, 3.0)
    energy = np.sum(chw**2, axis=(1, 2))
    peak = np.max(norm, axis=1)
    vector = np.concatenate([energy, peak, state], axis=0)
    bins = np.floor_divide(raw[..., 0].astype(np.int64), 32)
    obs = state.copy()
    obs[:2] = obs[:2] / np.maximum(np.abs(obs[:2]).max(), 1e-3)
    obs[state < 0] = 0.0
    inverse = 1.0 / (torch.from_numpy(state).abs() + 1.0)  # a reflected torch operator
    return {
        "obs": obs,
        "inverse": inverse.numpy(),
        "vector": vector,
        "histogram": np.sum(bins, axis=0),
        "fraction": np.remainder(state, 1.0),
        "brightest": np.argmax(norm, axis=1),
        "rounded": np.round(state * 10.0, 1),
        "any_dark": np.any(raw < 10, axis=(0, 1)),
    }


def _inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {
        "raw": rng.integers(0, 256, size=(6, 8, 3), dtype=np.uint8),
        "state": rng.normal(size=4).astype(np.float32),
    }


def test_numpy_node_is_scripted_not_traced_and_replays(tmp_path):
    rng = np.random.default_rng(0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with patchport.session("jit_numpy", save_path=tmp_path):
            for _ in range(2):
                raw, state = annotate.input_tensors("stats", _inputs(rng))
                annotate.output_tensors("stats", features(raw, state), export_with="jit")
        result = patchport.compile_graph(visualize=False)
    fallbacks = [str(w.message) for w in caught if "traced instead" in str(w.message)]
    assert fallbacks == []
    assert result.ok
    (model,) = Path(tmp_path).rglob("stats*.pt")
    code = torch.jit.load(str(model)).code
    # the helpers, scripted: their branches stay in the code (jit.trace keeps no if/else);
    # TorchScript may inline a helper and rename its value (np_sum's became _2 in one run)
    assert "np_true_divide" in code and "else:" in code, code

    manager = patchport.InferenceManager(result.yaml_path)
    for _ in range(3):
        fresh = _inputs(rng)
        want = features(**fresh)
        got = manager.run_policy({f"stats/{k}": v for k, v in fresh.items()})
        for name, value in want.items():
            out = np.asarray(got[f"stats/{name}"])
            assert out.shape == value.shape and out.dtype == value.dtype, name
            np.testing.assert_allclose(out, value, rtol=1e-5, atol=1e-6, err_msg=name)
