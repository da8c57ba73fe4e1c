"""How often the warpPerspective replacement equals real cv2 over random warps, by path
(IPP's double positions or OpenCV's own float32 kernel), dtype and border, and the largest
difference (the numbers docs/opencv.md declares). Half of the warps put the horizon inside
the output (w changes sign), where OpenCV 5.1's IPP path declines for replicated borders;
"band" counts replicated warps whose corner w is in (-0.1, 0], which IPP sometimes takes.
Run: python bench/opencv_warp_accuracy.py [--cases N]"""

from __future__ import annotations

import argparse
from collections import defaultdict

import cv2
import numpy as np

from patchport.patches.opencv import geometry, warp_positions


def homography(rng: np.random.Generator, width: int, height: int) -> np.ndarray:
    """A ground-plane-like inverse map: corners moved by up to 8 pixels, or (half the
    time, and for one-pixel outputs, whose corners coincide) a horizon inside the output."""
    if rng.random() < 0.5 and min(width, height) > 1:
        corners = np.float32([[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]])
        moved = corners + rng.uniform(-8, 8, (4, 2)).astype(np.float32)
        return cv2.getPerspectiveTransform(corners, moved)
    m = np.eye(3) + rng.uniform(-0.3, 0.3, (3, 3))
    m[2] = [rng.uniform(-1, 1), rng.uniform(-1, 1), 1.0]
    m[2, :2] *= -rng.uniform(0.5, 3.0) / max(abs(m[2, 0]) * width + abs(m[2, 1]) * height, 1)
    return m


def corner_w(matrix: np.ndarray, size: tuple[int, int]) -> float:
    """The smallest denominator w at the output's corners."""
    width, height = size
    xy = [(x, y) for x in (0, width - 1) for y in (0, height - 1)]
    return min(matrix[2, 0] * x + matrix[2, 1] * y + matrix[2, 2] for x, y in xy)


def image(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    if dtype == "uint8":
        return rng.integers(0, 256, shape, dtype=np.uint8)
    if dtype == "uint16":
        return rng.integers(0, 65536, shape).astype(np.uint16)
    return (rng.random(shape) * 2 - 0.5).astype(np.float32)


def main(cases: int) -> None:
    rng = np.random.default_rng(0)
    stats: dict[tuple[str, str, str], list[float]] = defaultdict(lambda: [0, 0, 0.0])
    for _ in range(cases):
        height, width = (int(v) for v in rng.integers(2, 41, 2))
        cn = int(rng.choice([1, 3, 4]))
        dtype = str(rng.choice(["uint8", "uint16", "float32"]))
        src = image(rng, (height, width, cn) if cn > 1 else (height, width), dtype)
        size = (int(rng.integers(1, 51)), int(rng.integers(1, 51)))
        matrix = homography(rng, *size)
        border = int(rng.choice([cv2.BORDER_CONSTANT, cv2.BORDER_REPLICATE]))
        flags = cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP
        want = cv2.warpPerspective(src, matrix, size, flags=flags, borderMode=border)
        got = geometry.warpPerspective(src, matrix, size, flags=flags, borderMode=border)
        diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
        if dtype == "float32":
            diff /= max(float(np.abs(src).max()), 1e-30)
        path = (
            "kernel"
            if warp_positions.ipp_declines_perspective(matrix, size, src.shape, border)
            else "ipp"
        )
        if path == "kernel" and border == cv2.BORDER_REPLICATE and -0.1 < corner_w(matrix, size):
            path = "band"  # IPP may take these (its test is not public)
        entry = stats[(path, dtype, "constant" if border == 0 else "replicate")]
        entry[0] += 1
        entry[1] += bool(diff.max() == 0)
        entry[2] = max(entry[2], float(diff.max()))
    print(f"{'path':7} {'dtype':8} {'border':10} {'calls':>6} {'exact':>6} {'max diff':>10}")
    for (path, dtype, border), (calls, exact, worst) in sorted(stats.items()):
        print(f"{path:7} {dtype:8} {border:10} {calls:6d} {exact:6d} {worst:10.3g}")
    print("(float32: max difference relative to the image's largest magnitude)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=3000)
    main(parser.parse_args().cases)
