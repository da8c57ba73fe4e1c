"""Camera geometry on traced data: Rodrigues, projectPoints, undistortPoints, stereo's
reprojectImageTo3D and the 2-D transform builders getAffineTransform and
getRotationMatrix2D.

A predicted pose, detected keypoints or calibrated intrinsics flow through these in real
pipelines. Everything runs in float64 like OpenCV (its formulas, term by term), with every
data-dependent branch of OpenCV written as a ``torch.where`` and every loop with a fixed
count, so the graph is the same for every input. The jacobians OpenCV's Python binding
always returns are computed as well (OpenCV's closed forms); unused, they cost nothing in
an exported model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from ._base import cv2, no_dst, refuse, replaces

_FLOATS = ("float32", "float64")
_F64 = torch.float64
_DBL_EPSILON = float(np.finfo(np.float64).eps)
_POLAR_STEPS = 10  # scaled Newton steps to the nearest orthogonal matrix (OpenCV: SVD)
_DIST_COUNTS = (4, 5, 8, 12)


def _array(function: str, argument: str, value: Any, sizes: Sequence[int]) -> torch.Tensor:
    """A small numeric array argument (plain or traced) as a flat float64 tensor."""
    if not isinstance(value, np.ndarray) or value.dtype.kind not in "fiu":
        got = type(value).__name__ if not isinstance(value, np.ndarray) else value.dtype.name
        raise refuse(function, argument, got, "a NumPy array of numbers")
    if value.size not in sizes:
        want = " or ".join(map(str, sizes))
        raise refuse(function, argument, f"{value.dtype.name}{list(value.shape)}", f"{want} values")
    return torch.as_tensor(value).reshape(-1).to(_F64)


def _t(value: Any) -> torch.Tensor:
    return value if isinstance(value, torch.Tensor) else torch.tensor(float(value), dtype=_F64)


def _grid(rows: Sequence[Sequence[Any]]) -> torch.Tensor:
    """A small matrix from nested lists of scalars (tensors or numbers), broadcast."""
    items = [[_t(v) for v in row] for row in rows]
    shape = torch.broadcast_shapes(*(v.shape for row in items for v in row))
    return torch.stack([torch.stack([v.expand(shape) for v in row], -1) for row in items], -2)


def _scalar(value: Any) -> torch.Tensor:
    """A number (Python, NumPy, or a traced 0-d array) as a 0-d float64 tensor."""
    if isinstance(value, (np.ndarray, np.generic, torch.Tensor)):
        return (
            torch.as_tensor(np.asarray(value) if isinstance(value, np.generic) else value)
            .reshape(())
            .to(_F64)
        )
    return torch.tensor(float(value), dtype=_F64)


def _acos(c: torch.Tensor) -> torch.Tensor:
    """float64 arccos from ops ONNX Runtime runs in float64 (it has no float64 Acos):
    float32 acos, then two steps of the angle between it and (c, sqrt(1 - c^2))."""
    sine = torch.sqrt((1 - c) * (1 + c))
    theta = torch.acos(c.to(torch.float32)).to(_F64)
    for _ in range(2):  # each step cubes the error: 1e-7 -> 1e-21
        cos, sin = torch.cos(theta), torch.sin(theta)
        theta = theta + (sine * cos - c * sin) / (c * cos + sine * sin)
    return theta


def _parts(t: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """The slices along the last axis (indexing, not unbind: every exporter takes it)."""
    return tuple(t[..., i] for i in range(t.shape[-1]))


def _cross(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    a0, a1, a2 = _parts(a)
    b0, b1, b2 = _parts(b)
    return torch.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], -1)


# 1 / x is written torch.reciprocal(x) (the same IEEE division): TorchScript cannot script
# a number divided by a tensor, and jit would fall back to tracing


def _safe(den: torch.Tensor, ok: torch.Tensor) -> torch.Tensor:
    """``den`` where ``ok``, else 1: a divisor for a branch ``torch.where`` discards."""
    return torch.where(ok, den, torch.ones_like(den))


# -- Rodrigues --------------------------------------------------------------------------
_D_R_X = torch.tensor(
    [[0, 0, 0, 0, 0, -1, 0, 1, 0], [0, 0, 1, 0, 0, 0, -1, 0, 0], [0, -1, 0, 1, 0, 0, 0, 0, 0]],
    dtype=_F64,
)
_SMALL_J = _D_R_X  # the jacobian at theta = 0 is d[r]_x/dr itself (OpenCV's J[5] = -1 ...)


def vector_to_matrix(r: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """OpenCV's rotation vector -> (3x3 matrix, 3x9 jacobian dR/dr), in float64."""
    x, y, z = _parts(r)
    theta = torch.sqrt(x * x + y * y + z * z)
    small = theta < _DBL_EPSILON
    c, s = torch.cos(theta), torch.sin(theta)
    c1 = 1.0 - c
    itheta = torch.reciprocal(_safe(theta, ~small))
    x, y, z = x * itheta, y * itheta, z * itheta
    rrt = _grid([[x * x, x * y, x * z], [x * y, y * y, y * z], [x * z, y * z, z * z]])
    zero = torch.zeros_like(x)
    r_x = _grid([[zero, -z, y], [z, zero, -x], [-y, x, zero]])
    eye = torch.eye(3, dtype=_F64)
    matrix = c * eye + c1 * rrt + s * r_x
    drrt = _grid(  # d(r r^T)/dr_i, one row of 9 per axis (OpenCV's drrt)
        [
            [x + x, y, z, y, zero, zero, z, zero, zero],
            [zero, x, zero, x, y + y, z, zero, z, zero],
            [zero, zero, x, zero, zero, y, x, y, z + z],
        ]
    )
    rows, flat_eye, flat_rrt, flat_r_x = [], eye.reshape(9), rrt.reshape(9), r_x.reshape(9)
    for i, ri in enumerate((x, y, z)):
        a0, a1, a2 = -s * ri, (s - 2 * c1 * itheta) * ri, c1 * itheta
        a3, a4 = (c - s * itheta) * ri, s * itheta
        rows.append(a0 * flat_eye + a1 * flat_rrt + a2 * drrt[i] + a3 * flat_r_x + a4 * _D_R_X[i])
    jacobian = torch.stack(rows)
    matrix = torch.where(small, eye, matrix)
    return matrix, torch.where(small, _SMALL_J, jacobian)


def _nearest_orthogonal(m: torch.Tensor) -> torch.Tensor:
    """U @ Vt of m's SVD (its orthogonal polar factor) by scaled Newton steps, which ONNX
    can run (it has no SVD); converged to rounding for any well-conditioned matrix."""
    x = m
    for _ in range(_POLAR_STEPS):
        cof = torch.stack([_cross(x[1], x[2]), _cross(x[2], x[0]), _cross(x[0], x[1])])
        det = (x[0] * cof[0]).sum()
        inv_t = cof / det  # inverse transpose
        gamma = torch.sqrt(torch.sqrt((inv_t * inv_t).sum() / (x * x).sum()))
        x = 0.5 * (gamma * x + inv_t / gamma)
    return x


def matrix_to_vector(m: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """OpenCV's 3x3 matrix -> (rotation vector (3,), 9x3 jacobian dr/dR), in float64."""
    in_range = ((m >= -100) & (m < 100)).all()  # checkRange(R, true, 0, -100, 100)
    safe = torch.where(in_range, m, torch.eye(3, dtype=_F64))
    rot = _nearest_orthogonal(safe)
    rx, ry, rz = rot[2, 1] - rot[1, 2], rot[0, 2] - rot[2, 0], rot[1, 0] - rot[0, 1]
    s = torch.sqrt((rx * rx + ry * ry + rz * rz) * 0.25)
    c = torch.clamp((rot[0, 0] + rot[1, 1] + rot[2, 2] - 1) * 0.5, -1.0, 1.0)
    theta = _acos(c)
    small = s < 1e-5
    # small s, c <= 0: a half turn, the axis from the diagonal (OpenCV's sign rules)
    hx = torch.sqrt(torch.clamp((rot[0, 0] + 1) * 0.5, min=0.0))
    hy = torch.sqrt(torch.clamp((rot[1, 1] + 1) * 0.5, min=0.0))
    hy = torch.where(rot[0, 1] < 0, -hy, hy)
    hz = torch.sqrt(torch.clamp((rot[2, 2] + 1) * 0.5, min=0.0))
    hz = torch.where(rot[0, 2] < 0, -hz, hz)
    flip = (hx.abs() < hy.abs()) & (hx.abs() < hz.abs()) & ((rot[1, 2] > 0) != (hy * hz > 0))
    hz = torch.where(flip, -hz, hz)
    half = torch.stack([hx, hy, hz])
    half = half * (theta / torch.sqrt(hx * hx + hy * hy + hz * hz))
    zero3 = torch.zeros(3, dtype=_F64)
    small_r = torch.where(c > 0, zero3, half)
    small_j = torch.where(c > 0, _SMALL_J * 0.5, torch.zeros((3, 9), dtype=_F64))
    # general case: r = om1 * theta / (2 s), jacobian by OpenCV's chain of small products
    s_ok = _safe(s, ~small)
    vth = torch.reciprocal(2 * s_ok)
    dtheta_dtr = -torch.reciprocal(s_ok)
    d1 = 0.5 * (-vth * c / s_ok) * dtheta_dtr
    d2 = 0.5 * dtheta_dtr
    dvar_dr = _grid(
        [
            [0, 0, 0, 0, 0, 1, 0, -1, 0],
            [0, 0, -1, 0, 0, 0, 1, 0, 0],
            [0, 1, 0, -1, 0, 0, 0, 0, 0],
            [d1, 0, 0, 0, d1, 0, 0, 0, d1],
            [d2, 0, 0, 0, d2, 0, 0, 0, d2],
        ]
    )
    dvar2_dvar = _grid(
        [[vth, 0, 0, rx, 0], [0, vth, 0, ry, 0], [0, 0, vth, rz, 0], [0, 0, 0, 0, 1]]
    )
    domega_dvar2 = _grid(
        [[theta, 0, 0, rx * vth], [0, theta, 0, ry * vth], [0, 0, theta, rz * vth]]
    )
    general_j = (domega_dvar2 @ dvar2_dvar) @ dvar_dr
    general_j = general_j.reshape(3, 3, 3).transpose(1, 2).reshape(3, 9)
    general_r = torch.stack([rx, ry, rz]) * (vth * theta)
    vector = torch.where(small, small_r, general_r)
    jacobian = torch.where(small, small_j, general_j)
    vector = torch.where(in_range, vector, zero3)
    jacobian = torch.where(in_range, jacobian, torch.zeros((3, 9), dtype=_F64))
    return vector, jacobian.T


@replaces(
    "Rodrigues",
    family="calibration",
    dtypes=_FLOATS,
    channels=(1,),
    accuracy="vector to matrix (and its jacobian): float32 exact, float64 within 2e-15 "
    "(cos/sin may round the last bit differently); matrix to vector: within 1e-9 relative "
    "plus 3e-11 / sin(theta)^2 (float32: 1e-5 plus as much), the jacobian as well: OpenCV's "
    "closed form divides by sin(theta), so near 0 and 180 degrees one rounding of the input "
    "moves OpenCV's own result that far",
    float_atol=1e-6,
    arguments={
        "src": ("rotation vector (3 values)", "3x3 matrix, within [-100, 100) else zeros"),
        "jacobian": ("returned, never taken as a buffer",),
    },
    notes="matrix to vector projects onto the nearest orthogonal matrix by 10 scaled Newton "
    "steps where OpenCV takes an SVD (the same factor for any matrix whose singular values are "
    "within a ratio of 1e8, to about 1e-16 times that ratio; a singular matrix is not "
    "reproduced).",
)
def Rodrigues(src: Any, dst: Any = None, jacobian: Any = None) -> Any:
    """Traceable ``cv2.Rodrigues``: (matrix, 3x9 jacobian) or (vector, 9x3 jacobian)."""
    no_dst("Rodrigues", dst)
    no_dst("Rodrigues", jacobian, "jacobian")
    if not isinstance(src, np.ndarray) or src.dtype.name not in _FLOATS:
        got = src.dtype.name if isinstance(src, np.ndarray) else type(src).__name__
        raise refuse("Rodrigues", "src", got, "a float32 or float64 array")
    dtype = torch.float32 if src.dtype == np.float32 else _F64
    if src.shape in ((3,), (3, 1), (1, 3), (1, 1, 3)):
        matrix, jac = vector_to_matrix(torch.as_tensor(src).reshape(3).to(_F64))
        return matrix.to(dtype).numpy(), jac.to(dtype).contiguous().numpy()
    if src.shape == (3, 3):
        vector, jac = matrix_to_vector(torch.as_tensor(src).to(_F64))
        return vector.reshape(3, 1).to(dtype).numpy(), jac.to(dtype).contiguous().numpy()
    raise refuse("Rodrigues", "src", list(src.shape), "3x1, 1x3 (a vector) or 3x3 (a matrix)")


# -- projectPoints / undistortPoints ----------------------------------------------------
def _intrinsics(function: str, camera: Any) -> tuple[torch.Tensor, ...]:
    if not isinstance(camera, np.ndarray) or camera.shape != (3, 3):
        got = list(np.shape(camera)) if isinstance(camera, np.ndarray) else type(camera).__name__
        raise refuse(function, "cameraMatrix", got, "a 3x3 array")
    k = _array(function, "cameraMatrix", camera, (9,))
    return k[0], k[4], k[2], k[5]  # fx, fy, cx, cy (OpenCV ignores the skew)


def _distortion(function: str, coeffs: Any, default: int = 0) -> tuple[torch.Tensor, int]:
    """distCoeffs as 12 float64 values (zeros past the given ones) and the given count."""
    if coeffs is None or (isinstance(coeffs, np.ndarray) and coeffs.size == 0):
        return torch.zeros(12, dtype=_F64), default
    if isinstance(coeffs, np.ndarray) and coeffs.size == 14:
        raise refuse(
            function, "distCoeffs", "14 values (tilted sensor)", "None, 4, 5, 8 or 12 values"
        )
    k = _array(function, "distCoeffs", coeffs, _DIST_COUNTS)
    return torch.cat([k, torch.zeros(12 - k.shape[0], dtype=_F64)]), int(coeffs.size)


def _points(function: str, argument: str, value: Any, cn: int) -> torch.Tensor:
    """(N, cn) float64 points from (N, cn), (N, 1, cn) or (1, N, cn) float arrays."""
    if not isinstance(value, np.ndarray) or value.dtype.name not in _FLOATS:
        got = value.dtype.name if isinstance(value, np.ndarray) else type(value).__name__
        raise refuse(function, argument, got, "a float32 or float64 array")
    shape = value.shape
    if not (
        (value.ndim == 2 and shape[1] == cn)
        or (value.ndim == 3 and shape[2] == cn and 1 in shape[:2])
    ):
        raise refuse(function, argument, list(shape), f"(N, {cn}), (N, 1, {cn}) or (1, N, {cn})")
    return torch.as_tensor(value).reshape(-1, cn).to(_F64)


def _distort(x: torch.Tensor, y: torch.Tensor, k: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """OpenCV's distortion of normalized points (no tilt) and the terms its jacobian uses."""
    r2 = x * x + y * y
    r4 = r2 * r2
    r6 = r4 * r2
    a1, a2, a3 = 2 * x * y, r2 + 2 * x * x, r2 + 2 * y * y
    cdist = 1 + k[0] * r2 + k[1] * r4 + k[4] * r6
    icdist2 = torch.reciprocal(1 + k[5] * r2 + k[6] * r4 + k[7] * r6)
    xd = x * cdist * icdist2 + k[2] * a1 + k[3] * a2 + k[8] * r2 + k[9] * r4
    yd = y * cdist * icdist2 + k[2] * a3 + k[3] * a1 + k[10] * r2 + k[11] * r4
    return xd, yd, r2, r4, r6, a1, a2, a3, cdist, icdist2


@replaces(
    "projectPoints",
    family="calibration",
    dtypes=_FLOATS,
    channels=(3,),
    accuracy="image points: float32 exact, float64 within 1e-11 relative; the float64 "
    "jacobian (OpenCV's closed form, 2N x (10 + number of coefficients)) within 1e-11 "
    "relative to its largest entry (a 3x3 rvec: plus Rodrigues' matrix-to-vector bound, "
    "its dR/dr is taken at that vector, like OpenCV)",
    float_atol=1e-6,
    arguments={
        "rvec": ("a rotation vector (3 values)", "a 3x3 rotation matrix"),
        "distCoeffs": ("None", "4, 5, 8 or 12 values"),
        "aspectRatio": ("0",),
    },
    notes="object points, rvec, tvec, cameraMatrix and distCoeffs may all be traced, and "
    "the point count dynamic (annotate.input_tensors(dynamic=...)); 14 coefficients (tilted "
    "sensor) and a fixed aspect ratio are refused.",
)
def projectPoints(
    objectPoints: Any,
    rvec: Any,
    tvec: Any,
    cameraMatrix: Any,
    distCoeffs: Any,
    imagePoints: Any = None,
    jacobian: Any = None,
    aspectRatio: float = 0,
) -> Any:
    """Traceable ``cv2.projectPoints``: ((N, 1, 2) image points, float64 jacobian)."""
    name = "projectPoints"
    no_dst(name, imagePoints, "imagePoints")
    no_dst(name, jacobian, "jacobian")
    if isinstance(aspectRatio, torch.Tensor) or aspectRatio != 0:
        raise refuse(name, "aspectRatio", aspectRatio, "0 (fx and fy from cameraMatrix)")
    points = _points(name, "objectPoints", objectPoints, 3)
    if isinstance(rvec, np.ndarray) and rvec.shape == (3, 3):  # OpenCV: R itself projects,
        given = _array(name, "rvec", rvec, (9,)).reshape(3, 3)  # its vector's dR/dr derives
        drdr = vector_to_matrix(matrix_to_vector(given)[0])[1]
        rot = given
    else:
        rot, drdr = vector_to_matrix(_array(name, "rvec", rvec, (3,)))
    t = _array(name, "tvec", tvec, (3,))
    fx, fy, cx, cy = _intrinsics(name, cameraMatrix)
    k, count = _distortion(name, distCoeffs, default=5)
    big_x, big_y, big_z = _parts(points)
    x = rot[0, 0] * big_x + rot[0, 1] * big_y + rot[0, 2] * big_z + t[0]
    y = rot[1, 0] * big_x + rot[1, 1] * big_y + rot[1, 2] * big_z + t[1]
    z = rot[2, 0] * big_x + rot[2, 1] * big_y + rot[2, 2] * big_z + t[2]
    z = torch.where(z != 0, torch.reciprocal(_safe(z, z != 0)), torch.ones_like(z))
    x, y = x * z, y * z
    xd, yd, r2, r4, r6, a1, a2, a3, cdist, icdist2 = _distort(x, y, k)
    image = torch.stack([xd * fx + cx, yd * fy + cy], -1)

    def chain(dx: torch.Tensor, dy: torch.Tensor) -> torch.Tensor:
        """d(u, v) for a parameter moving the normalized point by (dx, dy)."""
        dr2 = 2 * x * dx + 2 * y * dy
        dcdist = (k[0] + 2 * k[1] * r2 + 3 * k[4] * r4) * dr2
        dicdist2 = -icdist2 * icdist2 * (k[5] + 2 * k[6] * r2 + 3 * k[7] * r4) * dr2
        da1 = 2 * (x * dy + y * dx)
        dmx = (
            dx * cdist * icdist2
            + x * dcdist * icdist2
            + x * cdist * dicdist2
            + k[2] * da1
            + k[3] * (dr2 + 4 * x * dx)
            + (k[8] + 2 * r2 * k[9]) * dr2
        )
        dmy = (
            dy * cdist * icdist2
            + y * dcdist * icdist2
            + y * cdist * dicdist2
            + k[2] * (dr2 + 4 * y * dy)
            + k[3] * da1
            + (k[10] + 2 * r2 * k[11]) * dr2
        )
        return torch.stack([fx * dmx, fy * dmy], -1)

    zero = torch.zeros_like(x)
    columns = []
    for j in range(3):  # rotation: through dR/dr
        d = drdr[j].reshape(3, 3)
        dx0 = big_x * d[0, 0] + big_y * d[0, 1] + big_z * d[0, 2]
        dy0 = big_x * d[1, 0] + big_y * d[1, 1] + big_z * d[1, 2]
        dz0 = big_x * d[2, 0] + big_y * d[2, 1] + big_z * d[2, 2]
        columns.append(chain(z * (dx0 - x * dz0), z * (dy0 - y * dz0)))
    for dx, dy in ((z, zero), (zero, z), (-x * z, -y * z)):  # translation
        columns.append(chain(dx, dy))
    one = torch.ones_like(x)
    columns += [torch.stack([xd, zero], -1), torch.stack([zero, yd], -1)]  # fx, fy
    columns += [torch.stack([one, zero], -1), torch.stack([zero, one], -1)]  # cx, cy
    per_k = [
        (x * icdist2 * r2, y * icdist2 * r2),
        (x * icdist2 * r4, y * icdist2 * r4),
        (a1, a3),
        (a2, a1),
        (x * icdist2 * r6, y * icdist2 * r6),
        (x * cdist * (-icdist2) * icdist2 * r2, y * cdist * (-icdist2) * icdist2 * r2),
        (x * cdist * (-icdist2) * icdist2 * r4, y * cdist * (-icdist2) * icdist2 * r4),
        (x * cdist * (-icdist2) * icdist2 * r6, y * cdist * (-icdist2) * icdist2 * r6),
        (r2, zero),
        (r4, zero),
        (zero, r2),
        (zero, r4),
    ]
    columns += [torch.stack([fx * u, fy * v], -1) for u, v in per_k[:count]]
    jac = torch.stack(columns, -1).reshape(-1, len(columns))  # rows u0, v0, u1, v1, ...
    dtype = torch.float32 if objectPoints.dtype == np.float32 else _F64
    return image.reshape(-1, 1, 2).to(dtype).numpy(), jac.contiguous().numpy()


def _matrix3(function: str, argument: str, value: Any, cols: Sequence[int]) -> torch.Tensor:
    if not isinstance(value, np.ndarray) or value.ndim != 2 or value.shape[0] != 3:
        got = list(np.shape(value)) if isinstance(value, np.ndarray) else type(value).__name__
        raise refuse(function, argument, got, f"None or a 3x{'/3x'.join(map(str, cols))} array")
    if value.shape[1] not in cols:
        raise refuse(function, argument, list(value.shape), f"3x{'/3x'.join(map(str, cols))}")
    return _array(function, argument, value, (value.size,)).reshape(3, -1)[:, :3]


def _criteria(value: Any) -> tuple[int, float | None]:
    """(iteration count, epsilon or None) of a criteria tuple (type, maxCount, epsilon):
    a count always bounds the loop; an epsilon alone would not."""
    try:
        kind, count, eps = value
        kind, count, eps = int(kind), int(count), float(eps)
    except (TypeError, ValueError):
        raise refuse(
            "undistortPoints", "criteria", repr(value), "(type, maxCount, epsilon)"
        ) from None
    if not kind & cv2.TERM_CRITERIA_COUNT or kind & ~3 or not 1 <= count <= 100:
        raise refuse(
            "undistortPoints",
            "criteria",
            repr(value),
            "(cv2.TERM_CRITERIA_COUNT [| cv2.TERM_CRITERIA_EPS], n, eps) with n from 1 to 100: "
            "the count bounds the traced loop",
        )
    return count, eps if kind & cv2.TERM_CRITERIA_EPS else None


def _undistort_loop(
    x0: torch.Tensor,
    y0: torch.Tensor,
    camera: tuple[torch.Tensor, ...],
    k: torch.Tensor,
    steps: int,
    eps: float | None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """OpenCV 5's damped fixed-point undistortion, every point through ``steps`` rounds;
    OpenCV's per-point stops (a negative correction factor; with ``eps``, a reprojection
    error below it) become masks. With ``eps`` a step that raises the error is undone
    and the damping halved, as OpenCV does."""
    u, v, fx, fy, cx, cy = camera
    big = torch.full_like(x0, float(np.finfo(np.float64).max))
    x, y, alpha, error, previous = x0, y0, torch.ones_like(x0), big, big
    done = torch.zeros_like(x0, dtype=torch.bool)
    for _ in range(steps):
        if eps is not None:
            done = done | (error < eps)
        r2 = x * x + y * y
        icdist = (1 + ((k[7] * r2 + k[6]) * r2 + k[5]) * r2) / (
            1 + ((k[4] * r2 + k[1]) * r2 + k[0]) * r2
        )
        bail = ~done & (icdist < 0)  # OpenCV: back to the undistorted point, stop
        active = ~done & ~bail
        delta_x = 2 * k[2] * x * y + k[3] * (r2 + 2 * x * x) + k[8] * r2 + k[9] * r2 * r2
        delta_y = k[2] * (r2 + 2 * y * y) + 2 * k[3] * x * y + k[10] * r2 + k[11] * r2 * r2
        new_x = (1.0 - alpha) * x + alpha * (x0 - delta_x) * icdist
        new_y = (1.0 - alpha) * y + alpha * (y0 - delta_y) * icdist
        if eps is not None:
            xd, yd = _distort(new_x, new_y, k)[:2]
            du, dv = xd * fx + cx - u, yd * fy + cy - v  # std::pow(d, 2) is d * d exactly
            step_error = torch.sqrt(du * du + dv * dv)
            worse = step_error > previous
            alpha = torch.where(active & worse, alpha * 0.5, alpha)
            keep = active & ~worse
            error = torch.where(active, step_error, error)
            previous = torch.where(active, step_error, previous)
        else:
            keep = active
        x = torch.where(bail, x0, torch.where(keep, new_x, x))
        y = torch.where(bail, y0, torch.where(keep, new_y, y))
        done = done | bail
    return x, y


@replaces(
    "undistortPoints",
    family="calibration",
    dtypes=_FLOATS,
    channels=(2,),
    accuracy="exact, float32 and float64 (OpenCV's fixed-count iteration in double, term by term)",
    float_atol=1e-6,
    arguments={
        "distCoeffs": ("None", "4, 5, 8 or 12 values"),
        "R": ("None", "3x3"),
        "P": ("None", "3x3", "3x4"),
        "criteria": (
            "default (5 iterations)",
            "(TERM_CRITERIA_COUNT, n, eps)",
            "(TERM_CRITERIA_COUNT | TERM_CRITERIA_EPS, n, eps)",
        ),
    },
    notes="The point count may be dynamic. OpenCV's default stops after exactly 5 "
    "iterations; the same 5 run in the graph, "
    "with OpenCV's bail-out (a point whose correction factor turns negative keeps its "
    "undistorted position) as a mask. With TERM_CRITERIA_EPS too, all n iterations run: a "
    "point whose reprojection error fell below eps keeps its value and a step that raised "
    "it is undone with the damping halved (OpenCV 5's per-point rules, as masks). "
    "TERM_CRITERIA_EPS without a count and 14 coefficients are refused.",
)
def undistortPoints(
    src: Any,
    cameraMatrix: Any,
    distCoeffs: Any,
    dst: Any = None,
    R: Any = None,
    P: Any = None,
    criteria: Any = (cv2.TERM_CRITERIA_COUNT, 5, 0.01),
) -> Any:
    """Traceable ``cv2.undistortPoints`` of (N, 1, 2) / (1, N, 2) / (N, 2) points."""
    name = "undistortPoints"
    no_dst(name, dst)
    steps, eps = _criteria(criteria)
    points = _points(name, "src", src, 2)
    fx, fy, cx, cy = _intrinsics(name, cameraMatrix)
    k, count = _distortion(name, distCoeffs)
    rr = None if R is None else _matrix3(name, "R", R, (3,))
    if P is not None:
        pp = _matrix3(name, "P", P, (3, 4))
        rr = pp @ (torch.eye(3, dtype=_F64) if rr is None else rr)
    u, v = _parts(points)
    ifx, ify = torch.reciprocal(fx), torch.reciprocal(fy)
    x0 = x = (u - cx) * ifx
    y0 = y = (v - cy) * ify
    if count:
        x, y = _undistort_loop(x0, y0, (u, v, fx, fy, cx, cy), k, steps, eps)
    if rr is not None:
        xx = rr[0, 0] * x + rr[0, 1] * y + rr[0, 2]
        yy = rr[1, 0] * x + rr[1, 1] * y + rr[1, 2]
        ww = torch.reciprocal(rr[2, 0] * x + rr[2, 1] * y + rr[2, 2])
        x, y = xx * ww, yy * ww
    dtype = torch.float32 if src.dtype == np.float32 else _F64
    return torch.stack([x, y], -1).reshape(-1, 1, 2).to(dtype).numpy()


# -- reprojectImageTo3D -----------------------------------------------------------------
_DISPARITY_TYPES = ("uint8", "int16", "int32", "float32")
_BIG_Z = 10000.0
_FLT_EPSILON = float(np.finfo(np.float32).eps)


@replaces(
    "reprojectImageTo3D",
    family="calibration",
    dtypes=_DISPARITY_TYPES,
    channels=(1,),
    accuracy="bit-exact: OpenCV's double products Q (x, y, d, 1), rounded to float32, "
    "times 1/w in double; w = 0 gives inf/NaN as in OpenCV",
    float_atol=0.0,
    arguments={
        "disparity": ("an (H, W) uint8, int16, int32 or float32 array, plain or traced",),
        "Q": ("a 4x4 float array, plain or traced",),
        "ddepth": ("-1 or CV_32F (float32 output)",),
    },
    notes="handleMissingValues=True gives Z = 10000 where the disparity is within "
    "FLT_EPSILON of the image's smallest, as OpenCV.",
)
def reprojectImageTo3D(
    disparity: Any,
    Q: Any,  # noqa: N803 - OpenCV's name
    _3dImage: Any = None,  # noqa: N803 - OpenCV's name
    handleMissingValues: bool = False,  # noqa: N803 - OpenCV's name
    ddepth: int = -1,
) -> Any:
    """Traceable ``cv2.reprojectImageTo3D``: the (H, W, 3) float32 points of a disparity map."""
    name = "reprojectImageTo3D"
    no_dst(name, _3dImage, "_3dImage")
    if not isinstance(disparity, np.ndarray) or disparity.dtype.name not in _DISPARITY_TYPES:
        got = (
            disparity.dtype.name if isinstance(disparity, np.ndarray) else type(disparity).__name__
        )
        raise refuse(name, "disparity", got, "a uint8, int16, int32 or float32 array")
    if disparity.ndim != 2 and not (disparity.ndim == 3 and disparity.shape[2] == 1):
        raise refuse(name, "disparity", list(disparity.shape), "(H, W) or (H, W, 1)")
    if ddepth not in (-1, cv2.CV_32F):
        raise refuse(name, "ddepth", ddepth, "-1 or CV_32F (integer outputs are not replaced)")
    if not isinstance(Q, np.ndarray) or Q.shape != (4, 4) or Q.dtype.kind not in "fiu":
        raise refuse(name, "Q", list(np.shape(Q)), "a 4x4 numeric array")
    q = torch.as_tensor(Q).to(_F64)
    d = torch.as_tensor(disparity).reshape(disparity.shape[:2]).to(torch.float32).to(_F64)
    h, w = disparity.shape[:2]
    y = torch.arange(h, dtype=_F64).reshape(h, 1).expand(h, w)
    x = torch.arange(w, dtype=_F64).reshape(1, w).expand(h, w)
    homogeneous = [q[i, 0] * x + q[i, 1] * y + q[i, 2] * d + q[i, 3] for i in range(4)]
    scale = 1.0 / homogeneous[3]
    xyz = [(c.to(torch.float32).to(_F64) * scale).to(torch.float32) for c in homogeneous[:3]]
    if handleMissingValues:
        missing = torch.abs(d - d.amin()) <= _FLT_EPSILON
        xyz[2] = torch.where(missing, torch.full_like(xyz[2], _BIG_Z), xyz[2])
    return torch.stack(xyz, -1).numpy()


# -- 2-D transforms ---------------------------------------------------------------------
@replaces(
    "getAffineTransform",
    family="calibration",
    dtypes=("float32",),
    channels=(2,),
    accuracy="exact: OpenCV's 6x6 system solved as OpenCV solves it (LU with partial "
    "pivoting in its row order and rounding order, no fused multiply-adds); a pivot below "
    "100 DBL_EPSILON (collinear points) gives zeros like OpenCV",
    float_atol=0.0,
    arguments={"src/dst": ("3 float32 points each, plain or traced",)},
)
def getAffineTransform(src: Any, dst: Any) -> Any:
    """Traceable ``cv2.getAffineTransform``: the 2x3 float64 map of 3 points onto 3."""
    name = "getAffineTransform"
    for argument, value in (("src", src), ("dst", dst)):
        if not isinstance(value, np.ndarray) or value.dtype != np.float32 or value.size != 6:
            got = (
                f"{value.dtype.name}{list(value.shape)}"
                if isinstance(value, np.ndarray)
                else type(value).__name__
            )
            raise refuse(name, argument, got, "a float32 array of 3 points (3, 2)")
    a = torch.as_tensor(src).reshape(3, 2).to(_F64)
    b = torch.as_tensor(dst).reshape(3, 2).to(_F64)
    # OpenCV's system: rows (x_i, y_i, 1, 0, 0, 0) -> x'_i and (0, 0, 0, x_i, y_i, 1) -> y'_i
    point = torch.cat([a, torch.ones((3, 1), dtype=_F64)], 1)
    zeros = torch.zeros((3, 3), dtype=_F64)
    system = torch.stack([torch.cat([point, zeros], 1), torch.cat([zeros, point], 1)], 1)
    m, ok = _lu_solve(system.reshape(6, 6), b.reshape(6))
    return torch.where(ok, m, torch.zeros_like(m)).reshape(2, 3).contiguous().numpy()


_LU_EPSILON = 100 * _DBL_EPSILON  # OpenCV's hal::LU64f gives up below this pivot


def _lu_solve(matrix: torch.Tensor, rhs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """x with ``matrix @ x = rhs`` and whether it exists, as OpenCV's LUImpl computes it:
    per column the first row (in the current order) of largest magnitude is swapped up,
    the rows below get ``row += (A[j,i] * -1/A[i,i]) * pivot_row``, then back substitution
    subtracts in column order and divides; each step one IEEE operation in double."""
    size = matrix.shape[0]
    order = torch.arange(size)
    rows, b, ok = matrix, rhs, torch.tensor(True)
    for i in range(size):
        column = torch.abs(rows[i:, i])
        # OpenCV's scan keeps the first largest (strict ">"): NaN never wins, but stays
        # when it comes first; a NaN pivot is not "below epsilon"
        scan = torch.where(torch.isnan(column), -1.0, column)
        first_nan = torch.isnan(column[0])
        k = torch.where(first_nan, 0, torch.argmax(scan)) + i
        pivot = torch.where(first_nan, column[0], torch.amax(scan))  # |rows[k, i]|
        ok = ok & ~(pivot < _LU_EPSILON)
        swap = torch.where(order == i, k, torch.where(order == k, i, order))
        rows, b = rows[swap], b[swap]
        d = -torch.reciprocal(_safe(rows[i, i], ok))
        alpha = rows[i + 1 :, i] * d
        below = rows[i + 1 :] + alpha.unsqueeze(1) * rows[i].unsqueeze(0)
        rows = torch.cat([rows[: i + 1], below])
        b = torch.cat([b[: i + 1], b[i + 1 :] + alpha * b[i]])
    x = [b[i] for i in range(size)]
    for i in range(size - 1, -1, -1):
        total = x[i]
        for k in range(i + 1, size):
            total = total - rows[i, k] * x[k]
        x[i] = total / _safe(rows[i, i], ok)
    return torch.stack(x), ok


@replaces(
    "getRotationMatrix2D",
    family="calibration",
    dtypes=("float32", "float64"),
    channels=(1,),
    accuracy="within 1e-15 of the largest entry (OpenCV's formula; its cos/sin may round "
    "the last bit differently); the center is rounded to float32 first, as OpenCV's Point2f",
    float_atol=1e-12,
    arguments={"center/angle/scale": ("numbers, plain or traced",)},
)
def getRotationMatrix2D(center: Any, angle: Any, scale: Any) -> Any:
    """Traceable ``cv2.getRotationMatrix2D``: 2x3 float64 rotation about ``center``."""
    try:
        cx, cy = (_scalar(v) for v in center)
    except (TypeError, ValueError, RuntimeError):
        raise refuse("getRotationMatrix2D", "center", repr(center), "two numbers") from None
    cx, cy = cx.to(torch.float32).to(_F64), cy.to(torch.float32).to(_F64)  # Point2f
    theta = _scalar(angle) * (np.pi / 180)
    factor = _scalar(scale)
    alpha, beta = torch.cos(theta) * factor, torch.sin(theta) * factor
    m = _grid(
        [
            [alpha, beta, (1 - alpha) * cx - beta * cy],
            [-beta, alpha, beta * cx + (1 - alpha) * cy],
        ]
    )
    return m.contiguous().numpy()


def _plain_matrix(argument: str, value: Any, shape: tuple[int, ...] | None) -> np.ndarray | None:
    """A constant calibration array (None passes through), checked for shape."""
    if value is None:
        return None
    if type(value) is not np.ndarray or value.dtype.kind not in "fiu":
        got = "traced data" if isinstance(value, np.ndarray) else type(value).__name__
        raise refuse("undistort", argument, got, "a plain (untraced) NumPy array of numbers")
    if shape is not None and value.shape != shape:
        raise refuse("undistort", argument, list(value.shape), f"a {shape[0]}x{shape[1]} array")
    return value


@replaces(
    "undistort",
    family="calibration",
    dtypes=("uint8", "uint16", "float32"),
    channels=(1, 2, 3, 4),
    accuracy="as remap with cv2.convertMaps maps (uint8 nearly always exact, within 1)",
    uint8_units=1,
    arguments={
        "cameraMatrix": ("a constant 3x3 array",),
        "distCoeffs": ("None", "4, 5, 8, 12 or 14 constant coefficients"),
        "newCameraMatrix": ("None (cameraMatrix)", "a constant 3x3 array"),
    },
    notes="OpenCV's own steps: cv2.initUndistortRectifyMap on the constant calibration "
    "(CV_16SC2 maps, computed once at the traced image size) then remap with INTER_LINEAR "
    "and a constant 0 border; the image is traced, the calibration is not.",
)
def undistort(
    src: np.ndarray,
    cameraMatrix: Any,
    distCoeffs: Any,
    dst: Any = None,
    newCameraMatrix: Any = None,
) -> Any:
    """Traceable ``cv2.undistort``: OpenCV's fixed-point undistortion maps, then remap."""
    from ..sizes import fixed
    from .geometry import remap  # geometry imports this module's neighbours: import late

    no_dst("undistort", dst)
    camera = _plain_matrix("cameraMatrix", cameraMatrix, (3, 3))
    coefficients = _plain_matrix("distCoeffs", distCoeffs, None)
    new_camera = _plain_matrix("newCameraMatrix", newCameraMatrix, (3, 3))
    if not isinstance(src, np.ndarray) or src.ndim not in (2, 3):
        raise refuse("undistort", "src", type(src).__name__, "an (H, W) or (H, W, C) image")
    why = "cv2.undistort's maps (computed at the traced image size)"
    size = (fixed(src.shape[1], why), fixed(src.shape[0], why))
    map1, map2 = cv2.initUndistortRectifyMap(
        camera, coefficients, None, camera if new_camera is None else new_camera, size, cv2.CV_16SC2
    )
    return remap(src, map1, map2, cv2.INTER_LINEAR, None, cv2.BORDER_CONSTANT)
