"""A detectron2-style predictor run as a real script: BGR flip, Image.fromarray, resize with
PIL (from-imported Image names, module-level constants), np.asarray, normalise, a torch model.
Traced with patching=["pil"], exported with each backend, replayed on fresh frames."""

import sys

import numpy as np
import torch
from PIL import Image
from PIL.Image import BILINEAR, fromarray

import patchport
from patchport import annotate

MEAN = torch.tensor([103.53, 116.28, 123.675]).view(-1, 1, 1)
STD = torch.tensor([57.375, 57.12, 58.395]).view(-1, 1, 1)
torch.manual_seed(0)
MODEL = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU()).eval()


def predictor(bgr):
    rgb = bgr[:, :, ::-1]
    image = fromarray(rgb).resize((40, 30), BILINEAR)
    gray = np.asarray(image.convert("L"))
    chw = torch.as_tensor(np.asarray(image).astype("float32").transpose(2, 0, 1))
    with torch.no_grad():
        features = MODEL(((chw - MEAN) / STD).unsqueeze(0))
    flipped = np.array(Image.fromarray(gray).transpose(Image.Transpose.FLIP_LEFT_RIGHT))
    return {"features": features.numpy(), "gray": gray, "flipped": flipped}


def main(folder):
    rng = np.random.default_rng(0)
    for backend in ("onnx", "pt2", "jit"):
        node = f"predictor_{backend}"
        with patchport.session(node, folder, patching=["pil"]):
            bgr = annotate.input_tensors(node, {"bgr": rng.integers(0, 256, (48, 64, 3), np.uint8)})
            annotate.output_tensors(node, predictor(bgr), export_with=backend)
        manager = patchport.InferenceManager(patchport.compile_graph(visualize=False).yaml_path)
        for _ in range(3):
            fresh = rng.integers(0, 256, (48, 64, 3), dtype=np.uint8)
            want = predictor(fresh)
            got = manager.run_policy({f"{node}/bgr": fresh})
            for key, value in want.items():
                out = np.asarray(got[f"{node}/{key}"])
                same = (
                    np.array_equal(out, value)
                    if value.dtype == np.uint8
                    else np.allclose(out, value, rtol=1e-5, atol=1e-5)
                )
                assert same and out.shape == value.shape, (backend, key)
        print(backend, "right")


if __name__ == "__main__":
    main(sys.argv[1])
