"""Calls whose recorded node keeps the user's line: factorisations an export backend may
have no operator for (ONNX has no SVD, QR, eigenvectors, LU, slogdet or matrix
exponential), so its refusal can say where the call was instead of failing deep inside
the exporter. Recording looks a target up once, in the same set as the size-deciding ops.
"""

from __future__ import annotations

import torch

LOCATED_CALLS = frozenset(
    {
        torch.linalg.svd,
        torch.svd,
        torch.linalg.eigh,
        torch.linalg.eig,
        torch.linalg.eigvals,
        torch.linalg.qr,
        torch.linalg.slogdet,
        torch.slogdet,
        torch.logdet,
        torch.linalg.lu,
        torch.linalg.lu_factor,
        torch.linalg.matrix_exp,
        torch.matrix_exp,
        torch.linalg.matrix_rank,
        torch.linalg.lstsq,
        "svd",
        "qr",
        "slogdet",
        "logdet",
        "matrix_exp",
    }
)
