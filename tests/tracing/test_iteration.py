"""Iterating and unpacking a traced array over a known-length axis stays traced."""

import numpy as np

from patchport.tracing.interop import interop_patches

from .helpers import conform

RNG = np.random.default_rng(3)


def test_quaternion_unpacking_is_traced():
    def to_euler_yaw(q):
        w, x, y, z = q
        return np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))

    conform(to_euler_yaw, RNG.normal(size=4).astype(np.float32))


def test_star_unpacking_into_a_list():
    def pad(gyr):
        return np.array([0.0, *gyr], dtype=np.float32)

    with interop_patches():  # np.array of a list holding traced values, as in a session
        conform(pad, RNG.normal(size=3).astype(np.float32))


def test_row_loop_over_a_matrix():
    def project(pts3x4):
        out = []
        for row in pts3x4:
            out.append(row[:3] / row[3])
        return np.stack(out)

    conform(project, RNG.uniform(1, 2, size=(3, 4)).astype(np.float32))


def test_flat_unpacking_indexing_and_writes_are_traced():
    """transforms3d's ``Qxx, Qyx, ... = M.flat``, ``M.flat[k]`` reads and a diagonal write."""

    def mat2quat_parts(m):
        qxx, qyx, qzx, qxy, qyy, qzy, qxz, qyz, qzz = m.flat
        k = np.array([qxx - qyy - qzz, qyx + qxy, qzx + qxz, qxx + qyy + qzz]) / 3.0
        firsts = m.flat[:3] + m.flat[4] + m.flat[[8, 0]].sum()
        out = m * 2
        out.flat[::4] = 1.0
        return k, firsts, out * len(m.flat), np.array([v for v in m.T.flat])

    with interop_patches():  # np.array of a list holding traced values, as in a session
        conform(mat2quat_parts, RNG.normal(size=(3, 3)))
