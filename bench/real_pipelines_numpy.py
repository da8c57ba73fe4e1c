"""NumPy output idioms from real robotics / vision code x backends: right, loud, silent, crash?

New pipelines written in the styles issue 20 lists (nobody tuned patchport to them):
a robot observation vector filled by slices, a LUT colour map (a colour wheel and a gamma
table built in the session), a scatter into a point map, quaternion unpacking, and a
pose post-processing step (argmax per heatmap, coordinates looked up in grid tables).
Each is traced once, exported with every backend and replayed on fresh inputs against the
plain code; the classes are those of ``bench/real_pipelines.py`` (whose harness is reused).
Run: python bench/real_pipelines_numpy.py [pipeline-name ...]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import real_pipelines as harness  # noqa: E402

harness.HERE = str(Path(__file__).resolve())  # the user's lines are in this file


def robot_observation(ang_vel, gravity, dof_pos, dof_vel, actions):
    """Humanoid sim-to-real style: a fixed-layout observation filled slice by slice."""
    obs = np.zeros((1, 47), dtype=np.float32)
    obs[0, 0:3] = ang_vel * 0.25
    obs[0, 3:6] = gravity
    obs[0, 6:9] = np.array([0.5, 0.0, 0.0])  # command
    obs[0, 9:21] = (dof_pos - 0.1) * 1.0
    obs[0, 21:33] = dof_vel * 0.05
    obs[0, 33:45] = actions
    phase = 0.3
    obs[0, 45] = np.sin(2 * np.pi * phase)
    obs[0, 46] = np.cos(2 * np.pi * phase)
    return {"obs": np.clip(obs, -18.0, 18.0)}


def _colorwheel():
    ry, yg, gc, cb, bm, mr = 15, 6, 4, 11, 13, 6
    wheel = np.zeros((ry + yg + gc + cb + bm + mr, 3))
    col = 0
    wheel[0:ry, 0] = 255
    wheel[0:ry, 1] = np.floor(255 * np.arange(0, ry) / ry)
    col += ry
    wheel[col : col + yg, 0] = 255 - np.floor(255 * np.arange(0, yg) / yg)
    wheel[col : col + yg, 1] = 255
    col += yg
    wheel[col : col + gc, 1] = 255
    wheel[col : col + gc, 2] = np.floor(255 * np.arange(0, gc) / gc)
    col += gc
    wheel[col : col + cb, 1] = 255 - np.floor(255 * np.arange(cb) / cb)
    wheel[col : col + cb, 2] = 255
    col += cb
    wheel[col : col + bm, 2] = 255
    wheel[col : col + bm, 0] = np.floor(255 * np.arange(0, bm) / bm)
    col += bm
    wheel[col : col + mr, 2] = 255 - np.floor(255 * np.arange(mr) / mr)
    wheel[col : col + mr, 0] = 255
    return wheel


def lut_colormap(flow, gray):
    """Optical-flow colouring (colour wheel gather) and a gamma LUT indexed by pixels."""
    u, v = flow[..., 0], flow[..., 1]
    wheel = _colorwheel()
    ncols = wheel.shape[0]
    a = np.arctan2(-v, -u) / np.pi
    fk = (a + 1) / 2 * (ncols - 1)
    k0 = np.floor(fk).astype(np.int32)
    k1 = k0 + 1
    k1[k1 == ncols] = 0
    f = fk - k0
    image = np.zeros((flow.shape[0], flow.shape[1], 3), np.uint8)
    for i in range(3):
        col = (1 - f) * wheel[k0, i] / 255.0 + f * wheel[k1, i] / 255.0
        image[:, :, i] = np.floor(255 * col)
    table = np.array([((i / 255.0) ** (1 / 2.2)) * 255 for i in np.arange(0, 256)])
    table = table.astype("uint8")
    return {"flow_rgb": image, "gamma": table[gray]}


def scatter_point_map(points):
    """Stereo / depth style: project points and scatter them into an (h, w, 3) map."""
    h, w, fx, fy, cx, cy = 12, 16, 10.0, 10.0, 8.0, 6.0
    us = np.array([1, 4, 7, 9, 15, 3])
    vs = np.array([0, 2, 5, 8, 11, 6])
    xyz = np.zeros((h, w, 3), np.float32)
    xyz[vs, us] = points
    depth = np.zeros((h, w), np.float32)
    depth[vs, us] = points[:, 2]
    valid = depth > 0
    xyz[~valid] = 0
    z = points[:, 2:3]
    uv = np.concatenate([points[:, :1] * fx / z + cx, points[:, 1:2] * fy / z + cy], axis=1)
    return {"xyz": xyz, "depth": depth, "uv": uv}


def quaternion_code(quat, gyr):
    """AHRS filter style: unpack, build matrices from scalars, integrate."""
    w, x, y, z = quat
    rot = np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )
    omega = np.array([0, *gyr])
    q = quat
    dq = 0.5 * np.array(
        [
            q[0] * omega[0] - q[1] * omega[1] - q[2] * omega[2] - q[3] * omega[3],
            q[0] * omega[1] + q[1] * omega[0] + q[2] * omega[3] - q[3] * omega[2],
            q[0] * omega[2] - q[1] * omega[3] + q[2] * omega[0] + q[3] * omega[1],
            q[0] * omega[3] + q[1] * omega[2] - q[2] * omega[1] + q[3] * omega[0],
        ]
    )
    q_new = quat + dq * 0.01
    return {"rot": rot, "quat": q_new / np.linalg.norm(q_new)}


def pose_postprocess(heatmaps, center, scale):
    """Top-down pose style: argmax per joint, coords from grids, quarter-pixel shift."""
    joints, h, w = heatmaps.shape
    flat = heatmaps.reshape(joints, -1)
    idx = np.argmax(flat, axis=1)
    maxvals = np.amax(flat, axis=1)
    xs = np.tile(np.arange(w, dtype=np.float32), h)
    ys = np.repeat(np.arange(h, dtype=np.float32), w)
    preds = np.zeros((joints, 2), np.float32)
    preds[:, 0] = xs[idx]
    preds[:, 1] = ys[idx]
    preds[maxvals <= 0] = 0
    out = np.zeros_like(preds)
    for j in range(joints):
        out[j] = preds[j] * scale / np.array([w, h]) + center - scale * 0.5
    return {"coords": out, "scores": maxvals}


def _r(shape, rng, low=-1.0, high=1.0):
    return rng.uniform(low, high, size=shape).astype(np.float32)


def _quat(rng):
    q = rng.normal(size=4).astype(np.float32)
    return q / np.linalg.norm(q)


P = harness.Pipeline
PIPELINES = [
    P(
        "robot_observation",
        robot_observation,
        lambda r: {
            "ang_vel": _r(3, r),
            "gravity": _r(3, r),
            "dof_pos": _r(12, r),
            "dof_vel": _r(12, r),
            "actions": _r(12, r),
        },
    ),
    P(
        "lut_colormap",
        lut_colormap,
        lambda r: {
            "flow": _r((8, 10, 2), r, -3, 3),
            "gray": r.integers(0, 256, size=(8, 10)).astype(np.uint8),
        },
    ),
    P("scatter_point_map", scatter_point_map, lambda r: {"points": _r((6, 3), r, 0.5, 3.0)}),
    P("quaternion_code", quaternion_code, lambda r: {"quat": _quat(r), "gyr": _r(3, r)}),
    P(
        "pose_postprocess",
        pose_postprocess,
        lambda r: {
            "heatmaps": _r((5, 6, 8), r, -0.2, 1.0),
            "center": _r(2, r, 50, 60),
            "scale": _r(2, r, 80, 100),
        },
    ),
]


def creation_cost(n: int = 100_000) -> None:
    """``np.zeros`` inside a session vs plain: from library code and from user code."""
    import timeit

    import patchport

    library = compile("def make():\n    return np.zeros((3,))\n", np.__file__, "exec")
    space = {"np": np}
    exec(library, space)  # a function whose code lies in NumPy's own folder

    def user() -> np.ndarray:
        return np.zeros((3,))

    def best(fn):  # noqa: ANN001, ANN202
        return min(timeit.repeat(fn, number=n, repeat=5)) / n * 1e9

    plain = best(space["make"]), best(user)
    with patchport.session("cost", save_path=tempfile.mkdtemp()):
        inside = best(space["make"]), best(user)
    for label, a, b in zip(("library", "user"), plain, inside):
        print(
            f"np.zeros from {label} code: {a:.0f} ns plain, {b:.0f} ns in a session ({b / a:.1f}x)"
        )


def main(names: list[str]) -> dict[str, dict[str, int]]:
    chosen = [p for p in PIPELINES if not names or p.name in names]
    return harness.run_table(chosen, "numpy")


if __name__ == "__main__":
    main(sys.argv[1:])
    creation_cost()
