"""Cost and accuracy of exporting float32 ``F.interpolate`` (bilinear, bicubic, antialiased
bilinear and bicubic) in torch's own arithmetic (patchport.export.onnx.exact_resize and
exact_resize_separable) instead of one ONNX Resize node: ONNX
Runtime CPU time per run (one thread, process time) of both models, and the pixels that
differ from torch after ``round(y * 255) -> uint8``.
Run: python bench/onnx_exact_resize.py [--runs N]"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper

import patchport
from patchport import annotate

BILINEAR = dict(mode="bilinear", antialias=False)
BICUBIC = dict(mode="bicubic", antialias=False)
AA_BILINEAR = dict(mode="bilinear", antialias=True)
AA_BICUBIC = dict(mode="bicubic", antialias=True)
CASES = [  # (name, input shape, output size, align_corners, mode)
    ("camera 480x640 -> 224x224", (1, 3, 480, 640), (224, 224), False, BILINEAR),
    ("openpi 224x224 -> 480x640 (pad)", (1, 3, 224, 224), (480, 640), False, BILINEAR),
    ("depth 518x518 -> 480x640", (1, 1, 518, 518), (480, 640), False, BILINEAR),
    ("mask 64x64 -> 32x48 (small kernel)", (1, 3, 64, 64), (32, 48), False, BILINEAR),
    ("features 1x8x60x80 -> 120x160", (1, 8, 60, 80), (120, 160), True, BILINEAR),
    ("bicubic 480x640 -> 224x224", (1, 3, 480, 640), (224, 224), False, BICUBIC),
    ("bicubic 224x224 -> 448x448", (1, 3, 224, 224), (448, 448), True, BICUBIC),
    ("aa bilinear 480x640 -> 224x298 (ViT)", (1, 3, 480, 640), (224, 298), False, AA_BILINEAR),
    ("aa bicubic 480x640 -> 224x298 (CLIP)", (1, 3, 480, 640), (224, 298), False, AA_BICUBIC),
    ("aa bicubic 1080x1920 -> 224x398", (1, 3, 1080, 1920), (224, 398), False, AA_BICUBIC),
    ("aa bicubic 200x300 -> 384x576 (up)", (1, 3, 200, 300), (384, 576), False, AA_BICUBIC),
]


def to_uint8(y: torch.Tensor) -> torch.Tensor:
    return torch.round(torch.clamp(y, 0, 1) * 255).to(torch.uint8)


def exact_model(shape: tuple, size: tuple, corners: bool, how: dict, folder: Path) -> Path:
    """The pipeline exported by patchport (the decomposition)."""
    frame = np.random.default_rng(0).random(shape).astype(np.float32)
    with patchport.session("resize", str(folder)):
        x = torch.from_numpy(annotate.input_tensors("n", {"x": frame}))
        y = F.interpolate(x, size=size, align_corners=corners, **how)
        annotate.output_tensors("n", {"y": to_uint8(y)}, export_with="onnx")
    return Path(patchport.compile_graph(visualize=False).models["n"])


def resize_model(shape: tuple, size: tuple, corners: bool, how: dict, path: Path) -> Path:
    """The same pipeline with one Resize node, as torch.onnx writes F.interpolate."""
    mode = "align_corners" if corners else "pytorch_half_pixel"
    if how["antialias"]:
        mode = "align_corners" if corners else "half_pixel"
    out = (*shape[:2], *size)
    cubic = how["mode"] == "bicubic"
    nodes = [
        helper.make_node(
            "Resize",
            ["x", "", "", "sizes"],
            ["r"],
            mode="cubic" if cubic else "linear",
            coordinate_transformation_mode=mode,
            antialias=int(how["antialias"]),
            cubic_coeff_a=-0.5 if how["antialias"] else -0.75,
        ),
        helper.make_node("Clip", ["r", "lo", "hi"], ["c"]),
        helper.make_node("Mul", ["c", "k"], ["m"]),
        helper.make_node("Round", ["m"], ["q"]),
        helper.make_node("Cast", ["q"], ["y"], to=TensorProto.UINT8),
    ]
    inits = [
        helper.make_tensor("sizes", TensorProto.INT64, [4], list(out)),
        helper.make_tensor("lo", TensorProto.FLOAT, [], [0.0]),
        helper.make_tensor("hi", TensorProto.FLOAT, [], [1.0]),
        helper.make_tensor("k", TensorProto.FLOAT, [], [255.0]),
    ]
    graph = helper.make_graph(
        nodes,
        "resize",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, list(out))],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    onnx.save(model, str(path))
    return path


def cpu_seconds(session: onnxruntime.InferenceSession, feed: dict, runs: int) -> float:
    session.run(None, feed)
    start = time.process_time()
    for _ in range(runs):
        session.run(None, feed)
    return (time.process_time() - start) / runs


def main(runs: int) -> None:
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    widths = (36, 9, 9, 6, 10, 9)
    header = ("case", "Resize ms", "exact ms", "ratio", "Resize off", "exact off")
    print(
        " ".join(
            f"{h:{w}}" if i == 0 else f"{h:>{w}}" for i, (h, w) in enumerate(zip(header, widths))
        )
    )
    for name, shape, size, corners, how in CASES:
        with tempfile.TemporaryDirectory() as folder:
            exact = onnxruntime.InferenceSession(
                str(exact_model(shape, size, corners, how, Path(folder))), options
            )
            resize = onnxruntime.InferenceSession(
                str(resize_model(shape, size, corners, how, Path(folder) / "resize.onnx")),
                options,
            )
        off = {"resize": 0, "exact": 0}
        for seed in range(1, 6):
            x = np.random.default_rng(seed).random(shape).astype(np.float32)
            y = F.interpolate(torch.from_numpy(x), size=size, align_corners=corners, **how)
            want = to_uint8(y).numpy()
            off["resize"] += int((resize.run(None, {"x": x})[0] != want).sum())
            off["exact"] += int((exact.run(None, {"x": x})[0] != want).sum())
        feed = {"x": np.random.default_rng(9).random(shape).astype(np.float32)}
        t_resize, t_exact = cpu_seconds(resize, feed, runs), cpu_seconds(exact, feed, runs)
        print(
            f"{name:36} {t_resize * 1e3:9.3f} {t_exact * 1e3:9.3f} {t_exact / t_resize:6.1f} "
            f"{off['resize']:10d} {off['exact']:9d}"
        )
    print("(off: pixels of 5 random frames that differ from torch after round -> uint8)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=50)
    main(parser.parse_args().runs)
