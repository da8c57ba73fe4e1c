"""run_policy's steady-state path (issue 25 item 4): inputs matching their static ports pass
a precomputed check, and anything else still gets the full check's clear error; outputs
are new to each call, never a buffer the next call writes into."""

import numpy as np
import pytest
import torch
import yaml

import patchport
from patchport import annotate

RAW = np.arange(15, dtype=np.uint8).reshape(5, 3) * 7
GAIN = np.array([2.0], dtype=np.float32)


def scaled(raw, gain):
    return raw.float() / 255.0 * gain


@pytest.fixture(scope="module", params=["onnx", "jit", "pt2"])
def bundle(request, tmp_path_factory):
    """One node, a uint8 image and a float gain in, a float image out."""
    save = tmp_path_factory.mktemp(f"fast_{request.param}")
    with patchport.session("fast", save_path=save):
        r, g = annotate.input_tensors(
            "n", {"raw": torch.from_numpy(RAW.copy()), "gain": torch.from_numpy(GAIN.copy())}
        )
        annotate.output_tensors("n", {"y": scaled(r, g)}, export_with=request.param)
    return patchport.compile_graph(visualize=False).yaml_path


def expected(raw, gain):
    return scaled(torch.from_numpy(raw), torch.from_numpy(gain))


@pytest.mark.parametrize("arrays", ["torch", "numpy"])
def test_a_returned_output_is_not_overwritten_by_the_next_call(bundle, arrays):
    manager = patchport.InferenceManager(bundle, arrays=arrays)
    first = manager.run_policy({"n/raw": RAW, "n/gain": GAIN})["n/y"]
    kept = np.asarray(first).copy()
    second = manager.run_policy({"n/raw": RAW[::-1].copy(), "n/gain": GAIN * 3})["n/y"]
    np.testing.assert_array_equal(np.asarray(first), kept)
    np.testing.assert_allclose(np.asarray(first), expected(RAW, GAIN).numpy(), rtol=1e-6)
    np.testing.assert_allclose(
        np.asarray(second), expected(RAW[::-1].copy(), GAIN * 3).numpy(), rtol=1e-6
    )
    assert not np.shares_memory(np.asarray(first), np.asarray(second))


@pytest.mark.parametrize(
    ("inputs", "error", "message"),
    [
        ({"n/raw": RAW.astype(np.float64)}, ValueError, r"expected uint8\[5, 3\], got float64"),
        ({"n/raw": torch.zeros(5, 3)}, ValueError, r"expected uint8\[5, 3\], got float32"),
        ({"n/raw": RAW[:4]}, ValueError, r"shape \[4, 3\] but its port expects \[5, 3\]"),
        ({"n/raw": torch.from_numpy(RAW)[:4]}, ValueError, r"shape \[4, 3\] but its port"),
        ({"n/raw": RAW, "n/rwa": RAW}, ValueError, r"'n/rwa' is not a node input"),
        ({"n/raw": RAW, "n/y": RAW}, ValueError, r"'n/y' is an output"),
        ({"n/raw": RAW.tolist()}, TypeError, r"'n/raw' must be a torch tensor or a NumPy array"),
        ({"n/raw": RAW, "n/gain": 2.0}, TypeError, r"'n/gain' must be a torch tensor or a NumPy"),
    ],
    ids=["dtype", "tensor-dtype", "shape", "tensor-shape", "unknown", "output", "list", "float"],
)
def test_after_a_matching_call_a_wrong_input_still_gets_the_clear_error(
    bundle, inputs, error, message
):
    manager = patchport.InferenceManager(bundle)
    good = manager.run_policy({"n/raw": RAW, "n/gain": GAIN})
    with pytest.raises(error, match=message) as info:
        manager.run_policy(inputs)
    assert isinstance(info.value, patchport.PatchportError)
    again = manager.run_policy({"n/raw": RAW, "n/gain": GAIN})  # the refusal changed nothing
    torch.testing.assert_close(again["n/y"], good["n/y"])


def test_a_refused_call_writes_no_buffer_even_when_its_first_input_matches(bundle):
    manager = patchport.InferenceManager(bundle)
    manager.run_policy({"n/raw": RAW, "n/gain": GAIN})
    other = RAW[::-1].copy()
    with pytest.raises(ValueError, match=r"'n/gain' expected float32\[1\], got float64"):
        manager.run_policy({"n/raw": other, "n/gain": GAIN.astype(np.float64)})
    np.testing.assert_array_equal(manager.value_dict["n"]["raw"].numpy(), RAW)


def test_a_missing_input_is_refused_though_the_given_ones_match(bundle):
    manager = patchport.InferenceManager(bundle)
    with pytest.raises(KeyError, match=r"missing inputs \['n/gain'\]"):
        manager.run_policy({"n/raw": RAW})
    manager.run_policy({"n/raw": RAW, "n/gain": GAIN})
    manager.reset()  # the buffers are zeros again: every input must be given anew
    with pytest.raises(KeyError, match=r"missing inputs \['n/gain'\]"):
        manager.run_policy({"n/raw": RAW})


def test_strided_arrays_and_partial_updates_take_the_steady_path_correctly(bundle):
    manager = patchport.InferenceManager(bundle)
    manager.run_policy({"n/raw": RAW, "n/gain": GAIN})
    wide = np.zeros((5, 6), np.uint8)
    wide[:, ::2] = RAW
    strided = wide[:, ::2]  # a view: right shape and dtype, not contiguous
    assert not strided.flags.c_contiguous
    got = manager.run_policy({"n/raw": strided})  # the gain buffer keeps the last value
    torch.testing.assert_close(got["n/y"], expected(RAW, GAIN))
    got = manager.run_policy({"n/gain": torch.from_numpy(GAIN * 5)})
    torch.testing.assert_close(got["n/y"], expected(RAW, GAIN * 5))


def test_a_port_typed_with_torch_s_name_float_takes_float32(bundle, tmp_path):
    """LEAPP's YAML may spell dtypes as torch does: "float" is float32, in every check."""
    spec = yaml.safe_load(bundle.read_text())
    spec["models"]["n"]["inputs"][1]["dtype"] = "float"
    for path in bundle.parent.iterdir():
        if path.suffix in (".onnx", ".pt", ".pt2"):
            (tmp_path / path.name).write_bytes(path.read_bytes())
    target = tmp_path / "fast.yaml"
    target.write_text(yaml.safe_dump(spec, sort_keys=False))
    manager = patchport.InferenceManager(target)
    got = manager.run_policy({"n/raw": RAW, "n/gain": GAIN})  # first call: the full check
    torch.testing.assert_close(got["n/y"], expected(RAW, GAIN))
    with pytest.raises(ValueError, match=r"'n/gain' expected float32\[1\], got float64"):
        manager.run_policy({"n/gain": GAIN.astype(np.float64)})


def test_onnx_runtime_threads_follow_torch_s_thread_count():
    """A replay uses the parallelism the process gave torch (the traced code's), not ORT's
    own default, so torch.set_num_threads(1) bounds both."""
    from patchport.bundle.loaders import onnx_threads

    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        assert onnx_threads() == 1
        torch.set_num_threads(2)
        assert onnx_threads() == 2
    finally:
        torch.set_num_threads(before)


class Offset(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + 1


def times_ten(module: torch.nn.Module, inputs: tuple[torch.Tensor]) -> tuple[torch.Tensor]:
    return (inputs[0] * 10,)


@pytest.mark.parametrize("hooked", [False, True])
def test_a_torchscript_file_runs_its_scripted_hooks(tmp_path, hooked):
    """The jit runner skips nn.Module.__call__ only where no hook would be skipped with it."""
    from patchport.bundle.loaders import load_runner

    module = Offset()
    if hooked:
        module.register_forward_pre_hook(times_ten)
    path = tmp_path / "offset.pt"
    torch.jit.save(torch.jit.script(module), str(path))
    (got,) = load_runner("jit", path, ["x"])([torch.ones(2)])
    torch.testing.assert_close(got, torch.full((2,), 11.0 if hooked else 2.0))


def test_an_array_written_in_place_between_calls_is_read_anew(bundle):
    """A frame buffer refilled in place each step: every call sees its current values."""
    manager = patchport.InferenceManager(bundle)
    frame = RAW.copy()
    wide = np.zeros((5, 6), np.uint8)
    strided = wide[:, ::2]
    for step in range(3):
        frame[...] = RAW + step
        strided[...] = RAW + 2 * step
        got = manager.run_policy({"n/raw": frame, "n/gain": GAIN})
        torch.testing.assert_close(got["n/y"], expected(RAW + step, GAIN))
        got = manager.run_policy({"n/raw": strided})
        torch.testing.assert_close(got["n/y"], expected(RAW + 2 * step, GAIN))
