"""Float32 ``F.interpolate(mode="bicubic")`` and ``antialias=True`` (bilinear, bicubic)
written as torch's CPU kernels compute them, for ONNX export where the result is rounded
(see :mod:`.exact_resize`): ONNX Runtime's Resize filters differently, and after rounding
to uint8 about 0.5% of pixels came out one level off.

Both are one pass per dimension, along the width then along the height, each output a sum
of taps ``x[index] * weight`` in float32 (weights from :mod:`.resize_taps`, constants of
the graph). Plain bicubic (upsample_bicubic2d) sums its 4 taps as ``fma(x0, w0, x1 * w1)``
then fused multiply-adds, and always runs both passes. The antialiased kernels skip a
dimension whose size does not change; their taps are summed ``x0 * w0``, then per tap
either a rounded product added or a fused multiply-add, as :func:`.resize_taps.
antialias_taps` says. A fused multiply-add is a float64 product (exact) plus the float64
of the running sum, rounded once to float32; a rounded product is cast to float32 first.
Measured bit for bit against torch 2.13 on x86-64.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from . import resize_taps

_F32, _F64 = torch.float32, torch.float64


def bicubic(x: torch.Tensor, sizes: tuple, scales: tuple, corners: bool) -> torch.Tensor:
    """upsample_bicubic2d of float32 NCHW ``x`` to ``sizes``."""
    out = x
    for dim, size, scale in ((3, sizes[1], scales[1]), (2, sizes[0], scales[0])):
        indices, weights = resize_taps.cubic_taps(x.shape[dim], size, scale, corners)
        fused = np.ones_like(indices, dtype=bool)
        out = _pass(out, dim, indices, weights, fused, fuse_first=True)
    return out


def antialiased(
    x: torch.Tensor, sizes: tuple, scales: tuple, corners: bool, mode: str
) -> torch.Tensor:
    """_upsample_bilinear2d_aa / _upsample_bicubic2d_aa of float32 NCHW ``x``."""
    out = x
    for dim, size, scale in ((3, sizes[1], scales[1]), (2, sizes[0], scales[0])):
        if size == x.shape[dim]:
            continue
        taps = resize_taps.antialias_taps(x.shape[dim], size, scale, corners, mode == "bicubic")
        out = _pass(out, dim, *taps, fuse_first=False)
    return out.clone() if out is x else out


def _pass(
    x: torch.Tensor,
    dim: int,
    indices: np.ndarray,
    weights: np.ndarray,
    fused: np.ndarray,
    fuse_first: bool,
) -> torch.Tensor:
    """Along ``dim``: per output index ``o``, the taps ``x[indices[o, j]] * weights[o, j]``
    summed in tap order, tap j > 0 added fused where ``fused[o, j]`` (see the module)."""
    wide = x.to(_F64)
    shape = [-1 if d == dim else 1 for d in range(x.dim())]
    products = []
    for j in range(indices.shape[1]):
        tap = torch.index_select(wide, dim, torch.from_numpy(indices[:, j].copy()))
        weight = torch.from_numpy(weights[:, j].astype(np.float64)).reshape(shape)
        products.append((tap * weight, fused[:, j], shape))
    if fuse_first and len(products) > 1:  # fma(x0, w0, x1 * w1)
        total = _rounded(products[0][0] + _rounded(products[1][0]).to(_F64))
        rest = products[2:]
    else:
        total = _rounded(products[0][0])
        rest = products[1:]
    for product, where_fused, shape in rest:
        total = _rounded(_addend(product, where_fused, shape) + total.to(_F64))
    return total


def _addend(product: torch.Tensor, where_fused: np.ndarray, shape: list) -> torch.Tensor:
    """The exact product where this tap is fused, else the product rounded to float32."""
    if where_fused.all():
        return product
    rounded = _rounded(product).to(_F64)
    if not where_fused.any():
        return rounded
    mask = torch.from_numpy(where_fused.copy()).reshape(shape)
    return torch.where(mask, product, rounded)


def _rounded(t: Any) -> torch.Tensor:
    return t.to(_F32)


def antialiased_uint8(
    x: torch.Tensor, sizes: tuple, scales: tuple, corners: bool, mode: str
) -> torch.Tensor:
    """_upsample_bilinear2d_aa / _upsample_bicubic2d_aa of uint8 NCHW ``x``: integer
    weights, sums and shifts (exact in float64: every partial sum is an integer well
    under 2**53), each pass saturated to 0..255."""
    out = x
    for dim, size, scale in ((3, sizes[1], scales[1]), (2, sizes[0], scales[0])):
        if size == x.shape[dim]:
            continue
        indices, weights, precision = resize_taps.antialias_taps_int16(
            x.shape[dim], size, scale, corners, mode == "bicubic"
        )
        wide = out.to(_F64)
        shape = [-1 if d == dim else 1 for d in range(x.dim())]
        total = torch.full((), float(1 << (precision - 1)), dtype=_F64)
        for j in range(indices.shape[1]):
            tap = torch.index_select(wide, dim, torch.from_numpy(indices[:, j].copy()))
            total = total + tap * torch.from_numpy(weights[:, j].copy()).reshape(shape)
        shifted = torch.floor(total * (1.0 / (1 << precision)))
        out = torch.clamp(shifted, 0.0, 255.0).to(torch.uint8)
    return out.clone() if out is x else out
