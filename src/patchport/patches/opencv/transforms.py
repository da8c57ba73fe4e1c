"""perspectiveTransform and invertAffineTransform on traced points and matrices.

Point sets and small matrices computed from traced data (detected corners, a predicted
pose) go through these in real pipelines; both run in double as OpenCV does, the result
cast back to the input's type.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ._base import as_tensor, no_dst, refuse, replaces, to_numpy

_FLOATS = ("float32", "float64")
_FLT_EPSILON = float(np.finfo(np.float32).eps)


def _matrix(function: str, m: Any, rows: tuple[int, ...], cols: int) -> torch.Tensor:
    """``m`` (plain or traced) as a float64 tensor, its shape checked."""
    if not isinstance(m, np.ndarray) or m.ndim != 2 or m.shape[1] != cols:
        shape = list(np.shape(m)) if isinstance(m, np.ndarray) else type(m).__name__
        raise refuse(function, "m", shape, f"a {rows[0]}x{cols} array")
    if m.shape[0] not in rows:
        raise refuse(function, "m", list(m.shape), f"{'/'.join(map(str, rows))} rows")
    return torch.as_tensor(m).to(torch.float64)


@replaces(
    "perspectiveTransform",
    family="transforms",
    dtypes=_FLOATS,
    channels=(2, 3),
    accuracy="float32 exact, float64 within 1e-5 (OpenCV's double arithmetic, term by term)",
    arguments={"m": ("3x3 for 2-D points", "4x4 for 3-D points")},
    notes="points and matrix may both be traced; a point whose w is within FLT_EPSILON "
    "of 0 becomes 0, as in OpenCV.",
)
def perspectiveTransform(src: np.ndarray, m: Any, dst: Any = None) -> Any:
    """Traceable ``cv2.perspectiveTransform`` of (N, 1, C) / (1, N, C) points."""
    no_dst("perspectiveTransform", dst)
    t = as_tensor("perspectiveTransform", src, _FLOATS, (2, 3))
    cn = t.shape[2]
    mm = _matrix("perspectiveTransform", m, (cn + 1,), cn + 1)
    x = t.to(torch.float64)
    rows = []
    for i in range(mm.shape[0]):
        acc = x[..., 0] * mm[i, 0]
        for j in range(1, cn):
            acc = acc + x[..., j] * mm[i, j]
        rows.append(acc + mm[i, cn])
    w = rows[-1]
    ok = torch.abs(w) > _FLT_EPSILON
    inv = 1.0 / torch.where(ok, w, torch.ones_like(w))
    out = torch.stack([torch.where(ok, r * inv, torch.zeros_like(r)) for r in rows[:-1]], -1)
    return to_numpy(out.to(t.dtype))


@replaces(
    "invertAffineTransform",
    family="transforms",
    dtypes=_FLOATS,
    channels=(1,),
    accuracy="float64 exact (OpenCV's closed form in double); float32 within 1e-5 of the "
    "largest entry (OpenCV's mixed float/double rounding is not reproduced)",
    arguments={"M": ("a 2x3 float32 or float64 matrix, plain or traced",)},
)
def invertAffineTransform(M: Any, iM: Any = None) -> Any:
    """Traceable ``cv2.invertAffineTransform``: the 2x3 inverse (0 where M is singular)."""
    no_dst("invertAffineTransform", iM, "iM")
    if not isinstance(M, np.ndarray) or M.shape != (2, 3) or M.dtype.name not in _FLOATS:
        got = f"{getattr(M, 'dtype', type(M).__name__)}{list(np.shape(M))}"
        raise refuse("invertAffineTransform", "M", got, "a 2x3 float32 or float64 array")
    given = torch.as_tensor(M)
    m = given.to(torch.float64)
    # OpenCV's determinant is computed in the matrix's own type, the rest in double
    det = (given[0, 0] * given[1, 1] - given[0, 1] * given[1, 0]).to(torch.float64)
    nonzero = det != 0
    d = torch.where(nonzero, 1.0 / torch.where(nonzero, det, torch.ones_like(det)), det * 0)
    a11, a22, a12, a21 = m[1, 1] * d, m[0, 0] * d, -m[0, 1] * d, -m[1, 0] * d
    b1 = -a11 * m[0, 2] - a12 * m[1, 2]
    b2 = -a21 * m[0, 2] - a22 * m[1, 2]
    out = torch.stack([torch.stack([a11, a12, b1]), torch.stack([a21, a22, b2])])
    return out.to(torch.float32 if M.dtype == np.float32 else torch.float64).numpy()


@replaces(
    "transform",
    family="transforms",
    dtypes=_FLOATS,
    channels=(1, 2, 3, 4),
    accuracy="within 1e-5 of the data's magnitude (float32 in float32, as OpenCV)",
    arguments={"m": ("C_out x C or C_out x (C + 1), C_out of 1 to 4",)},
    notes="uint8 images are refused: OpenCV's 8-bit transform runs in fixed point.",
)
def transform(src: np.ndarray, m: Any, dst: Any = None) -> Any:
    """Traceable ``cv2.transform``: every element's channel vector times ``m`` (plus its
    last column when ``m`` has one more column than channels)."""
    no_dst("transform", dst)
    t = as_tensor("transform", src, _FLOATS, (1, 2, 3, 4))
    cn = t.shape[2]
    if not isinstance(m, np.ndarray) or m.ndim != 2 or m.shape[1] not in (cn, cn + 1):
        shown = list(np.shape(m)) if isinstance(m, np.ndarray) else type(m).__name__
        raise refuse("transform", "m", shown, f"a ({{1..4}}, {cn}) or ({{1..4}}, {cn + 1}) array")
    if not 1 <= m.shape[0] <= 4:
        raise refuse("transform", "m", list(m.shape), "1 to 4 rows")
    mm = torch.as_tensor(m).to(t.dtype)
    rows = []
    for i in range(m.shape[0]):
        acc = t[..., 0] * mm[i, 0]
        for j in range(1, cn):
            acc = acc + t[..., j] * mm[i, j]
        rows.append(acc + mm[i, cn] if m.shape[1] == cn + 1 else acc)
    return to_numpy(torch.stack(rows, -1), src.dtype)
