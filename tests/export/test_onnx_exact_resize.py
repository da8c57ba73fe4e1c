"""Float32 bilinear F.interpolate in ONNX: torch's own arithmetic where the resized values
are rounded or cast to integers (ONNX Resize is ~1e-6 off, one uint8 unit after rounding),
ONNX Resize elsewhere."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime
import pytest
import torch
import torch.nn.functional as F

import patchport
from patchport import annotate
from patchport.export.onnx import exact_resize


def _frames(seed: int, shape: tuple[int, ...]) -> np.ndarray:
    return np.random.default_rng(seed).random(shape).astype(np.float32)


CASES = [  # (input shape, F.interpolate keywords): both of torch's float kernels
    ((1, 3, 48, 64), dict(size=(224, 224))),  # generic kernel (height + width > 128)
    ((2, 1, 37, 53), dict(size=(64, 96), align_corners=True)),
    ((1, 3, 64, 64), dict(size=(32, 48))),  # channels-last kernel (height + width <= 128)
    ((1, 20, 30, 30), dict(size=(45, 45))),  # 8-channel vectors and a scalar tail
    ((1, 3, 40, 40), dict(scale_factor=1.7)),  # scale 1 / 1.7 as torch passes it
    ((1, 4, 40, 40), dict(scale_factor=0.45, recompute_scale_factor=True)),
    ((1, 2, 33, 40), dict(size=(33, 90))),  # a dimension that does not change
]


@pytest.mark.parametrize("shape, kwargs", CASES)
def test_exact_bilinear_equals_torch_bit_for_bit(shape, kwargs):
    x = torch.from_numpy(_frames(0, shape) * 255)
    want = F.interpolate(x, mode="bilinear", **kwargs)
    assert torch.equal(exact_resize.interpolate(x, mode="bilinear", **kwargs), want)
    channels_last = x.contiguous(memory_format=torch.channels_last)
    want = F.interpolate(channels_last, mode="bilinear", **kwargs)
    assert torch.equal(exact_resize.interpolate(channels_last, mode="bilinear", **kwargs), want)


def test_exact_bilinear_follows_torch_on_one_thread():
    """3-channel images take torch's channels-last kernel when torch runs one thread."""
    threads = torch.get_num_threads()
    x = torch.from_numpy(_frames(1, (1, 3, 48, 64)))
    try:
        torch.set_num_threads(1)
        want = F.interpolate(x, size=(224, 224), mode="bilinear")
        got = exact_resize.interpolate(x, size=(224, 224), mode="bilinear")
    finally:
        torch.set_num_threads(threads)
    assert torch.equal(got, want)


def test_other_modes_are_left_to_interpolate():
    x = torch.from_numpy(_frames(2, (1, 3, 20, 20)))
    for kwargs in (dict(mode="nearest"), dict(mode="bicubic"), dict(antialias=True)):
        args = {"mode": "bilinear", **kwargs}
        assert exact_resize.bilinear(x, size=(30, 30), **args) is None
    assert exact_resize.bilinear(x.double(), size=(30, 30), mode="bilinear") is None


def _resize_then_uint8(x):
    """openpi-style resize-with-pad to 224x224, then 0..255 bytes."""
    resized = F.interpolate(x, size=(168, 224), mode="bilinear", align_corners=False)
    padded = F.pad(resized, (0, 0, 28, 28))
    return torch.round(torch.clamp(padded, 0.0, 1.0) * 255).to(torch.uint8)


def _depth_to_uint8(depth):
    """DepthAnything-style: depth resized to the frame, min-max scaled, to uint8."""
    full = F.interpolate(depth, size=(120, 160), mode="bilinear", align_corners=False)
    scaled = (full - full.min()) / (full.max() - full.min()) * 255.0
    return scaled.to(torch.uint8)


@pytest.mark.parametrize(
    "pipeline, shape", [(_resize_then_uint8, (1, 3, 96, 128)), (_depth_to_uint8, (1, 1, 74, 74))]
)
def test_resize_then_bytes_replays_exactly_in_onnx_runtime(tmp_path, pipeline, shape):
    with patchport.session("resize", str(tmp_path)):
        frame = torch.from_numpy(annotate.input_tensors("n", {"frame": _frames(0, shape)}))
        annotate.output_tensors("n", {"out": pipeline(frame)}, export_with="onnx")
    model = patchport.compile_graph(visualize=False).models["n"]
    ops = {node.op_type for node in onnx.load(str(model)).graph.node}
    assert "Resize" not in ops
    session = onnxruntime.InferenceSession(str(model))
    for seed in range(1, 4):
        fresh = _frames(seed, shape)
        got = session.run(None, {"frame": fresh})[0]
        np.testing.assert_array_equal(got, pipeline(torch.from_numpy(fresh)).numpy())


def test_a_float_result_keeps_onnx_resize(tmp_path):
    """No rounding downstream: one Resize node (4-17x cheaper), within 1e-5."""
    shape = (1, 3, 48, 64)
    with patchport.session("resize", str(tmp_path)):
        frame = torch.from_numpy(annotate.input_tensors("n", {"frame": _frames(0, shape)}))
        out = F.interpolate(frame, size=(96, 128), mode="bilinear") * 2.0
        annotate.output_tensors("n", {"out": out}, export_with="onnx")
    model = patchport.compile_graph(visualize=False).models["n"]
    assert "Resize" in {node.op_type for node in onnx.load(str(model)).graph.node}


def test_a_comparison_downstream_counts_as_discrete():
    """A threshold flips on a 1e-6 difference as a rounding does."""
    from patchport.tracing import Recorder, finish, trace_input

    x = torch.from_numpy(_frames(3, (1, 1, 20, 20)))
    for step, exact in ((lambda y: y > 0.5, True), (lambda y: torch.sigmoid(y), False)):
        rec = Recorder("resize", strict=True)
        traced = trace_input(rec, "x", x)
        module = finish(rec, (step(F.interpolate(traced, size=(30, 30), mode="bilinear")),))
        rewritten = exact_resize.exact_where_discrete(module, (x,))
        targets = {n.target for n in rewritten.graph.nodes if n.op == "call_function"}
        assert (exact_resize.interpolate in targets) is exact


def test_the_torch_onnx_path_rewrites_it_too():
    """decompose_for_onnx (graphs the direct translator does not write) picks it as well."""
    from patchport.export.onnx.decompositions import decompose_for_onnx
    from patchport.tracing import Recorder, finish, trace_input

    x = torch.from_numpy(_frames(4, (1, 3, 20, 20)))
    rec = Recorder("resize", strict=True)
    traced = trace_input(rec, "x", x)
    module = finish(rec, (F.interpolate(traced, size=(30, 30), mode="bilinear").to(torch.uint8),))
    targets = {n.target for n in decompose_for_onnx(module, (x,)).graph.nodes}
    assert exact_resize.interpolate in targets and F.interpolate not in targets
