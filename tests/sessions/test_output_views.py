"""A node's output reaches the next node through a zero-copy view (``torch.from_numpy``,
``.numpy()``, ``np.asarray``) as well as by identity; a copy stays a separate input, said."""

import gc
import weakref

import numpy as np
import pytest
import torch

import patchport
from patchport import annotate


def prep(frame: np.ndarray) -> np.ndarray:
    return (frame.astype(np.float32) / 255.0 - 0.5)[None]


def policy(x: torch.Tensor) -> torch.Tensor:
    return torch.tanh(x.sum(dim=(1, 2), keepdim=True) * 0.01)


@pytest.mark.parametrize(
    "convert",
    [torch.from_numpy, lambda a: torch.as_tensor(a), lambda a: torch.from_numpy(np.asarray(a))],
    ids=["from_numpy", "as_tensor", "asarray"],
)
def test_view_of_an_output_connects_the_nodes(tmp_path, convert):
    rng = np.random.default_rng(0)
    with patchport.session("views", save_path=tmp_path):
        frame = annotate.input_tensors("prep", {"frame": rng.integers(0, 255, (6, 8), np.uint8)})
        x = annotate.output_tensors("prep", {"x": prep(frame)})
        t = annotate.input_tensors("policy", {"x": convert(x)})
        annotate.output_tensors("policy", {"y": policy(t)})
    result = patchport.compile_graph(visualize=False)
    manager = patchport.InferenceManager(result.yaml_path)
    assert manager.inputs == ["prep/frame"]
    fresh = rng.integers(0, 255, (6, 8), np.uint8)
    got = manager.run_policy({"prep/frame": torch.from_numpy(fresh)})
    expected = policy(torch.from_numpy(prep(fresh)))
    torch.testing.assert_close(got["policy/y"], expected)


def test_a_copy_of_an_output_stays_an_input_and_is_said(tmp_path):
    rng = np.random.default_rng(1)
    with patchport.session("copies", save_path=tmp_path):
        frame = annotate.input_tensors("prep", {"frame": rng.integers(0, 255, (6, 8), np.uint8)})
        x = annotate.output_tensors("prep", {"x": prep(frame)})
        with pytest.warns(patchport.TraceLossWarning, match=r"policy/x.*prep/x"):
            t = annotate.input_tensors("policy", {"x": torch.tensor(x)})
        annotate.output_tensors("policy", {"y": policy(t)})
    result = patchport.compile_graph(visualize=False)
    manager = patchport.InferenceManager(result.yaml_path)
    assert manager.inputs == ["prep/frame", "policy/x"]


def test_a_long_loop_does_not_keep_every_output_alive(tmp_path):
    rng = np.random.default_rng(2)
    alive = []
    with patchport.session("loop", save_path=tmp_path):
        for _ in range(12):
            frame = annotate.input_tensors(
                "prep", {"frame": rng.integers(0, 255, (6, 8), np.uint8)}
            )
            x = annotate.output_tensors("prep", {"x": prep(frame)})
            alive.append(weakref.ref(x))
        del x
        gc.collect()
        held = sum(ref() is not None for ref in alive)
    assert held <= 5, f"{held} of 12 outputs are still held by the session"
