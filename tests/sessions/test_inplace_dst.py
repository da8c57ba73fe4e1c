"""``cv2.subtract(img, mean, img)``: a patched call writing into its traced first input."""

import inspect

import cv2
import numpy as np
import pytest
import torch

import patchport
from patchport import annotate
from patchport.sessions.inplace import may_receive
from patchport.tracing import plain


def _per_channel(src, value):
    scalar = torch.as_tensor(np.asarray(value, dtype=np.float64).reshape(-1)[: src.shape[-1]])
    return scalar.to(torch.from_numpy(src).dtype)


def subtract(src1, src2, dst=None, mask=None, dtype=-1):
    """float32 image minus a per-channel scalar (the normalisation helpers' case)."""
    return (torch.from_numpy(src1) - _per_channel(src1, src2)).numpy()


def multiply(src1, src2, dst=None, scale=1.0, dtype=-1):
    return (torch.from_numpy(src1) * _per_channel(src1, src2) * scale).numpy()


MEAN = np.array([[123.7, 116.3, 103.5]])
STD_INV = 1 / np.array([[58.4, 57.1, 57.4]])


def normalize_inplace(img):
    """The widely used in-place normaliser: convert, then subtract and multiply into img."""
    img = img.astype(np.float32)
    top = img[0]  # a view made before the writes sees them
    cv2.subtract(img, MEAN, img)
    out = cv2.multiply(img, STD_INV, img)
    assert out is img
    return img * 1.0, top + 0.0


def test_dst_that_is_the_traced_input_is_an_inplace_write(frame, tmp_path):
    patches = [
        patchport.FunctionPatch(cv2, "subtract", subtract, atol=1e-4),
        patchport.FunctionPatch(cv2, "multiply", multiply, atol=1e-4),
    ]
    expected = normalize_inplace(frame)
    with patchport.session("inplace", save_path=tmp_path, patching=patches):
        x = annotate.input_tensors("n", {"img": frame})
        img, top = normalize_inplace(x)
        np.testing.assert_allclose(plain(img), expected[0], rtol=1e-6)
        np.testing.assert_allclose(plain(top), expected[1], rtol=1e-6)
        annotate.output_tensors("n", {"img": img, "top": top}, export_with="jit")
        assert patchport.session_patches().find("cv2.subtract").calls == 1
    result = patchport.compile_graph(visualize=False)
    assert result.ok
    fresh = np.random.default_rng(7).integers(0, 256, size=frame.shape, dtype=np.uint8)
    outputs = patchport.InferenceManager(result.yaml_path).run_policy({"n/img": fresh})
    want = normalize_inplace(fresh)
    np.testing.assert_allclose(outputs["n/img"], want[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(outputs["n/top"], want[1], rtol=1e-5, atol=1e-5)


def test_any_other_dst_stays_refused(frame):
    with patchport.session(
        "inplace", patching=[patchport.FunctionPatch(cv2, "subtract", subtract)]
    ):
        x = annotate.input_tensors("n", {"img": frame.astype(np.float32)})
        with pytest.raises(patchport.PatchRuleError, match="a dst= buffer"):
            cv2.subtract(x, MEAN, np.empty_like(x))
        with pytest.raises(patchport.PatchRuleError, match="a dst= buffer"):
            cv2.subtract(x, MEAN, x[:])  # a view of the input, not the input itself
        annotate.output_tensors("n", {"img": x + 1})


def test_a_parameter_the_call_cannot_reach_is_not_bound():
    def f(src, code, dst=None, *, out=None):
        pass

    sig = inspect.signature(f)
    assert not may_receive(sig, "dst", (1, 2), {})
    assert may_receive(sig, "dst", (1, 2, 3), {})
    assert may_receive(sig, "dst", (1,), {"dst": None})
    assert not may_receive(sig, "out", (1, 2, 3, 4), {})  # keyword-only
    assert may_receive(sig, "out", (1,), {"out": 2})
    assert not may_receive(sig, "mask", (1, 2, 3), {})


def test_a_required_dst_declared_an_output_buffer_takes_the_inplace_idiom(tmp_path):
    """``cv2.normalize(hist, hist, 0, 1, NORM_MINMAX)``: OpenCV's binding requires dst, and
    the replacement declares it an output buffer, so dst being the traced first argument
    is the in-place idiom (recorded, replayed); an input dst (getAffineTransform's) is not."""

    def describe(values):
        hist = values * 2.0
        out = cv2.normalize(hist, hist, alpha=0, beta=1, norm_type=cv2.NORM_MINMAX)
        assert out is hist
        return {"hist": hist + 0.0}

    rng = np.random.default_rng(0)
    sample = rng.random((8, 8)).astype(np.float32)
    with patchport.session("norm", save_path=tmp_path, patching=["opencv"], strict=True):
        traced = annotate.input_tensors("n", {"values": sample})
        annotate.output_tensors("n", describe(traced))
    manager = patchport.InferenceManager(patchport.compile_graph(visualize=False).yaml_path)
    fresh = rng.random((8, 8)).astype(np.float32) * 5
    got = manager.run_policy({"n/values": fresh})["n/hist"].numpy()
    np.testing.assert_allclose(got, describe(fresh.copy())["hist"], rtol=1e-6)
    from patchport.patches.opencv import calibration

    assert "dst" not in getattr(calibration.getAffineTransform, "__pp_buffers__", ())
