"""Singular values, symmetric eigenvalues and the pseudo-inverse for ONNX, by Jacobi rotations.

ONNX has no SVD or eigen-solver. For the small matrices of filters and geometry (a
Kalman gain, a 4x4 pose, a 3x3 covariance) one-sided Jacobi (Hestenes) orthogonalises
the columns of ``A`` by plane rotations: the column norms are then the singular values,
and the accumulated rotations ``V`` give ``pinv(A) = V diag(1/s^2) A_rotated^T``. The
sweeps are unrolled over the static size in the parallel (round-robin) order, ``n - 1``
steps of ``n / 2`` disjoint rotations each, with a fixed sweep count that reaches float64
rounding (quadratic convergence; measured on condition numbers up to 1e6 for n <= 32).
Only results that do not depend on a sign convention are produced: singular values,
eigenvalues (of ``A + |A| I``, positive semi-definite, shifted back), the pseudo-inverse.
"""

from __future__ import annotations

import math
from typing import Any

import torch

MAX_SIZE = 32  # larger matrices are refused for ONNX (the unrolled graph grows as n^2 log n)


def sweeps(n: int) -> int:
    """Jacobi sweeps unrolled for an ``n``-column matrix (quadratic convergence from ~log n)."""
    return max(8, 2 * math.ceil(math.log2(max(n, 2))) + 6)


def _schedule(n: int) -> list[tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]]:
    """Round-robin steps as index tensors: (first columns, second columns, unpaired
    columns, the inverse permutation of their concatenation); every pair once per sweep,
    pairs in a step disjoint (a dummy player pads an odd ``n``)."""
    if n < 2:
        return []
    players = list(range(n + n % 2))
    steps = []
    for _ in range(len(players) - 1):
        half = len(players) // 2
        pairs = [(players[i], players[-1 - i]) for i in range(half)]
        pairs = [(min(a, b), max(a, b)) for a, b in pairs if max(a, b) < n]
        first, second = [p for p, _ in pairs], [q for _, q in pairs]
        rest = [k for k in range(n) if k not in first and k not in second]
        order = first + second + rest
        inverse = sorted(range(n), key=order.__getitem__)
        steps.append(
            tuple(torch.tensor(i, dtype=torch.int64) for i in (first, second, rest, inverse))
        )
        players = [players[0], players[-1], *players[1:-1]]
    return steps


def _rotation(alpha: torch.Tensor, beta: torch.Tensor, gamma: torch.Tensor) -> tuple[Any, Any]:
    """(cos, sin) of the rotation making columns with Gram entries alpha, beta, gamma
    orthogonal (the smaller of the two angles; none where gamma is already 0)."""
    zero = gamma == 0
    g = torch.where(zero, torch.ones_like(gamma), gamma)
    zeta = (beta - alpha) / (2 * g)
    sign = torch.where(zeta >= 0, torch.ones_like(zeta), -torch.ones_like(zeta))
    t = sign / (zeta.abs() + torch.sqrt(1 + zeta * zeta))
    t = torch.where(zero, torch.zeros_like(t), t)
    c = 1 / torch.sqrt(1 + t * t)
    return c, c * t


def orthogonalise(a: torch.Tensor, with_v: bool) -> tuple[torch.Tensor, torch.Tensor | None]:
    """One-sided Jacobi on the columns of ``a`` (..., m, n): (A V, V) with orthogonal columns."""
    n = a.shape[-1]
    v = torch.eye(n, dtype=a.dtype).expand(*a.shape[:-2], n, n) if with_v else None
    steps = _schedule(n)
    for _ in range(sweeps(n)):
        for first, second, rest, inverse in steps:
            ap, aq = torch.index_select(a, -1, first), torch.index_select(a, -1, second)
            alpha, beta, gamma = (ap * ap).sum(-2), (aq * aq).sum(-2), (ap * aq).sum(-2)
            c, s = _rotation(alpha, beta, gamma)
            c, s = c.unsqueeze(-2), s.unsqueeze(-2)
            a = _rotate(a, ap, aq, rest, inverse, c, s)
            if v is not None:
                vp, vq = torch.index_select(v, -1, first), torch.index_select(v, -1, second)
                v = _rotate(v, vp, vq, rest, inverse, c, s)
    return a, v


def _rotate(
    x: torch.Tensor,
    xp: torch.Tensor,
    xq: torch.Tensor,
    rest: torch.Tensor,
    inverse: torch.Tensor,
    c: torch.Tensor,
    s: torch.Tensor,
) -> torch.Tensor:
    """``x`` with its paired columns ``xp``, ``xq`` turned by (c, s), the ``rest`` kept."""
    parts = [c * xp - s * xq, s * xp + c * xq]
    if rest.numel():
        parts.append(torch.index_select(x, -1, rest))
    return torch.index_select(torch.cat(parts, -1), -1, inverse)


def _sorted(values: torch.Tensor, descending: bool) -> torch.Tensor:
    """``values`` sorted along the last axis by rank and scatter (ties keep their order):
    elementwise ops every ONNX writer translates, for the few values of a small matrix."""
    n = values.shape[-1]
    mine, other = values.unsqueeze(-1), values.unsqueeze(-2)
    ahead = (other > mine) if descending else (other < mine)
    earlier = torch.ones(n, n, dtype=torch.bool).tril(-1)  # other's index < mine
    rank = (ahead | ((other == mine) & earlier)).long().sum(-1)
    return torch.zeros_like(values).scatter_add(-1, rank, values)


def onnx_svdvals(a: torch.Tensor, *, driver: Any = None, out: Any = None) -> torch.Tensor:
    """``torch.linalg.svdvals``: column norms after one-sided Jacobi, largest first."""
    if a.shape[-2] < a.shape[-1]:
        a = a.transpose(-1, -2)
    cols, _ = orthogonalise(a, with_v=False)
    return _sorted(torch.sqrt((cols * cols).sum(-2)), descending=True)


def onnx_pinv(
    a: torch.Tensor,
    *,
    atol: Any = None,
    rtol: Any = None,
    hermitian: bool = False,
    out: Any = None,
) -> torch.Tensor:
    """``torch.linalg.pinv``: singular values at or below ``max(atol, rtol * largest)`` are
    dropped (rtol defaults to torch's ``eps * max(m, n)`` when neither bound is given)."""
    wide = a.shape[-2] < a.shape[-1]
    if wide:
        a = a.transpose(-1, -2)
    cols, v = orthogonalise(a, with_v=True)
    assert v is not None
    squares = (cols * cols).sum(-2)
    s = torch.sqrt(squares)
    if rtol is None:
        rtol = 0.0 if atol is not None else torch.finfo(a.dtype).eps * max(a.shape[-2:])
    cutoff = rtol * s.amax(-1, keepdim=True)
    if atol is not None:
        cutoff = torch.clamp(cutoff, min=atol)
    keep = s > cutoff
    weight = torch.where(keep, 1 / torch.where(keep, squares, torch.ones_like(squares)), 0.0)
    result = (v * weight.to(a.dtype).unsqueeze(-2)) @ cols.transpose(-1, -2)
    return result.transpose(-1, -2) if wide else result


def onnx_eigvalsh(a: torch.Tensor, UPLO: str = "L", *, out: Any = None) -> torch.Tensor:  # noqa: N803
    """``torch.linalg.eigvalsh``: the triangle ``UPLO`` mirrored, shifted by its Frobenius
    norm to be positive semi-definite (singular values = eigenvalues), shifted back;
    absolute accuracy eps * |A|, as LAPACK's."""
    n = a.shape[-1]
    triangle = torch.ones(n, n, dtype=a.dtype).tril()
    lower = a * triangle if UPLO.upper() == "L" else (a * triangle.T).transpose(-1, -2)
    sym = lower + (lower * torch.ones(n, n, dtype=a.dtype).tril(-1)).transpose(-1, -2)
    shift = torch.sqrt((sym * sym).sum((-1, -2), keepdim=True))
    cols, _ = orthogonalise(sym + shift * torch.eye(n, dtype=a.dtype), with_v=False)
    return _sorted(torch.sqrt((cols * cols).sum(-2)) - shift.squeeze(-1), descending=False)
