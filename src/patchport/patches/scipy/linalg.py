"""Traced ``scipy.linalg``: solve, inv, det, cholesky (NumPy's traced linalg) and expm.

``solve``, ``inv``, ``det`` and ``cholesky`` are computed by ``np.linalg`` on the traced
arrays (patchport records them with ONNX decompositions); LAPACK's factorisations differ
from SciPy's only in rounding. ``expm`` is scaling and squaring with the degree-13 Pade
approximant (Al-Mohy and Higham), the scaling chosen in the graph from each matrix's norm.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ...tracing.values import plain_tree
from ._base import describe, refuse, replaces, to_tensor

FAMILY = "linalg"
_ACCURACY = (
    "within 1e-10 relative to the result's magnitude for matrices with condition number "
    "below 1e4 (LAPACK's factorisations round differently)"
)
_RTOL, _ATOL = 1e-8, 1e-10


def _matrix(function: str, argument: str, value: Any, square: bool = True) -> np.ndarray:
    """A float64 (or float32) matrix argument, traced data kept traced."""
    if isinstance(value, torch.Tensor):
        raise refuse(f"linalg.{function}", argument, describe(value), "a NumPy array")
    array = np.asarray(value)
    if array.dtype.kind == "c":
        raise refuse(f"linalg.{function}", f"{argument}.dtype", array.dtype.name, "real")
    if array.dtype.kind != "f":
        array = array.astype(np.float64)
    if square and (array.ndim < 2 or array.shape[-1] != array.shape[-2]):
        raise ValueError(f"Expected square matrix, got {array.shape}")
    return array


def _no_overwrite(function: str, **flags: Any) -> None:
    for name, value in flags.items():
        if value:
            raise refuse(f"linalg.{function}", name, True, "False (the input is traced)")


_SYMMETRIC = ("sym", "her", "pos", "symmetric", "hermitian", "positive definite")
_ASSUME = (None, "general", "gen", "diagonal", "upper triangular", "lower triangular", *_SYMMETRIC)


def _structured(function: str, matrix: np.ndarray, assume_a: Any, lower: bool) -> np.ndarray:
    """The matrix SciPy's solver for ``assume_a`` reads: one triangle, or the diagonal."""
    if assume_a not in _ASSUME:
        raise refuse(
            f"linalg.{function}", "assume_a", repr(assume_a), ", ".join(map(repr, _ASSUME))
        )
    if assume_a in _SYMMETRIC:
        if lower:
            return np.tril(matrix) + np.swapaxes(np.tril(matrix, -1), -1, -2)
        return np.triu(matrix) + np.swapaxes(np.triu(matrix, 1), -1, -2)
    if assume_a == "diagonal":
        return matrix * np.eye(matrix.shape[-1], dtype=matrix.dtype)
    if assume_a == "upper triangular":
        return np.triu(matrix)
    if assume_a == "lower triangular":
        return np.tril(matrix)
    return matrix


_SPEC = {
    "family": FAMILY,
    "dtypes": ("float32", "float64"),
    "accuracy": _ACCURACY,
    "float_atol": _ATOL,
    "rtol": _RTOL,
}


@replaces(
    "linalg.solve",
    arguments={
        "assume_a": ("any (the triangle it names is read; one LU solve)",),
        "transposed": ("False", "True"),
        "overwrite_a, overwrite_b": ("False",),
    },
    **_SPEC,
)
def solve(
    a: Any,
    b: Any,
    lower: bool = False,
    overwrite_a: bool = False,
    overwrite_b: bool = False,
    check_finite: bool = True,
    assume_a: Any = None,
    transposed: bool = False,
) -> np.ndarray:
    """Traced ``scipy.linalg.solve``: x with a @ x = b (a.T @ x = b when transposed)."""
    _no_overwrite("solve", overwrite_a=overwrite_a, overwrite_b=overwrite_b)
    matrix = _matrix("solve", "a", a)
    rhs = np.asarray(b)
    if rhs.dtype.kind not in "fiu":
        raise refuse("linalg.solve", "b.dtype", rhs.dtype.name, "real numbers")
    if transposed:
        matrix = np.swapaxes(matrix, -1, -2)
    matrix = _structured("solve", matrix, assume_a, lower)
    kind = np.result_type(matrix.dtype, rhs.dtype)
    kind = kind if kind.kind == "f" else np.dtype(np.float64)
    return np.linalg.solve(matrix.astype(kind, copy=False), rhs.astype(kind, copy=False))


@replaces(
    "linalg.inv",
    arguments={
        "assume_a": (
            "any (the triangle it names is read; 'diagonal' inverts the diagonal and keeps "
            "the other entries, as SciPy 1.17)",
        ),
        "overwrite_a": ("False",),
    },
    **_SPEC,
)
def inv(
    a: Any,
    overwrite_a: bool = False,
    check_finite: bool = True,
    *,
    assume_a: Any = None,
    lower: bool = False,
) -> np.ndarray:
    """Traced ``scipy.linalg.inv``. With ``assume_a="diagonal"`` SciPy (1.17) inverts the
    diagonal in place and returns the other entries as given, and so does this."""
    _no_overwrite("inv", overwrite_a=overwrite_a)
    if assume_a == "diagonal":
        matrix = _matrix("inv", "a", a)
        diagonal = np.eye(matrix.shape[-1], dtype=bool)
        return np.where(diagonal, 1 / np.where(diagonal, matrix, 1), matrix)
    matrix = _structured("inv", _matrix("inv", "a", a), assume_a, lower)
    return np.linalg.inv(matrix)


@replaces("linalg.det", arguments={"overwrite_a": ("False",)}, **_SPEC)
def det(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """Traced ``scipy.linalg.det``."""
    _no_overwrite("det", overwrite_a=overwrite_a)
    return np.linalg.det(_matrix("det", "a", a))


@replaces(
    "linalg.cholesky",
    arguments={"lower": ("False (upper, SciPy's default)", "True"), "overwrite_a": ("False",)},
    **_SPEC,
)
def cholesky(
    a: Any, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True
) -> np.ndarray:
    """Traced ``scipy.linalg.cholesky``: upper U with a = U.T @ U unless ``lower``."""
    _no_overwrite("cholesky", overwrite_a=overwrite_a)
    matrix = _matrix("cholesky", "a", a)
    factor = np.linalg.cholesky(matrix)  # reads the lower triangle, as SciPy's lower=True
    if lower:
        return np.array(factor)
    upper = np.linalg.cholesky(np.swapaxes(matrix, -1, -2))  # SciPy's upper reads the upper
    return np.ascontiguousarray(np.swapaxes(upper, -1, -2))


_PADE13 = (
    64764752532480000.0,
    32382376266240000.0,
    7771770303897600.0,
    1187353796428800.0,
    129060195264000.0,
    10559470521600.0,
    670442572800.0,
    33522128640.0,
    1323241920.0,
    40840800.0,
    960960.0,
    16380.0,
    182.0,
    1.0,
)
_THETA13 = 5.371920351148152
MAX_SQUARINGS = 24  # scalings the graph can take: 1-norms up to 5.4 * 2**24


@replaces(
    "linalg.expm",
    family=FAMILY,
    dtypes=("float32", "float64"),
    accuracy=(
        "within 1e-12 relative to the result's magnitude (degree-13 Pade with scaling and "
        "squaring; SciPy picks lower degrees for small norms)"
    ),
    notes=(
        f"`expm`: the scaling is chosen in the graph from the 1-norm (up to {MAX_SQUARINGS} "
        "squarings), so replays with larger matrices stay accurate."
    ),
    float_atol=1e-12,
    rtol=1e-9,
)
def expm(A: Any) -> np.ndarray:  # noqa: N803 - SciPy's name
    """Traced ``scipy.linalg.expm``: the matrix exponential of (..., n, n) arrays."""
    array = _matrix("expm", "A", A)
    biggest = float(np.abs(np.asarray(plain_tree(array))).sum(axis=-2).max(initial=0.0))
    if biggest > _THETA13 * 2.0**MAX_SQUARINGS:
        raise refuse("linalg.expm", "A", f"a matrix of 1-norm {biggest:g}", "1-norms up to 9e7")
    if array.shape[-1] == 0:
        raise refuse("linalg.expm", "A.shape", array.shape, "non-empty matrices")
    dtype = torch.float32 if array.dtype == np.float32 else torch.float64
    a = to_tensor(array).to(torch.float64)
    n = a.shape[-1]
    norm = torch.abs(a).sum(dim=-2).amax(dim=-1)  # the 1-norm: largest column sum
    s = torch.clamp(torch.ceil(torch.log2(norm / _THETA13)), 0.0, float(MAX_SQUARINGS))
    s = torch.where(norm > 0, s, torch.zeros_like(s))
    a = a * torch.pow(2.0, -s)[..., None, None]
    eye = torch.eye(n, dtype=torch.float64)
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    b = _PADE13
    u = a @ (
        a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye
    )
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * eye
    r = torch.linalg.solve(v - u, v + u)
    for step in range(MAX_SQUARINGS):
        r = torch.where((s > step)[..., None, None], r @ r, r)
    return r.to(dtype).clone(memory_format=torch.contiguous_format).numpy()
