"""Run as a script: filter and pose code in the idioms of filterpy / monodepth2.

``from numpy import dot`` and ``from numpy.linalg import cholesky, inv`` bound before
the session, a module-level noise table, ``R.T @ v`` (ONNX Runtime's fused
Transpose+MatMul got it wrong), and a pose matrix built in ``torch.zeros`` with
``from torch import zeros``: every backend must replay NumPy / torch on fresh inputs with
no warning.

Usage: python filter_from_import.py OUTPUT_FOLDER
"""

import sys
import warnings

import numpy as np
import torch
from numpy import dot
from numpy.linalg import cholesky, inv
from torch import zeros

import patchport
from patchport import annotate

NOISE = np.diag([0.1, 0.2, 0.1])  # a module-level calibration table


def step(x, P, z, angle):
    """One unscented-style update and a pose from an angle."""
    root = cholesky(3.0 * P)
    sigmas = np.concatenate([x[None], x + root.T, x - root.T])
    S = P + NOISE
    K = dot(P, inv(S))
    x_new = x + dot(K, z - x)
    gravity = root.T @ np.array([0.0, 0.0, 9.81])
    theta = torch.from_numpy(angle)
    pose = zeros(3, 3)
    pose[0, 0] = torch.cos(theta[0])
    pose[0, 1] = -torch.sin(theta[0])
    pose[1, 0] = torch.sin(theta[0])
    pose[1, 1] = torch.cos(theta[0])
    pose[2, 2] = 1
    return {"sigmas": sigmas, "x": x_new, "gravity": gravity, "pose": pose.numpy()}


def sample(rng):
    a = rng.normal(size=(3, 3))
    return {
        "x": rng.normal(size=3),
        "P": a @ a.T + np.eye(3),
        "z": rng.normal(size=3),
        "angle": rng.normal(size=1).astype(np.float32),
    }


warnings.simplefilter("error", patchport.PatchportWarning)
backends = ("onnx", "pt2", "jit")
with patchport.session("filter", sys.argv[1]):
    for backend in backends:
        traced = annotate.input_tensors(backend, sample(np.random.default_rng(0)))
        annotate.output_tensors(backend, step(*traced), export_with=backend)
manager = patchport.InferenceManager(patchport.compile_graph(visualize=False).yaml_path)
rng = np.random.default_rng(7)
for _ in range(2):
    fresh = sample(rng)
    outputs = manager.run_policy({f"{b}/{k}": v for b in backends for k, v in fresh.items()})
    expected = step(**fresh)
    for backend in backends:
        for name, want in expected.items():
            np.testing.assert_allclose(outputs[f"{backend}/{name}"], want, rtol=1e-6, atol=1e-9)
        print(f"{backend}: replays like NumPy and torch")
