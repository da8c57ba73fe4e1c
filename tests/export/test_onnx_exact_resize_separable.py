"""Float32 bicubic and antialiased (bilinear, bicubic) F.interpolate in ONNX: torch's own
arithmetic where the resized values are rounded, bit for bit with torch on random sizes,
up and down, both argument forms, align_corners, channels-last and batches."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime
import pytest
import torch
import torch.nn.functional as F
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import patchport
from patchport import annotate
from patchport.export.onnx import exact_resize, resize_taps

MODES = [("bicubic", False), ("bilinear", True), ("bicubic", True)]


@st.composite
def resizes(draw, largest: int = 48):
    """(input shape, F.interpolate keywords, channels-last) of a resize torch accepts."""
    mode, antialias = draw(st.sampled_from(MODES))
    batch, channels = draw(st.integers(1, 2)), draw(st.integers(1, 4))
    height, width = draw(st.integers(1, largest)), draw(st.integers(1, largest))
    kwargs = dict(mode=mode, antialias=antialias, align_corners=draw(st.booleans()))
    if draw(st.booleans()):
        factor = draw(st.floats(0.25, 3.0))
        if min(int(height * factor), int(width * factor)) < 1:
            factor = 1.0
        kwargs["scale_factor"] = factor
        kwargs["recompute_scale_factor"] = draw(st.sampled_from([None, True]))
    else:
        kwargs["size"] = (draw(st.integers(1, 2 * largest)), draw(st.integers(1, 2 * largest)))
    return (batch, channels, height, width), kwargs, draw(st.booleans())


def _frame(seed: int, shape: tuple) -> np.ndarray:
    return (np.random.default_rng(seed).random(shape) * 255).astype(np.float32)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(resizes(), st.integers(0, 2**16))
def test_equals_torch_bit_for_bit(case, seed):
    shape, kwargs, channels_last = case
    x = torch.from_numpy(_frame(seed, shape))
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    want = F.interpolate(x, **kwargs)
    got = exact_resize.interpolate(x, **kwargs)
    assert got.shape == want.shape
    assert torch.equal(got, want), int((got != want).sum())


@pytest.mark.parametrize(
    "shape, size", [((1, 3, 480, 640), (224, 224)), ((2, 3, 61, 47), (150, 17))]
)
@pytest.mark.parametrize("mode, antialias", MODES)
def test_equals_torch_on_camera_sized_frames(shape, size, mode, antialias):
    """Many taps (a 2.9x antialiased downscale sums 13), both passes, up and down."""
    x = torch.from_numpy(_frame(1, shape))
    want = F.interpolate(x, size=size, mode=mode, antialias=antialias)
    assert torch.equal(exact_resize.interpolate(x, size=size, mode=mode, antialias=antialias), want)


def test_antialias_to_one_column_is_left_to_interpolate():
    """torch's antialiased vertical pass on a width-1 result reads the first row's taps for
    every row (its values are not a resize of the input): not reproduced, left as it is."""
    x = torch.from_numpy(_frame(2, (1, 1, 68, 4)))
    for mode in ("bilinear", "bicubic"):
        assert exact_resize.separable(x, size=(31, 1), mode=mode, antialias=True) is None
        assert exact_resize.separable(x, size=(68, 1), mode=mode, antialias=True) is not None


def test_other_cases_are_left_to_interpolate():
    x = torch.from_numpy(_frame(3, (1, 3, 20, 20)))
    assert (
        exact_resize.separable(x, size=(30, 30), mode="bilinear") is None
    )  # exact_resize.bilinear
    assert exact_resize.separable(x, size=(30, 30), mode="nearest") is None
    assert exact_resize.separable(x.double(), size=(30, 30), mode="bicubic") is None
    assert exact_resize.separable(x[0], size=(30,), mode="bicubic") is None


def test_fused_multiply_add_rounds_once():
    """resize_taps.fma: exact where a float64 sum would round twice (a float32 midpoint)."""
    a = np.float32(1 + 2**-12)  # a * a = 1 + 2^-11 + 2^-24: halfway between two float32
    c = np.float32(2**-60)  # just above halfway; the float64 sum drops it and ties to even
    assert np.float32(np.float64(a) * np.float64(a) + np.float64(c)) == np.float32(1 + 2**-11)
    assert resize_taps.fma(a, a, c) == np.float32(1 + 2**-11 + 2**-23)


def _to_bytes(mode: str, antialias: bool, **kwargs):
    def pipeline(x):
        y = F.interpolate(x, mode=mode, antialias=antialias, **kwargs)
        return torch.round(torch.clamp(y, 0.0, 255.0)).to(torch.uint8)

    return pipeline


def _replays_exactly(folder, pipeline, shape: tuple) -> None:
    with patchport.session("resize", str(folder)):
        frame = torch.from_numpy(annotate.input_tensors("n", {"frame": _frame(0, shape)}))
        annotate.output_tensors("n", {"out": pipeline(frame)}, export_with="onnx")
    model = patchport.compile_graph(visualize=False).models["n"]
    assert "Resize" not in {node.op_type for node in onnx.load(str(model)).graph.node}
    session = onnxruntime.InferenceSession(str(model))
    for seed in range(1, 4):
        fresh = _frame(seed, shape)
        got = session.run(None, {"frame": fresh})[0]
        np.testing.assert_array_equal(got, pipeline(torch.from_numpy(fresh)).numpy())


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(resizes(largest=24))
def test_resize_then_bytes_replays_exactly_in_onnx_runtime(tmp_path_factory, case):
    shape, kwargs, _ = case
    pipeline = _to_bytes(**{k: v for k, v in kwargs.items()})
    _replays_exactly(tmp_path_factory.mktemp("resize"), pipeline, shape)


def test_clip_style_preprocessing_replays_exactly(tmp_path):
    """transformers' torchvision CLIP processor: bicubic antialiased resize of the shortest
    edge, centre crop, round to bytes (then rescale and normalise)."""

    def clip(x):
        y = F.interpolate(x, size=(96, 128), mode="bicubic", antialias=True)
        y = torch.round(torch.clamp(y, 0, 255)).to(torch.uint8)[..., :, 16:112]
        mean = torch.tensor([0.48145466, 0.4578275, 0.40821073]).view(1, 3, 1, 1)
        return ((y.float() / 255.0) - mean).to(torch.float32)

    _replays_exactly(tmp_path, clip, (1, 3, 180, 240))


@settings(max_examples=60, deadline=None)
@given(resizes(), st.integers(0, 2**16))
def test_uint8_antialias_equals_torch_bit_for_bit(case, seed):
    """uint8 antialiased resizes (torchvision and transformers resize uint8 images): integer
    weights and shifts, as torch's uint8 kernels (AVX2 and generic alike)."""
    shape, kwargs, channels_last = case
    kwargs = {**kwargs, "antialias": True}
    x = torch.from_numpy(np.random.default_rng(seed).integers(0, 256, shape, dtype=np.uint8))
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    want = F.interpolate(x, **kwargs)
    got = exact_resize.interpolate(x, **kwargs)
    assert got.dtype == torch.uint8 and torch.equal(got, want), int((got != want).sum())


def test_uint8_processor_style_resize_replays_exactly(tmp_path):
    """A uint8 frame resized (bicubic, antialiased) then rescaled and normalised: the
    resize itself gives integers, so it is written exactly with nothing downstream."""
    shape = (1, 3, 120, 160)

    def processor(x):
        y = F.interpolate(x, size=(224, 298), mode="bicubic", antialias=True)
        return (y[..., 37:261].float() / 255.0 - 0.5) / 0.25

    def frame(seed):
        return np.random.default_rng(seed).integers(0, 256, shape, dtype=np.uint8)

    with patchport.session("resize", str(tmp_path)):
        x = torch.from_numpy(annotate.input_tensors("n", {"frame": frame(0)}))
        annotate.output_tensors("n", {"out": processor(x)}, export_with="onnx")
    model = patchport.compile_graph(visualize=False).models["n"]
    assert "Resize" not in {node.op_type for node in onnx.load(str(model)).graph.node}
    session = onnxruntime.InferenceSession(str(model))
    for seed in range(1, 4):
        got = session.run(None, {"frame": frame(seed)})[0]
        np.testing.assert_array_equal(got, processor(torch.from_numpy(frame(seed))).numpy())
