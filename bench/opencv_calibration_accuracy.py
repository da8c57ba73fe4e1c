"""Largest differences between the camera-geometry replacements and real cv2 over random
cases (the numbers docs/opencv.md declares). Run: python bench/opencv_calibration_accuracy.py"""

from __future__ import annotations

import argparse

import cv2
import numpy as np

from patchport.patches.opencv import calibration

K = np.array([[520.0, 0.0, 318.5], [0.0, 515.0, 241.2], [0.0, 0.0, 1.0]])


def relative(expected: np.ndarray, got: np.ndarray) -> float:
    """Largest |difference| over the largest |expected| (0 when both are all NaN)."""
    if np.isnan(expected).all():
        return 0.0
    diff = np.nanmax(np.abs(got.astype(np.float64) - expected))
    return float(diff / max(np.nanmax(np.abs(expected)), 1e-300))


def rotation_vector(rng: np.random.Generator) -> np.ndarray:
    axis = rng.normal(size=3)
    return axis / np.linalg.norm(axis) * rng.choice([1e-6, 0.05, 0.3, 1.0, 2.0, 3.0])


def main(cases: int) -> None:
    rng = np.random.default_rng(0)
    worst: dict[str, float] = {}

    def note(key: str, expected: np.ndarray, got: np.ndarray) -> None:
        worst[key] = max(worst.get(key, 0.0), relative(expected, got))

    for _ in range(cases):
        for dtype in ("float32", "float64"):
            r = rotation_vector(rng).astype(dtype)
            (m, j), (gm, gj) = cv2.Rodrigues(r), calibration.Rodrigues(r)
            note(f"Rodrigues vec->mat {dtype}", m, gm)
            note(f"Rodrigues vec->mat jacobian {dtype}", j, gj)
            noisy = (m + rng.normal(size=(3, 3)) * 1e-4).astype(dtype)
            (v, j), (gv, gj) = cv2.Rodrigues(noisy), calibration.Rodrigues(noisy)
            note(f"Rodrigues mat->vec {dtype}", v, gv)
            note(f"Rodrigues mat->vec jacobian {dtype}", j, gj)
            # the declared bound: 1e-9 (1e-5 float32) + 3e-11 / sin(theta)^2, OpenCV's own
            sine2 = max(np.sin(np.linalg.norm(v.astype(np.float64))) ** 2, 1e-10)
            for part, (want, got) in (("vector", (v, gv)), ("jacobian", (j, gj))):
                key = f"Rodrigues mat->vec {part} {dtype} * sin^2"
                worst[key] = max(worst.get(key, 0.0), relative(want, got) * sine2)
            points = (rng.normal(size=(20, 3)) + [0, 0, 4]).astype(dtype)
            rvec, tvec = rotation_vector(rng), rng.normal(size=3) * 0.3
            for count in (None, 4, 5, 8, 12):
                coeffs = None if count is None else rng.normal(size=count) * 0.05
                want = cv2.projectPoints(points, rvec, tvec, K, coeffs)
                got = calibration.projectPoints(points, rvec, tvec, K, coeffs)
                note(f"projectPoints {dtype}", want[0], got[0])
                note("projectPoints jacobian", want[1], got[1])
                pixels = (rng.random((20, 1, 2)) * [640, 480]).astype(dtype)
                rot = cv2.Rodrigues(rng.normal(size=3) * 0.1)[0]
                want = cv2.undistortPoints(pixels, K, coeffs, R=rot, P=K)
                note(
                    f"undistortPoints {dtype}",
                    want,
                    calibration.undistortPoints(pixels, K, coeffs, R=rot, P=K),
                )
        src = (rng.normal(size=(3, 2)) * 200).astype(np.float32)
        dst = (rng.normal(size=(3, 2)) * 200).astype(np.float32)
        note(
            "getAffineTransform",
            cv2.getAffineTransform(src, dst),
            calibration.getAffineTransform(src, dst),
        )
        center, angle, scale = tuple(rng.normal(size=2) * 300), rng.normal() * 360, rng.normal()
        note(
            "getRotationMatrix2D",
            cv2.getRotationMatrix2D(center, angle, scale),
            calibration.getRotationMatrix2D(center, angle, scale),
        )
    for key, value in worst.items():
        print(f"{key:40s} max |diff| / max |cv2| = {value:.3g}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=300)
    main(parser.parse_args().cases)
