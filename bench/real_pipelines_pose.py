"""Pose, NumPy audio and point-cloud pipelines from public projects x backends.

New pipelines in the idioms of public code for families the other probes touch only once
(nobody tuned patchport to them): human-pose post-processing (HRNet's ``get_max_preds``
with ``np.tile`` / ``%`` / ``np.floor`` and its quarter-pixel refinement by ``int()`` of
each peak, mmpose's ``get_heatmap_maximum`` with ``np.unravel_index`` and a masked write,
the affine back-transform of keypoints with a 2x3 matrix, OpenPose's peaks by SciPy's
``maximum_filter`` and ``np.nonzero``, HRNet's OKS-NMS loop, limb lengths over a skeleton
table, MediaPipe's pose embedding (hip centre, torso size, Python ``max`` of two norms),
a person box from the visible keypoints, COCO's OKS with a visibility selection); audio
front ends in NumPy (python_speech_features' pre-emphasis, index-array framing, Hamming
window, ``np.fft.rfft`` power spectrum, a mel filterbank matmul, log with an ``eps``
floor by ``np.where``, deltas by ``np.pad(mode="edge")`` and a frame loop; a librosa-style
framing by ``as_strided``, Hann window, ``power_to_db`` with ``np.maximum`` floors and a
``top_db`` cut; an MFCC's DCT-II as a matrix and a sinusoidal lifter with CMVN); and point
clouds (voxel coordinates by ``np.floor`` inside a range mask, a range filter by
``np.where(cond)[0]``, mesh face normals by ``np.cross``, a yaw rotation matrix from
``np.cos`` / ``np.sin`` of a traced angle, OpenPCDet's batched ``rotate_points_along_z``
in torch, farthest point sampling, kNN by ``argsort``). Each is traced once, exported and
replayed on fresh inputs against the plain code, classified as ``bench/real_pipelines.py``
classifies (its harness is reused).

Run: python bench/real_pipelines_pose.py [--variants] [--all-backends] [pipeline-name ...]
(onnx and pt2 by default; ``--all-backends`` adds jit; ``--variants`` runs one-line
changes of the data-dependent idioms instead, each of which must be right or loud.)
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import torch
from numpy.lib.stride_tricks import as_strided
from scipy.ndimage import maximum_filter

sys.path.insert(0, str(Path(__file__).resolve().parent))
import real_pipelines as harness  # noqa: E402
from real_pipelines_vision import get_max_preds  # noqa: E402 - HRNet's, quoted once

harness.HERE = str(Path(__file__).resolve())  # the user's lines are in this file
torch.manual_seed(0)
P = harness.Pipeline

N_JOINTS, HM_H, HM_W = 17, 16, 12


# ------------------------------------------------------------------ pose / keypoints
def affine_transform(pt, t):
    new_pt = np.array([pt[0], pt[1], 1.0]).T
    new_pt = np.dot(t, new_pt)
    return new_pt[:2]


def hrnet_final_preds(batch_heatmaps, trans):
    """HRNet's get_final_preds: peaks, a quarter-pixel step toward the larger neighbour
    for peaks away from the border (int() of each peak), back to the image."""
    coords, maxvals = get_max_preds(batch_heatmaps)
    heatmap_height = batch_heatmaps.shape[2]
    heatmap_width = batch_heatmaps.shape[3]
    for n in range(coords.shape[0]):
        for p in range(coords.shape[1]):
            hm = batch_heatmaps[n][p]
            px = int(math.floor(coords[n][p][0] + 0.5))
            py = int(math.floor(coords[n][p][1] + 0.5))
            if 1 < px < heatmap_width - 1 and 1 < py < heatmap_height - 1:
                diff = np.array([hm[py][px + 1] - hm[py][px - 1], hm[py + 1][px] - hm[py - 1][px]])
                coords[n][p] += np.sign(diff) * 0.25
    preds = coords.copy()
    for i in range(coords.shape[0]):
        for p in range(coords.shape[1]):
            preds[i, p, 0:2] = affine_transform(coords[i, p, 0:2], trans)
    return {"preds": preds, "maxvals": maxvals}


def hrnet_max_preds(batch_heatmaps, trans):
    """HRNet's peaks alone, then the 2x3 back-transform of all joints by one matmul."""
    coords, maxvals = get_max_preds(batch_heatmaps)
    homo = np.concatenate([coords, np.ones_like(coords[..., :1])], axis=-1)
    preds = homo @ trans.T
    return {"preds": preds, "maxvals": maxvals}


def get_heatmap_maximum(heatmaps):
    """mmpose: unravel_index of the flat argmax, (x, y) stacked, -1 where the peak <= 0."""
    K, H, W = heatmaps.shape
    heatmaps_flatten = heatmaps.reshape(K, -1)
    y_locs, x_locs = np.unravel_index(np.argmax(heatmaps_flatten, axis=1), shape=(H, W))
    locs = np.stack((x_locs, y_locs), axis=-1).astype(np.float32)
    vals = np.amax(heatmaps_flatten, axis=1)
    locs[vals <= 0.0] = -1
    return locs, vals


def mmpose_refine(heatmaps):
    """mmpose's refine_keypoints, vectorised: sign of the neighbour differences, border
    clipped with np.clip, a quarter pixel."""
    locs, vals = get_heatmap_maximum(heatmaps)
    K, H, W = heatmaps.shape
    x = np.clip(locs[:, 0].astype(int), 1, W - 2)
    y = np.clip(locs[:, 1].astype(int), 1, H - 2)
    k = np.arange(K)
    dx = heatmaps[k, y, x + 1] - heatmaps[k, y, x - 1]
    dy = heatmaps[k, y + 1, x] - heatmaps[k, y - 1, x]
    locs = locs + np.stack([np.sign(dx), np.sign(dy)], axis=-1) * 0.25
    return {"keypoints": locs, "scores": vals}


def openpose_peaks(heatmap):
    """OpenPose-style peaks of one part map: a 3x3 maximum filter, peaks above a threshold
    by np.nonzero, each with its score (as many peaks as the map has)."""
    local_max = maximum_filter(heatmap, size=3) == heatmap
    peaks = local_max & (heatmap > 0.3)
    ys, xs = np.nonzero(peaks)
    scores = heatmap[ys, xs]
    return {"peaks": np.stack([xs, ys], axis=1), "scores": scores}


def oks_nms(kpts, scores):
    """OKS-based NMS (the loop of HRNet's oks_nms): keep the best, drop every pose whose
    OKS with it is over the threshold, until none is left."""
    order = scores.argsort()[::-1]
    keep = []
    while order.size > 0:
        i = order[0]
        keep.append(i)
        d = kpts[order[1:], :, :2] - kpts[i, :, :2]
        e = (d**2).sum(-1) / (SIGMAS * 2) ** 2 / 2000.0 / 2
        oks = np.mean(np.exp(-e), axis=1)
        inds = np.where(oks <= 0.5)[0]
        order = order[inds + 1]
    return {"keep": np.array(keep)}


SKELETON = [(15, 13), (13, 11), (16, 14), (14, 12), (11, 12), (5, 11), (6, 12), (5, 6),
            (5, 7), (6, 8), (7, 9), (8, 10), (1, 2), (0, 1), (0, 2), (1, 3), (2, 4)]  # fmt: skip


def limb_lengths(keypoints):
    """Bone lengths over the COCO skeleton, normalised by the mean bone length."""
    skeleton = np.array(SKELETON)
    limbs = keypoints[skeleton[:, 0], :2] - keypoints[skeleton[:, 1], :2]
    lengths = np.linalg.norm(limbs, axis=-1)
    return {"lengths": lengths / lengths.mean()}


def pose_embedding(landmarks):
    """MediaPipe's pose classification: centre on the hips, scale by the torso size (or the
    largest distance to the centre, Python max), then pairwise distances of a few joints."""
    landmarks = np.copy(landmarks[:, :2])
    left_hip, right_hip = landmarks[11], landmarks[12]
    hips = (left_hip + right_hip) * 0.5
    landmarks -= hips
    shoulders = (landmarks[5] + landmarks[6]) * 0.5
    torso_size = np.linalg.norm(shoulders - np.zeros(2))
    max_dist = np.max(np.linalg.norm(landmarks, axis=1))
    pose_size = max(torso_size * 2.5, max_dist)
    landmarks /= pose_size
    embedding = np.stack(
        [landmarks[9] - landmarks[10], landmarks[15] - landmarks[16], landmarks[9] - landmarks[15]]
    )
    return {"embedding": embedding}


def hip_centre_norm(keypoints):
    """The hip centre by np.mean of the two hip rows (fancy index), torso-normalised."""
    centre = np.mean(keypoints[[11, 12], :2], axis=0)
    torso = np.linalg.norm(np.mean(keypoints[[5, 6], :2], axis=0) - centre)
    return {"normed": (keypoints[:, :2] - centre) / np.maximum(torso, 1e-6)}


def keypoints_bbox(keypoints):
    """Person box from the visible keypoints (score > 0.3), padded by 25% (a data-dependent
    selection reduced to four numbers)."""
    visible = keypoints[:, 2] > 0.3
    xs, ys = keypoints[visible, 0], keypoints[visible, 1]
    x0, x1 = xs.min(), xs.max()
    y0, y1 = ys.min(), ys.max()
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    w, h = (x1 - x0) * 1.25, (y1 - y0) * 1.25
    return {"box": np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2])}


SIGMAS = np.array([.26, .25, .25, .35, .35, .79, .79, .72, .72, .62, .62, 1.07, 1.07, .87,
                   .87, .89, .89]) / 10.0  # fmt: skip


def compute_oks(gt, dt, area):
    """COCO's computeOks for one pair: the visible ground-truth joints only, mean exp(-e)."""
    variances = (SIGMAS * 2) ** 2
    xg, yg, vg = gt[0::3], gt[1::3], gt[2::3]
    xd, yd = dt[0::3], dt[1::3]
    dx = xd - xg
    dy = yd - yg
    e = (dx**2 + dy**2) / variances / (area + np.spacing(1)) / 2
    e = e[vg > 0]
    oks = np.sum(np.exp(-e)) / e.shape[0]
    return {"oks": np.asarray(oks)}


# ------------------------------------------------------------------ audio (NumPy)
RATE, NFFT, NFILT = 8000, 64, 10


def hz2mel(hz):
    return 2595 * np.log10(1 + hz / 700.0)


def mel2hz(mel):
    return 700 * (10 ** (mel / 2595.0) - 1)


def get_filterbanks(nfilt=NFILT, nfft=NFFT, samplerate=RATE):
    highmel = hz2mel(samplerate / 2)
    melpoints = np.linspace(hz2mel(0), highmel, nfilt + 2)
    bin = np.floor((nfft + 1) * mel2hz(melpoints) / samplerate)
    fbank = np.zeros([nfilt, nfft // 2 + 1])
    for j in range(0, nfilt):
        for i in range(int(bin[j]), int(bin[j + 1])):
            fbank[j, i] = (i - bin[j]) / (bin[j + 1] - bin[j])
        for i in range(int(bin[j + 1]), int(bin[j + 2])):
            fbank[j, i] = (bin[j + 2] - i) / (bin[j + 2] - bin[j + 1])
    return fbank


def framesig(sig, frame_len, frame_step, winfunc=lambda x: np.ones((x,))):
    """python_speech_features: zero-pad to whole frames, frames by an index array."""
    slen = len(sig)
    if slen <= frame_len:
        numframes = 1
    else:
        numframes = 1 + int(math.ceil((1.0 * slen - frame_len) / frame_step))
    padlen = int((numframes - 1) * frame_step + frame_len)
    zeros = np.zeros((padlen - slen,))
    padsignal = np.concatenate((sig, zeros))
    indices = (
        np.tile(np.arange(0, frame_len), (numframes, 1))
        + np.tile(np.arange(0, numframes * frame_step, frame_step), (frame_len, 1)).T
    )
    indices = np.array(indices, dtype=np.int32)
    frames = padsignal[indices]
    win = np.tile(winfunc(frame_len), (numframes, 1))
    return frames * win


def logfbank(signal):
    """Pre-emphasis by np.append, Hamming frames, power spectrum, filterbank energies,
    zeros replaced by eps before the log, and the frame energies."""
    signal = np.append(signal[0], signal[1:] - 0.97 * signal[:-1])
    frames = framesig(signal, 50, 20, winfunc=np.hamming)
    pspec = 1.0 / NFFT * np.square(np.abs(np.fft.rfft(frames, NFFT)))
    energy = np.sum(pspec, 1)
    energy = np.where(energy == 0, np.finfo(float).eps, energy)
    feat = np.dot(pspec, get_filterbanks().T)
    feat = np.where(feat == 0, np.finfo(float).eps, feat)
    return {"logfbank": np.log(feat), "energy": np.log(energy)}


def delta(feat, N):
    """python_speech_features: regression deltas over an edge-padded frame axis."""
    NUMFRAMES = len(feat)
    denominator = 2 * sum([i**2 for i in range(1, N + 1)])
    delta_feat = np.empty_like(feat)
    padded = np.pad(feat, ((N, N), (0, 0)), mode="edge")
    for t in range(NUMFRAMES):
        delta_feat[t] = np.dot(np.arange(-N, N + 1), padded[t : t + 2 * N + 1]) / denominator
    return delta_feat


def fbank_deltas(signal):
    """Log filterbank energies stacked with their deltas and delta-deltas."""
    feat = logfbank(signal)["logfbank"]
    d1 = delta(feat, 2)
    d2 = delta(d1, 2)
    return {"features": np.concatenate([feat, d1, d2], axis=1)}


def frame_strided(y, frame_length, hop_length):
    """Frames as a strided view (the librosa of old): no copy."""
    n_frames = 1 + (len(y) - frame_length) // hop_length
    return as_strided(
        y, shape=(n_frames, frame_length), strides=(hop_length * y.strides[0], y.strides[0])
    )


def power_to_db(S, ref=1.0, amin=1e-10, top_db=80.0):
    log_spec = 10.0 * np.log10(np.maximum(amin, S))
    log_spec -= 10.0 * np.log10(np.maximum(amin, ref))
    if top_db is not None:
        log_spec = np.maximum(log_spec, log_spec.max() - top_db)
    return log_spec


_MEL_FB = get_filterbanks(NFILT, NFFT, RATE)


def melspec_strided(y):
    """Centre padding by reflection, strided frames, periodic Hann window, |rfft|^2,
    mel matmul, power_to_db relative to the loudest bin."""
    y = np.pad(y, NFFT // 2, mode="reflect")
    frames = frame_strided(y, NFFT, 16)
    window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(NFFT) / NFFT)
    S = np.abs(np.fft.rfft(frames * window, axis=-1)) ** 2
    mel = _MEL_FB @ S.T
    return {"db": power_to_db(mel, ref=np.max(mel))}


def _dct_matrix(n):
    k = np.arange(n)[:, None]
    m = np.arange(n)[None, :]
    d = np.cos(np.pi * k * (2 * m + 1) / (2 * n)) * np.sqrt(2.0 / n)
    d[0] /= np.sqrt(2.0)
    return d


def lifter(cepstra, L=22):
    if L > 0:
        nframes, ncoeff = np.shape(cepstra)
        n = np.arange(ncoeff)
        lift = 1 + (L / 2.0) * np.sin(np.pi * n / L)
        return lift * cepstra
    return cepstra


def mfcc_cmvn(signal):
    """MFCC from the log filterbank (orthonormal DCT-II as a matrix), the first coefficient
    replaced by the log energy, lifter, then mean / variance normalisation per coefficient."""
    fb = logfbank(signal)
    feat = fb["logfbank"] @ _dct_matrix(NFILT).T
    feat = lifter(feat[:, :8])
    feat[:, 0] = fb["energy"]
    mean = np.mean(feat, axis=0)
    std = np.std(feat, axis=0)
    return {"mfcc": (feat - mean) / np.maximum(std, 1e-8)}


# ------------------------------------------------------------------ point clouds
PC_RANGE = np.array([-8.0, -8.0, -2.0, 8.0, 8.0, 1.0], dtype=np.float32)
VOXEL_SIZE = np.array([1.0, 1.0, 3.0], dtype=np.float32)


def mask_points_by_range(points, limit_range):
    mask = (
        (points[:, 0] >= limit_range[0])
        & (points[:, 0] <= limit_range[3])
        & (points[:, 1] >= limit_range[1])
        & (points[:, 1] <= limit_range[4])
    )
    return mask


def voxel_occupancy(points):
    """Voxel coordinates by np.floor of the offset over the voxel size, points outside the
    range sent to voxel -1 by np.where, a BEV count grid by np.add.at."""
    grid = np.round((PC_RANGE[3:] - PC_RANGE[:3]) / VOXEL_SIZE).astype(np.int64)
    coords = np.floor((points[:, :3] - PC_RANGE[:3]) / VOXEL_SIZE).astype(np.int32)
    mask = mask_points_by_range(points, PC_RANGE)
    coords = np.where(mask[:, None], coords, -1)
    flat = coords[:, 1] * grid[0] + coords[:, 0]
    bev = np.zeros(grid[0] * grid[1], dtype=np.float32)
    np.add.at(bev, np.where(mask, flat, 0), mask.astype(np.float32))
    return {"coords": coords, "bev": bev.reshape(grid[1], grid[0])}


def range_filter(points):
    """Keep the points within 1..6 m (np.where(cond)[0] indices), centre what is left."""
    r = np.linalg.norm(points[:, :2], axis=1)
    idx = np.where((r > 1.0) & (r < 6.0))[0]
    kept = points[idx]
    return {"kept": kept - kept.mean(axis=0)}


def face_normals(vertices, faces):
    """Mesh face normals by the cross product of two edges, unit length, and per-vertex
    normals as the area-weighted sum over the incident faces (np.add.at)."""
    v0 = vertices[faces[:, 0]]
    v1 = vertices[faces[:, 1]]
    v2 = vertices[faces[:, 2]]
    fn = np.cross(v1 - v0, v2 - v0)
    vn = np.zeros_like(vertices)
    for i in range(3):
        np.add.at(vn, faces[:, i], fn)
    fn = fn / np.linalg.norm(fn, axis=1, keepdims=True)
    vn = vn / np.maximum(np.linalg.norm(vn, axis=1, keepdims=True), 1e-12)
    return {"face_normals": fn, "vertex_normals": vn}


def rotz(t):
    c = np.cos(t)
    s = np.sin(t)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def rotate_yaw(points, yaw):
    """KITTI-style: a yaw rotation matrix from a traced angle, points rotated, box corners
    of a fixed-size box placed at the cloud's centre."""
    R = rotz(yaw[0])
    rotated = points @ R.T
    length, w, h = 4.0, 1.8, 1.5
    x_corners = [length / 2] * 2 + [-length / 2] * 2 + [length / 2] * 2 + [-length / 2] * 2
    y_corners = [w / 2, -w / 2, -w / 2, w / 2, w / 2, -w / 2, -w / 2, w / 2]
    z_corners = [0, 0, 0, 0, -h, -h, -h, -h]
    corners = np.dot(R, np.vstack([x_corners, y_corners, z_corners]))
    corners = corners + rotated.mean(axis=0)[:, None]
    return {"points": rotated, "corners": corners.T}


def rotate_points_along_z(points, angle):
    """OpenPCDet: (B, N, 3 + C) points rotated by (B,) angles, matrices by torch.stack."""
    cosa = torch.cos(angle)
    sina = torch.sin(angle)
    zeros = angle.new_zeros(points.shape[0])
    ones = angle.new_ones(points.shape[0])
    rot_matrix = (
        torch.stack((cosa, sina, zeros, -sina, cosa, zeros, zeros, zeros, ones), dim=1)
        .view(-1, 3, 3)
        .float()
    )
    points_rot = torch.matmul(points[:, :, 0:3], rot_matrix)
    points_rot = torch.cat((points_rot, points[:, :, 3:]), dim=-1)
    return points_rot


def pcdet_rotate(points, angles):
    """World-rotation augmentation over a batch of clouds (torch from NumPy inputs)."""
    pts = rotate_points_along_z(torch.from_numpy(points), torch.from_numpy(angles))
    return {"points": pts.numpy()}


def farthest_point_sample(point, npoint=8):
    """PointNet++'s NumPy FPS: start at index 0, keep the running min distance, argmax."""
    N, D = point.shape
    xyz = point[:, :3]
    centroids = np.zeros((npoint,))
    distance = np.ones((N,)) * 1e10
    farthest = 0
    for i in range(npoint):
        centroids[i] = farthest
        centroid = xyz[farthest, :]
        dist = np.sum((xyz - centroid) ** 2, -1)
        mask = dist < distance
        distance[mask] = dist[mask]
        farthest = np.argmax(distance, -1)
    point = point[centroids.astype(np.int32)]
    return {"sampled": point}


def knn_group(points, queries):
    """Square distances by broadcasting, the k nearest by argsort, grouped offsets."""
    d = np.sum((queries[:, None, :] - points[None, :, :]) ** 2, axis=-1)
    idx = np.argsort(d, axis=1)[:, :4]
    grouped = points[idx] - queries[:, None, :]
    return {"idx": idx, "grouped": grouped}


# ------------------------------------------------------------------ inputs
def _heatmaps(rng, batch=None):
    """Gaussian blobs at random peaks, plus noise (some maps all negative)."""
    ys, xs = np.mgrid[0:HM_H, 0:HM_W]
    cy = rng.uniform(0, HM_H - 1, N_JOINTS)
    cx = rng.uniform(0, HM_W - 1, N_JOINTS)
    amp = rng.uniform(-0.2, 1.0, N_JOINTS)
    blobs = amp[:, None, None] * np.exp(
        -((ys - cy[:, None, None]) ** 2 + (xs - cx[:, None, None]) ** 2) / 4.0
    )
    hm = (blobs + rng.normal(0, 0.02, blobs.shape) - 0.05).astype(np.float32)
    return hm if batch is None else hm[None]


def _trans(rng):
    a = rng.uniform(-0.3, 0.3)
    s = rng.uniform(3, 5)
    return np.array(
        [[s * np.cos(a), -s * np.sin(a), rng.uniform(0, 40)], [s * np.sin(a), s * np.cos(a), 9]]
    )


def _keypoints(rng):
    xy = rng.uniform(0, 100, (N_JOINTS, 2))
    score = rng.uniform(0, 1, (N_JOINTS, 1))
    return np.concatenate([xy, score], axis=1)


def _oks(rng):
    gt = _keypoints(rng)
    gt[:, 2] = rng.integers(0, 3, N_JOINTS)
    gt[0, 2] = 2
    dt = gt + np.concatenate([rng.normal(0, 3, (N_JOINTS, 2)), np.zeros((N_JOINTS, 1))], 1)
    return {"gt": gt.ravel(), "dt": dt.ravel(), "area": np.array(rng.uniform(500, 3000))}


def _speech(rng, n=400):
    t = np.arange(n)
    env = (np.sin(t / n * np.pi * rng.uniform(2, 5)) > 0).astype(np.float64)
    return env * np.sin(t * rng.uniform(0.05, 0.3)) + 0.01 * rng.normal(size=n)


def _cloud(rng, n=200):
    return {"points": rng.uniform([-10, -10, -2.5], [10, 10, 1.5], size=(n, 3))}


def _mesh(rng):
    u, v = np.meshgrid(np.linspace(0, 1, 5), np.linspace(0, 1, 4))
    z = rng.normal(0, 0.2, u.shape)
    vertices = np.stack([u, v, z], axis=-1).reshape(-1, 3)
    corners = [r * 5 + c for r in range(3) for c in range(4)]
    cells = [(i, i + 1, i + 5, i + 6) for i in corners]
    faces = [(a, b, c) for a, b, c, _ in cells] + [(b, d, c) for _, b, c, d in cells]
    faces = np.array(faces)
    return {"vertices": vertices, "faces": faces.astype(np.int64)}


PIPELINES = [
    P(
        "hrnet_final_preds",
        hrnet_final_preds,
        lambda r: {"batch_heatmaps": _heatmaps(r, 1), "trans": _trans(r)},
    ),
    P(
        "hrnet_max_preds",
        hrnet_max_preds,
        lambda r: {"batch_heatmaps": _heatmaps(r, 1), "trans": _trans(r)},
    ),
    P("mmpose_refine", mmpose_refine, lambda r: {"heatmaps": _heatmaps(r)}),
    P("openpose_peaks", openpose_peaks, lambda r: {"heatmap": _heatmaps(r)[:4].sum(0)}),
    P(
        "oks_nms",
        oks_nms,
        lambda r: {
            "kpts": _keypoints(r)[None, :, :] + r.normal(0, 8, (6, N_JOINTS, 3)),
            "scores": r.uniform(0, 1, 6),
        },
    ),
    P("limb_lengths", limb_lengths, lambda r: {"keypoints": _keypoints(r)}),
    P("pose_embedding", pose_embedding, lambda r: {"landmarks": _keypoints(r)}),
    P("hip_centre_norm", hip_centre_norm, lambda r: {"keypoints": _keypoints(r)}),
    P("keypoints_bbox", keypoints_bbox, lambda r: {"keypoints": _keypoints(r)}),
    P("compute_oks", compute_oks, _oks),
    P("logfbank", logfbank, lambda r: {"signal": _speech(r)}),
    P("fbank_deltas", fbank_deltas, lambda r: {"signal": _speech(r)}),
    P("melspec_strided", melspec_strided, lambda r: {"y": _speech(r)}),
    P("mfcc_cmvn", mfcc_cmvn, lambda r: {"signal": _speech(r)}),
    P("voxel_occupancy", voxel_occupancy, _cloud),
    P("range_filter", range_filter, _cloud),
    P("face_normals", face_normals, _mesh),
    P(
        "rotate_yaw",
        rotate_yaw,
        lambda r: {**_cloud(r, 50), "yaw": r.uniform(-np.pi, np.pi, 1)},
    ),
    P(
        "pcdet_rotate",
        pcdet_rotate,
        lambda r: {
            "points": r.normal(0, 5, (2, 40, 4)).astype(np.float32),
            "angles": r.uniform(-np.pi, np.pi, 2).astype(np.float32),
        },
    ),
    P("farthest_point_sample", farthest_point_sample, lambda r: {"point": _cloud(r, 60)["points"]}),
    P(
        "knn_group",
        knn_group,
        lambda r: {"points": _cloud(r, 60)["points"], "queries": _cloud(r, 5)["points"]},
    ),
]


# ------------------------------------------------------------------ one-line variants
# Each changes one line of a data-dependent idiom above (mostly a count of selected items
# read in Python); right or loud, never silent.
def oks_coco_guard(gt, dt, area):
    """COCO's own guard: the visible count by np.count_nonzero, a branch on it."""
    vg = gt[2::3]
    k1 = np.count_nonzero(vg > 0)
    e = ((dt[0::3] - gt[0::3]) ** 2 + (dt[1::3] - gt[1::3]) ** 2) / (SIGMAS * 2) ** 2 / area / 2
    if k1 > 0:
        e = e[vg > 0]
    return {"oks": np.asarray(np.sum(np.exp(-e)) / e.shape[0])}


def oks_len_guard(gt, dt, area):
    """OKS over the visible joints with len() of the selection and an empty guard."""
    e = ((dt[0::3] - gt[0::3]) ** 2 + (dt[1::3] - gt[1::3]) ** 2) / (SIGMAS * 2) ** 2 / area / 2
    e = e[gt[2::3] > 0]
    return {"oks": np.asarray(np.sum(np.exp(-e)) / len(e) if len(e) else 0.0)}


def visible_mean(keypoints):
    """Centre of the visible keypoints (a boolean selection reduced by mean)."""
    return {"centre": keypoints[keypoints[:, 2] > 0.3, :2].mean(axis=0)}


def kept_ratio(points):
    """The share of points in range as len() of the kept indices over the cloud's."""
    r = np.linalg.norm(points[:, :2], axis=1)
    idx = np.where((r > 1.0) & (r < 6.0))[0]
    return {"ratio": np.asarray([len(idx) / len(points)]), "mean_r": r[idx].mean(keepdims=True)}


def kept_ratio_shape(points):
    """The same share as idx.shape[0] / points.shape[0] (two sizes, one of them the data's)."""
    r = np.linalg.norm(points[:, :2], axis=1)
    idx = np.where((r > 1.0) & (r < 6.0))[0]
    return {"ratio": np.ones(1) * idx.shape[0] / points.shape[0]}


def kept_mean_by_count(points):
    """Mean of the kept points as a traced sum over the selection's size."""
    kept = points[(points[:, 2] > -1.0) & (points[:, 2] < 0.5)]
    return {"mean": kept.sum(axis=0) / kept.shape[0]}


def trim_silence(signal):
    """Trim leading / trailing quiet samples by the first and last loud index (a slice
    whose bounds come from traced data)."""
    loud = np.where(np.abs(signal) > 0.5)[0]
    trimmed = signal[loud[0] : loud[-1] + 1]
    return {"rms": np.sqrt(np.mean(trimmed**2, keepdims=True))}


def voxel_unique(points):
    """Occupied voxels by np.unique over the coordinates (a data-dependent count)."""
    coords = np.floor((points[:, :3] - PC_RANGE[:3]) / VOXEL_SIZE).astype(np.int32)
    _, counts = np.unique(coords, axis=0, return_counts=True)
    return {"max_points": np.asarray([counts.max()])}


def kept_loop_range(points):
    """The kept points' heights summed by a Python loop over range(kept.shape[0]) (range()
    takes the size as a plain int with no hook: the count is fixed at the sample's)."""
    kept = points[points[:, 2] > 0.0]
    total = np.zeros(1)
    for i in range(kept.shape[0]):
        total = total + kept[i, 2]
    return {"total": total}


VARIANTS = [
    P("oks_coco_guard", oks_coco_guard, _oks),
    P("oks_len_guard", oks_len_guard, _oks),
    P("visible_mean", visible_mean, lambda r: {"keypoints": _keypoints(r)}),
    P("kept_ratio", kept_ratio, _cloud),
    P("kept_ratio_shape", kept_ratio_shape, _cloud),
    P("kept_mean_by_count", kept_mean_by_count, _cloud),
    P("trim_silence", trim_silence, lambda r: {"signal": _speech(r)}),
    P("voxel_unique", voxel_unique, _cloud),
    P("kept_loop_range", kept_loop_range, _cloud),
]


def main(names: list[str]) -> dict[str, dict[str, int]]:
    return harness.run_probe(names, PIPELINES, VARIANTS, "pose")


if __name__ == "__main__":
    main(sys.argv[1:])
