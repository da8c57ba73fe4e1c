"""cv2.moments of an image: raw, central and normalised moments as torch sums in double.

OpenCV returns a dict of Python floats; the replacement returns the same keys with 0-d
float64 arrays (traced values standing for those floats), so a centroid, an orientation
or a Hu-style feature computed from them stays in the graph.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ._base import as_tensor, refuse, replaces

_ORDERS = ((0, 0), (1, 0), (0, 1), (2, 0), (1, 1), (0, 2), (3, 0), (2, 1), (1, 2), (0, 3))
_DBL_EPSILON = float(np.finfo(np.float64).eps)


@replaces(
    "moments",
    family="features",
    dtypes=("uint8", "uint16", "int16", "float32", "float64"),
    channels=(1,),
    accuracy="within 1e-9 of each family's magnitude (sums in double, OpenCV's in tiles)",
    arguments={"array": ("a single-channel image (contours, float32 (N, 2), refused)",)},
)
def moments(array: np.ndarray, binaryImage: bool = False) -> dict[str, Any]:
    """Traceable ``cv2.moments`` of an image: m_pq, mu_pq and nu_pq, OpenCV's formulas
    (a zero m00 leaves the centre at the origin, as OpenCV's guard does)."""
    if isinstance(array, np.ndarray) and array.dtype == np.float32 and array.shape[-1:] == (2,):
        raise refuse(
            "moments",
            "array",
            f"a float32 array of shape {array.shape}",
            "an image; OpenCV reads float32 (N, 2) arrays as a contour's points",
        )
    t = as_tensor(
        "moments", array, ("uint8", "uint16", "int16", "float32", "float64"), (1,), "array"
    )
    image = t[..., 0].to(torch.float64)
    if binaryImage:
        image = (image != 0).to(torch.float64)
    height, width = image.shape
    ys = torch.arange(height, dtype=torch.float64).unsqueeze(1)
    xs = torch.arange(width, dtype=torch.float64).unsqueeze(0)
    m = {}
    for p, q in _ORDERS:
        weights = xs**p * ys**q if p or q else torch.ones_like(image)
        m[f"m{p}{q}"] = (image * weights).sum()
    m00, m10, m01 = m["m00"], m["m10"], m["m01"]
    nonzero = torch.abs(m00) > _DBL_EPSILON
    inv_m00 = torch.where(nonzero, 1.0 / torch.where(nonzero, m00, 1.0), 0.0)
    cx, cy = m10 * inv_m00, m01 * inv_m00
    mu20 = m["m20"] - m10 * cx
    mu11 = m["m11"] - m10 * cy
    mu02 = m["m02"] - m01 * cy
    mu = {
        "mu20": mu20,
        "mu11": mu11,
        "mu02": mu02,
        "mu30": m["m30"] - cx * (3 * mu20 + cx * m10),
        "mu21": m["m21"] - cx * (2 * mu11 + cx * m01) - cy * mu20,
        "mu12": m["m12"] - cy * (2 * mu11 + cy * m10) - cx * mu02,
        "mu03": m["m03"] - cy * (3 * mu02 + cy * m01),
    }
    s2 = inv_m00 * inv_m00
    s3 = s2 * torch.sqrt(torch.abs(inv_m00))
    nu = {f"nu{k[2:]}": v * (s2 if k in ("mu20", "mu11", "mu02") else s3) for k, v in mu.items()}
    return {key: value.numpy() for key, value in {**m, **mu, **nu}.items()}
