"""Depth / stereo, video / temporal and detection post-processing pipelines x backends.

New pipelines in the idioms of public code for families the other probes do not cover:
depth and stereo (disparity to depth behind an invalid-pixel mask, a MiDaS-style
``write_depth`` min-max with its ``eps`` guard, back-projection of a depth map to a point
cloud by ``np.meshgrid`` and pinhole intrinsics, colourisation by ``cv2.applyColorMap``
and by a NumPy look-up table, hole filling by ``np.maximum`` of shifted copies, a
left-right consistency check by ``np.take_along_axis``); video (frame differencing with
the previous frame kept in an attribute, a ``collections.deque`` of recent frames
averaged, an exponential running average kept in ``self.`` and a motion mask by
``cv2.absdiff`` + ``cv2.threshold``); and detection post-processing (a YOLO head decoded
with a sigmoid, ``np.meshgrid`` grid offsets and ``np.exp`` of wh, a softmax with the max
subtracted, RetinaFace's prior-box decode with its in-place corner writes, a top-k by
``np.argpartition``, box clipping on columns, letterbox boxes scaled back to the original
image, score filtering by a boolean mask and a greedy NMS loop). Each is traced once,
exported and replayed on fresh inputs against the plain code, classified as
``bench/real_pipelines.py`` classifies (its harness is reused).

Run: python bench/real_pipelines_depth.py [--variants] [--all-backends] [pipeline-name ...]
(onnx and pt2 by default; ``--all-backends`` adds jit; ``--variants`` runs one-line
changes of these idioms instead, each of which must be right or loud.)
"""

from __future__ import annotations

import sys
from collections import deque
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import real_pipelines as harness  # noqa: E402

harness.HERE = str(Path(__file__).resolve())  # the user's lines are in this file
P = harness.Pipeline

FX, FY, CX, CY = 52.0, 52.0, 31.5, 23.5
BASELINE = 0.12


# ------------------------------------------------------------------ depth / stereo
def disparity_to_depth(disparity):
    """Stereo: depth = f * B / d where the disparity is valid, 0 elsewhere (masked write)."""
    depth = np.zeros_like(disparity)
    valid = disparity > 0
    depth[valid] = FX * BASELINE / disparity[valid]
    depth[depth > 10.0] = 0
    return {"depth": depth}


def write_depth(depth, bits=1):
    """MiDaS's write_depth: min-max to the bit range, zeros when the map is flat."""
    depth_min = depth.min()
    depth_max = depth.max()
    max_val = (2 ** (8 * bits)) - 1
    if depth_max - depth_min > np.finfo("float").eps:
        out = max_val * (depth - depth_min) / (depth_max - depth_min)
    else:
        out = np.zeros(depth.shape, dtype=depth.dtype)
    return {"out": out.astype("uint8")}


def depth_to_points(depth):
    """Back-projection: pixel grid by np.meshgrid, millimetres to metres, pinhole model."""
    height, width = depth.shape
    u, v = np.meshgrid(np.arange(width), np.arange(height))
    z = depth.astype(np.float32) / 1000.0
    x = (u - CX) * z / FX
    y = (v - CY) * z / FY
    points = np.stack((x, y, z), axis=-1).reshape(-1, 3)
    return {"points": points.astype(np.float32)}


def colorize_depth(depth):
    """Depth preview: clip to a range, normalise with a divide guard, applyColorMap."""
    d = np.clip(depth, 0.3, 5.0)
    norm = (d - d.min()) / (d.max() - d.min() + 1e-8)
    img = (255 * norm).astype(np.uint8)
    return {"color": cv2.applyColorMap(img, cv2.COLORMAP_INFERNO)}


_LUT = np.stack(
    [np.linspace(0, 255, 256), 255 - np.linspace(0, 255, 256), np.full(256, 128.0)], axis=1
).astype(np.uint8)


def colorize_lut(depth):
    """Depth preview by a NumPy look-up table indexed with the normalised uint8 map."""
    norm = cv2.normalize(depth, None, 0, 255, cv2.NORM_MINMAX).astype(np.uint8)
    return {"color": _LUT[norm]}


def fill_holes(depth):
    """Hole filling: zeros take the largest of their four neighbours, three passes."""
    filled = depth.copy()
    for _ in range(3):
        padded = np.pad(filled, 1, mode="edge")
        neighbours = np.maximum(
            np.maximum(padded[:-2, 1:-1], padded[2:, 1:-1]),
            np.maximum(padded[1:-1, :-2], padded[1:-1, 2:]),
        )
        filled = np.where(filled == 0, neighbours, filled)
    return {"filled": filled}


def lr_consistency(disp_left, disp_right):
    """Left-right check: sample the right disparity at x - d, invalidate disagreements."""
    h, w = disp_left.shape
    xs = np.arange(w)[None, :] - np.round(disp_left).astype(np.int64)
    xs = np.clip(xs, 0, w - 1)
    warped = np.take_along_axis(disp_right, xs, axis=1)
    out = disp_left.copy()
    out[np.abs(disp_left - warped) > 1.0] = 0
    return {"disp": out}


# ------------------------------------------------------------------ video / temporal
class MotionDetector:
    """Frame differencing with the previous grey frame kept on the object."""

    def __init__(self, threshold=25):
        self.threshold = threshold
        self.prev = None

    def __call__(self, frame):
        gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
        gray = cv2.GaussianBlur(gray, (5, 5), 0)
        if self.prev is None:
            self.prev = gray
            return np.zeros_like(gray)
        delta = cv2.absdiff(self.prev, gray)
        self.prev = gray
        _, mask = cv2.threshold(delta, self.threshold, 255, cv2.THRESH_BINARY)
        return cv2.dilate(mask, None, iterations=1)


def motion_mask(frame0, frame1):
    """A detector warmed on the first frame, then the mask of the second."""
    detector = MotionDetector()
    detector(frame0)
    return {"mask": detector(frame1)}


class RunningAverage:
    """Background model: exponential running average kept in self.avg."""

    def __init__(self, alpha=0.3):
        self.alpha = alpha
        self.avg = None

    def update(self, frame):
        frame = frame.astype(np.float32)
        if self.avg is None:
            self.avg = frame
        else:
            self.avg = self.alpha * frame + (1 - self.alpha) * self.avg
        return self.avg


def background_subtract(frame0, frame1, frame2):
    """Running-average background of three frames, foreground of the last."""
    model = RunningAverage()
    for f in (frame0, frame1, frame2):
        bg = model.update(cv2.cvtColor(f, cv2.COLOR_BGR2GRAY))
    fg = np.abs(cv2.cvtColor(frame2, cv2.COLOR_BGR2GRAY).astype(np.float32) - bg)
    return {"background": bg, "foreground": (fg > 20).astype(np.uint8) * 255}


def accumulate_weighted(frame0, frame1, frame2):
    """PyImageSearch's motion detector: cv2.accumulateWeighted into a float average."""
    avg = None
    for f in (frame0, frame1, frame2):
        gray = cv2.cvtColor(f, cv2.COLOR_BGR2GRAY)
        if avg is None:
            avg = gray.copy().astype("float")
            continue
        cv2.accumulateWeighted(gray, avg, 0.5)
    delta = cv2.absdiff(gray, cv2.convertScaleAbs(avg))
    return {"delta": delta}


def deque_smoothing(frame0, frame1, frame2):
    """Temporal smoothing: the last frames in a deque(maxlen=...), averaged with np.mean."""
    history = deque(maxlen=2)
    for f in (frame0, frame1, frame2):
        history.append(f.astype(np.float32))
    return {"smooth": np.mean(history, axis=0)}


# ------------------------------------------------------------------ detection
ANCHORS = np.array([[10, 13], [16, 30], [33, 23]], dtype=np.float32)
N_CLS, GRID_H, GRID_W, STRIDE = 4, 6, 8, 8


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def yolo_decode(pred):
    """YOLOv3 head: (A*(5+C), H, W) to boxes; sigmoid xy + meshgrid offsets, exp wh."""
    na = len(ANCHORS)
    pred = pred.reshape(na, 5 + N_CLS, GRID_H, GRID_W).transpose(0, 2, 3, 1)
    xv, yv = np.meshgrid(np.arange(GRID_W), np.arange(GRID_H))
    grid = np.stack((xv, yv), 2).reshape(1, GRID_H, GRID_W, 2).astype(np.float32)
    xy = (sigmoid(pred[..., :2]) + grid) * STRIDE
    wh = np.exp(pred[..., 2:4]) * ANCHORS.reshape(na, 1, 1, 2)
    conf = sigmoid(pred[..., 4:5]) * sigmoid(pred[..., 5:])
    boxes = np.concatenate([xy - wh / 2, xy + wh / 2], axis=-1).reshape(-1, 4)
    return {"boxes": boxes, "scores": conf.reshape(-1, N_CLS)}


def softmax_classes(logits):
    """Class probabilities by a max-subtracted softmax, best class and its score."""
    e = np.exp(logits - np.max(logits, axis=-1, keepdims=True))
    probs = e / e.sum(axis=-1, keepdims=True)
    return {"probs": probs, "label": probs.argmax(-1), "score": probs.max(-1)}


VARIANCES = [0.1, 0.2]


def retinaface_decode(loc, priors):
    """RetinaFace's decode: centre/size from priors, then corners by in-place writes."""
    boxes = np.concatenate(
        (
            priors[:, :2] + loc[:, :2] * VARIANCES[0] * priors[:, 2:],
            priors[:, 2:] * np.exp(loc[:, 2:] * VARIANCES[1]),
        ),
        1,
    )
    boxes[:, :2] -= boxes[:, 2:] / 2
    boxes[:, 2:] += boxes[:, :2]
    return {"boxes": boxes}


def topk_argpartition(scores):
    """Top-k by np.argpartition, then the k sorted by score (a fixed k)."""
    k = 5
    idx = np.argpartition(-scores, k)[:k]
    idx = idx[np.argsort(-scores[idx])]
    return {"idx": idx, "top": scores[idx]}


def scale_boxes_back(boxes):
    """Letterbox boxes back to a 120x160 original: remove the pad, divide the gain, clip."""
    img1_shape, img0_shape = (64, 64), (120, 160)
    gain = min(img1_shape[0] / img0_shape[0], img1_shape[1] / img0_shape[1])
    pad = (img1_shape[1] - img0_shape[1] * gain) / 2, (img1_shape[0] - img0_shape[0] * gain) / 2
    boxes[:, [0, 2]] -= pad[0]
    boxes[:, [1, 3]] -= pad[1]
    boxes[:, :4] /= gain
    boxes[:, [0, 2]] = boxes[:, [0, 2]].clip(0, img0_shape[1])
    boxes[:, [1, 3]] = boxes[:, [1, 3]].clip(0, img0_shape[0])
    return {"boxes": boxes}


def score_filter(boxes, scores):
    """Detections above a score threshold by a boolean mask (as many as pass)."""
    mask = scores > 0.5
    return {"boxes": boxes[mask], "scores": scores[mask]}


def py_cpu_nms(dets, thresh=0.3):
    """The Fast R-CNN greedy NMS: argsort, a while loop, IoU against the best."""
    x1, y1, x2, y2, scores = dets[:, 0], dets[:, 1], dets[:, 2], dets[:, 3], dets[:, 4]
    areas = (x2 - x1 + 1) * (y2 - y1 + 1)
    order = scores.argsort()[::-1]
    keep = []
    while order.size > 0:
        i = order[0]
        keep.append(i)
        xx1 = np.maximum(x1[i], x1[order[1:]])
        yy1 = np.maximum(y1[i], y1[order[1:]])
        xx2 = np.minimum(x2[i], x2[order[1:]])
        yy2 = np.minimum(y2[i], y2[order[1:]])
        w = np.maximum(0.0, xx2 - xx1 + 1)
        h = np.maximum(0.0, yy2 - yy1 + 1)
        inter = w * h
        ovr = inter / (areas[i] + areas[order[1:]] - inter)
        inds = np.where(ovr <= thresh)[0]
        order = order[inds + 1]
    return {"keep": np.array(keep)}


# ------------------------------------------------------------------ inputs
def _image(r, h=48, w=64):
    return harness._image(r, h, w)


def _disparity(r):
    d = r.uniform(0.5, 20.0, size=(48, 64)).astype(np.float32)
    d[r.uniform(size=d.shape) < 0.2] = 0.0
    return d


def _depth_m(r):
    return r.uniform(0.1, 6.0, size=(48, 64)).astype(np.float32)


def _depth_mm(r):
    return r.integers(0, 5000, size=(48, 64)).astype(np.uint16)


def _holes(r):
    d = r.uniform(0.5, 4.0, size=(48, 64)).astype(np.float32)
    d[r.uniform(size=d.shape) < 0.3] = 0.0
    return d


def _frames(r, n=3):
    base = _image(r)
    out = {}
    for i in range(n):
        f = base.astype(np.int16) + r.integers(-40, 41, size=base.shape)
        out[f"frame{i}"] = np.clip(f, 0, 255).astype(np.uint8)
    return out


def _boxes(r, n=30):
    xy = r.uniform(0, 60, size=(n, 2))
    wh = r.uniform(2, 30, size=(n, 2))
    return np.concatenate([xy, xy + wh], axis=1).astype(np.float32)


def _dets(r):
    return np.concatenate([_boxes(r), r.uniform(size=(30, 1))], axis=1).astype(np.float32)


def _priors(r):
    centres = r.uniform(0, 1, size=(40, 2))
    return np.concatenate([centres, r.uniform(0.05, 0.3, size=(40, 2))], 1).astype(np.float32)


PIPELINES = [
    P("disparity_to_depth", disparity_to_depth, lambda r: {"disparity": _disparity(r)}),
    P("write_depth", write_depth, lambda r: {"depth": _depth_m(r)}),
    P("depth_to_points", depth_to_points, lambda r: {"depth": _depth_mm(r)}),
    P("colorize_depth", colorize_depth, lambda r: {"depth": _depth_m(r)}),
    P("colorize_lut", colorize_lut, lambda r: {"depth": _depth_m(r)}),
    P("fill_holes", fill_holes, lambda r: {"depth": _holes(r)}),
    P(
        "lr_consistency",
        lr_consistency,
        lambda r: {"disp_left": _disparity(r), "disp_right": _disparity(r)},
    ),
    P("motion_mask", motion_mask, lambda r: _frames(r, 2)),
    P("background_subtract", background_subtract, _frames),
    P("accumulate_weighted", accumulate_weighted, _frames),
    P("deque_smoothing", deque_smoothing, _frames),
    P(
        "yolo_decode",
        yolo_decode,
        lambda r: {"pred": r.normal(size=(1, 3 * (5 + N_CLS), GRID_H, GRID_W)).astype(np.float32)},
    ),
    P(
        "softmax_classes",
        softmax_classes,
        lambda r: {"logits": r.normal(0, 3, size=(20, 10)).astype(np.float32)},
    ),
    P(
        "retinaface_decode",
        retinaface_decode,
        lambda r: {"loc": r.normal(size=(40, 4)).astype(np.float32), "priors": _priors(r)},
    ),
    P(
        "topk_argpartition",
        topk_argpartition,
        lambda r: {"scores": r.uniform(size=50).astype(np.float32)},
    ),
    P("scale_boxes_back", scale_boxes_back, lambda r: {"boxes": _boxes(r)}),
    P(
        "score_filter",
        score_filter,
        lambda r: {"boxes": _boxes(r), "scores": r.uniform(size=30).astype(np.float32)},
    ),
    P("py_cpu_nms", py_cpu_nms, lambda r: {"dets": _dets(r)}),
]


# ------------------------------------------------------------------ one-line variants
def disparity_divide_where(disparity):
    """np.divide with out= and where= (the division guard many stereo repos use)."""
    depth = np.divide(FX * BASELINE, disparity, out=np.zeros_like(disparity), where=disparity > 0)
    return {"depth": depth}


def disparity_np_where(disparity):
    """np.where with a guarded denominator (no masked write)."""
    return {"depth": np.where(disparity > 0, FX * BASELINE / np.maximum(disparity, 1e-6), 0.0)}


def points_indices(depth):
    """Back-projection with np.indices and a list in np.stack."""
    v, u = np.indices(depth.shape)
    z = depth * 0.001
    return {"points": np.stack([(u - CX) * z / FX, (v - CY) * z / FY, z], -1).reshape(-1, 3)}


def points_mgrid(depth):
    """Back-projection with np.mgrid over len(depth) and depth.shape[1]."""
    v, u = np.mgrid[0 : len(depth), 0 : depth.shape[1]]
    z = depth / 1000.0
    return {"xyz": np.dstack(((u - CX) * z / FX, (v - CY) * z / FY, z))}


def valid_points(depth):
    """Only the valid points of the cloud (a boolean selection of rows)."""
    h, w = depth.shape
    u, v = np.meshgrid(np.arange(w), np.arange(h))
    z = depth.reshape(-1) / 1000.0
    pts = np.stack([(u.reshape(-1) - CX) * z / FX, (v.reshape(-1) - CY) * z / FY, z], 1)
    return {"points": pts[z > 0.5]}


def lut_take(depth):
    """The look-up table applied by np.take(axis=0) instead of indexing."""
    norm = cv2.normalize(depth, None, 0, 255, cv2.NORM_MINMAX).astype(np.uint8)
    return {"color": np.take(_LUT, norm, axis=0)}


def lut_cv2(depth):
    """The look-up table applied by cv2.LUT on a 3-channel grey image."""
    norm = cv2.normalize(depth, None, 0, 255, cv2.NORM_MINMAX).astype(np.uint8)
    return {"color": cv2.LUT(cv2.merge([norm, norm, norm]), _LUT[None])}


def holes_reduce(depth):
    """Hole filling by np.maximum.reduce over a tuple of np.roll-ed copies, in place."""
    filled = depth.copy()
    shifted = np.maximum.reduce(
        (
            np.roll(filled, 1, 0),
            np.roll(filled, -1, 0),
            np.roll(filled, 1, 1),
            np.roll(filled, -1, 1),
        )
    )
    filled[filled == 0] = shifted[filled == 0]
    return {"filled": filled}


def deque_stack(frame0, frame1, frame2):
    """The deque of frames stacked as a list first."""
    history = deque([], 2)
    for f in (frame0, frame1, frame2):
        history.append(f)
    return {"smooth": np.stack(list(history)).astype(np.float32).mean(0)}


def clip_out(boxes):
    """Box clipping column by column with np.clip(..., out=column view)."""
    np.clip(boxes[:, 0], 0, 40, out=boxes[:, 0])
    np.clip(boxes[:, 1], 0, 40, out=boxes[:, 1])
    np.clip(boxes[:, 2], 0, 40, out=boxes[:, 2])
    np.clip(boxes[:, 3], 0, 40, out=boxes[:, 3])
    return {"boxes": boxes}


def clip_step_slices(boxes):
    """Box clipping on x and y columns by 0::2 / 1::2 slices, in place."""
    boxes[:, 0::2] = np.clip(boxes[:, 0::2], 0, 40)
    boxes[:, 1::2] = np.clip(boxes[:, 1::2], 0, 30)
    return {"boxes": boxes}


def retinaface_len(loc, priors):
    """RetinaFace's decode with len() of the priors and a tuple of columns."""
    boxes = np.zeros((len(priors), 4), dtype=np.float32)
    boxes[:, :2] = priors[:, :2] + loc[:, :2] * 0.1 * priors[:, 2:]
    boxes[:, 2:] = priors[:, 2:] * np.exp(loc[:, 2:] * 0.2)
    boxes[:, :2] = boxes[:, :2] - boxes[:, 2:] / 2
    boxes[:, 2:] = boxes[:, 2:] + boxes[:, :2]
    return {"boxes": boxes}


def topk_argsort(scores):
    """Top-k by a full argsort reversed with [::-1]."""
    idx = np.argsort(scores)[::-1][:5]
    return {"idx": idx, "top": scores[idx]}


def softmax_unstable(logits):
    """Softmax as np.exp(x) / np.sum(np.exp(x), axis=1)[:, None] with scores."""
    e = np.exp(logits)
    return {"probs": e / np.sum(e, axis=1)[:, None]}


def xywh2xyxy_inplace(boxes):
    """xywh to corners written into a copy column by column (x.shape[0] sized)."""
    y = np.empty((boxes.shape[0], 4), dtype=boxes.dtype)
    y[:, 0] = boxes[:, 0] - boxes[:, 2] / 2
    y[:, 1] = boxes[:, 1] - boxes[:, 3] / 2
    y[:, 2] = boxes[:, 0] + boxes[:, 2] / 2
    y[:, 3] = boxes[:, 1] + boxes[:, 3] / 2
    return {"xyxy": y}


def masks_reduce(depth):
    """Valid-depth mask combined by np.logical_and.reduce over a list of conditions."""
    valid = np.logical_and.reduce([depth > 0.3, depth < 5.0, np.isfinite(depth)])
    return {"depth": np.where(valid, depth, 0.0)}


def interp_to_uint8(depth):
    """Depth to 0..255 by np.interp between the map's own min and max (a tuple of two)."""
    scaled = np.interp(depth, (depth.min(), depth.max()), (0, 255))
    return {"u8": scaled.astype(np.uint8)}


def nan_to_num_depth(depth):
    """Invalid depth as NaN, cleaned by np.nan_to_num and an isnan masked write."""
    d = np.where(depth < 0.5, np.nan, depth)
    inv = 1.0 / d
    inv[np.isnan(inv)] = 0.0
    return {"inv": np.nan_to_num(inv, nan=0.0, posinf=0.0), "d": np.nan_to_num(d)}


def letterbox_list_offsets(boxes):
    """Boxes back to the original image by a Python list of pads and a gain."""
    r, dw, dh = 0.4, 0.0, 8.0
    return {"boxes": (boxes - [dw, dh, dw, dh]) / r}


def gather_best_class(logits):
    """The best class's score by fancy indexing with np.arange(len(x)) and the argmax."""
    cls = np.argmax(logits, axis=1)
    return {"cls": cls, "score": logits[np.arange(len(logits)), cls]}


def expit_decode(pred):
    """YOLO decode with scipy.special.expit and np.tile of the grid over anchors."""
    from scipy.special import expit

    p = pred.reshape(3, 5 + N_CLS, GRID_H * GRID_W).transpose(0, 2, 1)
    gy, gx = np.divmod(np.arange(GRID_H * GRID_W), GRID_W)
    grid = np.tile(np.stack([gx, gy], 1)[None], (3, 1, 1))
    xy = (expit(p[..., :2]) + grid) * STRIDE
    return {"xy": xy, "conf": expit(p[..., 4])}


def dnn_nms_boxes(dets):
    """OpenCV's NMSBoxes on Python lists from .tolist() (the usual cv2.dnn YOLO demo)."""
    boxes = dets[:, :4].copy()
    boxes[:, 2:] -= boxes[:, :2]
    idx = cv2.dnn.NMSBoxes(boxes.tolist(), dets[:, 4].tolist(), 0.3, 0.4)
    return {"kept": dets[np.asarray(idx).reshape(-1)]}


def masked_mean_depth(depth):
    """Mean of the valid depth through a masked array (np.ma.masked_equal)."""
    m = np.ma.masked_equal(depth, 0)
    return {"mean": np.asarray([m.mean()], dtype=np.float32)}


def median_background(frame0, frame1, frame2):
    """Background as the per-pixel median of the stacked recent frames."""
    stack = np.stack([frame0, frame1, frame2], axis=0)
    return {"bg": np.median(stack, axis=0).astype(np.uint8)}


def addweighted_ema(frame0, frame1, frame2):
    """Running average by cv2.addWeighted into the same variable each frame."""
    avg = frame0.astype(np.float32)
    for f in (frame1, frame2):
        avg = cv2.addWeighted(f.astype(np.float32), 0.3, avg, 0.7, 0)
    return {"avg": avg}


_K = np.array([[FX, 0, CX], [0, FY, CY], [0, 0, 1]])


def points_inv_k(depth):
    """Back-projection by inv(K) @ homogeneous pixels, scaled by the depth row."""
    h, w = depth.shape
    u, v = np.meshgrid(np.arange(w), np.arange(h))
    pix = np.stack([u, v, np.ones_like(u)], -1).reshape(-1, 3).T
    pts = (np.linalg.inv(_K) @ pix) * depth.reshape(1, -1)
    return {"points": pts.T}


def nan_normalize(depth):
    """Invalid depth as NaN, normalised by np.nanmin / np.nanmax, NaN back to 0."""
    d = depth.astype(np.float32)
    d[d < 0.5] = np.nan
    lo, hi = np.nanmin(d), np.nanmax(d)
    out = (d - lo) / (hi - lo)
    return {"norm": np.nan_to_num(out)}


def yolov8_decode(pred):
    """YOLOv8 output (4 + C, N): transpose, best class by max / argmax, xywh to xyxy."""
    p = pred[0].T
    boxes, scores = p[:, :4], p[:, 4:]
    conf = scores.max(1)
    cls = scores.argmax(1)
    xyxy = np.concatenate([boxes[:, :2] - boxes[:, 2:] / 2, boxes[:, :2] + boxes[:, 2:] / 2], 1)
    return {"xyxy": xyxy, "conf": conf, "cls": cls}


def reproject_q(disparity):
    """Stereo: cv2.reprojectImageTo3D with a Q matrix (OpenCV's own back-projection)."""
    q = np.float32([[1, 0, 0, -CX], [0, 1, 0, -CY], [0, 0, 0, FX], [0, 0, 1 / BASELINE, 0]])
    return {"xyz": cv2.reprojectImageTo3D(disparity, q)}


class FrameBuffer:
    """Ring buffer of the last n frames in a preallocated array, rolled each frame."""

    def __init__(self, n, shape):
        self.buf = np.zeros((n, *shape), dtype=np.float32)
        self.count = 0

    def push(self, frame):
        self.buf = np.roll(self.buf, -1, axis=0)
        self.buf[-1] = frame
        self.count += 1
        return self.buf[-min(self.count, len(self.buf)) :].mean(axis=0)


def ring_buffer_roll(frame0, frame1, frame2):
    """Temporal mean over a rolled ring buffer filled frame by frame."""
    ring = FrameBuffer(4, frame0.shape)
    for f in (frame0, frame1, frame2):
        mean = ring.push(f)
    return {"mean": mean}


def ring_buffer_index(frame0, frame1, frame2):
    """The same buffer written at i % n, reduced over the filled slots."""
    buf = np.zeros((2, *frame0.shape), np.float32)
    for i, f in enumerate((frame0, frame1, frame2)):
        buf[i % len(buf)] = f
    return {"mean": buf.mean(0)}


def clip_method_out(boxes):
    """Box clipping by the ndarray.clip method with out= on each column view."""
    boxes[:, 0].clip(0, 40, out=boxes[:, 0])
    boxes[:, 2].clip(0, 40, out=boxes[:, 2])
    return {"boxes": boxes}


def sort_dets_by_score(dets):
    """Detections re-ordered best first by argsort()[::-1] of the score column."""
    return {"dets": dets[dets[:, 4].argsort()[::-1]]}


_BOXES = lambda r: {"boxes": _boxes(r)}  # noqa: E731

VARIANTS = [
    P("disparity_divide_where", disparity_divide_where, lambda r: {"disparity": _disparity(r)}),
    P("disparity_np_where", disparity_np_where, lambda r: {"disparity": _disparity(r)}),
    P("points_indices", points_indices, lambda r: {"depth": _depth_m(r) * 1000}),
    P("points_mgrid", points_mgrid, lambda r: {"depth": _depth_m(r) * 1000}),
    P("valid_points", valid_points, lambda r: {"depth": _depth_mm(r)}),
    P("lut_take", lut_take, lambda r: {"depth": _depth_m(r)}),
    P("lut_cv2", lut_cv2, lambda r: {"depth": _depth_m(r)}),
    P("holes_reduce", holes_reduce, lambda r: {"depth": _holes(r)}),
    P("deque_stack", deque_stack, _frames),
    P("clip_out", clip_out, _BOXES),
    P("clip_step_slices", clip_step_slices, _BOXES),
    P(
        "retinaface_len",
        retinaface_len,
        lambda r: {"loc": r.normal(size=(40, 4)).astype(np.float32), "priors": _priors(r)},
    ),
    P("topk_argsort", topk_argsort, lambda r: {"scores": r.uniform(size=50).astype(np.float32)}),
    P(
        "softmax_unstable",
        softmax_unstable,
        lambda r: {"logits": r.normal(0, 3, size=(20, 10)).astype(np.float32)},
    ),
    P("xywh2xyxy_inplace", xywh2xyxy_inplace, _BOXES),
    P("masks_reduce", masks_reduce, lambda r: {"depth": _depth_m(r)}),
    P("interp_to_uint8", interp_to_uint8, lambda r: {"depth": _depth_m(r)}),
    P("nan_to_num_depth", nan_to_num_depth, lambda r: {"depth": _depth_m(r)}),
    P("letterbox_list_offsets", letterbox_list_offsets, _BOXES),
    P(
        "gather_best_class",
        gather_best_class,
        lambda r: {"logits": r.normal(0, 3, size=(20, 10)).astype(np.float32)},
    ),
    P(
        "expit_decode",
        expit_decode,
        lambda r: {"pred": r.normal(size=(1, 3 * (5 + N_CLS), GRID_H, GRID_W)).astype(np.float32)},
    ),
    P("dnn_nms_boxes", dnn_nms_boxes, lambda r: {"dets": _dets(r)}),
    P("masked_mean_depth", masked_mean_depth, lambda r: {"depth": _holes(r)}),
    P("median_background", median_background, _frames),
    P("addweighted_ema", addweighted_ema, _frames),
    P("points_inv_k", points_inv_k, lambda r: {"depth": _depth_m(r)}),
    P("nan_normalize", nan_normalize, lambda r: {"depth": _depth_m(r)}),
    P(
        "yolov8_decode",
        yolov8_decode,
        lambda r: {"pred": r.uniform(0, 64, size=(1, 4 + N_CLS, 40)).astype(np.float32)},
    ),
    P("reproject_q", reproject_q, lambda r: {"disparity": _disparity(r)}),
    P("ring_buffer_roll", ring_buffer_roll, _frames),
    P("ring_buffer_index", ring_buffer_index, _frames),
    P("clip_method_out", clip_method_out, _BOXES),
    P("sort_dets_by_score", sort_dets_by_score, lambda r: {"dets": _dets(r)}),
]


def main(names: list[str]) -> dict[str, dict[str, int]]:
    return harness.run_probe(names, PIPELINES, VARIANTS, "depth")


if __name__ == "__main__":
    main(sys.argv[1:])
