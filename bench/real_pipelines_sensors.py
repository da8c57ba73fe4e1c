"""Sensor pipelines from public projects x backends: right, loud, silent or crash?

Pipelines in the idioms of public code in domains the other probes do not cover (nobody
tuned patchport to them): event cameras (a voxel grid with bilinear time weights built by
``np.add.at``, the same in torch with ``index_put_(accumulate=True)``, polarity histograms
by ``np.bincount``, a time surface by ``np.maximum.at``), multi-object tracking (a SORT
IoU matrix by broadcasting, the ByteTrack Kalman filter's vectorised predict / project /
update, box format conversions and score gates), LiDAR range images (the spherical
projection of RangeNet-style loaders with a far-to-near scatter, ground removal by
height), pose (heatmap peaks by ``np.unravel_index``, sub-pixel refinement from neighbour
differences, affine back-projection to the image), audio (a log-mel front end on
``torch.stft``, an energy VAD with hangover, resampling by ``np.interp``), and optical
flow / stereo (backward warping by a flow field, stereo padding to a multiple of the
network stride, disparity to depth). Each is traced once, exported with every backend and
replayed on fresh inputs against the plain code; the classes are those of
``bench/real_pipelines.py`` (whose harness is reused).

Run: python bench/real_pipelines_sensors.py [--variants] [pipeline-name ...]
(``--variants`` runs one-line changes of the data-dependent idioms instead; each must be
right or loud, never silent.)
"""

from __future__ import annotations

import sys
from pathlib import Path

import cv2
import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
import real_pipelines as harness  # noqa: E402

harness.HERE = str(Path(__file__).resolve())  # the user's lines are in this file
torch.manual_seed(0)

H_EV, W_EV, BINS = 12, 16, 4


# ------------------------------------------------------------------ event cameras
def events_to_voxel(events):
    """(t, x, y, p) rows to a (bins, H, W) grid, each event split between two time bins."""
    grid = np.zeros((BINS, H_EV, W_EV), np.float32).ravel()
    first, last = events[0, 0], events[-1, 0]
    span = last - first
    if span == 0:
        span = 1.0
    ts = (BINS - 1) * (events[:, 0] - first) / span
    xs = events[:, 1].astype(np.int64)
    ys = events[:, 2].astype(np.int64)
    pol = events[:, 3].copy()
    pol[pol == 0] = -1
    t_int = ts.astype(np.int64)
    frac = ts - t_int
    left = pol * (1.0 - frac)
    right = pol * frac
    ok = t_int < BINS
    np.add.at(grid, xs[ok] + ys[ok] * W_EV + t_int[ok] * W_EV * H_EV, left[ok])
    ok = t_int + 1 < BINS
    np.add.at(grid, xs[ok] + ys[ok] * W_EV + (t_int[ok] + 1) * W_EV * H_EV, right[ok])
    return {"voxel": grid.reshape(BINS, H_EV, W_EV)}


_EVENT_NET = torch.nn.Sequential(
    torch.nn.Conv2d(BINS, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(8, 2, 1)
).eval()


def event_voxel_torch(xs, ys, ts, ps):
    """Events as tensors: normalised time, triangle weights per bin, index_put_ accumulate,
    then a small recurrent-reconstruction-style conv head."""
    xs, ys = torch.from_numpy(xs).long(), torch.from_numpy(ys).long()
    ts, ps = torch.from_numpy(ts), torch.from_numpy(ps)
    ts = (ts - ts[0]) / (ts[-1] - ts[0] + 1e-9) * (BINS - 1)
    zeros = torch.zeros_like(ts)
    planes = []
    for b in range(BINS):
        weight = torch.max(zeros, 1.0 - torch.abs(ts - b))
        img = torch.zeros(H_EV, W_EV)
        img.index_put_((ys, xs), ps * weight, accumulate=True)
        planes.append(img)
    voxel = torch.stack(planes)
    with torch.no_grad():
        out = _EVENT_NET(voxel[None])
    return {"voxel": voxel.numpy(), "out": out.numpy()}


def event_histogram(xs, ys, ps):
    """Two-channel count image (positive / negative) by bincount of linear indices."""
    idx = ys.astype(np.int64) * W_EV + xs.astype(np.int64)
    pos = np.bincount(idx[ps > 0], minlength=H_EV * W_EV)
    neg = np.bincount(idx, weights=(ps <= 0).astype(np.float64), minlength=H_EV * W_EV)
    hist = np.stack([pos.reshape(H_EV, W_EV), neg.reshape(H_EV, W_EV)]).astype(np.float32)
    return {"hist": hist}


def time_surface(xs, ys, ts, ps):
    """Latest timestamp per pixel and polarity (np.maximum.at), exponential decay."""
    surface = np.zeros((2, H_EV, W_EV))
    channel = (ps > 0).astype(np.intp)
    np.maximum.at(surface, (channel, ys.astype(np.intp), xs.astype(np.intp)), ts)
    t_ref = ts.max()
    decayed = np.where(surface > 0, np.exp(-(t_ref - surface) / 0.05), 0.0)
    return {"surface": decayed.astype(np.float32)}


# ------------------------------------------------------------------ multi-object tracking
def tlwh_to_xyah(tlwh):
    ret = np.asarray(tlwh).copy()
    ret[..., :2] += ret[..., 2:] / 2
    ret[..., 2] /= ret[..., 3]
    return ret


def xyah_to_tlbr(xyah):
    ret = xyah.copy()
    ret[..., 2] *= ret[..., 3]
    ret[..., :2] -= ret[..., 2:] / 2
    ret[..., 2:] += ret[..., :2]
    return ret


def iou_matrix(boxes_a, boxes_b):
    """Pairwise IoU of tlbr boxes by broadcasting (SORT's iou_batch)."""
    b = np.expand_dims(boxes_b, 0)
    a = np.expand_dims(boxes_a, 1)
    xx1 = np.maximum(a[..., 0], b[..., 0])
    yy1 = np.maximum(a[..., 1], b[..., 1])
    xx2 = np.minimum(a[..., 2], b[..., 2])
    yy2 = np.minimum(a[..., 3], b[..., 3])
    w = np.maximum(0.0, xx2 - xx1)
    h = np.maximum(0.0, yy2 - yy1)
    inter = w * h
    area_a = (a[..., 2] - a[..., 0]) * (a[..., 3] - a[..., 1])
    area_b = (b[..., 2] - b[..., 0]) * (b[..., 3] - b[..., 1])
    return inter / (area_a + area_b - inter)


def sort_association(tracks, dets, scores):
    """Gate detections by score (masked, fixed size), IoU cost, greedy best match."""
    high = scores > 0.5
    iou = iou_matrix(tracks, dets)
    iou = np.where(high[None, :], iou, 0.0)
    cost = 1.0 - iou
    best = np.argmin(cost, axis=1)
    matched = iou[np.arange(len(tracks)), best] > 0.3
    return {"iou": iou, "best": best, "matched": matched}


class MotionFilter:
    """ByteTrack-style constant-velocity filter on (x, y, a, h) states, batched."""

    def __init__(self) -> None:
        ndim, dt = 4, 1.0
        self.motion = np.eye(2 * ndim)
        for i in range(ndim):
            self.motion[i, ndim + i] = dt
        self.update_mat = np.eye(ndim, 2 * ndim)
        self.w_pos = 1.0 / 20
        self.w_vel = 1.0 / 160

    def multi_predict(self, mean, covariance):
        std_pos = [
            self.w_pos * mean[:, 3],
            self.w_pos * mean[:, 3],
            1e-2 * np.ones_like(mean[:, 3]),
            self.w_pos * mean[:, 3],
        ]
        std_vel = [
            self.w_vel * mean[:, 3],
            self.w_vel * mean[:, 3],
            1e-5 * np.ones_like(mean[:, 3]),
            self.w_vel * mean[:, 3],
        ]
        sqr = np.square(np.r_[std_pos, std_vel]).T
        motion_cov = np.asarray([np.diag(sqr[i]) for i in range(len(mean))])
        mean = np.dot(mean, self.motion.T)
        left = np.dot(self.motion, covariance).transpose((1, 0, 2))
        covariance = np.dot(left, self.motion.T) + motion_cov
        return mean, covariance

    def project(self, mean, covariance):
        std = [self.w_pos * mean[3], self.w_pos * mean[3], 1e-1, self.w_pos * mean[3]]
        innovation_cov = np.diag(np.square(std))
        mean = np.dot(self.update_mat, mean)
        covariance = np.linalg.multi_dot((self.update_mat, covariance, self.update_mat.T))
        return mean, covariance + innovation_cov

    def update(self, mean, covariance, measurement):
        projected_mean, projected_cov = self.project(mean, covariance)
        gain = np.linalg.solve(projected_cov, np.dot(covariance, self.update_mat.T).T).T
        innovation = measurement - projected_mean
        new_mean = mean + np.dot(innovation, gain.T)
        new_cov = covariance - np.linalg.multi_dot((gain, projected_cov, gain.T))
        return new_mean, new_cov


def bytetrack_step(track_tlwh, velocity, det_tlwh):
    """Predict every track, then update each with its detection (xyah state)."""
    kf = MotionFilter()
    mean = np.concatenate([tlwh_to_xyah(track_tlwh), velocity], axis=1)
    cov = np.stack([np.diag(np.square([2.0, 2.0, 1e-2, 2.0, 1.0, 1.0, 1e-5, 1.0]))] * 3)
    mean, cov = kf.multi_predict(mean, cov)
    measurement = tlwh_to_xyah(det_tlwh)
    new_means = []
    for i in range(mean.shape[0]):
        m, _ = kf.update(mean[i], cov[i], measurement[i])
        new_means.append(m)
    state = np.stack(new_means)
    return {"tlbr": xyah_to_tlbr(state[:, :4]), "cov_diag": np.diagonal(cov, axis1=1, axis2=2)}


# ------------------------------------------------------------------ LiDAR range images
PROJ_H, PROJ_W, FOV_UP, FOV_DOWN = 16, 64, 3.0, -25.0


def range_projection(points, remission):
    """Spherical projection; far points written first so the nearest wins each pixel."""
    fov_up = FOV_UP / 180.0 * np.pi
    fov_down = FOV_DOWN / 180.0 * np.pi
    fov = abs(fov_down) + abs(fov_up)
    depth = np.linalg.norm(points, 2, axis=1)
    yaw = -np.arctan2(points[:, 1], points[:, 0])
    pitch = np.arcsin(points[:, 2] / depth)
    proj_x = 0.5 * (yaw / np.pi + 1.0) * PROJ_W
    proj_y = (1.0 - (pitch + abs(fov_down)) / fov) * PROJ_H
    proj_x = np.maximum(0, np.minimum(PROJ_W - 1, np.floor(proj_x))).astype(np.int32)
    proj_y = np.maximum(0, np.minimum(PROJ_H - 1, np.floor(proj_y))).astype(np.int32)
    indices = np.arange(depth.shape[0])
    order = np.argsort(depth)[::-1]
    depth, indices = depth[order], indices[order]
    proj_y, proj_x = proj_y[order], proj_x[order]
    proj_range = np.full((PROJ_H, PROJ_W), -1, dtype=np.float32)
    proj_rem = np.full((PROJ_H, PROJ_W), -1, dtype=np.float32)
    proj_idx = np.full((PROJ_H, PROJ_W), -1, dtype=np.int32)
    proj_range[proj_y, proj_x] = depth
    proj_rem[proj_y, proj_x] = remission[order]
    proj_idx[proj_y, proj_x] = indices
    mask = (proj_idx > 0).astype(np.int32)
    return {"range": proj_range, "remission": proj_rem, "mask": mask}


_SEG_NET = torch.nn.Sequential(torch.nn.Conv2d(2, 4, 3, padding=1), torch.nn.ReLU()).eval()


def ground_removal(points):
    """Height gate (masked, fixed size), BEV occupancy of what is left, a segmentation net
    over (max height, count) channels."""
    above = points[:, 2] > -1.2
    cells = np.clip(np.floor((points[:, :2] + 8.0) / 2.0), 0, 7).astype(np.int64)
    flat = cells[:, 0] * 8 + cells[:, 1]
    counts = np.zeros(64)
    np.add.at(counts, flat, above.astype(np.float64))
    top = np.full(64, -3.0)
    np.maximum.at(top, flat, np.where(above, points[:, 2], -3.0))
    bev = np.stack([top.reshape(8, 8), counts.reshape(8, 8)]).astype(np.float32)
    with torch.no_grad():
        seg = _SEG_NET(torch.from_numpy(bev)[None])
    return {"bev": bev, "seg": seg.numpy(), "kept": above}


# ------------------------------------------------------------------ pose / keypoints
_POSE_NET = torch.nn.Sequential(
    torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(8, 5, 1)
).eval()


def _affine_point(pt, trans):
    new_pt = np.array([pt[0], pt[1], 1.0]).T
    return np.dot(trans, new_pt)[:2]


def pose_keypoints(crop, trans_inv):
    """Heatmap net, peaks by unravel_index, quarter-pixel shift toward the larger
    neighbour, keypoints mapped back into the image by the crop's inverse affine."""
    x = torch.from_numpy(crop).permute(2, 0, 1).float().div(255.0)[None]
    with torch.no_grad():
        heatmaps = _POSE_NET(x)[0].numpy()
    joints, hh, ww = heatmaps.shape
    flat = heatmaps.reshape(joints, -1)
    idx = np.argmax(flat, axis=1)
    scores = np.max(flat, axis=1)
    py, px = np.unravel_index(idx, (hh, ww))
    xl, xr = np.clip(px - 1, 0, ww - 1), np.clip(px + 1, 0, ww - 1)
    yu, yd = np.clip(py - 1, 0, hh - 1), np.clip(py + 1, 0, hh - 1)
    j = np.arange(joints)
    dx = heatmaps[j, py, xr] - heatmaps[j, py, xl]
    dy = heatmaps[j, yd, px] - heatmaps[j, yu, px]
    coords = np.stack([px, py], axis=1).astype(np.float32)
    coords += np.stack([np.sign(dx), np.sign(dy)], axis=1) * 0.25
    image_pts = np.zeros_like(coords)
    for k in range(joints):
        image_pts[k] = _affine_point(coords[k] * 4.0, trans_inv)
    return {"keypoints": image_pts, "scores": scores}


# ------------------------------------------------------------------ audio
def _mel_matrix(n_freqs: int, n_mels: int, rate: int) -> torch.Tensor:
    def hz_to_mel(f):
        return 2595.0 * np.log10(1.0 + f / 700.0)

    mel_pts = np.linspace(hz_to_mel(0.0), hz_to_mel(rate / 2), n_mels + 2)
    hz_pts = 700.0 * (10 ** (mel_pts / 2595.0) - 1.0)
    freqs = np.linspace(0, rate / 2, n_freqs)
    lower = (freqs[None, :] - hz_pts[:-2, None]) / (hz_pts[1:-1, None] - hz_pts[:-2, None])
    upper = (hz_pts[2:, None] - freqs[None, :]) / (hz_pts[2:, None] - hz_pts[1:-1, None])
    return torch.from_numpy(np.maximum(0, np.minimum(lower, upper))).float()


N_FFT, HOP = 64, 16
_MEL = _mel_matrix(N_FFT // 2 + 1, 12, 16000)


def log_mel_torch(audio):
    """Whisper-style: torch.stft, |.|^2 without the last frame, mel, log10, dynamic range."""
    audio = torch.from_numpy(audio)
    window = torch.hann_window(N_FFT)
    stft = torch.stft(audio, N_FFT, HOP, window=window, return_complex=True)
    magnitudes = stft[..., :-1].abs() ** 2
    mel = _MEL @ magnitudes
    log_spec = torch.clamp(mel, min=1e-10).log10()
    log_spec = torch.maximum(log_spec, log_spec.max() - 8.0)
    return {"log_mel": ((log_spec + 4.0) / 4.0).numpy()}


def energy_vad(signal):
    """Frames by reshape, energy in dB relative to the loudest frame, threshold, hangover."""
    frame = 32
    frames = signal[: len(signal) // frame * frame].reshape(-1, frame)
    energy = 10 * np.log10(np.mean(frames**2, axis=1) + 1e-10)
    energy -= energy.max()
    speech = energy > -12.0
    hangover = np.convolve(speech.astype(np.float32), np.ones(3, np.float32), mode="same") > 0
    gain = np.where(hangover, 1.0, 0.1)
    return {"speech": hangover, "gated": (frames * gain[:, None]).reshape(-1)}


def resample_interp(signal):
    """Linear resampling 48 -> 16 kHz by np.interp, DC removal, peak normalisation."""
    n_out = int(len(signal) * 16000 / 48000)
    t_out = np.linspace(0, len(signal) - 1, n_out)
    out = np.interp(t_out, np.arange(len(signal)), signal)
    out = out - out.mean()
    peak = np.abs(out).max()
    return {"audio": (out / (peak + 1e-9)).astype(np.float32)}


# ------------------------------------------------------------------ optical flow / stereo
def coords_grid(h: int, w: int) -> torch.Tensor:
    ys, xs = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
    return torch.stack([xs, ys], dim=0).float()


def flow_warp(image, flow):
    """Backward warp of the second frame by a flow field (grid_sample on a normalised
    coordinate grid) and the photometric error; border pixels masked by validity."""
    img = torch.from_numpy(image).permute(2, 0, 1).float()[None]
    fl = torch.from_numpy(flow).permute(2, 0, 1)[None]
    _, _, h, w = img.shape
    coords = coords_grid(h, w)[None] + fl
    gx = 2.0 * coords[:, 0] / (w - 1) - 1.0
    gy = 2.0 * coords[:, 1] / (h - 1) - 1.0
    grid = torch.stack([gx, gy], dim=-1)
    warped = F.grid_sample(img, grid, mode="bilinear", align_corners=True)
    valid = (gx.abs() <= 1) & (gy.abs() <= 1)
    error = (warped - img).abs().mean(1) * valid
    return {"warped": warped.numpy(), "error": error.numpy()}


_STEREO_NET = torch.nn.Sequential(torch.nn.Conv2d(6, 1, 3, padding=1), torch.nn.Softplus()).eval()


class StereoPadder:
    """Pads a pair to a multiple of the stride (replicate), crops the result back."""

    def __init__(self, dims, divis_by=32):
        self.ht, self.wd = dims[-2:]
        pad_ht = (((self.ht // divis_by) + 1) * divis_by - self.ht) % divis_by
        pad_wd = (((self.wd // divis_by) + 1) * divis_by - self.wd) % divis_by
        self._pad = [pad_wd // 2, pad_wd - pad_wd // 2, pad_ht // 2, pad_ht - pad_ht // 2]

    def pad(self, *inputs):
        return [F.pad(x, self._pad, mode="replicate") for x in inputs]

    def unpad(self, x):
        ht, wd = x.shape[-2:]
        c = [self._pad[2], ht - self._pad[3], self._pad[0], wd - self._pad[1]]
        return x[..., c[0] : c[1], c[2] : c[3]]


def stereo_depth(left, right):
    """Stereo net on a padded pair, disparity cropped back, depth = f * b / d where d > 0,
    and a colourised preview."""
    lt = torch.from_numpy(left).permute(2, 0, 1).float()[None] / 255.0
    rt = torch.from_numpy(right).permute(2, 0, 1).float()[None] / 255.0
    padder = StereoPadder(lt.shape)
    lt, rt = padder.pad(lt, rt)
    with torch.no_grad():
        disp = _STEREO_NET(torch.cat([lt, rt], 1)) * 4.0 - 1.0
    disp = padder.unpad(disp)[0, 0].numpy()
    focal, baseline = 50.0, 0.12
    depth = np.where(disp > 0, focal * baseline / np.maximum(disp, 1e-6), 0.0)
    preview = cv2.applyColorMap(
        np.clip(depth / 10.0 * 255, 0, 255).astype(np.uint8), cv2.COLORMAP_MAGMA
    )
    return {"disp": disp, "depth": depth.astype(np.float32), "preview": preview}


# ------------------------------------------------------------------ inputs
def _r(shape, rng, low=-1.0, high=1.0):
    return rng.uniform(low, high, size=shape).astype(np.float32)


def _image(rng, h, w):
    return harness._image(rng, h, w)


def _events(rng, n=200):
    t = np.sort(rng.uniform(0, 0.1, n))
    x = rng.integers(0, W_EV, n)
    y = rng.integers(0, H_EV, n)
    p = rng.integers(0, 2, n)
    return np.stack([t, x, y, p], axis=1)


def _event_streams(rng, n=200):
    e = _events(rng, n).astype(np.float32)  # event readers hand out float32 columns
    return {"xs": e[:, 1].copy(), "ys": e[:, 2].copy(), "ts": e[:, 0].copy(), "ps": e[:, 3] * 2 - 1}


def _boxes_tlbr(rng, n):
    xy = rng.uniform(0, 50, (n, 2))
    wh = rng.uniform(5, 20, (n, 2))
    return np.concatenate([xy, xy + wh], axis=1)


def _tracks(rng):
    tl = rng.uniform(0, 50, (3, 2))
    wh = rng.uniform(5, 20, (3, 2))
    det = np.concatenate([tl + rng.normal(0, 1, (3, 2)), wh + rng.normal(0, 0.5, (3, 2))], 1)
    vel = rng.normal(0, 0.5, (3, 4)) * np.array([1, 1, 0.01, 0.1])
    return {"track_tlwh": np.concatenate([tl, wh], 1), "velocity": vel, "det_tlwh": det}


def _scan(rng, n=300):
    az = rng.uniform(-np.pi, np.pi, n)
    el = rng.uniform(np.deg2rad(-24), np.deg2rad(2), n)
    r = rng.uniform(2, 30, n)
    pts = np.stack([r * np.cos(el) * np.cos(az), r * np.cos(el) * np.sin(az), r * np.sin(el)], 1)
    return {"points": pts.astype(np.float32), "remission": _r(n, rng, 0, 1)}


def _cloud(rng, n=300):
    pts = rng.uniform([-8, -8, -2], [8, 8, 1], size=(n, 3))
    return {"points": pts}


def _crop(rng):
    angle = rng.uniform(-0.3, 0.3)
    trans = np.array(
        [[np.cos(angle), -np.sin(angle), rng.uniform(0, 40)], [np.sin(angle), np.cos(angle), 9]]
    )
    return {"crop": _image(rng, 32, 24), "trans_inv": trans}


def _speech(rng, n=512):
    t = np.arange(n)
    env = (np.sin(t / n * np.pi * rng.uniform(2, 5)) > 0).astype(np.float64)
    return env * np.sin(t * rng.uniform(0.05, 0.3)) + 0.01 * rng.normal(size=n)


P = harness.Pipeline
PIPELINES = [
    P("events_to_voxel", events_to_voxel, lambda r: {"events": _events(r)}),
    P("event_voxel_torch", event_voxel_torch, _event_streams),
    P(
        "event_histogram",
        event_histogram,
        lambda r: {k: v for k, v in _event_streams(r).items() if k != "ts"},
    ),
    P("time_surface", time_surface, _event_streams),
    P(
        "sort_association",
        sort_association,
        lambda r: {
            "tracks": _boxes_tlbr(r, 4),
            "dets": _boxes_tlbr(r, 6),
            "scores": r.uniform(0, 1, 6),
        },
    ),
    P("bytetrack_step", bytetrack_step, _tracks),
    P("range_projection", range_projection, _scan),
    P("ground_removal", ground_removal, _cloud),
    P("pose_keypoints", pose_keypoints, _crop),
    P("log_mel_torch", log_mel_torch, lambda r: {"audio": _speech(r).astype(np.float32)}),
    P("energy_vad", energy_vad, lambda r: {"signal": _speech(r)}),
    P("resample_interp", resample_interp, lambda r: {"signal": _speech(r, 480)}),
    P(
        "flow_warp",
        flow_warp,
        lambda r: {"image": _image(r, 24, 32), "flow": _r((24, 32, 2), r, -3, 3)},
    ),
    P(
        "stereo_depth",
        stereo_depth,
        lambda r: {"left": _image(r, 40, 60), "right": _image(r, 40, 60)},
    ),
]


# ------------------------------------------------------------------ one-line variants
# Each changes one line of a data-dependent idiom above; right or loud, never silent.
def voxel_bincount(events):
    """The voxel grid by np.bincount of the linear index with weights and a minlength."""
    ts = (BINS - 1) * (events[:, 0] - events[0, 0]) / (events[-1, 0] - events[0, 0])
    t_int = ts.astype(np.int64)
    lin = events[:, 1].astype(np.int64) + events[:, 2].astype(np.int64) * W_EV
    weights = 1.0 - (ts - t_int)
    left = np.bincount(lin + t_int * W_EV * H_EV, weights=weights, minlength=BINS * H_EV * W_EV)
    return {"voxel": left.reshape(BINS, H_EV, W_EV)}


def voxel_index_add(xs, ys, ts, ps):
    """The torch voxel grid with index_add_ on a flat grid instead of index_put_."""
    xs, ys = torch.from_numpy(xs).long(), torch.from_numpy(ys).long()
    ts = torch.from_numpy(ts)
    ts = (ts - ts[0]) / (ts[-1] - ts[0] + 1e-9) * (BINS - 1)
    grid = torch.zeros(BINS * H_EV * W_EV, dtype=ts.dtype)
    tl = ts.floor().long()
    grid.index_add_(0, xs + ys * W_EV + tl * W_EV * H_EV, torch.from_numpy(ps) * (1 - (ts - tl)))
    return {"voxel": grid.view(BINS, H_EV, W_EV).numpy()}


def time_surface_assign(xs, ys, ts, ps):
    """The time surface by fancy assignment (events sorted by time, so the latest wins)."""
    surface = np.zeros((H_EV, W_EV))
    surface[ys.astype(np.intp), xs.astype(np.intp)] = ts
    return {"surface": surface}


def histogram_add_at(xs, ys, ps):
    """Event counts by np.add.at with a constant 1 per event."""
    hist = np.zeros((2, H_EV, W_EV), np.float32)
    np.add.at(hist, ((ps > 0).astype(np.intp), ys.astype(np.intp), xs.astype(np.intp)), 1)
    return {"hist": hist}


def sort_keep_high(tracks, dets, scores):
    """SORT with the score gate as a boolean selection (a data-dependent count)."""
    return {"iou": iou_matrix(tracks, dets[scores > 0.5])}


def range_projection_near_first(points, remission):
    """The range image with the points written near to far (ascending argsort)."""
    depth = np.linalg.norm(points, 2, axis=1)
    yaw = -np.arctan2(points[:, 1], points[:, 0])
    proj_x = np.clip(np.floor(0.5 * (yaw / np.pi + 1.0) * PROJ_W), 0, PROJ_W - 1).astype(int)
    order = np.argsort(depth)
    img = np.full(PROJ_W, -1, dtype=np.float32)
    img[proj_x[order]] = depth[order]
    return {"range": img}


def ground_points_kept(points):
    """Ground removal returning the kept points (a data-dependent count)."""
    return {"points": points[points[:, 2] > -1.2]}


def pose_python_peak(crop, trans_inv):
    """Peak refinement by int() of each peak and a bounds test in Python, per joint."""
    x = torch.from_numpy(crop).permute(2, 0, 1).float().div(255.0)[None]
    with torch.no_grad():
        heatmaps = _POSE_NET(x)[0].numpy()
    coords = np.zeros((heatmaps.shape[0], 2))
    for k, hm in enumerate(heatmaps):
        py, px = np.unravel_index(np.argmax(hm), hm.shape)
        coords[k] = px, py
        if 0 < int(px) < hm.shape[1] - 1:
            coords[k, 0] += 0.25 * np.sign(hm[py, px + 1] - hm[py, px - 1])
    return {"coords": coords}


def vad_segments(signal):
    """The VAD returning the indices of the speech frames (a data-dependent count)."""
    frames = signal[: len(signal) // 32 * 32].reshape(-1, 32)
    energy = 10 * np.log10(np.mean(frames**2, axis=1) + 1e-10)
    return {"frames": np.flatnonzero(energy > energy.max() - 12.0)}


def depth_masked_assign(disp):
    """Disparity to depth by a masked in-place write instead of np.where."""
    depth = 6.0 / np.maximum(disp, 1e-6)
    depth[disp <= 0] = 0.0
    return {"depth": depth}


def resample_nearest(signal):
    """Resampling by rounding a time axis to sample indices (a gather)."""
    t_out = np.linspace(0, len(signal) - 1, len(signal) // 3)
    return {"audio": signal[np.round(t_out).astype(int)] / np.abs(signal).max()}


def pose_hip_centre(crop, trans_inv):
    """The keypoints' centre from a list of two rows (np.mean over a Python list)."""
    kp = pose_keypoints(crop, trans_inv)["keypoints"]
    return {"centre": np.mean([kp[1], kp[2]], axis=0)}


def kalman_std_list(track_tlwh, velocity, det_tlwh):
    """ByteTrack's project() with the noise read off the list before np.diag (1-D rows)."""
    h = tlwh_to_xyah(track_tlwh)[:, 3]
    std = [h / 20, h / 20, 0.1 * np.ones_like(h), h / 20]
    return {"var": np.square(std).T}


VARIANTS = [
    P("voxel_bincount", voxel_bincount, lambda r: {"events": _events(r)}),
    P("voxel_index_add", voxel_index_add, _event_streams),
    P("time_surface_assign", time_surface_assign, _event_streams),
    P(
        "histogram_add_at",
        histogram_add_at,
        lambda r: {k: v for k, v in _event_streams(r).items() if k != "ts"},
    ),
    P(
        "sort_keep_high",
        sort_keep_high,
        lambda r: {
            "tracks": _boxes_tlbr(r, 4),
            "dets": _boxes_tlbr(r, 6),
            "scores": r.uniform(0, 1, 6),
        },
    ),
    P("range_projection_near_first", range_projection_near_first, _scan),
    P("ground_points_kept", ground_points_kept, _cloud),
    P("pose_python_peak", pose_python_peak, _crop),
    P("vad_segments", vad_segments, lambda r: {"signal": _speech(r)}),
    P("depth_masked_assign", depth_masked_assign, lambda r: {"disp": _r((12, 16), r, -1, 3)}),
    P("resample_nearest", resample_nearest, lambda r: {"signal": _speech(r, 480)}),
    P("pose_hip_centre", pose_hip_centre, _crop),
    P("kalman_std_list", kalman_std_list, _tracks),
]


def main(names: list[str]) -> dict[str, dict[str, int]]:
    return harness.run_probe(names, PIPELINES, VARIANTS, "sensors", every_backend=True)


if __name__ == "__main__":
    main(sys.argv[1:])
