"""Robot kinematics, motion and control pipelines from public code x backends.

New pipelines in the idioms of public robotics code (nobody tuned patchport to them):
forward kinematics of serial arms from standard and modified Denavit-Hartenberg tables
(a Python loop of 4x4 ``np.array([[cos, -sin, ...]])`` built from traced joint angles,
the links chained by ``functools.reduce(np.dot, ...)`` and by ``np.linalg.multi_dot``, or
each assembled by ``np.block``);
Modern Robotics' product of exponentials (``VecToso3``, ``MatrixExp6`` with its
``NearZero`` branch, ``Adjoint``, ``FKinSpace``, ``JacobianSpace`` writing columns of a
copied screw table); a geometric Jacobian by ``np.cross`` of the joint z-axes and one by
finite differences; damped-least-squares IK with a fixed number of iterations (by
``np.linalg.pinv`` and by ``np.linalg.solve`` of ``J J^T + lambda^2 I``), joint limits by
``np.clip``; angles wrapped by ``(a + pi) % 2pi - pi`` and by ``arctan2(sin, cos)``;
Rodrigues' exp and the SO(3) log with a small-angle branch; quintic and cubic joint
trajectories by ``np.linalg.solve`` of a fixed matrix and ``np.polyval`` / powers;
differential-drive and bicycle-model odometry with the state on ``self``; a PID class
with integral, derivative and an anti-windup clip; pure pursuit and Stanley steering
(``np.hypot``, ``np.argmin`` of the distances to a path, ``arctan2``); a low-pass and a
complementary filter; a sampling MPC rollout in torch; and a goal pose by SciPy's
``Rotation.from_euler``, an SE(3) exp by ``torch.linalg.matrix_exp`` and IK with the
Jacobian by ``torch.autograd.functional.jacobian``. Each is traced once, exported
and replayed on fresh inputs against the plain code, classified as
``bench/real_pipelines.py`` classifies (its harness is reused).

Run: python bench/real_pipelines_kinematics.py [--variants] [--all-backends] [name ...]
(onnx and pt2 by default; ``--all-backends`` adds jit; ``--variants`` runs one-line
changes of the data-dependent idioms instead, each of which must be right or loud.)
"""

from __future__ import annotations

import functools
import math
import sys
from pathlib import Path

import numpy as np
import torch
from scipy.spatial.transform import Rotation

sys.path.insert(0, str(Path(__file__).resolve().parent))
import real_pipelines as harness  # noqa: E402

harness.HERE = str(Path(__file__).resolve())  # the user's lines are in this file
torch.manual_seed(0)
P = harness.Pipeline

# A UR5-like standard DH table: (d, a, alpha) per joint; theta is the joint angle.
DH_D = [0.089159, 0.0, 0.0, 0.10915, 0.09465, 0.0823]
DH_A = [0.0, -0.425, -0.39225, 0.0, 0.0, 0.0]
DH_ALPHA = [np.pi / 2, 0.0, 0.0, np.pi / 2, -np.pi / 2, 0.0]
Q_LOW = np.array([-2.8, -2.0, -2.5, -3.0, -2.0, -3.0])
Q_HIGH = np.array([2.8, 2.0, 2.5, 3.0, 2.0, 3.0])


# ------------------------------------------------------------------ forward kinematics
def dh_transform(a, alpha, d, theta):
    """One standard DH link as a 4x4 homogeneous transform (traced theta, plain a/alpha/d)."""
    ct, st = np.cos(theta), np.sin(theta)
    ca, sa = np.cos(alpha), np.sin(alpha)
    return np.array(
        [
            [ct, -st * ca, st * sa, a * ct],
            [st, ct * ca, -ct * sa, a * st],
            [0, sa, ca, d],
            [0, 0, 0, 1],
        ]
    )


def dh_forward(q):
    """A Python loop over the DH table, T = T @ A_i; every joint frame kept."""
    T = np.eye(4)
    origins = [T[:3, 3]]
    for i in range(6):
        T = T @ dh_transform(DH_A[i], DH_ALPHA[i], DH_D[i], q[i])
        origins.append(T[:3, 3])
    return {"T": T, "origins": np.array(origins)}


def mdh_transform(alpha_prev, a_prev, d, theta):
    """Craig's modified DH link (rotate x, translate x, rotate z, translate z)."""
    ct, st = np.cos(theta), np.sin(theta)
    ca, sa = np.cos(alpha_prev), np.sin(alpha_prev)
    return np.array(
        [
            [ct, -st, 0, a_prev],
            [st * ca, ct * ca, -sa, -sa * d],
            [st * sa, ct * sa, ca, ca * d],
            [0, 0, 0, 1],
        ]
    )


MDH = [(0.0, 0.0, 0.333), (-np.pi / 2, 0.0, 0.0), (np.pi / 2, 0.0, 0.316),
       (np.pi / 2, 0.0825, 0.0), (-np.pi / 2, -0.0825, 0.384), (np.pi / 2, 0.0, 0.0),
       (np.pi / 2, 0.088, 0.0)]  # fmt: skip


def mdh_reduce(q):
    """Panda-like modified DH: the link matrices in a list, chained by reduce(np.dot)."""
    links = [mdh_transform(al, a, d, th) for (al, a, d), th in zip(MDH, q)]
    T = functools.reduce(np.dot, links)
    return {"T": T, "position": T[:3, 3]}


def fk_multi_dot(q, base):
    """Base pose @ links @ tool by np.linalg.multi_dot (rotation about z from each angle)."""
    mats = [base] + [dh_transform(DH_A[i], DH_ALPHA[i], DH_D[i], q[i]) for i in range(6)]
    tool = np.eye(4)
    tool[2, 3] = 0.15
    T = np.linalg.multi_dot(mats + [tool])
    return {"T": T}


def rot_z(theta):
    c, s = np.cos(theta), np.sin(theta)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def block_chain(q):
    """Each link as np.block([[R, p], [0, 1]]) of a z rotation and a fixed offset, chained
    by @ (the modern NumPy way to assemble a homogeneous transform)."""
    T = np.eye(4)
    for i in range(6):
        offset = np.array([DH_A[i], 0.0, DH_D[i]])
        link = np.block([[rot_z(q[i]), offset[:, None]], [np.zeros((1, 3)), np.ones((1, 1))]])
        T = T @ link
    return {"T": T}


# ------------------------------------------------------------------ product of exponentials
def near_zero(z):
    return abs(z) < 1e-6


def vec_to_so3(omg):
    return np.array([[0, -omg[2], omg[1]], [omg[2], 0, -omg[0]], [-omg[1], omg[0], 0]])


def so3_to_vec(so3mat):
    return np.array([so3mat[2][1], so3mat[0][2], so3mat[1][0]])


def vec_to_se3(V):
    return np.r_[np.c_[vec_to_so3([V[0], V[1], V[2]]), [V[3], V[4], V[5]]], np.zeros((1, 4))]


def matrix_exp3(so3mat):
    omgtheta = so3_to_vec(so3mat)
    if near_zero(np.linalg.norm(omgtheta)):
        return np.eye(3)
    theta = np.linalg.norm(omgtheta)
    omgmat = so3mat / theta
    return np.eye(3) + np.sin(theta) * omgmat + (1 - np.cos(theta)) * np.dot(omgmat, omgmat)


def matrix_exp6(se3mat):
    """Modern Robotics' exponential of an se(3) matrix, with its NearZero branch."""
    se3mat = np.array(se3mat)
    omgtheta = so3_to_vec(se3mat[0:3, 0:3])
    if near_zero(np.linalg.norm(omgtheta)):
        return np.r_[np.c_[np.eye(3), se3mat[0:3, 3]], [[0, 0, 0, 1]]]
    theta = np.linalg.norm(omgtheta)
    omgmat = se3mat[0:3, 0:3] / theta
    G = np.eye(3) * theta + (1 - np.cos(theta)) * omgmat
    G = G + (theta - np.sin(theta)) * np.dot(omgmat, omgmat)
    return np.r_[np.c_[matrix_exp3(se3mat[0:3, 0:3]), np.dot(G, se3mat[0:3, 3]) / theta],
                 [[0, 0, 0, 1]]]  # fmt: skip


def adjoint(T):
    R, p = T[0:3, 0:3], T[0:3, 3]
    return np.r_[np.c_[R, np.zeros((3, 3))], np.c_[np.dot(vec_to_so3(p), R), R]]


# A 3R spatial arm: home pose M and the space screw axes as columns.
M_HOME = np.array([[1.0, 0, 0, 0.9], [0, 1, 0, 0], [0, 0, 1, 0.3], [0, 0, 0, 1]])
SLIST = np.array([[0, 0, 1, 0, 0, 0], [0, 1, 0, -0.3, 0, 0], [0, 1, 0, -0.3, 0, 0.5]]).T


def fkin_space(thetalist):
    """FKinSpace: T = e^[S1]th1 ... e^[Sn]thn M, the loop run from the last joint."""
    T = np.array(M_HOME)
    for i in range(len(thetalist) - 1, -1, -1):
        T = np.dot(matrix_exp6(vec_to_se3(np.array(SLIST)[:, i] * thetalist[i])), T)
    return {"T": T}


def jacobian_space(thetalist):
    """JacobianSpace: the screw table copied as float, column i = Ad(T_{i-1}) S_i."""
    Js = np.array(SLIST).copy().astype(float)
    T = np.eye(4)
    for i in range(1, len(thetalist)):
        T = np.dot(T, matrix_exp6(vec_to_se3(np.array(SLIST)[:, i - 1] * thetalist[i - 1])))
        Js[:, i] = np.dot(adjoint(T), np.array(SLIST)[:, i])
    return {"Js": Js}


# ------------------------------------------------------------------ Jacobians and IK
def geometric_jacobian(q):
    """6xN geometric Jacobian of revolute joints: z_i x (p_e - p_i) over z_i, columns written
    into np.zeros."""
    T = np.eye(4)
    zs, ps = [T[:3, 2]], [T[:3, 3]]
    for i in range(6):
        T = T @ dh_transform(DH_A[i], DH_ALPHA[i], DH_D[i], q[i])
        zs.append(T[:3, 2])
        ps.append(T[:3, 3])
    J = np.zeros((6, 6))
    for i in range(6):
        J[:3, i] = np.cross(zs[i], ps[-1] - ps[i])
        J[3:, i] = zs[i]
    return {"J": J, "manipulability": np.sqrt(np.abs(np.linalg.det(J @ J.T)))[None]}


def planar_fk(q, lengths=(0.5, 0.4, 0.3)):
    """End point of a planar 3R arm from cumulative joint angles."""
    phi = np.cumsum(q)
    x = np.sum(np.array(lengths) * np.cos(phi))
    y = np.sum(np.array(lengths) * np.sin(phi))
    return np.array([x, y])


def fd_jacobian(q):
    """Forward differences, one joint at a time (dq = zeros, dq[i] = eps)."""
    eps = 1e-6
    f0 = planar_fk(q)
    J = np.zeros((2, len(q)))
    for i in range(len(q)):
        dq = np.zeros(len(q))
        dq[i] = eps
        J[:, i] = (planar_fk(q + dq) - f0) / eps
    return {"J": J}


def ik_pinv(q0, target):
    """Ten Newton steps q += pinv(J) e on the planar arm, clipped to the joint limits."""
    q = q0.copy()
    for _ in range(10):
        J = fd_jacobian(q)["J"]
        err = target - planar_fk(q)
        q = np.clip(q + np.linalg.pinv(J) @ err, -2.5, 2.5)
    return {"q": q, "err": target - planar_fk(q)}


LINKS = np.array([0.5, 0.4, 0.3])


def planar_jacobian(q, lengths=LINKS):
    """The analytic planar Jacobian: sums of the links beyond each joint."""
    phi = np.cumsum(q)
    sx, cy = -lengths * np.sin(phi), lengths * np.cos(phi)
    return np.stack([np.cumsum(sx[::-1])[::-1], np.cumsum(cy[::-1])[::-1]])


def ik_dls(q0, target):
    """Damped least squares: dq = J^T (J J^T + lambda^2 I)^-1 e, a fixed 15 iterations."""
    lam = 0.05
    q = np.array(q0, dtype=float)
    for _ in range(15):
        J = planar_jacobian(q)
        e = target - planar_fk(q)
        dq = J.T @ np.linalg.solve(J @ J.T + lam**2 * np.eye(2), e)
        q += 0.8 * dq
        q = np.clip(q, Q_LOW[:3], Q_HIGH[:3])
    return {"q": q}


def wrap_angles(angles, offsets):
    """Joint angles with offsets wrapped to [-pi, pi) by modulo and by arctan2(sin, cos)."""
    a = angles + offsets
    by_mod = (a + np.pi) % (2 * np.pi) - np.pi
    by_atan = np.arctan2(np.sin(a), np.cos(a))
    return {"by_mod": by_mod, "by_atan": by_atan, "delta": by_mod - by_atan}


# ------------------------------------------------------------------ SO(3) exp / log
def rodrigues(omega):
    """Rodrigues' formula with the usual small-angle branch."""
    theta = np.linalg.norm(omega)
    if theta < 1e-8:
        return np.eye(3) + vec_to_so3(omega)
    k = vec_to_so3(omega / theta)
    return np.eye(3) + np.sin(theta) * k + (1 - np.cos(theta)) * k @ k


def so3_log(R):
    """The SO(3) log: the angle from the trace, the axis from the skew part."""
    cos_theta = np.clip((np.trace(R) - 1) / 2, -1.0, 1.0)
    theta = np.arccos(cos_theta)
    if theta < 1e-6:
        return np.zeros(3)
    w = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    return theta / (2 * np.sin(theta)) * w


def rotation_error(omega_a, omega_b):
    """Orientation error between two rotations as the log of R_a^T R_b (exp, then log)."""
    Ra, Rb = rodrigues(omega_a), rodrigues(omega_b)
    return {"err": so3_log(Ra.T @ Rb), "R": Ra}


# ------------------------------------------------------------------ trajectories
T_FINAL = 2.0
QUINTIC_A = np.array(
    [
        [1, 0, 0, 0, 0, 0],
        [0, 1, 0, 0, 0, 0],
        [0, 0, 2, 0, 0, 0],
        [1, T_FINAL, T_FINAL**2, T_FINAL**3, T_FINAL**4, T_FINAL**5],
        [0, 1, 2 * T_FINAL, 3 * T_FINAL**2, 4 * T_FINAL**3, 5 * T_FINAL**4],
        [0, 0, 2, 6 * T_FINAL, 12 * T_FINAL**2, 20 * T_FINAL**3],
    ]
)
TIMES = np.linspace(0, T_FINAL, 11)


def quintic(boundary):
    """Quintic per joint: a = solve(A, [q0, v0, a0, qf, vf, af]), positions by np.polyval
    and velocities by powers of t."""
    coeffs = np.linalg.solve(QUINTIC_A, boundary)  # (6, joints)
    pos = np.stack([np.polyval(coeffs[::-1, j], TIMES) for j in range(coeffs.shape[1])], 1)
    powers = np.arange(1, 6)
    vel = (powers * TIMES[:, None] ** (powers - 1)) @ coeffs[1:] * 1.0
    return {"pos": pos, "vel": vel}


def cubic(q0, qf):
    """The cubic with zero end velocities in closed form (a2, a3 from q0, qf, T)."""
    a0, a2 = q0, 3 * (qf - q0) / T_FINAL**2
    a3 = -2 * (qf - q0) / T_FINAL**3
    t = TIMES[:, None]
    return {"q": a0 + a2 * t**2 + a3 * t**3, "qd": 2 * a2 * t + 3 * a3 * t**2}


# ------------------------------------------------------------------ odometry
class DiffDriveOdometry:
    """Wheel odometry: state on self, midpoint integration of each wheel pair."""

    def __init__(self, wheel_radius=0.05, track=0.3):
        self.r, self.track = wheel_radius, track
        self.x, self.y, self.theta = 0.0, 0.0, 0.0

    def update(self, w_left, w_right, dt):
        v = self.r * (w_left + w_right) / 2
        w = self.r * (w_right - w_left) / self.track
        self.x = self.x + v * np.cos(self.theta + w * dt / 2) * dt
        self.y = self.y + v * np.sin(self.theta + w * dt / 2) * dt
        self.theta = self.theta + w * dt
        return self.x, self.y, self.theta


def diff_drive(wheel_speeds):
    odom = DiffDriveOdometry()
    for w_left, w_right in wheel_speeds:
        odom.update(w_left, w_right, 0.05)
    return {"pose": np.array([odom.x, odom.y, odom.theta])}


class BicycleState:
    """Kinematic bicycle (rear axle) stepped with a clipped steering angle."""

    def __init__(self, x=0.0, y=0.0, yaw=0.0, v=1.0, wheelbase=2.9):
        self.x, self.y, self.yaw, self.v, self.L = x, y, yaw, v, wheelbase

    def update(self, a, delta, dt=0.1):
        delta = np.clip(delta, -np.radians(30.0), np.radians(30.0))
        self.x += self.v * np.cos(self.yaw) * dt
        self.y += self.v * np.sin(self.yaw) * dt
        self.yaw += self.v / self.L * np.tan(delta) * dt
        self.v += a * dt


def bicycle(controls):
    state = BicycleState()
    for a, delta in controls:
        state.update(a, delta)
    return {"state": np.stack([state.x, state.y, state.yaw, state.v])}


# ------------------------------------------------------------------ controllers
class PID:
    """PID with integral and previous-error state and an anti-windup clip."""

    def __init__(self, kp, ki, kd, limit):
        self.kp, self.ki, self.kd, self.limit = kp, ki, kd, limit
        self.integral = np.zeros(3)
        self.prev_error = np.zeros(3)

    def __call__(self, setpoint, measured, dt):
        error = setpoint - measured
        self.integral = np.clip(self.integral + error * dt, -self.limit, self.limit)
        derivative = (error - self.prev_error) / dt
        self.prev_error = error
        return self.kp * error + self.ki * self.integral + self.kd * derivative


def pid_track(setpoints, measured):
    pid = PID(2.0, 0.5, 0.05, limit=0.3)
    out = [pid(s, m, 0.01) for s, m in zip(setpoints, measured)]
    return {"u": np.array(out), "integral": pid.integral}


PATH_X = np.linspace(0, 20, 60)
PATH_Y = np.sin(PATH_X / 3.0) * 2.0
PATH_YAW = np.arctan2(np.gradient(PATH_Y), np.gradient(PATH_X))


def pure_pursuit(pose):
    """Nearest path point by argmin of np.hypot, a look-ahead a fixed count ahead (clipped
    index), steering from the angle to it."""
    x, y, yaw = pose
    d = np.hypot(PATH_X - x, PATH_Y - y)
    ind = np.argmin(d)
    target = np.clip(ind + 6, 0, len(PATH_X) - 1)
    tx, ty = PATH_X[target], PATH_Y[target]
    alpha = np.arctan2(ty - y, tx - x) - yaw
    lf = np.hypot(tx - x, ty - y)
    delta = np.arctan2(2.0 * 2.9 * np.sin(alpha) / lf, 1.0)
    return {"delta": np.asarray(delta), "ind": np.asarray(ind)}


def stanley(state):
    """Stanley: the front axle's nearest path index, cross-track error by a dot product,
    heading error wrapped by arctan2(sin, cos), steering = heading + arctan2(k e, v)."""
    x, y, yaw, v = state
    fx = x + 2.9 * np.cos(yaw)
    fy = y + 2.9 * np.sin(yaw)
    dx, dy = fx - PATH_X, fy - PATH_Y
    target_idx = np.argmin(np.hypot(dx, dy))
    front_axle_vec = [-np.cos(yaw + np.pi / 2), -np.sin(yaw + np.pi / 2)]
    error_front_axle = np.dot([dx[target_idx], dy[target_idx]], front_axle_vec)
    heading = PATH_YAW[target_idx] - yaw
    theta_e = np.arctan2(np.sin(heading), np.cos(heading))
    theta_d = np.arctan2(0.5 * error_front_axle, v)
    return {"delta": np.asarray(theta_e + theta_d), "idx": np.asarray(target_idx)}


def filters(acc, gyro):
    """A first-order low-pass of the accelerometer and a complementary pitch filter."""
    alpha, k, dt = 0.2, 0.98, 0.01
    smooth = acc[0]
    pitch = np.arctan2(acc[0, 0], acc[0, 2])
    smoothed, pitches = [], []
    for a, g in zip(acc, gyro):
        smooth = alpha * a + (1 - alpha) * smooth
        pitch = k * (pitch + g[1] * dt) + (1 - k) * np.arctan2(a[0], a[2])
        smoothed.append(smooth)
        pitches.append(pitch)
    return {"smooth": np.stack(smoothed), "pitch": np.array(pitches)}


def mppi_rollout(state, goal, noise):
    """Sampling MPC in torch: K perturbed control sequences rolled through unicycle
    dynamics, a cost per rollout, softmax weights, the first control."""
    x0 = torch.from_numpy(state)
    u_nominal = torch.tensor([1.0, 0.0], dtype=x0.dtype)
    U = u_nominal + torch.from_numpy(noise)  # (K, H, 2)
    K, H, _ = U.shape
    x = x0.expand(K, 3).clone()
    cost = torch.zeros(K, dtype=x0.dtype)
    g = torch.from_numpy(goal)
    for t in range(H):
        v = U[:, t, 0].clamp(-2.0, 2.0)
        w = U[:, t, 1].clamp(-1.0, 1.0)
        x = torch.stack(
            [x[:, 0] + v * torch.cos(x[:, 2]) * 0.1, x[:, 1] + v * torch.sin(x[:, 2]) * 0.1,
             x[:, 2] + w * 0.1], dim=1)  # fmt: skip
        cost = cost + ((x[:, :2] - g) ** 2).sum(-1) + 0.01 * (U[:, t] ** 2).sum(-1)
    weights = torch.softmax(-(cost - cost.min()) / 0.5, dim=0)
    u0 = (weights[:, None] * U[:, 0]).sum(0)
    return {"u0": u0.numpy(), "best": cost.argmin().reshape(1).numpy()}


# ------------------------------------------------------------------ SciPy and torch
def euler_target(rpy, position):
    """A goal pose from roll-pitch-yaw by SciPy's Rotation (traced with patching=["scipy"],
    not with the OpenCV set alone), written into a 4x4 made by np.eye."""
    T = np.eye(4)
    T[:3, :3] = Rotation.from_euler("xyz", rpy).as_matrix()
    T[:3, 3] = position
    return {"T": T}


def hat(w):
    """so(3) hat of a batch of vectors in torch (torch.stack of the entries)."""
    zero = torch.zeros_like(w[..., 0])
    rows = [zero, -w[..., 2], w[..., 1], w[..., 2], zero, -w[..., 0], -w[..., 1], w[..., 0], zero]
    return torch.stack(rows, -1).reshape(*w.shape[:-1], 3, 3)


def se3_exp_torch(xi):
    """Differentiable-robotics SE(3) exp: the 4x4 twist matrix by torch.cat, then
    torch.linalg.matrix_exp (ONNX has no function for it)."""
    xi = torch.from_numpy(xi)
    top = torch.cat([hat(xi[:, :3]), xi[:, 3:, None]], dim=-1)
    twist = torch.cat([top, torch.zeros(xi.shape[0], 1, 4, dtype=xi.dtype)], dim=-2)
    return {"T": torch.linalg.matrix_exp(twist).numpy()}


def torch_planar_fk(q):
    phi = torch.cumsum(q, 0)
    lengths = torch.tensor([0.5, 0.4, 0.3], dtype=q.dtype)
    return torch.stack([(lengths * torch.cos(phi)).sum(), (lengths * torch.sin(phi)).sum()])


def autograd_ik(q0, target):
    """IK steps with the Jacobian by torch.autograd.functional.jacobian (pytorch_kinematics
    style); the backward pass is autograd's engine, not recordable operations."""
    q = torch.from_numpy(q0).clone()
    goal = torch.from_numpy(target)
    for _ in range(3):
        J = torch.autograd.functional.jacobian(torch_planar_fk, q)
        q = q + torch.linalg.pinv(J) @ (goal - torch_planar_fk(q))
    return {"q": q.numpy()}


# ------------------------------------------------------------------ inputs
def _q6(r):
    return r.uniform(Q_LOW, Q_HIGH)


def _base(r):
    yaw = r.uniform(-np.pi, np.pi)
    base = np.eye(4)
    base[:2, :2] = [[np.cos(yaw), -np.sin(yaw)], [np.sin(yaw), np.cos(yaw)]]
    base[:3, 3] = r.uniform(-1, 1, 3)
    return base


def _ik(r):
    q0 = r.uniform(-1.0, 1.0, 3)
    target = planar_fk(r.uniform(-1.2, 1.2, 3))
    return {"q0": q0, "target": target}


def _boundary(r):
    return np.concatenate([r.uniform(-2, 2, (1, 4)), r.normal(0, 0.5, (2, 4)),
                           r.uniform(-2, 2, (1, 4)), r.normal(0, 0.5, (2, 4))])  # fmt: skip


PIPELINES = [
    P("dh_forward", dh_forward, lambda r: {"q": _q6(r)}),
    P("mdh_reduce", mdh_reduce, lambda r: {"q": r.uniform(-2.5, 2.5, 7)}),
    P("fk_multi_dot", fk_multi_dot, lambda r: {"q": _q6(r), "base": _base(r)}),
    P("block_chain", block_chain, lambda r: {"q": _q6(r)}),
    P("fkin_space", fkin_space, lambda r: {"thetalist": r.uniform(0.2, 2.5, 3)}),
    P("jacobian_space", jacobian_space, lambda r: {"thetalist": r.uniform(0.2, 2.5, 3)}),
    P("geometric_jacobian", geometric_jacobian, lambda r: {"q": _q6(r)}),
    P("fd_jacobian", fd_jacobian, lambda r: {"q": r.uniform(-2, 2, 3)}),
    P("ik_pinv", ik_pinv, _ik),
    P("ik_dls", ik_dls, _ik),
    P(
        "wrap_angles",
        wrap_angles,
        lambda r: {"angles": r.uniform(-10, 10, 12), "offsets": r.uniform(-4, 4, 12)},
    ),
    P(
        "rotation_error",
        rotation_error,
        lambda r: {"omega_a": r.uniform(-1, 1, 3), "omega_b": r.uniform(-1, 1, 3)},
    ),
    P("quintic", quintic, lambda r: {"boundary": _boundary(r)}),
    P("cubic", cubic, lambda r: {"q0": r.uniform(-2, 2, 6), "qf": r.uniform(-2, 2, 6)}),
    P("diff_drive", diff_drive, lambda r: {"wheel_speeds": r.uniform(2, 12, (20, 2))}),
    P(
        "bicycle",
        bicycle,
        lambda r: {"controls": np.column_stack([r.normal(0, 0.5, 15), r.uniform(-0.8, 0.8, 15)])},
    ),
    P(
        "pid_track",
        pid_track,
        lambda r: {"setpoints": r.uniform(-1, 1, (25, 3)), "measured": r.uniform(-1, 1, (25, 3))},
    ),
    P(
        "pure_pursuit",
        pure_pursuit,
        lambda r: {"pose": np.array([r.uniform(0, 14), r.uniform(-2, 2), r.uniform(-0.5, 0.5)])},
    ),
    P(
        "stanley",
        stanley,
        lambda r: {
            "state": np.array([r.uniform(0, 14), r.uniform(-2, 2), r.uniform(-0.5, 0.5), 3.0])
        },
    ),
    P(
        "filters",
        filters,
        lambda r: {
            "acc": r.normal(0, 0.3, (30, 3)) + [0, 0, 9.81],
            "gyro": r.normal(0, 0.2, (30, 3)),
        },
    ),
    P(
        "euler_target",
        euler_target,
        lambda r: {"rpy": r.uniform(-1, 1, 3), "position": r.uniform(-1, 1, 3)},
    ),
    P("se3_exp_torch", se3_exp_torch, lambda r: {"xi": r.uniform(-1, 1, (4, 6))}),
    P("autograd_ik", autograd_ik, _ik),
    P(
        "mppi_rollout",
        mppi_rollout,
        lambda r: {
            "state": r.uniform(-1, 1, 3),
            "goal": r.uniform(-3, 3, 2),
            "noise": r.normal(0, 0.5, (16, 8, 2)),
        },
    ),
]


# ------------------------------------------------------------------ one-line variants
# Each changes one line of a data-dependent idiom above; right or loud, never silent.
def normalize_angle_while(angles):
    """PythonRobotics' normalize_angle: while a > pi: a -= 2 pi (a data-dependent loop)."""
    a = angles[0]
    while a > np.pi:
        a -= 2.0 * np.pi
    while a < -np.pi:
        a += 2.0 * np.pi
    return {"a": np.asarray(a)}


def rodrigues_isclose(omega):
    """The small-angle branch written with np.isclose(theta, 0)."""
    theta = np.linalg.norm(omega)
    if np.isclose(theta, 0.0):
        return {"R": np.eye(3)}
    k = vec_to_so3(omega / theta)
    return {"R": np.eye(3) + np.sin(theta) * k + (1 - np.cos(theta)) * k @ k}


def ik_until_converged(q0, target):
    """DLS until the error is below a tolerance (at most 50 steps)."""
    q = np.array(q0, dtype=float)
    for _ in range(50):
        e = target - planar_fk(q)
        if np.linalg.norm(e) < 1e-4:
            break
        J = planar_jacobian(q)
        q = q + J.T @ np.linalg.solve(J @ J.T + 0.05**2 * np.eye(2), e)
    return {"q": q}


def pid_python_clip(setpoints, measured):
    """The anti-windup clip by Python max(min(...)) of one axis."""
    integral, out = 0.0, []
    for s, m in zip(setpoints[:, 0], measured[:, 0]):
        integral = max(min(integral + (s - m) * 0.01, 0.3), -0.3)
        out.append(2.0 * (s - m) + 0.5 * integral)
    return {"u": np.array(out)}


def nearest_int(pose):
    """The nearest index made a Python int before indexing the path."""
    x, y, _ = pose
    ind = int(np.argmin(np.hypot(PATH_X - x, PATH_Y - y)))
    return {"target": np.array([PATH_X[ind], PATH_Y[ind]])}


def lookahead_while(pose):
    """PythonRobotics' look-ahead search: walk the path while the point is too close."""
    x, y, _ = pose
    ind = np.argmin(np.hypot(PATH_X - x, PATH_Y - y))
    while ind + 1 < len(PATH_X) and np.hypot(PATH_X[ind] - x, PATH_Y[ind] - y) < 3.0:
        ind += 1
    return {"target": np.array([PATH_X[ind], PATH_Y[ind]])}


def steer_branch_clip(controls):
    """Steering saturated by an if on each value instead of np.clip."""
    out = []
    for delta in controls[:, 1]:
        if delta > 0.5:
            delta = 0.5
        out.append(delta)
    return {"delta": np.array(out)}


def limits_any(q):
    """A joint-limit guard: clip only when some joint is outside (np.any in an if)."""
    if np.any(q < Q_LOW) or np.any(q > Q_HIGH):
        q = np.clip(q, Q_LOW, Q_HIGH)
    return {"q": q * 1.0}


def odometry_math(wheel_speeds):
    """Differential drive with math.cos / math.sin of the traced heading."""
    x = y = theta = 0.0
    for w_left, w_right in wheel_speeds:
        v, w = 0.025 * (w_left + w_right), 0.05 * (w_right - w_left) / 0.3
        x += v * math.cos(theta) * 0.05
        y += v * math.sin(theta) * 0.05
        theta += w * 0.05
    return {"pose": np.array([x, y, theta])}


def duration_from_data(q0, qf):
    """The trajectory time from the largest joint move (float() of it), then a cubic."""
    T = float(np.max(np.abs(qf - q0))) / 1.5 + 0.5
    t = np.linspace(0, T, 11)[:, None]
    return {"q": q0 + 3 * (qf - q0) / T**2 * t**2 - 2 * (qf - q0) / T**3 * t**3}


def so3_log_trace_branch(omega_a, omega_b):
    """The log's pi branch keyed on the trace (if cos_theta < -0.999)."""
    R = rodrigues(omega_a).T @ rodrigues(omega_b)
    cos_theta = (np.trace(R) - 1) / 2
    if cos_theta < -0.999:
        return {"w": np.array([np.pi, 0.0, 0.0])}
    theta = np.arccos(cos_theta)
    w = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    return {"w": theta / (2 * np.sin(theta)) * w}


def mppi_item_temperature(state, goal, noise):
    """MPPI with the temperature adapted from the cost spread by .item()."""
    U = torch.from_numpy(noise) + torch.tensor([1.0, 0.0], dtype=torch.float64)
    cost = ((U.cumsum(1)[:, -1] * 0.1 + torch.from_numpy(state[:2]) - torch.from_numpy(goal))
            ** 2).sum(-1)  # fmt: skip
    lam = max((cost.max() - cost.min()).item() / 10.0, 1e-3)
    weights = torch.softmax(-(cost - cost.min()) / lam, dim=0)
    return {"u0": (weights[:, None] * U[:, 0]).sum(0).numpy()}


def ufunc_list_rows(setpoints, measured):
    """The two error rows handed to a ufunc as a Python list (np.abs([e0, e1])): NumPy's C
    coercion copies each row's memory with no hook."""
    e = setpoints[:2] - measured[:2]
    return {"abs": np.abs([e[0], e[1]]).sum(axis=0) + e[0]}


VARIANTS = [
    P("normalize_angle_while", normalize_angle_while, lambda r: {"angles": r.uniform(-9, 9, 1)}),
    P("rodrigues_isclose", rodrigues_isclose, lambda r: {"omega": r.uniform(-1, 1, 3)}),
    P("ik_until_converged", ik_until_converged, _ik),
    P(
        "pid_python_clip",
        pid_python_clip,
        lambda r: {"setpoints": r.uniform(-1, 1, (25, 3)), "measured": r.uniform(-1, 1, (25, 3))},
    ),
    P(
        "nearest_int",
        nearest_int,
        lambda r: {"pose": np.array([r.uniform(0, 14), r.uniform(-2, 2), 0.0])},
    ),
    P(
        "lookahead_while",
        lookahead_while,
        lambda r: {"pose": np.array([r.uniform(0, 14), r.uniform(-2, 2), 0.0])},
    ),
    P(
        "steer_branch_clip",
        steer_branch_clip,
        lambda r: {"controls": np.column_stack([r.normal(0, 0.5, 15), r.uniform(-0.8, 0.8, 15)])},
    ),
    P("limits_any", limits_any, lambda r: {"q": r.uniform(Q_LOW - 0.5, Q_HIGH + 0.5)}),
    P("odometry_math", odometry_math, lambda r: {"wheel_speeds": r.uniform(2, 12, (20, 2))}),
    P(
        "duration_from_data",
        duration_from_data,
        lambda r: {"q0": r.uniform(-2, 2, 6), "qf": r.uniform(-2, 2, 6)},
    ),
    P(
        "so3_log_trace_branch",
        so3_log_trace_branch,
        lambda r: {"omega_a": r.uniform(-1, 1, 3), "omega_b": r.uniform(-1, 1, 3)},
    ),
    P(
        "ufunc_list_rows",
        ufunc_list_rows,
        lambda r: {"setpoints": r.uniform(-1, 1, (25, 3)), "measured": r.uniform(-1, 1, (25, 3))},
    ),
    P(
        "mppi_item_temperature",
        mppi_item_temperature,
        lambda r: {
            "state": r.uniform(-1, 1, 3),
            "goal": r.uniform(-3, 3, 2),
            "noise": r.normal(0, 0.5, (16, 8, 2)),
        },
    ),
]


def main(names: list[str]) -> dict[str, dict[str, int]]:
    return harness.run_probe(names, PIPELINES, VARIANTS, "kinematics")


if __name__ == "__main__":
    main(sys.argv[1:])
