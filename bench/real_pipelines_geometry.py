"""3-D geometry and sensor pipelines from real projects x backends: right, loud, silent, crash?

Written in the idioms of public projects nobody tuned patchport to: a lidar box/rotation
helper (OpenPCDet / mmdetection3d), a KITTI-style lidar -> camera projection with
module-level calibration tables, a RangeNet++ spherical range image sorted by depth, a
PointPillars-style BEV grid, an Open3D-style depth -> point cloud in NumPy, monodepth2's
BackprojectDepth / Project3D torch modules with registered buffers, filterpy's Kalman
filter (``from numpy import dot``) and unscented sigma points (Cholesky), an AHRS
(Madgwick-style) quaternion filter, transforms3d's quaternion <-> matrix conversions,
stereo disparity -> 3-D, OpenCV camera calibration calls, IMU preintegration and a
log-odds occupancy grid. Each is traced once, exported with every backend and replayed on
fresh inputs against the plain code; classes are those of ``bench/real_pipelines.py``.

Run: python bench/real_pipelines_geometry.py [--variants] [pipeline-name ...]
(``--variants`` adds one-line changes of the idioms, which must stay loud or right.)
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import cv2
import numpy as np
import torch
from numpy import dot, eye, zeros
from numpy.linalg import inv

sys.path.insert(0, str(Path(__file__).resolve().parent))
import real_pipelines as harness  # noqa: E402

harness.HERE = str(Path(__file__).resolve())  # the user's lines are in this file


# ------------------------------------------------------------------ OpenPCDet boxes
def rotate_points_along_z(points, angle):
    """(B, N, 3+C) points turned by B angles about z (angle grows from x to y)."""
    cosa = np.cos(angle)
    sina = np.sin(angle)
    zeros_ = np.zeros(points.shape[0])
    ones = np.ones(points.shape[0])
    rot_matrix = (
        np.stack((cosa, sina, zeros_, -sina, cosa, zeros_, zeros_, zeros_, ones), axis=1)
        .reshape(-1, 3, 3)
        .astype(np.float32)
    )
    points_rot = np.matmul(points[:, :, 0:3], rot_matrix)
    return np.concatenate((points_rot, points[:, :, 3:]), axis=-1)


_BOX_TEMPLATE = (
    np.array(
        [
            [1, 1, -1],
            [1, -1, -1],
            [-1, -1, -1],
            [-1, 1, -1],
            [1, 1, 1],
            [1, -1, 1],
            [-1, -1, 1],
            [-1, 1, 1],
        ],
        dtype=np.float32,
    )
    / 2
)


def lidar_boxes(boxes3d, points):
    """Box corners (x, y, z, dx, dy, dz, heading) and the points in each box's frame."""
    corners3d = np.tile(boxes3d[:, None, 3:6], (1, 8, 1)) * _BOX_TEMPLATE[None, :, :]
    corners3d = rotate_points_along_z(corners3d.reshape(-1, 8, 3), boxes3d[:, 6])
    corners3d += boxes3d[:, None, 0:3]
    local = np.tile(points[None, :, :], (boxes3d.shape[0], 1, 1))
    local[:, :, 0:3] -= boxes3d[:, None, 0:3]
    local = rotate_points_along_z(local, -boxes3d[:, 6])
    half = boxes3d[:, None, 3:6] / 2
    inside = np.all(np.abs(local[..., :3]) <= half, axis=-1)
    return {"corners": corners3d, "in_box": inside.sum(axis=1).astype(np.int64)}


# ------------------------------------------------------------------ KITTI calibration
_P2 = np.array([[721.5, 0.0, 609.6, 44.86], [0.0, 721.5, 172.9, 0.2164], [0.0, 0.0, 1.0, 0.002746]])
_R0 = np.array([[0.9999, 0.0098, -0.0074], [-0.0099, 0.9999, -0.0043], [0.0074, 0.0044, 1.0]])
_V2C = np.array(
    [
        [0.0075, -0.9999, -0.0006, -0.0041],
        [0.0148, 0.0007, -0.9999, -0.0763],
        [0.9999, 0.0075, 0.0148, -0.2718],
    ]
)
_IMG_W, _IMG_H = 1242, 375


def cart2hom(pts_3d):
    n = pts_3d.shape[0]
    return np.hstack((pts_3d, np.ones((n, 1))))


def inverse_rigid_trans(tr):
    inv_tr = np.zeros_like(tr)
    inv_tr[0:3, 0:3] = np.transpose(tr[0:3, 0:3])
    inv_tr[0:3, 3] = np.dot(-np.transpose(tr[0:3, 0:3]), tr[0:3, 3])
    return inv_tr


def lidar_to_camera(velo, imu2velo):
    """Velodyne -> rect camera -> image, the FOV mask, and IMU points via a traced extrinsic."""
    pts_ref = np.dot(cart2hom(velo), np.transpose(_V2C))
    pts_rect = np.transpose(np.dot(_R0, np.transpose(pts_ref)))
    pts_2d = np.dot(cart2hom(pts_rect), np.transpose(_P2))
    pts_2d[:, 0] /= pts_2d[:, 2]
    pts_2d[:, 1] /= pts_2d[:, 2]
    uv = pts_2d[:, 0:2]
    fov = (uv[:, 0] < _IMG_W) & (uv[:, 0] >= 0) & (uv[:, 1] < _IMG_H) & (uv[:, 1] >= 0)
    fov = fov & (velo[:, 0] > 2.0)
    velo2imu = inverse_rigid_trans(imu2velo)
    pts_imu = np.dot(cart2hom(velo), np.transpose(velo2imu))
    back = pts_rect @ np.linalg.inv((_R0 @ _V2C[:, :3]).T)
    return {"uv": uv, "fov": fov, "imu": pts_imu, "back": back}


# ------------------------------------------------------------------ RangeNet++ range image
class LaserScan:
    """Spherical projection of a scan, farthest points written first (nearest wins)."""

    def __init__(self, H=16, W=64, fov_up=3.0, fov_down=-25.0):
        self.proj_H, self.proj_W = H, W
        self.proj_fov_up, self.proj_fov_down = fov_up, fov_down

    def reset(self):
        self.proj_range = np.full((self.proj_H, self.proj_W), -1, dtype=np.float32)
        self.proj_xyz = np.full((self.proj_H, self.proj_W, 3), -1, dtype=np.float32)
        self.proj_remission = np.full((self.proj_H, self.proj_W), -1, dtype=np.float32)
        self.proj_idx = np.full((self.proj_H, self.proj_W), -1, dtype=np.int32)

    def set_points(self, points, remissions):
        self.reset()
        self.points, self.remissions = points, remissions
        self.do_range_projection()

    def do_range_projection(self):
        fov_up = self.proj_fov_up / 180.0 * np.pi
        fov_down = self.proj_fov_down / 180.0 * np.pi
        fov = abs(fov_down) + abs(fov_up)
        depth = np.linalg.norm(self.points, 2, axis=1)
        scan_x, scan_y, scan_z = self.points[:, 0], self.points[:, 1], self.points[:, 2]
        yaw = -np.arctan2(scan_y, scan_x)
        pitch = np.arcsin(scan_z / depth)
        proj_x = 0.5 * (yaw / np.pi + 1.0)
        proj_y = 1.0 - (pitch + abs(fov_down)) / fov
        proj_x *= self.proj_W
        proj_y *= self.proj_H
        proj_x = np.floor(proj_x)
        proj_x = np.minimum(self.proj_W - 1, proj_x)
        proj_x = np.maximum(0, proj_x).astype(np.int32)
        proj_y = np.floor(proj_y)
        proj_y = np.minimum(self.proj_H - 1, proj_y)
        proj_y[proj_y < 0] = 0
        proj_y = np.maximum(0, proj_y).astype(np.int32)
        self.unproj_range = np.copy(depth)
        indices = np.arange(depth.shape[0])
        order = np.argsort(depth)[::-1]
        depth = depth[order]
        indices = indices[order]
        points = self.points[order]
        remission = self.remissions[order]
        proj_y = proj_y[order]
        proj_x = proj_x[order]
        self.proj_range[proj_y, proj_x] = depth
        self.proj_xyz[proj_y, proj_x] = points
        self.proj_remission[proj_y, proj_x] = remission
        self.proj_idx[proj_y, proj_x] = indices
        self.proj_mask = (self.proj_idx > 0).astype(np.int32)


def range_image(points, remissions):
    scan = LaserScan()
    scan.set_points(points, remissions)
    return {
        "range": scan.proj_range,
        "xyz": scan.proj_xyz,
        "remission": scan.proj_remission,
        "mask": scan.proj_mask,
    }


# ------------------------------------------------------------------ PointPillars BEV
_PC_RANGE = np.array([0.0, -8.0, -3.0, 16.0, 8.0, 1.0], dtype=np.float32)
_VOXEL = np.array([1.0, 1.0, 4.0], dtype=np.float32)
_GRID = np.round((_PC_RANGE[3:] - _PC_RANGE[:3]) / _VOXEL).astype(np.int64)


def pillar_bev(points):
    """Range mask, pillar coordinates, per-pillar counts / max height / mean intensity."""
    mask = (
        (points[:, 0] >= _PC_RANGE[0])
        & (points[:, 0] < _PC_RANGE[3])
        & (points[:, 1] >= _PC_RANGE[1])
        & (points[:, 1] < _PC_RANGE[4])
        & (points[:, 2] >= _PC_RANGE[2])
        & (points[:, 2] < _PC_RANGE[5])
    )
    coords = np.floor((points[:, :3] - _PC_RANGE[:3]) / _VOXEL).astype(np.int32)
    coords = np.clip(coords, 0, _GRID - 1)
    flat = coords[:, 1] * _GRID[0] + coords[:, 0]
    weight = mask.astype(np.float32)
    count = np.bincount(flat, weights=weight, minlength=_GRID[0] * _GRID[1])
    height = np.full(_GRID[0] * _GRID[1], -3.0, dtype=np.float32)
    np.maximum.at(height, flat, np.where(mask, points[:, 2], -3.0))
    intensity = np.zeros(_GRID[0] * _GRID[1], dtype=np.float32)
    np.add.at(intensity, flat, points[:, 3] * weight)
    mean = intensity / np.maximum(count, 1)
    bev = np.stack([count, height, mean], axis=0).reshape(3, _GRID[1], _GRID[0])
    return {"bev": bev.astype(np.float32), "coords": coords}


# ------------------------------------------------------------------ Open3D-style depth
_K_DEPTH = np.array([[30.0, 0.0, 15.5], [0.0, 30.0, 11.5], [0.0, 0.0, 1.0]])
_K_INV = np.linalg.inv(_K_DEPTH)


def depth_to_cloud(depth, pose):
    """Depth image -> camera rays -> world points with a traced 4x4 pose, normals by cross."""
    h, w = depth.shape
    u, v = np.meshgrid(np.arange(w), np.arange(h))
    pix = np.stack([u, v, np.ones_like(u)], axis=-1).reshape(-1, 3).astype(np.float64)
    rays = pix @ _K_INV.T
    pts = rays * depth.reshape(-1, 1)
    pts_h = np.hstack([pts, np.ones((len(pts), 1))])
    world = (pose @ pts_h.T).T[:, :3]
    grid = world.reshape(h, w, 3)
    dx = grid[:-1, 1:] - grid[:-1, :-1]
    dy = grid[1:, :-1] - grid[:-1, :-1]
    normals = np.cross(dx, dy)
    normals /= np.linalg.norm(normals, axis=-1, keepdims=True) + 1e-9
    cam_center = -pose[:3, :3].T @ pose[:3, 3]
    return {"world": world, "normals": normals, "center": cam_center}


# ------------------------------------------------------------------ monodepth2
def disp_to_depth(disp, min_depth, max_depth):
    min_disp = 1 / max_depth
    max_disp = 1 / min_depth
    scaled_disp = min_disp + (max_disp - min_disp) * disp
    return scaled_disp, 1 / scaled_disp


def rot_from_axisangle(vec):
    angle = torch.norm(vec, 2, 2, True)
    axis = vec / (angle + 1e-7)
    ca, sa = torch.cos(angle), torch.sin(angle)
    C = 1 - ca
    x = axis[..., 0].unsqueeze(1)
    y = axis[..., 1].unsqueeze(1)
    z = axis[..., 2].unsqueeze(1)
    xs, ys, zs = x * sa, y * sa, z * sa
    xC, yC, zC = x * C, y * C, z * C
    xyC, yzC, zxC = x * yC, y * zC, z * xC
    rot = torch.zeros((vec.shape[0], 4, 4)).to(device=vec.device)
    rot[:, 0, 0] = torch.squeeze(x * xC + ca)
    rot[:, 0, 1] = torch.squeeze(xyC - zs)
    rot[:, 0, 2] = torch.squeeze(zxC + ys)
    rot[:, 1, 0] = torch.squeeze(xyC + zs)
    rot[:, 1, 1] = torch.squeeze(y * yC + ca)
    rot[:, 1, 2] = torch.squeeze(yzC - xs)
    rot[:, 2, 0] = torch.squeeze(zxC - ys)
    rot[:, 2, 1] = torch.squeeze(yzC + xs)
    rot[:, 2, 2] = torch.squeeze(z * zC + ca)
    rot[:, 3, 3] = 1
    return rot


def get_translation_matrix(translation_vector):
    T = torch.zeros(translation_vector.shape[0], 4, 4).to(device=translation_vector.device)
    t = translation_vector.contiguous().view(-1, 3, 1)
    T[:, 0, 0] = 1
    T[:, 1, 1] = 1
    T[:, 2, 2] = 1
    T[:, 3, 3] = 1
    T[:, :3, 3, None] = t
    return T


def transformation_from_parameters(axisangle, translation, invert=False):
    R = rot_from_axisangle(axisangle)
    t = translation.clone()
    if invert:
        R = R.transpose(1, 2)
        t *= -1
    T = get_translation_matrix(t)
    return torch.matmul(R, T) if invert else torch.matmul(T, R)


class BackprojectDepth(torch.nn.Module):
    def __init__(self, batch_size, height, width):
        super().__init__()
        self.batch_size, self.height, self.width = batch_size, height, width
        meshgrid = np.meshgrid(range(self.width), range(self.height), indexing="xy")
        id_coords = np.stack(meshgrid, axis=0).astype(np.float32)
        self.register_buffer("id_coords", torch.from_numpy(id_coords))
        self.register_buffer("ones", torch.ones(self.batch_size, 1, self.height * self.width))
        pix = torch.unsqueeze(
            torch.stack([self.id_coords[0].view(-1), self.id_coords[1].view(-1)], 0), 0
        )
        pix = pix.repeat(batch_size, 1, 1)
        self.register_buffer("pix_coords", torch.cat([pix, self.ones], 1))

    def forward(self, depth, inv_K):
        cam_points = torch.matmul(inv_K[:, :3, :3], self.pix_coords)
        cam_points = depth.view(self.batch_size, 1, -1) * cam_points
        return torch.cat([cam_points, self.ones], 1)


class Project3D(torch.nn.Module):
    def __init__(self, batch_size, height, width, eps=1e-7):
        super().__init__()
        self.batch_size, self.height, self.width, self.eps = batch_size, height, width, eps

    def forward(self, points, K, T):
        P = torch.matmul(K, T)[:, :3, :]
        cam_points = torch.matmul(P, points)
        pix_coords = cam_points[:, :2, :] / (cam_points[:, 2, :].unsqueeze(1) + self.eps)
        pix_coords = pix_coords.view(self.batch_size, 2, self.height, self.width)
        pix_coords = pix_coords.permute(0, 2, 3, 1)
        pix_coords[..., 0] /= self.width - 1
        pix_coords[..., 1] /= self.height - 1
        return (pix_coords - 0.5) * 2


_BACKPROJECT = BackprojectDepth(1, 12, 16)
_PROJECT = Project3D(1, 12, 16)


def monodepth_warp(disp, axisangle, translation, K):
    """Disparity -> depth, pose from axis-angle, back-project and re-project (view synthesis)."""
    K4 = np.eye(4, dtype=np.float32)
    K4[:3, :3] = K
    inv_K = np.linalg.pinv(K4)
    _, depth = disp_to_depth(torch.from_numpy(disp), 0.1, 100.0)
    T = transformation_from_parameters(
        torch.from_numpy(axisangle), torch.from_numpy(translation), invert=True
    )
    cam = _BACKPROJECT(depth, torch.from_numpy(inv_K)[None])
    pix = _PROJECT(cam, torch.from_numpy(K4)[None], T)
    return {"pix_coords": pix.numpy(), "T": T.numpy()}


# ------------------------------------------------------------------ filterpy Kalman
class KalmanFilter:
    """filterpy's linear filter: predict / update with ``dot``, Joseph-form covariance."""

    def __init__(self, dim_x, dim_z):
        self.dim_x, self.dim_z = dim_x, dim_z
        self.x = zeros((dim_x, 1))
        self.P = eye(dim_x)
        self.Q = eye(dim_x)
        self.F = eye(dim_x)
        self.H = zeros((dim_z, dim_x))
        self.R = eye(dim_z)
        self._I = np.eye(dim_x)
        self.inv = np.linalg.inv

    def predict(self):
        self.x = dot(self.F, self.x)
        self.P = dot(dot(self.F, self.P), self.F.T) + self.Q
        self.x_prior, self.P_prior = self.x.copy(), self.P.copy()

    def update(self, z):
        z = np.atleast_2d(z)
        if z.shape[1] == self.dim_z:
            z = z.T
        self.y = z - dot(self.H, self.x)
        PHT = dot(self.P, self.H.T)
        self.S = dot(self.H, PHT) + self.R
        self.SI = self.inv(self.S)
        self.K = dot(PHT, self.SI)
        self.x = self.x + dot(self.K, self.y)
        I_KH = self._I - dot(self.K, self.H)
        self.P = dot(dot(I_KH, self.P), I_KH.T) + dot(dot(self.K, self.R), self.K.T)
        self.x_post, self.P_post = self.x.copy(), self.P.copy()


def kalman_track(zs, x0):
    """Constant-velocity 2-D tracker over a window of measurements."""
    dt = 0.1
    kf = KalmanFilter(dim_x=4, dim_z=2)
    kf.x = x0.reshape(4, 1)
    kf.F = np.array([[1, dt, 0, 0], [0, 1, 0, 0], [0, 0, 1, dt], [0, 0, 0, 1]], dtype=float)
    kf.H = np.array([[1.0, 0, 0, 0], [0, 0, 1.0, 0]])
    kf.P *= 10.0
    kf.R *= 0.25
    kf.Q = np.diag([0.01, 0.1, 0.01, 0.1])
    xs = np.zeros((len(zs), 4))
    for i, z in enumerate(zs):
        kf.predict()
        kf.update(z)
        xs[i] = kf.x[:, 0]
    return {"xs": xs, "P": kf.P}


# ------------------------------------------------------------------ filterpy UKF
class MerweScaledSigmaPoints:
    def __init__(self, n, alpha, beta, kappa):
        self.n, self.alpha, self.beta, self.kappa = n, alpha, beta, kappa
        self.sqrt = np.linalg.cholesky
        self.subtract = np.subtract

    def sigma_points(self, x, P):
        n = self.n
        lambda_ = self.alpha**2 * (n + self.kappa) - n
        U = self.sqrt((lambda_ + n) * P).T  # numpy's factor is lower: rows of U'
        sigmas = np.zeros((2 * n + 1, n))
        sigmas[0] = x
        for k in range(n):
            sigmas[k + 1] = self.subtract(x, -U[k])
            sigmas[n + k + 1] = self.subtract(x, U[k])
        return sigmas

    def weights(self):
        n = self.n
        lambda_ = self.alpha**2 * (n + self.kappa) - n
        c = 0.5 / (n + lambda_)
        Wc = np.full(2 * n + 1, c)
        Wm = np.full(2 * n + 1, c)
        Wc[0] = lambda_ / (n + lambda_) + (1 - self.alpha**2 + self.beta)
        Wm[0] = lambda_ / (n + lambda_)
        return Wm, Wc


def unscented_transform(sigmas, Wm, Wc, noise_cov):
    x = np.dot(Wm, sigmas)
    y = sigmas - x[np.newaxis, :]
    P = np.dot(y.T, np.dot(np.diag(Wc), y)) + noise_cov
    return x, P


def ukf_step(x, P, z):
    """One UKF predict/update of a range-bearing tracker (nonlinear fx, hx)."""
    points = MerweScaledSigmaPoints(4, alpha=0.3, beta=2.0, kappa=0.0)
    Wm, Wc = points.weights()
    dt = 0.1
    sigmas = points.sigma_points(x, P)
    sigmas_f = np.zeros_like(sigmas)
    for i, s in enumerate(sigmas):
        sigmas_f[i] = [s[0] + s[1] * dt, s[1], s[2] + s[3] * dt, s[3]]
    x_prior, P_prior = unscented_transform(sigmas_f, Wm, Wc, np.eye(4) * 0.01)
    sigmas_h = np.column_stack(
        [np.hypot(sigmas_f[:, 0], sigmas_f[:, 2]), np.arctan2(sigmas_f[:, 2], sigmas_f[:, 0])]
    )
    zp, S = unscented_transform(sigmas_h, Wm, Wc, np.diag([0.1, 0.01]))
    Pxz = np.zeros((4, 2))
    for i in range(sigmas_f.shape[0]):
        Pxz += Wc[i] * np.outer(sigmas_f[i] - x_prior, sigmas_h[i] - zp)
    K = dot(Pxz, inv(S))
    x_post = x_prior + dot(K, z - zp)
    P_post = P_prior - dot(K, dot(S, K.T))
    return {"x": x_post, "P": P_post}


# ------------------------------------------------------------------ AHRS (Madgwick)
def q_prod(p, q):
    pq = np.zeros(4)
    pq[0] = p[0] * q[0] - p[1] * q[1] - p[2] * q[2] - p[3] * q[3]
    pq[1] = p[0] * q[1] + p[1] * q[0] + p[2] * q[3] - p[3] * q[2]
    pq[2] = p[0] * q[2] - p[1] * q[3] + p[2] * q[0] + p[3] * q[1]
    pq[3] = p[0] * q[3] + p[1] * q[2] - p[2] * q[1] + p[3] * q[0]
    return pq


class Madgwick:
    def __init__(self, gain=0.033, frequency=100.0):
        self.gain, self.Dt = gain, 1.0 / frequency

    def updateIMU(self, q, gyr, acc):
        if gyr is None or not np.linalg.norm(gyr) > 0:
            return q
        qDot = 0.5 * q_prod(q, [0, *gyr])
        a_norm = np.linalg.norm(acc)
        if a_norm > 0:
            a = acc / a_norm
            qw, qx, qy, qz = q / np.linalg.norm(q)
            f = np.array(
                [
                    2.0 * (qx * qz - qw * qy) - a[0],
                    2.0 * (qw * qx + qy * qz) - a[1],
                    2.0 * (0.5 - qx**2 - qy**2) - a[2],
                ]
            )
            J = np.array(
                [
                    [-2.0 * qy, 2.0 * qz, -2.0 * qw, 2.0 * qx],
                    [2.0 * qx, 2.0 * qw, 2.0 * qz, 2.0 * qy],
                    [0.0, -4.0 * qx, -4.0 * qy, 0.0],
                ]
            )
            gradient = J.T @ f
            gradient /= np.linalg.norm(gradient)
            qDot -= self.gain * gradient
        q = q + qDot * self.Dt
        q /= np.linalg.norm(q)
        return q


def madgwick_window(gyr, acc):
    """Orientation over an IMU window, one quaternion per sample (ahrs' Q[t] loop)."""
    filt = Madgwick()
    Q = np.zeros((len(gyr), 4))
    Q[0] = np.array([1.0, 0.0, 0.0, 0.0])
    for t in range(1, len(gyr)):
        Q[t] = filt.updateIMU(Q[t - 1], gyr[t], acc[t])
    return {"Q": Q}


# ------------------------------------------------------------------ transforms3d
def quat2mat(q):
    w, x, y, z = q
    Nq = w * w + x * x + y * y + z * z
    s = 2.0 / Nq
    X, Y, Z = x * s, y * s, z * s
    wX, wY, wZ = w * X, w * Y, w * Z
    xX, xY, xZ = x * X, x * Y, x * Z
    yY, yZ, zZ = y * Y, y * Z, z * Z
    return np.array(
        [
            [1.0 - (yY + zZ), xY - wZ, xZ + wY],
            [xY + wZ, 1.0 - (xX + zZ), yZ - wX],
            [xZ - wY, yZ + wX, 1.0 - (xX + yY)],
        ]
    )


def mat2quat(M):
    Qxx, Qyx, Qzx, Qxy, Qyy, Qzy, Qxz, Qyz, Qzz = M.flat
    K = (
        np.array(
            [
                [Qxx - Qyy - Qzz, 0, 0, 0],
                [Qyx + Qxy, Qyy - Qxx - Qzz, 0, 0],
                [Qzx + Qxz, Qzy + Qyz, Qzz - Qxx - Qyy, 0],
                [Qyz - Qzy, Qzx - Qxz, Qxy - Qyx, Qxx + Qyy + Qzz],
            ]
        )
        / 3.0
    )
    vals, vecs = np.linalg.eigh(K)
    q = vecs[[3, 0, 1, 2], np.argmax(vals)]
    if q[0] < 0:
        q *= -1
    return q


def mat2euler_zyx(M):
    """Euler ZYX (yaw, pitch, roll) from a rotation matrix, vectorised with arctan2."""
    cy = np.sqrt(M[0, 0] * M[0, 0] + M[1, 0] * M[1, 0])
    yaw = np.arctan2(M[1, 0], M[0, 0])
    pitch = np.arctan2(-M[2, 0], cy)
    roll = np.arctan2(M[2, 1], M[2, 2])
    return np.array([yaw, pitch, roll])


def rotations(quat, R_in):
    """quat -> matrix -> euler, and matrix -> quaternion (eigenvector method)."""
    R = quat2mat(quat)
    return {"R": R, "euler": mat2euler_zyx(R), "q": mat2quat(R_in)}


# ------------------------------------------------------------------ stereo
_FX_ST, _BASELINE = 40.0, 0.12
_Q_STEREO = np.float32(
    [[1, 0, 0, -15.5], [0, 1, 0, -11.5], [0, 0, 0, _FX_ST], [0, 0, -1 / _BASELINE, 0]]
)


def stereo_depth(disparity):
    """SGBM-style fixed-point disparity -> metres, validity mask, reprojectImageTo3D cloud."""
    disp = disparity.astype(np.float32) / 16.0
    valid = disp > 0.5
    depth = np.where(valid, _FX_ST * _BASELINE / np.maximum(disp, 0.5), 0.0).astype(np.float32)
    xyz = cv2.reprojectImageTo3D(disp, _Q_STEREO)
    xyz[~valid] = 0
    return {"depth": depth, "xyz": xyz}


# ------------------------------------------------------------------ camera calibration
_CAM_K = np.array([[500.0, 0.0, 320.0], [0.0, 500.0, 240.0], [0.0, 0.0, 1.0]])
_CAM_DIST = np.array([-0.12, 0.03, 0.001, -0.0005, 0.0])
_BOARD = np.zeros((4 * 3, 3), np.float32)
_BOARD[:, :2] = np.mgrid[0:4, 0:3].T.reshape(-1, 2) * 0.05


def calibration(rvec, tvec, pixels):
    """Pose -> rotation matrix, project a board, undistort detected pixels to rays."""
    R, _ = cv2.Rodrigues(rvec)
    projected, _ = cv2.projectPoints(_BOARD, rvec, tvec, _CAM_K, _CAM_DIST)
    camera_pts = (R @ _BOARD.T.astype(np.float64)).T + tvec.reshape(1, 3)
    rays = cv2.undistortPoints(pixels.reshape(-1, 1, 2), _CAM_K, _CAM_DIST)
    rays_h = np.concatenate([rays.reshape(-1, 2), np.ones((len(rays), 1))], axis=1)
    rays_h /= np.linalg.norm(rays_h, axis=1, keepdims=True)
    return {"R": R, "uv": projected.reshape(-1, 2), "cam": camera_pts, "rays": rays_h}


# ------------------------------------------------------------------ IMU preintegration
def skew(v):
    return np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])


def so3_exp(omega):
    theta = np.linalg.norm(omega)
    axis = omega / (theta + 1e-12)
    K = skew(axis)
    return np.eye(3) + np.sin(theta) * K + (1 - np.cos(theta)) * (K @ K)


class Preintegrator:
    """Forster-style deltas: dR, dv, dp accumulated with in-place updates."""

    def __init__(self, bg, ba):
        self.bg, self.ba = bg, ba
        self.dR = np.eye(3)
        self.dv = np.zeros(3)
        self.dp = np.zeros(3)
        self.dt_sum = 0.0

    def integrate(self, gyr, acc, dt):
        w = gyr - self.bg
        a = acc - self.ba
        self.dp += self.dv * dt + 0.5 * self.dR @ a * dt * dt
        self.dv += self.dR @ a * dt
        self.dR = self.dR @ so3_exp(w * dt)
        self.dt_sum += dt


def imu_preintegration(gyr, acc):
    pim = Preintegrator(np.array([0.001, -0.002, 0.0005]), np.array([0.02, 0.01, -0.03]))
    for g, a in zip(gyr, acc):
        pim.integrate(g, a, 0.005)
    return {"dR": pim.dR, "dv": pim.dv, "dp": pim.dp}


# ------------------------------------------------------------------ occupancy grid
_ANGLES = np.linspace(-np.pi / 2, np.pi / 2, 32)
_RES, _SIZE = 0.25, 24
_L_OCC, _L_FREE = 0.85, -0.4


def occupancy_grid(ranges, pose):
    """2-D scan endpoints into a log-odds grid (free along the beam at half range)."""
    x, y, theta = pose
    ex = x + ranges * np.cos(theta + _ANGLES)
    ey = y + ranges * np.sin(theta + _ANGLES)
    ix = np.clip((ex / _RES + _SIZE // 2).astype(int), 0, _SIZE - 1)
    iy = np.clip((ey / _RES + _SIZE // 2).astype(int), 0, _SIZE - 1)
    fx = np.clip(((x + ex) / 2 / _RES + _SIZE // 2).astype(int), 0, _SIZE - 1)
    fy = np.clip(((y + ey) / 2 / _RES + _SIZE // 2).astype(int), 0, _SIZE - 1)
    log_odds = np.zeros((_SIZE, _SIZE))
    log_odds[fy, fx] += _L_FREE
    np.add.at(log_odds, (iy, ix), _L_OCC)
    log_odds = np.clip(log_odds, -4.0, 4.0)
    prob = 1.0 - 1.0 / (1.0 + np.exp(log_odds))
    return {"prob": prob.astype(np.float32), "hits": (log_odds > 0).sum(axis=0)}


# ------------------------------------------------------------------ inputs
def _r(shape, rng, low=-1.0, high=1.0, dtype=np.float32):
    return rng.uniform(low, high, size=shape).astype(dtype)


def _rotation(rng):
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    return quat2mat(q), q


def _pose(rng):
    R, _ = _rotation(rng)
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = rng.uniform(-1, 1, 3)
    return T


def _boxes(r):
    b = np.zeros((3, 7), np.float32)
    b[:, :3] = _r((3, 3), r, -5, 5)
    b[:, 3:6] = _r((3, 3), r, 1, 4)
    b[:, 6] = _r(3, r, -3, 3)
    return b


def _scan(r, n=200):
    az = r.uniform(-np.pi, np.pi, n)
    el = r.uniform(-0.4, 0.04, n)
    dist = r.uniform(2, 30, n)
    pts = np.stack(
        [dist * np.cos(el) * np.cos(az), dist * np.cos(el) * np.sin(az), dist * np.sin(el)], 1
    )
    return pts.astype(np.float32)


def _imu(r, n=20):
    gyr = r.normal(0, 0.5, (n, 3))
    acc = r.normal(0, 0.3, (n, 3)) + np.array([0, 0, 9.81])
    return gyr, acc


def _madgwick_inputs(r):
    gyr, acc = _imu(r)
    return {"gyr": gyr, "acc": acc}


def _pixels(r):
    return r.uniform([50, 40], [590, 440], size=(10, 2)).astype(np.float64)


def _ukf(r):
    A = r.normal(size=(4, 4)) * 0.3
    return {
        "x": r.uniform([5, -1, 5, -1], [10, 1, 10, 1]),
        "P": A @ A.T + np.eye(4) * 0.5,
        "z": r.uniform([7, 0.5], [14, 1.0]),
    }


P = harness.Pipeline
PIPELINES = [
    P(
        "lidar_boxes",
        lidar_boxes,
        lambda r: {"boxes3d": _boxes(r), "points": _r((64, 4), r, -6, 6)},
    ),
    P(
        "lidar_to_camera",
        lidar_to_camera,
        lambda r: {"velo": _r((128, 3), r, -20, 40).astype(np.float64), "imu2velo": _pose(r)[:3]},
    ),
    P(
        "range_image",
        range_image,
        lambda r: {"points": _scan(r), "remissions": _r(200, r, 0, 1)},
    ),
    P(
        "pillar_bev",
        pillar_bev,
        lambda r: {"points": np.column_stack([_r((256, 3), r, -2, 18), _r(256, r, 0, 1)])},
    ),
    P(
        "depth_to_cloud",
        depth_to_cloud,
        lambda r: {"depth": r.uniform(0.5, 4, (24, 32)), "pose": _pose(r)},
    ),
    P(
        "monodepth_warp",
        monodepth_warp,
        lambda r: {
            "disp": _r((1, 1, 12, 16), r, 0.01, 1),
            "axisangle": _r((1, 1, 3), r, -0.1, 0.1),
            "translation": _r((1, 1, 3), r, -0.2, 0.2),
            "K": np.array([[12.0, 0, 7.5], [0, 12.0, 5.5], [0, 0, 1]], np.float32)
            + np.diag(_r(3, r, -1, 1) * [1, 1, 0]).astype(np.float32),
        },
    ),
    P(
        "kalman_track",
        kalman_track,
        lambda r: {"zs": np.cumsum(r.normal(0, 0.3, (12, 2)), 0), "x0": r.normal(size=4)},
    ),
    P("ukf_step", ukf_step, _ukf),
    P("madgwick_window", madgwick_window, _madgwick_inputs),
    P(
        "rotations",
        rotations,
        lambda r: {"quat": _rotation(r)[1], "R_in": _rotation(r)[0]},
    ),
    P(
        "stereo_depth",
        stereo_depth,
        lambda r: {"disparity": r.integers(-16, 64 * 16, size=(24, 32)).astype(np.int16)},
    ),
    P(
        "calibration",
        calibration,
        lambda r: {
            "rvec": r.uniform(-0.5, 0.5, (3, 1)),
            "tvec": r.uniform([-0.1, -0.1, 0.5], [0.1, 0.1, 1.5]).reshape(3, 1),
            "pixels": _pixels(r),
        },
    ),
    P(
        "imu_preintegration",
        imu_preintegration,
        lambda r: dict(zip(("gyr", "acc"), _imu(r))),
    ),
    P(
        "occupancy_grid",
        occupancy_grid,
        lambda r: {
            "ranges": r.uniform(0.5, 2.8, 32),
            "pose": r.uniform([-0.5, -0.5, -1], [0.5, 0.5, 1]),
        },
    ),
]


# ------------------------------------------------------------------ one-line variants
# Each changes one line of an idiom above; the answer must stay loud or right, never silent.
def fov_points(velo, imu2velo):
    """lidar_to_camera returning the points inside the image (data-dependent count)."""
    out = lidar_to_camera(velo, imu2velo)
    return {"inside": velo[out["fov"]]}


def valid_cloud(depth, pose):
    """depth_to_cloud keeping only the pixels with depth (Open3D's depth_trunc mask)."""
    world = depth_to_cloud(depth, pose)["world"]
    return {"valid": world[depth.reshape(-1) < 3.0]}


def unique_pillars(points):
    """pillar_bev's coordinates made unique (hard voxelisation's np.unique)."""
    coords = pillar_bev(points)["coords"]
    return {"pillars": np.unique(coords[:, :2], axis=0)}


def mat2quat_branches(R_in):
    """The trace-branch rotation-to-quaternion (Shepperd), as transforms3d's old code."""
    m = R_in
    trace = m[0, 0] + m[1, 1] + m[2, 2]
    if trace > 0:
        s = 0.5 / np.sqrt(trace + 1.0)
        q = np.array(
            [0.25 / s, (m[2, 1] - m[1, 2]) * s, (m[0, 2] - m[2, 0]) * s, (m[1, 0] - m[0, 1]) * s]
        )
    else:
        s = 2.0 * np.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2])
        q = np.array(
            [(m[2, 1] - m[1, 2]) / s, 0.25 * s, (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s]
        )
    return {"q": q}


def mat2quat_where(R_in):
    """mat2quat with its sign flip written as np.where (eigh still LAPACK's)."""
    Qxx, Qyx, Qzx, Qxy, Qyy, Qzy, Qxz, Qyz, Qzz = R_in.flat
    K = (
        np.array(
            [
                [Qxx - Qyy - Qzz, 0, 0, 0],
                [Qyx + Qxy, Qyy - Qxx - Qzz, 0, 0],
                [Qzx + Qxz, Qzy + Qyz, Qzz - Qxx - Qyy, 0],
                [Qyz - Qzy, Qzx - Qxz, Qxy - Qyx, Qxx + Qyy + Qzz],
            ]
        )
        / 3.0
    )
    vals, vecs = np.linalg.eigh(K)
    q = vecs[[3, 0, 1, 2], np.argmax(vals)]
    return {"q": np.where(q[0] < 0, -q, q)}


def kalman_solve(zs, x0):
    """kalman_track with the gain from np.linalg.solve instead of inv."""
    kf = KalmanFilter(dim_x=4, dim_z=2)
    kf.inv = lambda S: np.linalg.solve(S, np.eye(len(S)))
    kf.x = x0.reshape(4, 1)
    kf.F = np.array([[1, 0.1, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0.1], [0, 0, 0, 1]])
    kf.H = np.array([[1.0, 0, 0, 0], [0, 0, 1.0, 0]])
    for z in zs:
        kf.predict()
        kf.update(z)
    return {"x": kf.x, "P": kf.P}


def monodepth_inverse(disp, axisangle, translation, K):
    """monodepth_warp with torch.inverse of the intrinsics instead of np.linalg.pinv."""
    K4 = torch.eye(4)
    K4[:3, :3] = torch.from_numpy(K)
    inv_K = torch.inverse(K4)
    _, depth = disp_to_depth(torch.from_numpy(disp), 0.1, 100.0)
    cam = _BACKPROJECT(depth, inv_K[None])
    return {"cam": cam.numpy()}


def spectral_norm(R_in):
    """The matrix 2-norm (largest singular value) as a conditioning check."""
    return {"norm": np.linalg.norm(R_in - np.eye(3), ord=2), "fro": np.linalg.norm(R_in, "fro")}


def madgwick_unguarded(gyr, acc):
    """madgwick_window without ahrs' norm > 0 guards."""
    q = np.array([1.0, 0.0, 0.0, 0.0])
    for g, a in zip(gyr, acc):
        qDot = 0.5 * q_prod(q, [0, *g])
        a = a / np.linalg.norm(a)
        qw, qx, qy, qz = q
        f = np.array(
            [
                2.0 * (qx * qz - qw * qy) - a[0],
                2.0 * (qw * qx + qy * qz) - a[1],
                2.0 * (0.5 - qx**2 - qy**2) - a[2],
            ]
        )
        J = np.array(
            [
                [-2.0 * qy, 2.0 * qz, -2.0 * qw, 2.0 * qx],
                [2.0 * qx, 2.0 * qw, 2.0 * qz, 2.0 * qy],
                [0.0, -4.0 * qx, -4.0 * qy, 0.0],
            ]
        )
        gradient = J.T @ f
        q = q + (qDot - 0.033 * gradient / np.linalg.norm(gradient)) * 0.01
        q /= np.linalg.norm(q)
    return {"q": q}


def occupancy_fancy_add(ranges, pose):
    """occupancy_grid with the hits added by fancy-index += (NumPy: once per cell)."""
    x, y, theta = pose
    ix = np.clip(
        (x / _RES + ranges * np.cos(theta + _ANGLES) / _RES + _SIZE // 2).astype(int), 0, _SIZE - 1
    )
    iy = np.clip(
        (y / _RES + ranges * np.sin(theta + _ANGLES) / _RES + _SIZE // 2).astype(int), 0, _SIZE - 1
    )
    log_odds = np.zeros((_SIZE, _SIZE))
    log_odds[iy, ix] += _L_OCC
    return {"log_odds": log_odds}


def undistort_image(image):
    """A camera front end undistorting a whole frame (cv2.undistort)."""
    return {"rectified": cv2.undistort(image, _K_DEPTH, np.array([-0.1, 0.01, 0, 0, 0]))}


_pose_in = {
    "velo": lambda r: _r((128, 3), r, -20, 40).astype(np.float64),
    "imu2velo": lambda r: _pose(r)[:3],
}
VARIANTS = [
    P("fov_points", fov_points, lambda r: {k: f(r) for k, f in _pose_in.items()}),
    P(
        "valid_cloud",
        valid_cloud,
        lambda r: {"depth": r.uniform(0.5, 4, (24, 32)), "pose": _pose(r)},
    ),
    P("unique_pillars", unique_pillars, PIPELINES[3].make_inputs),
    P("mat2quat_branches", mat2quat_branches, lambda r: {"R_in": _rotation(r)[0]}),
    P("mat2quat_where", mat2quat_where, lambda r: {"R_in": _rotation(r)[0]}),
    P("kalman_solve", kalman_solve, PIPELINES[6].make_inputs),
    P("monodepth_inverse", monodepth_inverse, PIPELINES[5].make_inputs),
    P("spectral_norm", spectral_norm, lambda r: {"R_in": _rotation(r)[0]}),
    P("madgwick_unguarded", madgwick_unguarded, _madgwick_inputs),
    P("occupancy_fancy_add", occupancy_fancy_add, PIPELINES[-1].make_inputs),
    P(
        "undistort_image",
        undistort_image,
        lambda r: {"image": r.integers(0, 256, (24, 32, 3)).astype(np.uint8)},
    ),
]


def main(names: list[str]) -> dict[str, dict[str, int]]:
    every = PIPELINES + VARIANTS if "--variants" in names else PIPELINES
    names = [n for n in names if n != "--variants"]
    chosen = [p for p in every if not names or p.name in names]
    return harness.run_table(chosen, "geometry", details=True)


def creation_cost(n: int = 20_000) -> None:
    """``torch.zeros`` from user code: plain, in an idle session, while a node is traced."""
    import timeit

    import patchport

    def user() -> torch.Tensor:
        return torch.zeros(3)

    def best() -> float:
        return min(timeit.repeat(user, number=n, repeat=5)) / n * 1e9

    plain = best()
    with patchport.session("cost", save_path=tempfile.mkdtemp()):
        idle = best()
        x = patchport.annotate.input_tensors("n", {"x": np.ones(3)})
        tracing = best()
        patchport.annotate.output_tensors("n", {"y": x + 1})
    print(
        f"torch.zeros from user code: {plain:.0f} ns plain, {idle:.0f} ns in an idle session, "
        f"{tracing:.0f} ns while a node is traced"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
    creation_cost()
