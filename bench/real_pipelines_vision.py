"""Vision pre- and post-processing from public projects x backends: right, loud, silent, crash?

Fourteen pipelines written in the idioms of well-known vision code (nobody tuned patchport
to them): a detector's letterbox class and box rescaling, a predictor that resizes with PIL,
a config-driven test pipeline with in-place OpenCV normalisation and padding to a stride,
segmentation colouring with a palette, depth-network transforms and depth colouring, an
optical-flow padder and colour wheel, a keypoint detector's heatmap and max-pool NMS, face
detection input and face alignment, top-down pose decoding, CLIP / torchvision processors,
an augmentation library's CLAHE and normalisation, and classic OpenCV tutorials. Each is
traced once, exported with every backend and replayed on fresh inputs against the plain
code; the classes are those of ``bench/real_pipelines.py`` (whose harness is reused).
Run: python bench/real_pipelines_vision.py [pipeline-name ...]; with ``--variants``, the
one-line variants of the data-dependent idioms (each must be right or loud, never silent);
traced with patching=["opencv", "pil"], or ["opencv"] alone with ``--before``.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import cv2
import numpy as np
import torch
import torch.nn.functional as F
from cv2 import INTER_LINEAR, copyMakeBorder
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
import real_pipelines as harness  # noqa: E402

harness.HERE = str(Path(__file__).resolve())  # the user's lines are in this file
torch.manual_seed(0)


# ------------------------------------------------- detector letterbox (class, labels dict)
class LetterBox:
    """Resize keeping the aspect ratio, pad to the network shape (grey 114), stride-aware."""

    def __init__(self, new_shape=(64, 64), auto=False, scaleup=True, center=True, stride=32):
        self.new_shape = new_shape
        self.auto = auto
        self.scaleup = scaleup
        self.center = center
        self.stride = stride

    def __call__(self, labels=None, image=None):
        if labels is None:
            labels = {}
        img = labels.get("img") if image is None else image
        shape = img.shape[:2]
        new_shape = labels.pop("rect_shape", self.new_shape)
        if isinstance(new_shape, int):
            new_shape = (new_shape, new_shape)
        r = min(new_shape[0] / shape[0], new_shape[1] / shape[1])
        if not self.scaleup:
            r = min(r, 1.0)
        new_unpad = int(round(shape[1] * r)), int(round(shape[0] * r))
        dw, dh = new_shape[1] - new_unpad[0], new_shape[0] - new_unpad[1]
        if self.auto:
            dw, dh = np.mod(dw, self.stride), np.mod(dh, self.stride)
        if self.center:
            dw /= 2
            dh /= 2
        if shape[::-1] != new_unpad:
            img = cv2.resize(img, new_unpad, interpolation=INTER_LINEAR)
        top, bottom = int(round(dh - 0.1)) if self.center else 0, int(round(dh + 0.1))
        left, right = int(round(dw - 0.1)) if self.center else 0, int(round(dw + 0.1))
        img = copyMakeBorder(img, top, bottom, left, right, cv2.BORDER_CONSTANT, value=(114,) * 3)
        if labels:
            labels["img"] = img
            return labels
        return img


def ultralytics_letterbox(bgr):
    """Predictor.preprocess: letterbox a list, stack, BGR->RGB + BHWC->BCHW, /= 255 in place."""
    im = np.stack([LetterBox((64, 64), auto=False)(image=x) for x in [bgr]])
    im = im[..., ::-1].transpose((0, 3, 1, 2))
    im = np.ascontiguousarray(im)
    im = torch.from_numpy(im)
    im = im.float()
    im /= 255
    return {"images": im.numpy()}


# ------------------------------------------------- detector box post-processing (no NMS)
def xywh2xyxy(x):
    """Centre/size boxes to corners; works on NumPy arrays and torch tensors."""
    y = torch.empty_like(x) if isinstance(x, torch.Tensor) else np.empty_like(x)
    xy = x[..., :2]
    wh = x[..., 2:] / 2
    y[..., :2] = xy - wh
    y[..., 2:] = xy + wh
    return y


def clip_boxes(boxes, shape):
    if isinstance(boxes, torch.Tensor):
        boxes[..., 0] = boxes[..., 0].clamp(0, shape[1])
        boxes[..., 1] = boxes[..., 1].clamp(0, shape[0])
        boxes[..., 2] = boxes[..., 2].clamp(0, shape[1])
        boxes[..., 3] = boxes[..., 3].clamp(0, shape[0])
    else:
        boxes[..., [0, 2]] = boxes[..., [0, 2]].clip(0, shape[1])
        boxes[..., [1, 3]] = boxes[..., [1, 3]].clip(0, shape[0])
    return boxes


def scale_boxes(img1_shape, boxes, img0_shape, padding=True):
    gain = min(img1_shape[0] / img0_shape[0], img1_shape[1] / img0_shape[1])
    pad = (
        round((img1_shape[1] - img0_shape[1] * gain) / 2 - 0.1),
        round((img1_shape[0] - img0_shape[0] * gain) / 2 - 0.1),
    )
    if padding:
        boxes[..., 0] -= pad[0]
        boxes[..., 1] -= pad[1]
        boxes[..., 2] -= pad[0]
        boxes[..., 3] -= pad[1]
    boxes[..., :4] /= gain
    return clip_boxes(boxes, img0_shape)


def scale_coords(img1_shape, coords, img0_shape):
    gain = min(img1_shape[0] / img0_shape[0], img1_shape[1] / img0_shape[1])
    pad = (img1_shape[1] - img0_shape[1] * gain) / 2, (img1_shape[0] - img0_shape[0] * gain) / 2
    coords[..., 0] -= pad[0]
    coords[..., 1] -= pad[1]
    coords[..., 0] /= gain
    coords[..., 1] /= gain
    return clip_boxes(np.concatenate([coords, coords], -1), img0_shape)[..., :2]


def ultralytics_boxes(pred, kpts):
    """Head output (torch) to boxes in the original image, keypoints (NumPy) likewise."""
    prediction = torch.from_numpy(pred).transpose(-1, -2)  # (1, 84, N) -> (1, N, 84)
    prediction[..., :4] = xywh2xyxy(prediction[..., :4])
    conf, j = prediction[..., 4:].max(-1, keepdim=True)
    boxes = scale_boxes((64, 64), prediction[0, :, :4].clone(), (48, 80))
    coords = scale_coords((64, 64), kpts.copy(), (48, 80))
    return {"boxes": boxes.numpy(), "conf": conf.numpy(), "cls": j.float().numpy(), "kpts": coords}


# ------------------------------------------------- predictor that resizes with PIL
def get_output_shape(oldh, oldw, short_edge_length, max_size):
    h, w = oldh, oldw
    size = short_edge_length * 1.0
    scale = size / min(h, w)
    if h < w:
        newh, neww = size, scale * w
    else:
        newh, neww = scale * h, size
    if max(newh, neww) > max_size:
        scale = max_size * 1.0 / max(newh, neww)
        newh = newh * scale
        neww = neww * scale
    return int(newh + 0.5), int(neww + 0.5)


class ResizeTransform:
    def __init__(self, h, w, new_h, new_w, interp=Image.BILINEAR):
        self.h, self.w, self.new_h, self.new_w, self.interp = h, w, new_h, new_w, interp

    def apply_image(self, img, interp=None):
        assert img.shape[:2] == (self.h, self.w)
        if img.dtype == np.uint8:
            pil_image = Image.fromarray(img)
            pil_image = pil_image.resize((self.new_w, self.new_h), interp or self.interp)
            return np.asarray(pil_image)
        shape = list(img.shape)
        shape_4d = shape[:2] + [1] * (4 - len(shape)) + shape[2:]
        img = torch.from_numpy(img).view(shape_4d).permute(2, 3, 0, 1)
        img = F.interpolate(img, (self.new_h, self.new_w), mode="bilinear", align_corners=False)
        shape[:2] = (self.new_h, self.new_w)
        return img.permute(2, 3, 0, 1).view(shape).numpy()


_PIXEL_MEAN = torch.tensor([103.53, 116.28, 123.675]).view(-1, 1, 1)
_PIXEL_STD = torch.tensor([57.375, 57.12, 58.395]).view(-1, 1, 1)


def detectron2_predictor(original_image):
    """DefaultPredictor: RGB flip, shortest-edge resize (PIL), CHW float, normalise, pad to 32."""
    original_image = original_image[:, :, ::-1]
    height, width = original_image.shape[:2]
    newh, neww = get_output_shape(height, width, 40, 64)
    image = ResizeTransform(height, width, newh, neww).apply_image(original_image)
    image = torch.as_tensor(image.astype("float32").transpose(2, 0, 1))
    image = (image - _PIXEL_MEAN) / _PIXEL_STD
    stride = 32
    max_size = (torch.tensor(image.shape[-2:]) + (stride - 1)).div(stride, rounding_mode="floor")
    max_size = max_size * stride
    padding = [0, int(max_size[-1]) - image.shape[-1], 0, int(max_size[-2]) - image.shape[-2]]
    batched = F.pad(image, padding, value=0.0).unsqueeze_(0)
    return {"images": batched.numpy()}


# ------------------------------------------------- config-driven test pipeline (in place)
cv2_interp_codes = {"nearest": cv2.INTER_NEAREST, "bilinear": cv2.INTER_LINEAR}
border_type = {"constant": cv2.BORDER_CONSTANT, "edge": cv2.BORDER_REPLICATE}


def _scale_size(size, scale):
    w, h = size
    return int(w * float(scale) + 0.5), int(h * float(scale) + 0.5)


def rescale_size(old_size, scale):
    w, h = old_size
    max_long_edge, max_short_edge = max(scale), min(scale)
    scale_factor = min(max_long_edge / max(h, w), max_short_edge / min(h, w))
    return _scale_size((w, h), scale_factor), scale_factor


def imresize(img, size, interpolation="bilinear", out=None):
    return cv2.resize(img, size, dst=out, interpolation=cv2_interp_codes[interpolation])


def imrescale(img, scale, interpolation="bilinear"):
    h, w = img.shape[:2]
    new_size, scale_factor = rescale_size((w, h), scale)
    return imresize(img, new_size, interpolation=interpolation), scale_factor


def imnormalize_(img, mean, std, to_rgb=True):
    assert img.dtype != np.uint8
    mean = np.float64(mean.reshape(1, -1))
    stdinv = 1 / np.float64(std.reshape(1, -1))
    if to_rgb:
        cv2.cvtColor(img, cv2.COLOR_BGR2RGB, img)
    cv2.subtract(img, mean, img)
    cv2.multiply(img, stdinv, img)
    return img


def impad(img, *, shape=None, padding=None, pad_val=0, padding_mode="constant"):
    if shape is not None:
        width = max(shape[1] - img.shape[1], 0)
        height = max(shape[0] - img.shape[0], 0)
        padding = (0, 0, width, height)
    return cv2.copyMakeBorder(
        img,
        padding[1],
        padding[3],
        padding[0],
        padding[2],
        border_type[padding_mode],
        value=pad_val,
    )


def impad_to_multiple(img, divisor, pad_val=0):
    pad_h = int(np.ceil(img.shape[0] / divisor)) * divisor
    pad_w = int(np.ceil(img.shape[1] / divisor)) * divisor
    return impad(img, shape=(pad_h, pad_w), pad_val=pad_val)


class Resize:
    def __init__(self, img_scale, keep_ratio=True):
        self.img_scale, self.keep_ratio = img_scale, keep_ratio

    def __call__(self, results):
        img, scale_factor = imrescale(results["img"], self.img_scale)
        results["img"], results["scale_factor"] = img, scale_factor
        results["img_shape"] = img.shape
        return results


class Normalize:
    def __init__(self, mean, std, to_rgb=True):
        self.mean = np.array(mean, dtype=np.float32)
        self.std = np.array(std, dtype=np.float32)
        self.to_rgb = to_rgb

    def __call__(self, results):
        img = results["img"].copy().astype(np.float32)
        results["img"] = imnormalize_(img, self.mean, self.std, self.to_rgb)
        return results


class Pad:
    def __init__(self, size_divisor=None, pad_val=0):
        self.size_divisor, self.pad_val = size_divisor, pad_val

    def __call__(self, results):
        results["img"] = impad_to_multiple(results["img"], self.size_divisor, self.pad_val)
        results["pad_shape"] = results["img"].shape
        return results


class DefaultFormatBundle:
    def __call__(self, results):
        img = np.ascontiguousarray(results["img"].transpose(2, 0, 1))
        results["img"] = torch.from_numpy(img)
        return results


class Compose:
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, data):
        for t in self.transforms:
            data = t(data)
        return data


img_norm_cfg = dict(mean=[123.675, 116.28, 103.53], std=[58.395, 57.12, 57.375], to_rgb=True)
test_pipeline = Compose(
    [Resize((64, 40)), Normalize(**img_norm_cfg), Pad(size_divisor=32), DefaultFormatBundle()]
)


def mmdet_pipeline(img):
    data = test_pipeline(dict(img=img))
    return {"img": data["img"][None].numpy()}


# ------------------------------------------------- segmentation map colouring
PALETTE = [[128, 64, 128], [244, 35, 232], [70, 70, 70], [102, 102, 156], [190, 153, 153]]


def mmseg_palette(img, seg_logit):
    """Logits resized to the image, argmax, a palette per class, blended with the image."""
    seg_logit = F.interpolate(
        torch.from_numpy(seg_logit), size=img.shape[:2], mode="bilinear", align_corners=False
    )
    output = F.softmax(seg_logit, dim=1)
    seg = output.argmax(dim=1).cpu().numpy()[0]
    palette = np.array(PALETTE)
    color_seg = np.zeros((seg.shape[0], seg.shape[1], 3), dtype=np.uint8)
    for label, color in enumerate(palette):
        color_seg[seg == label, :] = color
    color_seg = color_seg[..., ::-1]
    opacity = 0.5
    img = img * (1 - opacity) + color_seg * opacity
    img = img.astype(np.uint8)
    return {"seg": seg, "overlay": img}


# ------------------------------------------------- depth network transforms + colouring
class DepthResize:
    """Resize to a multiple of 14/32 keeping the aspect ratio (lower bound)."""

    def __init__(
        self,
        width,
        height,
        keep_aspect_ratio=True,
        ensure_multiple_of=14,
        resize_method="lower_bound",
        image_interpolation_method=cv2.INTER_CUBIC,
    ):
        self.__width, self.__height = width, height
        self.__keep_aspect_ratio = keep_aspect_ratio
        self.__multiple_of = ensure_multiple_of
        self.__resize_method = resize_method
        self.__image_interpolation_method = image_interpolation_method

    def constrain_to_multiple_of(self, x, min_val=0, max_val=None):
        y = (np.round(x / self.__multiple_of) * self.__multiple_of).astype(int)
        if max_val is not None and y > max_val:
            y = (np.floor(x / self.__multiple_of) * self.__multiple_of).astype(int)
        if y < min_val:
            y = (np.ceil(x / self.__multiple_of) * self.__multiple_of).astype(int)
        return y

    def get_size(self, width, height):
        scale_height = self.__height / height
        scale_width = self.__width / width
        if self.__keep_aspect_ratio and self.__resize_method == "lower_bound":
            if scale_width > scale_height:
                scale_height = scale_width
            else:
                scale_width = scale_height
        new_height = self.constrain_to_multiple_of(scale_height * height, min_val=self.__height)
        new_width = self.constrain_to_multiple_of(scale_width * width, min_val=self.__width)
        return (new_width, new_height)

    def __call__(self, sample):
        width, height = self.get_size(sample["image"].shape[1], sample["image"].shape[0])
        sample["image"] = cv2.resize(
            sample["image"], (width, height), interpolation=self.__image_interpolation_method
        )
        return sample


class NormalizeImage:
    def __init__(self, mean, std):
        self.__mean, self.__std = mean, std

    def __call__(self, sample):
        sample["image"] = (sample["image"] - self.__mean) / self.__std
        return sample


class PrepareForNet:
    def __call__(self, sample):
        image = np.transpose(sample["image"], (2, 0, 1))
        sample["image"] = np.ascontiguousarray(image).astype(np.float32)
        return sample


depth_transform = Compose(
    [
        DepthResize(42, 42),
        NormalizeImage(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]),
        PrepareForNet(),
    ]
)


def depth_anything(raw_image, depth):
    """Input: RGB / 255 (float64), resize to a multiple of 14, normalise, CHW float32.
    Output: the network's depth resized back, min-max to 0..255, uint8, INFERNO colours."""
    image = cv2.cvtColor(raw_image, cv2.COLOR_BGR2RGB) / 255.0
    h, w = image.shape[:2]
    image = depth_transform({"image": image})["image"]
    image = torch.from_numpy(image).unsqueeze(0)
    depth = torch.from_numpy(depth)
    depth = F.interpolate(depth[None], (h, w), mode="bilinear", align_corners=False)[0, 0]
    depth = (depth - depth.min()) / (depth.max() - depth.min()) * 255.0
    depth = depth.cpu().numpy().astype(np.uint8)
    depth_color = cv2.applyColorMap(depth, cv2.COLORMAP_INFERNO)
    return {"image": image.numpy(), "depth": depth_color}


# ------------------------------------------------- optical flow: padder + colour wheel
class InputPadder:
    """Pads images such that dimensions are divisible by 8."""

    def __init__(self, dims, mode="sintel"):
        self.ht, self.wd = dims[-2:]
        pad_ht = (((self.ht // 8) + 1) * 8 - self.ht) % 8
        pad_wd = (((self.wd // 8) + 1) * 8 - self.wd) % 8
        if mode == "sintel":
            self._pad = [pad_wd // 2, pad_wd - pad_wd // 2, pad_ht // 2, pad_ht - pad_ht // 2]
        else:
            self._pad = [pad_wd // 2, pad_wd - pad_wd // 2, 0, pad_ht]

    def pad(self, *inputs):
        return [F.pad(x, self._pad, mode="replicate") for x in inputs]

    def unpad(self, x):
        ht, wd = x.shape[-2:]
        c = [self._pad[2], ht - self._pad[3], self._pad[0], wd - self._pad[1]]
        return x[..., c[0] : c[1], c[2] : c[3]]


def make_colorwheel():
    RY, YG, GC, CB, BM, MR = 15, 6, 4, 11, 13, 6
    ncols = RY + YG + GC + CB + BM + MR
    colorwheel = np.zeros((ncols, 3))
    col = 0
    colorwheel[0:RY, 0] = 255
    colorwheel[0:RY, 1] = np.floor(255 * np.arange(0, RY) / RY)
    col = col + RY
    colorwheel[col : col + YG, 0] = 255 - np.floor(255 * np.arange(0, YG) / YG)
    colorwheel[col : col + YG, 1] = 255
    col = col + YG
    colorwheel[col : col + GC, 1] = 255
    colorwheel[col : col + GC, 2] = np.floor(255 * np.arange(0, GC) / GC)
    col = col + GC
    colorwheel[col : col + CB, 1] = 255 - np.floor(255 * np.arange(CB) / CB)
    colorwheel[col : col + CB, 2] = 255
    col = col + CB
    colorwheel[col : col + BM, 2] = 255
    colorwheel[col : col + BM, 0] = np.floor(255 * np.arange(0, BM) / BM)
    col = col + BM
    colorwheel[col : col + MR, 2] = 255 - np.floor(255 * np.arange(MR) / MR)
    colorwheel[col : col + MR, 0] = 255
    return colorwheel


def flow_uv_to_colors(u, v, convert_to_bgr=False):
    flow_image = np.zeros((u.shape[0], u.shape[1], 3), np.uint8)
    colorwheel = make_colorwheel()
    ncols = colorwheel.shape[0]
    rad = np.sqrt(np.square(u) + np.square(v))
    a = np.arctan2(-v, -u) / np.pi
    fk = (a + 1) / 2 * (ncols - 1)
    k0 = np.floor(fk).astype(np.int32)
    k1 = k0 + 1
    k1[k1 == ncols] = 0
    f = fk - k0
    for i in range(colorwheel.shape[1]):
        tmp = colorwheel[:, i]
        col0 = tmp[k0] / 255.0
        col1 = tmp[k1] / 255.0
        col = (1 - f) * col0 + f * col1
        idx = rad <= 1
        col[idx] = 1 - rad[idx] * (1 - col[idx])
        col[~idx] = col[~idx] * 0.75
        ch_idx = 2 - i if convert_to_bgr else i
        flow_image[:, :, ch_idx] = np.floor(255 * col)
    return flow_image


def flow_to_image(flow_uv, clip_flow=None, convert_to_bgr=False):
    assert flow_uv.ndim == 3, "input flow must have three dimensions"
    assert flow_uv.shape[2] == 2, "input flow must have shape [H,W,2]"
    if clip_flow is not None:
        flow_uv = np.clip(flow_uv, 0, clip_flow)
    u = flow_uv[:, :, 0]
    v = flow_uv[:, :, 1]
    rad = np.sqrt(np.square(u) + np.square(v))
    rad_max = np.max(rad)
    epsilon = 1e-5
    u = u / (rad_max + epsilon)
    v = v / (rad_max + epsilon)
    return flow_uv_to_colors(u, v, convert_to_bgr)


_FLOW_NET = torch.nn.Conv2d(6, 2, 3, padding=1)


def raft_flow_viz(frame1, frame2):
    """Demo: frames to NCHW float, pad to /8 (replicate), 'network', unpad, colour wheel."""
    image1 = torch.from_numpy(frame1).permute(2, 0, 1).float()[None]
    image2 = torch.from_numpy(frame2).permute(2, 0, 1).float()[None]
    padder = InputPadder(image1.shape)
    image1, image2 = padder.pad(image1, image2)
    with torch.no_grad():
        flow_up = _FLOW_NET(torch.cat([image1, image2], 1) / 64.0)
    flow_up = padder.unpad(flow_up)
    flo = flow_up[0].permute(1, 2, 0).cpu().numpy()
    return {"flow_rgb": flow_to_image(flo), "flow": flo}


# ------------------------------------------------- keypoint detector front end
def frame2tensor(frame, device):
    return torch.from_numpy(frame / 255.0).float()[None, None].to(device)


def simple_nms(scores, nms_radius: int):
    """Fast Non-maximum suppression to remove nearby points."""
    assert nms_radius >= 0

    def max_pool(x):
        return torch.nn.functional.max_pool2d(
            x, kernel_size=nms_radius * 2 + 1, stride=1, padding=nms_radius
        )

    zeros = torch.zeros_like(scores)
    max_mask = scores == max_pool(scores)
    for _ in range(2):
        supp_mask = max_pool(max_mask.float()) > 0
        supp_scores = torch.where(supp_mask, zeros, scores)
        new_max_mask = supp_scores == max_pool(supp_scores)
        max_mask = max_mask | (new_max_mask & (~supp_mask))
    return torch.where(max_mask, scores, zeros)


_DETECTOR = torch.nn.Conv2d(1, 65, 8, stride=8)


def superpoint_frontend(gray):
    """Grey frame -> semi (65 bins per 8x8 cell) -> softmax without the dustbin -> full-size
    heatmap by reshape/transpose -> max-pool NMS -> keypoints above a threshold."""
    inp = frame2tensor(gray, "cpu")
    with torch.no_grad():
        semi = _DETECTOR(inp)
    semi = semi.data.cpu().numpy().squeeze()
    H, W = gray.shape[0], gray.shape[1]
    cell = 8
    dense = np.exp(semi)
    dense = dense / (np.sum(dense, axis=0) + 0.00001)
    nodust = dense[:-1, :, :]
    Hc = int(H / cell)
    Wc = int(W / cell)
    nodust = nodust.transpose(1, 2, 0)
    heatmap = np.reshape(nodust, [Hc, Wc, cell, cell])
    heatmap = np.transpose(heatmap, [0, 2, 1, 3])
    heatmap = np.reshape(heatmap, [Hc * cell, Wc * cell])
    scores = simple_nms(torch.from_numpy(heatmap)[None], 4)[0]
    keypoints = torch.nonzero(scores > 0.02)
    return {"scores": scores.numpy(), "keypoints": keypoints.numpy()}


# ------------------------------------------------- face detector input + alignment
def distance2bbox(points, distance, max_shape=None):
    x1 = points[:, 0] - distance[:, 0]
    y1 = points[:, 1] - distance[:, 1]
    x2 = points[:, 0] + distance[:, 2]
    y2 = points[:, 1] + distance[:, 3]
    return np.stack([x1, y1, x2, y2], axis=-1)


class SCRFD:
    def __init__(self, input_size=(64, 64)):
        self.input_size = input_size
        self.input_mean, self.input_std = 127.5, 128.0
        self._feat_stride_fpn = [8, 16]

    def prepare(self, img):
        input_size = self.input_size
        im_ratio = float(img.shape[0]) / img.shape[1]
        model_ratio = float(input_size[1]) / input_size[0]
        if im_ratio > model_ratio:
            new_height = input_size[1]
            new_width = int(new_height / im_ratio)
        else:
            new_width = input_size[0]
            new_height = int(new_width * im_ratio)
        det_scale = float(new_height) / img.shape[0]
        resized_img = cv2.resize(img, (new_width, new_height))
        det_img = np.zeros((input_size[1], input_size[0], 3), dtype=np.uint8)
        det_img[:new_height, :new_width, :] = resized_img
        return det_img, det_scale

    def forward(self, img, bbox_preds, det_scale):
        input_size = tuple(img.shape[0:2][::-1])
        blob = cv2.dnn.blobFromImage(
            img,
            1.0 / self.input_std,
            input_size,
            (self.input_mean, self.input_mean, self.input_mean),
            swapRB=True,
        )
        stride = self._feat_stride_fpn[0]
        height, width = input_size[1] // stride, input_size[0] // stride
        anchor_centers = np.stack(np.mgrid[:height, :width][::-1], axis=-1).astype(np.float32)
        anchor_centers = (anchor_centers * stride).reshape((-1, 2))
        bboxes = distance2bbox(anchor_centers, bbox_preds * stride) / det_scale
        return blob, bboxes


def insightface_detect(img, bbox_preds):
    detector = SCRFD((64, 64))
    det_img, det_scale = detector.prepare(img)
    blob, bboxes = detector.forward(det_img, bbox_preds, det_scale)
    return {"blob": blob, "bboxes": bboxes}


arcface_src = np.array(
    [[38.2946, 51.6963], [73.5318, 51.5014], [56.0252, 71.7366], [41.5493, 92.3655],
     [70.7299, 92.2041]], dtype=np.float32)  # fmt: skip


def umeyama(src, dst, estimate_scale=True):
    num, dim = src.shape
    src_mean = src.mean(axis=0)
    dst_mean = dst.mean(axis=0)
    src_demean = src - src_mean
    dst_demean = dst - dst_mean
    A = dst_demean.T @ src_demean / num
    d = np.ones((dim,), dtype=np.double)
    if np.linalg.det(A) < 0:
        d[dim - 1] = -1
    T = np.eye(dim + 1, dtype=np.double)
    U, S, V = np.linalg.svd(A)
    T[:dim, :dim] = U @ np.diag(d) @ V
    scale = 1.0 / src_demean.var(axis=0).sum() * (S @ d) if estimate_scale else 1.0
    T[:dim, dim] = dst_mean - scale * (T[:dim, :dim] @ src_mean.T)
    T[:dim, :dim] *= scale
    return T


def insightface_align(img, landmark):
    """norm_crop: a similarity transform from five landmarks, warpAffine, ArcFace blob."""
    M = umeyama(landmark, arcface_src)[0:2, :]
    aimg = cv2.warpAffine(img, M, (112, 112), borderValue=0.0)
    blob = cv2.dnn.blobFromImage(aimg, 1.0 / 127.5, (112, 112), (127.5, 127.5, 127.5), swapRB=True)
    return {"blob": blob}


# ------------------------------------------------- top-down pose decoding
def get_max_preds(batch_heatmaps):
    assert isinstance(batch_heatmaps, np.ndarray), "batch_heatmaps should be numpy.ndarray"
    assert batch_heatmaps.ndim == 4, "batch_images should be 4-ndim"
    batch_size = batch_heatmaps.shape[0]
    num_joints = batch_heatmaps.shape[1]
    width = batch_heatmaps.shape[3]
    heatmaps_reshaped = batch_heatmaps.reshape((batch_size, num_joints, -1))
    idx = np.argmax(heatmaps_reshaped, 2)
    maxvals = np.amax(heatmaps_reshaped, 2)
    maxvals = maxvals.reshape((batch_size, num_joints, 1))
    idx = idx.reshape((batch_size, num_joints, 1))
    preds = np.tile(idx, (1, 1, 2)).astype(np.float32)
    preds[:, :, 0] = (preds[:, :, 0]) % width
    preds[:, :, 1] = np.floor((preds[:, :, 1]) / width)
    pred_mask = np.tile(np.greater(maxvals, 0.0), (1, 1, 2))
    pred_mask = pred_mask.astype(np.float32)
    preds *= pred_mask
    return preds, maxvals


def get_affine_transform(center, scale, rot, output_size, inv=0):
    scale_tmp = scale * 200.0
    src_w = scale_tmp[0]
    dst_w, dst_h = output_size
    src_dir = np.array([0, src_w * -0.5], np.float32)
    dst_dir = np.array([0, dst_w * -0.5], np.float32)
    src = np.zeros((3, 2), dtype=np.float32)
    dst = np.zeros((3, 2), dtype=np.float32)
    src[0, :] = center
    src[1, :] = center + src_dir
    dst[0, :] = [dst_w * 0.5, dst_h * 0.5]
    dst[1, :] = np.array([dst_w * 0.5, dst_h * 0.5]) + dst_dir
    src[2:, :] = src[1] + np.array([-(src[0] - src[1])[1], (src[0] - src[1])[0]], np.float32)
    dst[2:, :] = dst[1] + np.array([-(dst[0] - dst[1])[1], (dst[0] - dst[1])[0]], np.float32)
    if inv:
        return cv2.getAffineTransform(np.float32(dst), np.float32(src))
    return cv2.getAffineTransform(np.float32(src), np.float32(dst))


def affine_transform(pt, t):
    new_pt = np.array([pt[0], pt[1], 1.0]).T
    new_pt = np.dot(t, new_pt)
    return new_pt[:2]


def transform_preds(coords, center, scale, output_size):
    target_coords = np.zeros(coords.shape)
    trans = get_affine_transform(center, scale, 0, output_size, inv=1)
    for p in range(coords.shape[0]):
        target_coords[p, 0:2] = affine_transform(coords[p, 0:2], trans)
    return target_coords


CENTER = np.array([[40.0, 30.0]], np.float32)
SCALE = np.array([[0.3, 0.4]], np.float32)


def hrnet_pose(batch_heatmaps):
    """get_final_preds: argmax per joint, a quarter-pixel shift toward the higher neighbour,
    heatmap coordinates back to the image through the inverse affine of the person box."""
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
        preds[i] = transform_preds(coords[i], CENTER[i], SCALE[i], [heatmap_width, heatmap_height])
    return {"preds": preds, "maxvals": maxvals}


# ------------------------------------------------- CLIP processor (NumPy) + torchvision
OPENAI_CLIP_MEAN = [0.48145466, 0.4578275, 0.40821073]
OPENAI_CLIP_STD = [0.26862954, 0.26130258, 0.27577711]


def get_resize_output_image_size(image, size):
    height, width = image.shape[:2]
    short, long = (width, height) if width <= height else (height, width)
    new_short, new_long = size, int(size * long / short)
    return (new_long, new_short) if width <= height else (new_short, new_long)


def center_crop(image, size):
    height, width = image.shape[:2]
    top = (height - size[0]) // 2
    left = (width - size[1]) // 2
    return image[top : top + size[0], left : left + size[1]]


def rescale(image, scale, dtype=np.float32):
    rescaled_image = image.astype(np.float64) * scale
    return rescaled_image.astype(dtype)


def normalize(image, mean, std):
    mean = np.array(mean, dtype=image.dtype)
    std = np.array(std, dtype=image.dtype)
    return (image - mean) / std


def to_tensor(pic):
    img = torch.from_numpy(pic.transpose((2, 0, 1))).contiguous()
    if isinstance(img, torch.ByteTensor):
        return img.to(dtype=torch.get_default_dtype()).div(255)
    return img


def tv_normalize(tensor, mean, std, inplace=False):
    if not inplace:
        tensor = tensor.clone()
    dtype = tensor.dtype
    mean = torch.as_tensor(mean, dtype=dtype, device=tensor.device)
    std = torch.as_tensor(std, dtype=dtype, device=tensor.device)
    if (std == 0).any():
        raise ValueError(f"std evaluated to zero after conversion to {dtype}")
    if mean.ndim == 1:
        mean = mean.view(-1, 1, 1)
    if std.ndim == 1:
        std = std.view(-1, 1, 1)
    return tensor.sub_(mean).div_(std)


def clip_torchvision(rgb):
    size = get_resize_output_image_size(rgb, 40)
    image = cv2.resize(rgb, (size[1], size[0]), interpolation=cv2.INTER_CUBIC)
    image = center_crop(image, (32, 32))
    image = rescale(image, 1 / 255)
    image = normalize(image, OPENAI_CLIP_MEAN, OPENAI_CLIP_STD)
    pixel_values = torch.tensor(np.stack([image.transpose(2, 0, 1)]))
    tv = tv_normalize(to_tensor(center_crop(rgb, (32, 32))), OPENAI_CLIP_MEAN, OPENAI_CLIP_STD)
    return {"pixel_values": pixel_values.numpy(), "tv": tv.numpy()}


# ------------------------------------------------- augmentation library: CLAHE + Normalize
def clahe(img, clip_limit=2.0, tile_grid_size=(8, 8)):
    if img.dtype != np.uint8:
        raise TypeError("clahe supports only uint8 inputs")
    clahe_mat = cv2.createCLAHE(clipLimit=clip_limit, tileGridSize=tile_grid_size)
    if len(img.shape) == 2 or img.shape[2] == 1:
        return clahe_mat.apply(img)
    img = cv2.cvtColor(img, cv2.COLOR_RGB2LAB)
    img[:, :, 0] = clahe_mat.apply(img[:, :, 0])
    return cv2.cvtColor(img, cv2.COLOR_LAB2RGB)


def normalize_cv2(img, mean, denominator):
    if mean.shape and len(mean) != 4 and mean.shape != img.shape:
        mean = np.array(mean.tolist() + [0] * (4 - len(mean)), dtype=np.float64)
    if not denominator.shape:
        denominator = np.array([denominator.tolist()] * 4, dtype=np.float64)
    elif len(denominator) != 4 and denominator.shape != img.shape:
        denominator = np.array(denominator.tolist() + [1] * (4 - len(denominator)), np.float64)
    img = np.ascontiguousarray(img.astype("float32"))
    cv2.subtract(img, mean.astype(np.float64), img)
    cv2.multiply(img, denominator.astype(np.float64), img)
    return img


def normalize_numpy(img, mean, denominator):
    img = img.astype(np.float32)
    img -= mean
    img *= denominator
    return img


def albu_normalize(img, mean, std, max_pixel_value=255.0):
    mean = np.array(mean, dtype=np.float32)
    mean *= max_pixel_value
    std = np.array(std, dtype=np.float32)
    std *= max_pixel_value
    denominator = np.reciprocal(std, dtype=np.float32)
    if img.ndim == 3 and img.shape[-1] == 3:
        return normalize_cv2(img, mean, denominator)
    return normalize_numpy(img, mean, denominator)


def albumentations_chain(rgb, gray):
    image = clahe(rgb)
    image = albu_normalize(image, (0.485, 0.456, 0.406), (0.229, 0.224, 0.225))
    tensor = torch.from_numpy(image.transpose(2, 0, 1))
    gray_norm = albu_normalize(clahe(gray, 4.0, (4, 4)), 0.5, 0.25)
    return {"image": tensor.numpy(), "gray": gray_norm}


# ------------------------------------------------- classic OpenCV tutorials
_SHARPEN = np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], np.float32)


def opencv_classic(bgr, flow):
    """Dense-flow HSV visualisation, histogram equalisation, a pyramid level, a sharpening
    kernel, the variance-of-Laplacian focus measure and Scharr gradient magnitude."""
    hsv = np.zeros((flow.shape[0], flow.shape[1], 3), np.uint8)
    hsv[..., 1] = 255
    mag, ang = cv2.cartToPolar(flow[..., 0], flow[..., 1])
    hsv[..., 0] = ang * 180 / np.pi / 2
    hsv[..., 2] = cv2.normalize(mag, None, 0, 255, cv2.NORM_MINMAX)
    flow_bgr = cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)
    gray = cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY)
    equalized = cv2.equalizeHist(gray)
    down = cv2.pyrDown(bgr)
    sharp = cv2.filter2D(bgr, -1, _SHARPEN)
    focus = cv2.Laplacian(gray, cv2.CV_64F).var()
    gx = cv2.Scharr(gray, cv2.CV_32F, 1, 0)
    gy = cv2.Scharr(gray, cv2.CV_32F, 0, 1)
    edges = cv2.magnitude(gx, gy)
    return {
        "flow_bgr": flow_bgr,
        "equalized": equalized,
        "down": down,
        "sharp": sharp,
        "focus": np.array([focus]),
        "edges": edges,
    }


# --------------------------------------------------------------------------- inputs
_image = harness._image


def _r(shape, rng, low=-1.0, high=1.0):
    return rng.uniform(low, high, size=shape).astype(np.float32)


def _boxes(rng):
    xy = rng.uniform(0, 64, size=(1, 2, 20))
    wh = rng.uniform(2, 30, size=(1, 2, 20))
    scores = rng.uniform(0, 1, size=(1, 3, 20))
    return np.concatenate([xy, wh, scores], 1).astype(np.float32)


def _landmarks(rng):
    return (arcface_src + rng.normal(0, 3, size=(5, 2))).astype(np.float32)


P = harness.Pipeline
PIPELINES = [
    P("ultralytics_letterbox", ultralytics_letterbox, lambda r: {"bgr": _image(r, 48, 80)}),
    P(
        "ultralytics_boxes",
        ultralytics_boxes,
        lambda r: {"pred": _boxes(r), "kpts": _r((17, 2), r, 0, 64)},
    ),
    P("detectron2_predictor", detectron2_predictor, lambda r: {"bgr": _image(r, 48, 64)}),
    P("mmdet_pipeline", mmdet_pipeline, lambda r: {"img": _image(r, 48, 80)}),
    P(
        "mmseg_palette",
        mmseg_palette,
        lambda r: {"img": _image(r, 48, 64), "seg_logit": _r((1, 5, 12, 16), r, -3, 3)},
    ),
    P(
        "depth_anything",
        depth_anything,
        lambda r: {"bgr": _image(r, 48, 64), "depth": _r((1, 12, 16), r, 0.5, 10)},
    ),
    P(
        "raft_flow_viz",
        raft_flow_viz,
        lambda r: {"frame1": _image(r, 44, 60), "frame2": _image(r, 44, 60)},
    ),
    P(
        "superpoint_frontend",
        superpoint_frontend,
        lambda r: {"gray": cv2.cvtColor(_image(r, 48, 64), cv2.COLOR_BGR2GRAY)},
    ),
    P(
        "insightface_detect",
        insightface_detect,
        lambda r: {"img": _image(r, 48, 80), "bbox_preds": _r((64, 4), r, 0, 3)},
    ),
    P(
        "insightface_align",
        insightface_align,
        lambda r: {"img": _image(r, 128, 128), "landmark": _landmarks(r)},
    ),
    P("hrnet_pose", hrnet_pose, lambda r: {"heatmaps": _r((1, 5, 16, 12), r, -0.1, 1.0)}),
    P("clip_torchvision", clip_torchvision, lambda r: {"rgb": _image(r, 48, 64)}),
    P(
        "albumentations_chain",
        albumentations_chain,
        lambda r: {"rgb": _image(r, 48, 64), "gray": _image(r, 32, 32)[..., 0].copy()},
    ),
    P(
        "opencv_classic",
        opencv_classic,
        lambda r: {"bgr": _image(r, 48, 64), "flow": _r((48, 64, 2), r, -4, 4)},
    ),
]


# ----------------------------------------- one-line variants of the data-dependent idioms
# Each changes one line of a pipeline above where the trace is data-dependent or lost; the
# promise is that every variant is right or loud, never silent.
def superpoint_np_where(gray):
    """The keypoint demo's own read-out: coordinates from np.where (data-dependent count)."""
    scores = superpoint_frontend(gray)["scores"]
    xs, ys = np.where(scores >= 0.02)
    return {"scores": scores, "xs": xs, "ys": ys}


def detections_above_threshold(pred):
    """Detector post-processing: boxes kept by a confidence mask (data-dependent count)."""
    x = torch.from_numpy(pred)[0].transpose(0, 1)
    conf, j = x[:, 4:].max(1, keepdim=True)
    x = torch.cat((xywh2xyxy(x[:, :4]), conf, j.float()), 1)[conf.view(-1) > 0.5]
    return {"dets": x.numpy()}


def hrnet_int_offsets(batch_heatmaps):
    """get_final_preds with int() instead of int(math.floor()) for the peak position."""
    coords, maxvals = get_max_preds(batch_heatmaps)
    for p in range(coords.shape[1]):
        hm = batch_heatmaps[0][p]
        px, py = int(coords[0][p][0] + 0.5), int(coords[0][p][1] + 0.5)
        if 1 < px < batch_heatmaps.shape[3] - 1 and 1 < py < batch_heatmaps.shape[2] - 1:
            coords[0][p] += np.sign([hm[py][px + 1] - hm[py][px - 1], 0.0]) * 0.25
    return {"coords": coords, "maxvals": maxvals}


def umeyama_select(src, dst):
    """umeyama with its reflection test as np.where instead of an if (no Python branch)."""
    num, dim = src.shape
    src_mean, dst_mean = src.mean(axis=0), dst.mean(axis=0)
    src_demean, dst_demean = src - src_mean, dst - dst_mean
    A = dst_demean.T @ src_demean / num
    d = np.ones((dim,), dtype=np.double)
    d[dim - 1] = np.where(np.linalg.det(A) < 0, -1.0, 1.0)
    T = np.eye(dim + 1, dtype=np.double)
    U, S, V = np.linalg.svd(A)
    T[:dim, :dim] = U @ np.diag(d) @ V
    scale = 1.0 / src_demean.var(axis=0).sum() * (S @ d)
    T[:dim, dim] = dst_mean - scale * (T[:dim, :dim] @ src_mean.T)
    T[:dim, :dim] *= scale
    return T


def insightface_align_select(img, landmark):
    M = umeyama_select(landmark, arcface_src)[0:2, :]
    aimg = cv2.warpAffine(img, M, (112, 112), borderValue=0.0)
    return {"blob": cv2.dnn.blobFromImage(aimg, 1.0 / 127.5, (112, 112), (127.5,) * 3, swapRB=True)}


def detectron2_float_input(original_image):
    """The predictor fed a float image: detectron2's own torch interpolate path, not PIL."""
    image = original_image[:, :, ::-1].astype(np.float32)
    height, width = image.shape[:2]
    newh, neww = get_output_shape(height, width, 40, 64)
    image = ResizeTransform(height, width, newh, neww).apply_image(image)
    return {"images": torch.as_tensor(image.transpose(2, 0, 1)).numpy()}


VARIANTS = [
    P(
        "superpoint_np_where",
        superpoint_np_where,
        lambda r: {"gray": cv2.cvtColor(_image(r, 48, 64), cv2.COLOR_BGR2GRAY)},
    ),
    P("detections_above_threshold", detections_above_threshold, lambda r: {"pred": _boxes(r)}),
    P("hrnet_int_offsets", hrnet_int_offsets, lambda r: {"hm": _r((1, 5, 16, 12), r, -0.1, 1)}),
    P(
        "insightface_align_select",
        insightface_align_select,
        lambda r: {"img": _image(r, 128, 128), "landmark": _landmarks(r)},
    ),
    P("detectron2_float_input", detectron2_float_input, lambda r: {"bgr": _image(r, 48, 64)}),
]


def main(names: list[str]) -> dict[str, dict[str, int]]:
    """``--before``: traced with patching=["opencv"] only (the predictor's PIL resize then
    loses the trace); by default with the Pillow family too."""
    pool = VARIANTS if "--variants" in names else PIPELINES
    harness.PATCHING = ["opencv"] if "--before" in names else ["opencv", "pil"]
    names = [n for n in names if n not in ("--variants", "--before")]
    chosen = [p for p in pool if not names or p.name in names]
    return harness.run_table(chosen, "vision")


if __name__ == "__main__":
    main(sys.argv[1:])
