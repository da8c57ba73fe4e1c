"""Traced ``scipy.spatial.transform.Rotation``: constructors, conversions, composition.

A Rotation made from traced data is a :class:`TracedRotation`: a subclass of SciPy's
Rotation whose SciPy state holds the concrete quaternions (so every SciPy method, and
``isinstance(r, Rotation)``, behaves as it would) and which also carries the traced
quaternions. The replaced methods below (installed on SciPy's class, so they serve both
kinds) compute from the traced copy with torch operations in float64, in the order
SciPy's Cython backend computes; a method without a replacement warns at the user's line
and computes on the concrete quaternions. Plain data never meets any of this: an ordinary
``Rotation.from_quat(q)`` is SciPy's own call and returns SciPy's own class.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import torch

from ..._stack import user_stacklevel
from ...patching import active_patch_of
from ...patching.comparison import register_comparison
from ...tracing.loss import report_loss
from ...tracing.values import find_recorder, plain
from ._base import as_float64, describe, refuse, replaces, to_numpy, to_tensor

try:
    from scipy.spatial.transform import Rotation
except ImportError as error:  # pragma: no cover - a SciPy without spatial.transform
    raise ImportError("patchport.patches.scipy needs scipy.spatial.transform") from error

if not hasattr(Rotation, "__dict__") or not hasattr(Rotation, "__setstate__"):  # pragma: no cover
    raise ImportError(
        "patchport.patches.scipy needs SciPy >= 1.16 (Rotation as a Python class): "
        "pip install -U scipy"
    )

FAMILY = "rotation"
_ACCURACY = (
    "float64, SciPy's operations in its order; torch's sqrt, sin, cos and atan2 round "
    "within 1 ulp where libm's are exact: within 1e-15 relative"
)
_NORMALISED = (
    "float64, SciPy's operations in its order; the norm's square root (torch's, within "
    "1 ulp): within 4e-16 relative"
)
_EXACT = (
    "bit-exact (float64, SciPy's arithmetic; checked within 1e-15 where a compiler fuses "
    "multiply-adds)"
)
_RTOL, _ATOL = 1e-13, 1e-14  # what the trace-time check allows (sin/cos/atan2, BLAS)


class TracedRotation(Rotation):
    """A SciPy Rotation computed from traced data (see the module docstring).

    SciPy's own state (``_quat`` and friends) holds the concrete quaternions as SciPy's
    code expects them; ``_pp_quat`` holds the traced (N, 4) float64 tensor.
    """

    _pp_quat: torch.Tensor

    def __pp_traced__(self) -> tuple[Any, ...]:
        """The traced values this object carries (patchport's dispatch looks for them)."""
        return (self.__dict__.get("_pp_quat"),)

    def __iter__(self) -> Iterator[Rotation]:
        for index in range(len(self)):
            yield self[index]

    def __copy__(self) -> TracedRotation:
        return _make(self._pp_quat, self._single)

    def __deepcopy__(self, memo: dict) -> TracedRotation:
        return _make(self._pp_quat, self._single)

    def __repr__(self) -> str:
        return repr(_plain_rotation(np.array(self._quat), self._single))

    def __setitem__(self, indexer: Any, value: Rotation) -> None:
        """Replace some rotations: the traced quaternions are updated as the concrete ones."""
        current = Rotation.__setitem__
        if find_recorder(self) is None:
            return current(self, indexer, value)
        q, _ = _state("spatial.transform.Rotation.__setitem__", self)
        if not isinstance(value, Rotation):
            raise TypeError("value must be a Rotation object")
        updated = q.clone()
        updated[indexer] = _state("spatial.transform.Rotation.__setitem__", value)[0].reshape(
            updated[indexer].shape
        )
        current(self, indexer, _plain_rotation(np.array(value._quat), value._single))
        self._pp_quat = updated
        return None

    def __reduce__(self) -> Any:
        report_loss(
            find_recorder(self),
            "pickling a traced scipy Rotation (only its concrete quaternions are kept)",
        )
        return (Rotation.from_quat, (np.array(self._quat[0] if self._single else self._quat),))


def _delegate(name: str) -> Any:
    """TracedRotation's ``name``: SciPy's method as installed now (a patchport replacement
    when one is patched in, which computes from the traced quaternions); without one, a
    TraceLossWarning at the user's line, then SciPy on the concrete quaternions."""

    def method(self: TracedRotation, *args: Any, **kwargs: Any) -> Any:
        current = getattr(Rotation, name)
        if active_patch_of(current) is None:
            recorder = find_recorder(self)
            if recorder is not None:
                report_loss(
                    recorder,
                    f"scipy Rotation.{name}() on a traced rotation has no patchport "
                    f"replacement here; SciPy computes it from the concrete quaternions",
                )
        return current(self, *args, **kwargs)

    method.__name__ = name
    method.__qualname__ = f"TracedRotation.{name}"
    method.__doc__ = getattr(getattr(Rotation, name), "__doc__", None)
    return method


_OWN = {"__init__", "__iter__", "__copy__", "__deepcopy__", "__reduce__", "__repr__", "__setitem__"}
for _name, _value in list(vars(Rotation).items()):
    if callable(_value) and not isinstance(_value, (staticmethod, classmethod, type)):
        if _name not in _OWN and (not _name.startswith("_") or _name.endswith("__")):
            if _name not in ("__getstate__", "__setstate__", "__bool__", "__len__"):
                setattr(TracedRotation, _name, _delegate(_name))


def _concrete(traced: torch.Tensor) -> np.ndarray:
    """The eager values of a traced tensor as a fresh float64 array."""
    return np.array(plain(traced).detach().numpy(), dtype=np.float64, copy=True)


def _make(quat: torch.Tensor, single: bool) -> TracedRotation:
    """A TracedRotation of (N, 4) ``quat`` (a single rotation when ``single``)."""
    rotation = TracedRotation.__new__(TracedRotation)
    rotation.__setstate__((_concrete(quat), single))  # SciPy's state: concrete, 2-D
    rotation._pp_quat = quat
    return rotation


def _plain_rotation(quat: np.ndarray, single: bool) -> Rotation:
    """SciPy's own Rotation holding (N, 4) ``quat`` as is (no normalisation)."""
    rotation = Rotation.__new__(Rotation)
    rotation.__setstate__((quat, single))
    return rotation


def _result(quat: torch.Tensor, single: bool) -> Rotation:
    """The Rotation a replacement returns: traced when ``quat`` is, else SciPy's own."""
    if find_recorder(quat) is not None:
        return _make(quat, single)
    return _plain_rotation(_concrete(quat), single)


def _state(function: str, rotation: Any) -> tuple[torch.Tensor, bool]:
    """(N, 4) quaternions of a Rotation (traced or SciPy's own) and whether it is single."""
    if not isinstance(rotation, Rotation):
        raise refuse(function, "self", describe(rotation), "a scipy Rotation")
    traced = rotation.__dict__.get("_pp_quat")
    if traced is not None and find_recorder(traced) is not None:
        return traced, bool(rotation._single)
    quat = np.asarray(rotation._quat)
    if quat.ndim != 2:
        raise refuse(function, "self", f"{quat.ndim - 1}-D rotations", "one or N rotations")
    return torch.from_numpy(np.array(quat, dtype=np.float64)), bool(rotation._single)


def _cols(q: torch.Tensor) -> tuple[torch.Tensor, ...]:
    return tuple(q[:, index] for index in range(q.shape[1]))


def _normalized(q: torch.Tensor) -> torch.Tensor:
    """Each quaternion divided by its norm, summed as SciPy's _normalize4 sums."""
    x, y, z, w = _cols(q)
    norm = torch.sqrt(x * x + y * y + z * z + w * w)
    return q / norm[:, None]


def _compose(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """Quaternion products p * q (one of them may hold a single rotation)."""
    p0, p1, p2, p3 = _cols(p)
    q0, q1, q2, q3 = _cols(q)
    cross = (p1 * q2 - p2 * q1, p2 * q0 - p0 * q2, p0 * q1 - p1 * q0)
    return torch.stack(
        [
            p3 * q0 + q3 * p0 + cross[0],
            p3 * q1 + q3 * p1 + cross[1],
            p3 * q2 + q3 * p2 + cross[2],
            p3 * q3 - p0 * q0 - p1 * q1 - p2 * q2,
        ],
        dim=-1,
    )


def _matrix(q: torch.Tensor) -> torch.Tensor:
    """(N, 3, 3) rotation matrices of (N, 4) quaternions, as SciPy's as_matrix computes."""
    x, y, z, w = _cols(q)
    x2, y2, z2, w2 = x * x, y * y, z * z, w * w
    xy, zw, xz, yw, yz, xw = x * y, z * w, x * z, y * w, y * z, x * w
    rows = [
        x2 - y2 - z2 + w2,
        2 * (xy - zw),
        2 * (xz + yw),
        2 * (xy + zw),
        -x2 + y2 - z2 + w2,
        2 * (yz - xw),
        2 * (xz - yw),
        2 * (yz + xw),
        -x2 - y2 + z2 + w2,
    ]
    return torch.stack(rows, dim=-1).reshape(-1, 3, 3)


def _canonical(q: torch.Tensor) -> torch.Tensor:
    """The quaternion of each pair (q, -q) SciPy calls canonical (w > 0, then x, y, z)."""
    x, y, z, w = _cols(q)
    flip = (w < 0) | ((w == 0) & ((x < 0) | ((x == 0) & ((y < 0) | ((y == 0) & (z < 0))))))
    return torch.where(flip[:, None], -q, q)


def _norm3(x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    return torch.sqrt(x * x + y * y + z * z)


def _deg2rad(t: torch.Tensor) -> torch.Tensor:
    return t * (math.pi / 180.0)  # NumPy's deg2rad: one product with pi / 180


def _rad2deg(t: torch.Tensor) -> torch.Tensor:
    return t * (180.0 / math.pi)


def _single_or_batch(function: str, argument: str, t: torch.Tensor, width: int) -> bool:
    """Check a (width,) or (N, width) argument; return whether it is a single one."""
    if t.ndim not in (1, 2) or t.shape[-1] != width:
        raise ValueError(
            f"Expected `{argument}` to have shape ({width},) or (N, {width}), got {tuple(t.shape)}."
        )
    return t.ndim == 1


# -------------------------------------------------------------------- constructors
@replaces(
    "spatial.transform.Rotation.from_quat",
    family=FAMILY,
    dtypes=("float32", "float64", "list"),
    accuracy=_NORMALISED,
    arguments={"quat": ("(4,)", "(N, 4)"), "scalar_first": ("False", "True")},
    float_atol=_ATOL,
    rtol=_RTOL,
)
def from_quat(quat: Any, *, scalar_first: bool = False) -> Rotation:
    """Traced ``Rotation.from_quat``: normalised (x, y, z, w) quaternions (traced stay traced)."""
    q = as_float64("spatial.transform.Rotation.from_quat", "quat", quat)
    if q.ndim not in (1, 2) or q.shape[-1] != 4:
        if q.ndim > 2 and q.shape[-1] == 4:
            raise refuse(
                "spatial.transform.Rotation.from_quat", "quat.shape", tuple(q.shape), "(4,), (N, 4)"
            )
        raise ValueError(f"Expected `quat` to have shape (..., 4), got {tuple(q.shape)}.")
    single = q.ndim == 1
    q = q.reshape(-1, 4)
    if scalar_first:
        q = torch.cat([q[:, 1:], q[:, :1]], dim=1)
    if q.shape[0] and bool((_concrete(q) == 0).all(axis=1).any()):
        raise ValueError("Found zero norm quaternions in `quat`.")
    return _result(_normalized(q), single)


@replaces(
    "spatial.transform.Rotation.from_rotvec",
    family=FAMILY,
    dtypes=("float32", "float64", "list"),
    accuracy=_ACCURACY,
    arguments={"rotvec": ("(3,)", "(N, 3)"), "degrees": ("False", "True")},
    float_atol=_ATOL,
    rtol=_RTOL,
)
def from_rotvec(rotvec: Any, degrees: bool = False) -> Rotation:
    """Traced ``Rotation.from_rotvec`` (SciPy's Taylor branch below 1e-3 rad kept)."""
    r = as_float64("spatial.transform.Rotation.from_rotvec", "rotvec", rotvec)
    if degrees:
        r = _deg2rad(r)
    if r.ndim not in (1, 2) or r.shape[-1] != 3:
        raise ValueError(f"Expected `rot_vec` to have shape (3,) or (N, 3), got {tuple(r.shape)}")
    single = r.ndim == 1
    r = r.reshape(-1, 3)
    x, y, z = _cols(r)
    angle = _norm3(x, y, z)
    angle2 = angle * angle
    small = 0.5 - angle2 / 48 + angle2 * angle2 / 3840
    scale = torch.where(angle <= 1e-3, small, torch.sin(angle / 2) / angle)
    quat = torch.stack([scale * x, scale * y, scale * z, torch.cos(angle / 2)], dim=-1)
    return _result(quat, single)


def _sequence(function: str, seq: Any, lengths: tuple[int, ...]) -> tuple[str, bool]:
    """SciPy's checks of an axis sequence; returns (lower-case seq, intrinsic)."""
    if not isinstance(seq, str):
        raise refuse(function, "seq", describe(seq), "a string such as 'xyz' or 'ZYX'")
    if len(seq) not in lengths:
        if lengths == (3,):
            raise ValueError(f"Expected 3 axes, got {seq}.")
        raise ValueError(
            f"Expected axis specification to be a non-empty string of upto 3 characters, got {seq}"
        )
    intrinsic = all(c in "XYZ" for c in seq)
    if not (intrinsic or all(c in "xyz" for c in seq)):
        raise ValueError(
            f"Expected axes from `seq` to be from ['x', 'y', 'z'] or ['X', 'Y', 'Z'], got {seq}"
        )
    if any(seq[i] == seq[i + 1] for i in range(len(seq) - 1)):
        raise ValueError(f"Expected consecutive axes to be different, got {seq}")
    return seq.lower(), intrinsic


def _elementary(axis: str, angles: torch.Tensor) -> torch.Tensor:
    """(N, 4) quaternions of rotations by ``angles`` about one basis axis."""
    zero = torch.zeros_like(angles)
    parts = [zero, zero, zero, torch.cos(angles / 2)]
    parts["xyz".index(axis)] = torch.sin(angles / 2)
    return torch.stack(parts, dim=-1)


@replaces(
    "spatial.transform.Rotation.from_euler",
    family=FAMILY,
    dtypes=("float32", "float64", "list"),
    accuracy=_ACCURACY,
    arguments={
        "seq": ("1 to 3 axes, extrinsic (xyz) or intrinsic (XYZ)",),
        "angles": ("scalar", "(k,)", "(N, k)"),
        "degrees": ("False", "True"),
    },
    float_atol=_ATOL,
    rtol=_RTOL,
)
def from_euler(seq: str, angles: Any, degrees: bool = False) -> Rotation:
    """Traced ``Rotation.from_euler``: elementary rotations composed as SciPy composes."""
    function = "spatial.transform.Rotation.from_euler"
    seq, intrinsic = _sequence(function, seq, (1, 2, 3))
    a = as_float64(function, "angles", angles)
    if a.ndim > 2:
        raise ValueError("Cython backend is only compatible with up to 2D inputs")
    if degrees:
        a = _deg2rad(a)
    single = a.ndim < 2
    a = a.reshape(1, -1) if a.ndim < 2 else a
    if a.shape[1] != len(seq):
        raise ValueError(
            "Expected last dimension of `angles` to match number of sequence axes "
            f"specified, got {a.shape[1]}."
        )
    result = _elementary(seq[0], a[:, 0])
    for index in range(1, len(seq)):
        step = _elementary(seq[index], a[:, index])
        result = _compose(result, step) if intrinsic else _compose(step, result)
    return _result(result, single)


def _cross(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Row-wise cross products of (..., 3) tensors."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return torch.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], dim=-1)


def _polar(m: torch.Tensor, steps: int = 12) -> torch.Tensor:
    """The orthogonal polar factor U V^T of (N, 3, 3) matrices (what SciPy's SVD step
    gives), by scaled Newton iterations X <- (g X + X^-T / g) / 2 with g = |det X|^-1/3."""
    x = m
    for _ in range(steps):
        rows = (x[:, 0], x[:, 1], x[:, 2])
        cof = torch.stack(
            [_cross(rows[1], rows[2]), _cross(rows[2], rows[0]), _cross(rows[0], rows[1])], dim=1
        )  # the cofactor matrix: X^-T = cof / det
        det = (rows[0] * cof[:, 0]).sum(-1)
        gamma = torch.abs(det) ** (-1.0 / 3.0)
        x = 0.5 * (gamma[:, None, None] * x + cof / (gamma * det)[:, None, None])
    return x


def _from_orthogonal(m: torch.Tensor) -> torch.Tensor:
    """SciPy's _from_matrix_orthogonal: the largest of trace and diagonal picks the formula."""
    m00, m01, m02 = m[:, 0, 0], m[:, 0, 1], m[:, 0, 2]
    m10, m11, m12 = m[:, 1, 0], m[:, 1, 1], m[:, 1, 2]
    m20, m21, m22 = m[:, 2, 0], m[:, 2, 1], m[:, 2, 2]
    trace = m00 + m11 + m22
    decision = torch.stack([m00, m11, m22, trace], dim=-1)
    choice = torch.argmax(decision, dim=-1)  # the first largest, as SciPy's _argmax4
    candidates = []
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        q = [None, None, None, None]
        q[i] = 1 - trace + 2 * m[:, i, i]
        q[j] = m[:, j, i] + m[:, i, j]
        q[k] = m[:, k, i] + m[:, i, k]
        q[3] = m[:, k, j] - m[:, j, k]
        candidates.append(torch.stack(q, dim=-1))
    candidates.append(torch.stack([m21 - m12, m02 - m20, m10 - m01, 1 + trace], dim=-1))
    stacked = torch.stack(candidates, dim=1)  # (N, 4 choices, 4)
    picked = torch.gather(stacked, 1, choice[:, None, None].expand(-1, 1, 4))[:, 0]
    return _normalized(picked)


@replaces(
    "spatial.transform.Rotation.from_matrix",
    family=FAMILY,
    dtypes=("float32", "float64", "list"),
    accuracy=_ACCURACY + "; a matrix SciPy orthogonalises (by SVD) within 1e-12",
    arguments={"matrix": ("(3, 3)", "(N, 3, 3)"), "assume_valid": ("False", "True")},
    notes=(
        "`from_matrix` checks orthogonality in the graph as SciPy does (Gram matrix within "
        "1e-12 of the identity); other matrices are projected onto the nearest rotation by "
        "scaled Newton polar iterations instead of SciPy's SVD (same result within 1e-12). "
        "A left-handed or singular traced matrix raises at trace time, as in SciPy; at "
        "replay it gives no error."
    ),
    float_atol=1e-12,
    rtol=_RTOL,
)
def from_matrix(matrix: Any, *, assume_valid: bool = False) -> Rotation:
    """Traced ``Rotation.from_matrix``: SciPy's orthogonality check, its quaternion formulas."""
    m = as_float64("spatial.transform.Rotation.from_matrix", "matrix", matrix)
    if m.ndim not in (2, 3) or tuple(m.shape[-2:]) != (3, 3):
        raise ValueError(
            f"Expected `matrix` to have shape (3, 3) or (N, 3, 3), got {tuple(m.shape)}"
        )
    single = m.ndim == 2
    m = m.reshape(-1, 3, 3)
    if not assume_valid:
        dets = np.linalg.det(_concrete(m))
        if np.any(dets <= 0):
            ind = int(np.where(dets <= 0)[0][0])
            raise ValueError(
                "Non-positive determinant (left-handed or null coordinate frame) in rotation "
                f"matrix {ind}: {_concrete(m)[ind]}."
            )
        gram = m @ m.transpose(1, 2)
        eye = torch.eye(3, dtype=torch.float64)
        close = torch.abs(gram - eye) <= 1e-12 + 1e-5 * torch.abs(eye)  # np.isclose's rule
        orthogonal = close.all(dim=-1).all(dim=-1)
        m = torch.where(orthogonal[:, None, None], m, _polar(m))
    return _result(_from_orthogonal(m), single)


# -------------------------------------------------------------------- conversions
@replaces(
    "spatial.transform.Rotation.as_quat",
    family=FAMILY,
    dtypes=("float64",),
    accuracy=_EXACT,
    arguments={"canonical": ("False", "True"), "scalar_first": ("False", "True")},
    float_atol=1e-15,
    rtol=0.0,
)
def as_quat(self: Rotation, canonical: bool = False, *, scalar_first: bool = False) -> np.ndarray:
    """Traced ``Rotation.as_quat``."""
    q, single = _state("spatial.transform.Rotation.as_quat", self)
    if canonical:
        q = _canonical(q)
    if scalar_first:
        q = torch.cat([q[:, 3:], q[:, :3]], dim=1)
    return to_numpy(q[0] if single else q)


@replaces(
    "spatial.transform.Rotation.as_matrix",
    family=FAMILY,
    dtypes=("float64",),
    accuracy=_EXACT,
    float_atol=1e-15,
    rtol=0.0,
)
def as_matrix(self: Rotation) -> np.ndarray:
    """Traced ``Rotation.as_matrix``."""
    q, single = _state("spatial.transform.Rotation.as_matrix", self)
    m = _matrix(q)
    return to_numpy(m[0] if single else m)


def _angle(q: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """2 atan2(|q_xyz|, w)."""
    x, y, z, _ = _cols(q)
    return 2 * torch.atan2(_norm3(x, y, z), w)


@replaces(
    "spatial.transform.Rotation.as_rotvec",
    family=FAMILY,
    dtypes=("float64",),
    accuracy=_ACCURACY,
    arguments={"degrees": ("False", "True")},
    float_atol=_ATOL,
    rtol=_RTOL,
)
def as_rotvec(self: Rotation, degrees: bool = False) -> np.ndarray:
    """Traced ``Rotation.as_rotvec`` (SciPy's Taylor branch below 1e-3 rad kept)."""
    q, single = _state("spatial.transform.Rotation.as_rotvec", self)
    q = _canonical(q)
    angle = _angle(q, q[:, 3])
    angle2 = angle * angle
    small = 2 + angle2 / 12 + 7 * angle2 * angle2 / 2880
    scale = torch.where(angle <= 1e-3, small, angle / torch.sin(angle / 2))
    rotvec = scale[:, None] * q[:, :3]
    if degrees:
        rotvec = _rad2deg(rotvec)
    return to_numpy(rotvec[0] if single else rotvec)


@replaces(
    "spatial.transform.Rotation.magnitude",
    family=FAMILY,
    dtypes=("float64",),
    accuracy=_ACCURACY,
    float_atol=_ATOL,
    rtol=_RTOL,
)
def magnitude(self: Rotation) -> Any:
    """Traced ``Rotation.magnitude``: the rotation angles in [0, pi]."""
    q, single = _state("spatial.transform.Rotation.magnitude", self)
    angles = _angle(q, torch.abs(q[:, 3]))
    return to_numpy(angles[0] if single else angles)


def _wrap(angle: torch.Tensor) -> torch.Tensor:
    angle = torch.where(angle < -math.pi, angle + 2 * math.pi, angle)
    return torch.where(angle > math.pi, angle - 2 * math.pi, angle)


@replaces(
    "spatial.transform.Rotation.as_euler",
    family=FAMILY,
    dtypes=("float64",),
    accuracy=_ACCURACY,
    arguments={
        "seq": ("3 axes, extrinsic (xyz) or intrinsic (XYZ), Tait-Bryan or proper Euler",),
        "degrees": ("False", "True"),
        "suppress_warnings": ("False", "True"),
    },
    notes=(
        "`as_euler` picks SciPy's gimbal-lock branch (middle angle within 1e-7 of 0 or pi) "
        "per rotation in the graph, so replays on fresh data take the branch SciPy takes; "
        "the gimbal-lock warning is given at trace time."
    ),
    float_atol=_ATOL,
    rtol=_RTOL,
)
def as_euler(
    self: Rotation, seq: str, degrees: bool = False, *, suppress_warnings: bool = False
) -> np.ndarray:
    """Traced ``Rotation.as_euler`` (Bernardes and Viollet's method, as SciPy computes it)."""
    function = "spatial.transform.Rotation.as_euler"
    seq, intrinsic = _sequence(function, seq, (3,))
    q, single = _state(function, self)
    extrinsic = not intrinsic
    if not extrinsic:
        seq = seq[::-1]
    i, j, k = ("xyz".index(c) for c in seq)
    symmetric = i == k
    if symmetric:
        k = 3 - i - j
    sign = (i - j) * (j - k) * (k - i) // 2
    qi, qj, qk, qw = q[:, i], q[:, j], q[:, k], q[:, 3]
    if symmetric:
        a, b, c, d = qw, qi, qj, qk * sign
    else:
        a, b, c, d = qw - qj, qi + qk * sign, qj + qw, qk * sign - qi
    first, third = (0, 2) if extrinsic else (2, 0)
    middle = 2 * torch.atan2(torch.sqrt(c * c + d * d), torch.sqrt(a * a + b * b))
    case1 = torch.abs(middle) <= 1e-7
    case2 = ~case1 & (torch.abs(middle - math.pi) <= 1e-7)
    half_sum, half_diff = torch.atan2(b, a), torch.atan2(d, c)
    angles = [None, middle, None]
    angles[first] = half_sum - half_diff
    angles[third] = half_sum + half_diff
    degenerate = case1 | case2
    lock = torch.where(case1, 2 * half_sum, 2 * half_diff * (-1 if extrinsic else 1))
    angles[0], angles[2] = (
        torch.where(degenerate, lock, angles[0]),
        torch.where(degenerate, torch.zeros_like(middle), angles[2]),
    )
    if not symmetric:
        angles[third] = angles[third] * sign
        angles[1] = angles[1] - math.pi / 2
    result = torch.stack([_wrap(angle) for angle in angles], dim=-1)
    if bool(plain(degenerate).any()) and not suppress_warnings:
        warnings.warn(
            "Gimbal lock detected. Setting third angle to zero since it is not possible to "
            "uniquely determine all angles.",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
    if degrees:
        result = _rad2deg(result)
    return to_numpy(result[0] if single else result)


# -------------------------------------------------------------------- operations
@replaces(
    "spatial.transform.Rotation.apply",
    family=FAMILY,
    dtypes=("float32", "float64", "list"),
    accuracy=(
        "float64; the matrix is SciPy's (bit-exact), each product summed left to right "
        "(BLAS may fuse multiply-adds: within 2e-16 relative)"
    ),
    arguments={"vectors": ("(3,)", "(N, 3)"), "inverse": ("False", "True")},
    float_atol=_ATOL,
    rtol=_RTOL,
)
def apply(self: Rotation, vectors: Any, inverse: bool = False) -> np.ndarray:
    """Traced ``Rotation.apply``: rotation (or inverse) of vectors; rotation, vectors or
    both may be traced."""
    function = "spatial.transform.Rotation.apply"
    q, single = _state(function, self)
    v = as_float64(function, "vectors", vectors)
    if v.shape[-1:] != (3,):
        raise ValueError(f"Expected input of shape (..., 3), got {tuple(v.shape)}.")
    if v.ndim > 2:
        raise refuse(function, "vectors.shape", tuple(v.shape), "(3,), (N, 3)")
    single_vector = v.ndim == 1
    v = v.reshape(-1, 3)
    n_vectors, n_rotations = v.shape[0], q.shape[0]
    if n_vectors != 1 and n_rotations != 1 and n_vectors != n_rotations:
        raise ValueError(f"Cannot broadcast {n_rotations} rotations to {n_vectors} vectors.")
    m = _matrix(q)
    if inverse:
        m = m.transpose(1, 2)
    rows = [m[:, r, 0] * v[:, 0] + m[:, r, 1] * v[:, 1] + m[:, r, 2] * v[:, 2] for r in range(3)]
    result = torch.stack(rows, dim=-1)
    return to_numpy(result[0] if single and single_vector else result)


@replaces(
    "spatial.transform.Rotation.inv",
    family=FAMILY,
    dtypes=("float64",),
    accuracy=_EXACT,
    float_atol=1e-15,
    rtol=0.0,
)
def inv(self: Rotation) -> Rotation:
    """Traced ``Rotation.inv``: the conjugate quaternions."""
    q, single = _state("spatial.transform.Rotation.inv", self)
    return _result(torch.cat([-q[:, :3], q[:, 3:]], dim=1), single)


@replaces(
    "spatial.transform.Rotation.__mul__",
    family=FAMILY,
    dtypes=("float64",),
    accuracy=_NORMALISED,
    arguments={"other": ("a Rotation: one, or as many as self",)},
    float_atol=_ATOL,
    rtol=_RTOL,
)
def __mul__(self: Rotation, other: Any) -> Any:  # noqa: N807 - the name SciPy's method has
    """Traced ``Rotation.__mul__`` (``r1 * r2``): composed, then normalised as SciPy does."""
    if not isinstance(other, Rotation):
        return NotImplemented
    p, p_single = _state("spatial.transform.Rotation.__mul__", self)
    q, q_single = _state("spatial.transform.Rotation.__mul__", other)
    if not (p.shape[0] == 1 or q.shape[0] == 1 or p.shape[0] == q.shape[0]):
        raise ValueError(
            f"Cannot broadcast {(p.shape[0],)} rotations in first to {(q.shape[0],)} "
            f"rotations in second object."
        )
    return _result(_normalized(_compose(p, q)), p_single and q_single)


@replaces(
    "spatial.transform.Rotation.__getitem__",
    family=FAMILY,
    dtypes=("float64",),
    accuracy=_EXACT,
    arguments={"indexer": ("int", "slice", "integer array", "boolean array (untraced)")},
    float_atol=1e-15,
    rtol=0.0,
)
def __getitem__(self: Rotation, indexer: Any) -> Rotation:  # noqa: N807 - SciPy's name
    """Traced ``Rotation.__getitem__``: one rotation, a slice, or those an index picks."""
    function = "spatial.transform.Rotation.__getitem__"
    q, single = _state(function, self)
    if single:
        raise TypeError("Single rotation is not subscriptable.")
    if isinstance(indexer, (np.ndarray, torch.Tensor, list)):
        traced = find_recorder(indexer) is not None
        if isinstance(indexer, torch.Tensor):
            index = indexer
        elif traced and isinstance(indexer, np.ndarray):
            index = to_tensor(indexer)
        else:
            index = torch.as_tensor(np.array(plain(indexer), copy=True))
        if index.dtype == torch.bool:
            if traced:
                raise refuse(function, "indexer", "a traced boolean mask", "an untraced mask")
            return _result(q[index].reshape(-1, 4), False)
        if index.is_floating_point():
            raise IndexError("only integers, slices and integer or boolean arrays are valid")
        picked = q[index.to(torch.int64)]
    else:
        picked = q[indexer]
    return _result(picked.reshape(-1, 4), picked.ndim == 1)


@replaces(
    "spatial.transform.Rotation.concatenate",
    family=FAMILY,
    dtypes=("float64",),
    accuracy=_EXACT,
    arguments={"rotations": ("a Rotation", "a list of Rotations")},
    float_atol=1e-15,
    rtol=0.0,
)
def concatenate(rotations: Any) -> Rotation:
    """Traced ``Rotation.concatenate``: the quaternions of every rotation, in order."""
    function = "spatial.transform.Rotation.concatenate"
    if isinstance(rotations, Rotation):
        q, _ = _state(function, rotations)
        return _result(q.clone(), False)
    items = list(rotations)
    if not all(isinstance(x, Rotation) for x in items):
        raise TypeError("input must contain Rotation objects only")
    return _result(torch.cat([_state(function, x)[0] for x in items], dim=0), False)


def _comparable(rotation: Rotation) -> tuple[Any, bool]:
    """A Rotation's concrete quaternions and singleness (what trace-time checks compare)."""
    return np.asarray(rotation._quat), bool(rotation._single)


register_comparison(Rotation, _comparable)
