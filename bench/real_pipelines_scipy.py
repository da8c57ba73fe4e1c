"""SciPy calls from real robotics / sensor code x backends: right, loud, silent or crash?

New pipelines in the idioms public robotics projects write with SciPy (nobody tuned
patchport to them): IMU orientation for a legged-robot policy (``Rotation.from_quat(q)
.inv().apply(gravity)``, ``as_euler``), a teleoperation end-effector delta (``from_euler``
composed with ``*``, ``from_matrix``, ``as_rotvec``, ``magnitude``), pose conversions of a
diffusion-policy style dataset (batched ``from_rotvec`` / ``as_matrix`` / ``from_matrix``),
a waypoint interpolator (``Slerp``, ``interp1d``), depth denoising and a navigation
costmap (``scipy.ndimage`` filters, ``zoom``, ``map_coordinates``), IMU and EMG filters
(``butter`` coefficients applied with ``filtfilt`` / ``lfilter`` / ``sosfiltfilt`` /
``sosfilt``, ``savgol_filter``, ``medfilt``), a policy head (``scipy.special``) and a
filterpy-style Kalman step (``scipy.linalg`` cholesky / inv / solve / expm). Each is
traced once with the shipped patch sets, exported with every backend and replayed on
fresh inputs against the plain code, classified as ``bench/real_pipelines.py`` does (its
harness is reused).

Run: python bench/real_pipelines_scipy.py [--before] [pipeline-name ...]
(``--before`` traces with ``patching=["opencv"]`` only: SciPy unpatched.)
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from scipy import linalg, ndimage, signal
from scipy.interpolate import interp1d
from scipy.spatial.transform import Rotation as R
from scipy.spatial.transform import Slerp
from scipy.special import expit, logsumexp, softmax

sys.path.insert(0, str(Path(__file__).resolve().parent))
import real_pipelines as harness  # noqa: E402

harness.HERE = str(Path(__file__).resolve())  # the user's lines are in this file


# ------------------------------------------------------------------ rotations
GRAVITY = np.array([0.0, 0.0, -1.0])


def imu_gravity(quat, lin_vel, ang_vel):
    """Legged-robot policy input: body-frame gravity, velocities and roll/pitch/yaw."""
    base = R.from_quat(quat)  # x, y, z, w as the simulator reports it
    projected_gravity = base.inv().apply(GRAVITY)
    lin_vel_b = base.apply(lin_vel, inverse=True)
    ang_vel_b = base.apply(ang_vel, inverse=True)
    rpy = base.as_euler("xyz")
    obs = np.concatenate([lin_vel_b * 2.0, ang_vel_b * 0.25, projected_gravity, rpy[:2]])
    return {"obs": obs.astype(np.float32), "yaw": rpy[2:]}


def ee_teleop_delta(ee_quat, action):
    """Teleoperation: a small euler delta applied to the end-effector orientation."""
    current = R.from_quat(ee_quat)
    delta = R.from_euler("xyz", action[3:6] * 0.05)
    target = delta * current
    via_matrix = R.from_matrix(current.as_matrix() @ delta.as_matrix())
    error = (target * current.inv()).as_rotvec()
    return {
        "target": target.as_quat(),
        "via_matrix": via_matrix.as_quat(canonical=True),
        "error": error,
        "angle": np.atleast_1d(target.inv().magnitude()),
    }


def pose_rotvec_batch(poses):
    """Dataset pose conversions: (N, 6) pos + rotvec to 4x4, relative to the first, back."""
    mats = np.zeros((poses.shape[0], 4, 4))
    mats[:, :3, :3] = R.from_rotvec(poses[:, 3:]).as_matrix()
    mats[:, :3, 3] = poses[:, :3]
    mats[:, 3, 3] = 1.0
    relative = np.linalg.inv(mats[0]) @ mats
    rot6d = relative[:, :3, :2].reshape(-1, 6)  # the "6D" rotation representation
    back = R.from_matrix(relative[:, :3, :3]).as_rotvec()
    return {"rot6d": rot6d, "rotvec": back, "pos": relative[:, :3, 3]}


KEY_TIMES = np.array([0.0, 0.4, 1.0, 1.5])
QUERY_TIMES = np.linspace(0.0, 1.5, 7)


def pose_interpolation(positions, rotvecs):
    """Waypoint interpolator: Slerp over rotations, linear interp1d over positions."""
    slerp = Slerp(KEY_TIMES, R.from_rotvec(rotvecs))
    rot = slerp(QUERY_TIMES)
    pos = interp1d(KEY_TIMES, positions, axis=0, assume_sorted=True)(QUERY_TIMES)
    return {"pos": pos, "rotvec": rot.as_rotvec()}


# ------------------------------------------------------------------ images
def depth_denoise(depth):
    """Depth clean-up: median against speckle, Gaussian smoothing, local maxima, variance."""
    despeckled = ndimage.median_filter(depth, size=3)
    smoothed = ndimage.gaussian_filter(despeckled, sigma=1.0)
    peaks = (ndimage.maximum_filter(smoothed, size=5) == smoothed) & (smoothed > 0.5)
    mean = ndimage.uniform_filter(depth, size=5)
    variance = ndimage.uniform_filter(depth * depth, size=5) - mean * mean
    return {"smoothed": smoothed, "peaks": peaks, "variance": variance}


def costmap(occupancy, trajectory):
    """Navigation: inflate obstacles, blur into a cost, upsample, cost along a trajectory."""
    inflated = ndimage.maximum_filter(occupancy, size=5)
    cost = ndimage.gaussian_filter(inflated, sigma=2.0)
    fine = ndimage.zoom(cost, 2, order=0)
    kernel = np.array([[0.0, 1.0, 0.0], [1.0, -4.0, 1.0], [0.0, 1.0, 0.0]])
    edges = ndimage.convolve(cost, kernel, mode="nearest")
    along = ndimage.map_coordinates(cost, trajectory.T, order=1, mode="nearest")
    return {"fine": fine, "edges": edges, "along": along}


# ------------------------------------------------------------------ 1-D signals
FS = 200.0
B_LOW, A_LOW = signal.butter(4, 10.0 / (FS / 2))


def imu_lowpass(acc, gyro, position):
    """IMU: zero-phase low-pass, causal filter, Savitzky-Golay velocity, median despike."""
    acc_f = signal.filtfilt(B_LOW, A_LOW, acc, axis=0)
    gyro_f = signal.lfilter(B_LOW, A_LOW, gyro, axis=0)
    velocity = signal.savgol_filter(position, 9, 3, deriv=1, delta=1 / FS, axis=0)
    despiked = signal.medfilt(acc[:, 2], 5)
    return {"acc": acc_f, "gyro": gyro_f, "velocity": velocity, "despiked": despiked}


SOS_BAND = signal.butter(4, [20.0, 180.0], btype="band", fs=500.0, output="sos")
SOS_ENV = signal.butter(2, 5.0, fs=500.0, output="sos")


def emg_envelope(emg):
    """EMG: band-pass both ways, rectify, low-pass envelope, RMS per channel."""
    band = signal.sosfiltfilt(SOS_BAND, emg, axis=0)
    envelope = signal.sosfilt(SOS_ENV, np.abs(band), axis=0)
    rms = np.sqrt(np.mean(band**2, axis=0))
    return {"envelope": envelope, "rms": rms}


# ------------------------------------------------------------------ heads and filters
def policy_head(logits):
    """Policy output: gripper probability, discrete action probabilities, log-probs."""
    gripper = expit(logits[:, -1])
    probs = softmax(logits[:, :-1], axis=-1)
    log_probs = logits[:, :-1] - logsumexp(logits[:, :-1], axis=-1, keepdims=True)
    return {"gripper": gripper, "probs": probs, "log_probs": log_probs}


H = np.array([[1.0, 0, 0, 0], [0, 1.0, 0, 0]])
R_NOISE = np.eye(2) * 0.05
DT = 0.01


def _skew(w):
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def kalman_step(x, P, z, gyro):
    """filterpy style: UKF sigma points by Cholesky, EKF gain by inv, solve, expm."""
    n, kappa = 4, 0.0
    sqrt_p = linalg.cholesky((n + kappa) * P)  # upper triangular, as scipy returns it
    sigmas = np.vstack([x, x + sqrt_p, x - sqrt_p])
    S = H @ P @ H.T + R_NOISE
    K = P @ H.T @ linalg.inv(S)
    y = z - H @ x
    x_new = x + K @ y
    mahalanobis = y @ linalg.solve(S, y, assume_a="pos")
    attitude = linalg.expm(_skew(gyro) * DT)
    return {
        "sigmas": sigmas,
        "x": x_new,
        "m": np.atleast_1d(mahalanobis),
        "attitude": attitude,
    }


# ------------------------------------------------------------------ inputs
def _r(shape, rng, low=-1.0, high=1.0):
    return rng.uniform(low, high, size=shape)


def _quat(rng):
    q = rng.normal(size=4)
    return q / np.linalg.norm(q)


def _depth(rng):
    base = rng.uniform(0.5, 3.0, size=(6, 8))
    depth = ndimage.zoom(base, 4, order=1)
    speckle = rng.random(depth.shape) < 0.03
    return np.where(speckle, 0.0, depth)


def _spd(rng):
    a = rng.normal(size=(4, 4))
    return a @ a.T + 4 * np.eye(4)


P = harness.Pipeline
PIPELINES = [
    P(
        "imu_gravity",
        imu_gravity,
        lambda r: {"quat": _quat(r), "lin_vel": _r(3, r), "ang_vel": _r(3, r, -3, 3)},
    ),
    P("ee_teleop_delta", ee_teleop_delta, lambda r: {"ee_quat": _quat(r), "action": _r(7, r)}),
    P("pose_rotvec_batch", pose_rotvec_batch, lambda r: {"poses": _r((5, 6), r, -2, 2)}),
    P(
        "pose_interpolation",
        pose_interpolation,
        lambda r: {"positions": _r((4, 3), r), "rotvecs": _r((4, 3), r, -1.5, 1.5)},
    ),
    P("depth_denoise", depth_denoise, lambda r: {"depth": _depth(r)}),
    P(
        "costmap",
        costmap,
        lambda r: {
            "occupancy": (r.random((20, 24)) < 0.05).astype(np.float64),
            "trajectory": np.cumsum(_r((12, 2), r, 0.2, 1.6), axis=0),
        },
    ),
    P(
        "imu_lowpass",
        imu_lowpass,
        lambda r: {
            "acc": np.cumsum(_r((64, 3), r), axis=0) * 0.1,
            "gyro": _r((64, 3), r),
            "position": np.cumsum(np.cumsum(_r((64, 3), r), axis=0), axis=0) * 1e-3,
        },
    ),
    P("emg_envelope", emg_envelope, lambda r: {"emg": r.normal(size=(96, 2))}),
    P("policy_head", policy_head, lambda r: {"logits": r.normal(size=(3, 6)) * 3}),
    P(
        "kalman_step",
        kalman_step,
        lambda r: {"x": _r(4, r), "P": _spd(r), "z": _r(2, r), "gyro": _r(3, r, -2, 2)},
    ),
]


def main(names: list[str]) -> dict[str, dict[str, int]]:
    before = "--before" in names
    names = [n for n in names if n != "--before"]
    harness.PATCHING = ["opencv"] if before else ["opencv", "scipy"]
    chosen = [p for p in PIPELINES if not names or p.name in names]
    return harness.run_table(chosen, "scipy", details=True, heading=f"patching={harness.PATCHING}")


if __name__ == "__main__":
    main(sys.argv[1:])
