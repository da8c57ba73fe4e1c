"""Robot-learning / RL observation and action pipelines x backends: right, loud, silent, crash?

New pipelines in the idioms of public robot-learning projects (nobody tuned patchport to
them): LeRobot's observation processor and normaliser steps, an action-chunk queue,
robomimic's frame processing and low-dim normalisation, diffusion_policy's
LinearNormalizer with 6-D rotation to axis-angle, Stable-Baselines3's preprocess_obs,
VecNormalize and Atari wrappers, Gymnasium's observation / action wrappers, legged_gym's
observation assembly (isaacgym torch_utils quaternion maths), Isaac Lab's scripted math
and observation / action terms, a Unitree deploy script's NumPy observation, rl_games'
RunningMeanStd with its player's action rescale, and openpi's image / quantile transforms.
Class-based transforms with state on ``self``, dict observations, in-place updates,
module-level tables, from-imports, helper functions, einops, dtype conversions and
torch <-> NumPy hops are kept as those projects write them.

Each is traced once, exported with every backend and replayed on fresh inputs against
the plain code; the classes are those of ``bench/real_pipelines.py`` (whose harness is
reused). Run: python bench/real_pipelines_robot.py [pipeline-name ...]
"""

from __future__ import annotations

import math
import sys
from collections import deque
from copy import deepcopy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import einops
import numpy as np
import torch
import torch.nn.functional as F  # noqa: N812
from numpy import clip as np_clip
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
import real_pipelines as harness  # noqa: E402

harness.HERE = str(Path(__file__).resolve())  # the user's lines are in this file
torch.manual_seed(0)
_RNG = np.random.default_rng(7)

OBS_IMAGES = "observation.images"
OBS_STATE = "observation.state"
ACTION = "action"


# ------------------------------------------------------------------ LeRobot processors
def to_tensor(value: Any, dtype: torch.dtype = torch.float32) -> Any:
    """Nested stats (lists / arrays / numbers) to tensors, like a processor's converter."""
    if isinstance(value, dict):
        return {k: to_tensor(v, dtype) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return torch.from_numpy(value).to(dtype)
    return torch.as_tensor(value, dtype=dtype)


@dataclass
class NormalizerStep:
    """Mean/std for images, quantiles for the state, min/max for the action."""

    stats: dict[str, dict[str, Any]]
    norm_map: dict[str, str]
    eps: float = 1e-8
    _tensor_stats: dict[str, dict[str, torch.Tensor]] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        self._tensor_stats = to_tensor(self.stats)
        for key, stat in self._tensor_stats.items():
            if key.startswith(OBS_IMAGES):  # (C,) stats broadcast over (C, H, W)
                for name, tensor in stat.items():
                    stat[name] = tensor.reshape(-1, 1, 1)

    def _apply(self, tensor: torch.Tensor, key: str, inverse: bool) -> torch.Tensor:
        mode = self.norm_map.get(key, "identity")
        stats = self._tensor_stats[key]
        first = next(iter(stats.values()))
        if first.dtype != tensor.dtype:
            stats = {k: v.to(tensor.dtype) for k, v in stats.items()}
        if mode == "mean_std":
            mean, std = stats["mean"], stats["std"]
            return tensor * std + mean if inverse else (tensor - mean) / (std + self.eps)
        if mode == "quantiles":
            denom = stats["q99"] - stats["q01"]
            denom = torch.where(denom == 0, torch.tensor(self.eps, dtype=tensor.dtype), denom)
            if inverse:
                return (tensor + 1.0) * denom / 2.0 + stats["q01"]
            return 2.0 * (tensor - stats["q01"]) / denom - 1.0
        if mode == "min_max":
            denom = stats["max"] - stats["min"]
            if inverse:
                return (tensor + 1) / 2 * denom + stats["min"]
            return 2 * (tensor - stats["min"]) / denom - 1
        return tensor

    def __call__(self, observation: dict[str, Any]) -> dict[str, Any]:
        new_observation = dict(observation)
        for key in self.norm_map:
            if key in new_observation:
                tensor = torch.as_tensor(new_observation[key])
                new_observation[key] = self._apply(tensor, key, inverse=False)
        return new_observation


def process_single_image(img: np.ndarray) -> torch.Tensor:
    """Channel-last uint8 camera frame to a float (B, C, H, W) tensor in [0, 1]."""
    img_tensor = torch.from_numpy(img)
    if img_tensor.ndim == 3:
        img_tensor = img_tensor.unsqueeze(0)
    _, h, w, c = img_tensor.shape
    if not (c < h and c < w):
        raise ValueError(f"Expected channel-last images, but got shape {img_tensor.shape}")
    if img_tensor.dtype != torch.uint8:
        raise ValueError(f"Expected torch.uint8 images, but got {img_tensor.dtype}")
    img_tensor = einops.rearrange(img_tensor, "b h w c -> b c h w").contiguous()
    img_tensor = img_tensor.type(torch.float32)
    img_tensor /= 255
    return img_tensor


_LEROBOT_NORM = NormalizerStep(
    stats={
        f"{OBS_IMAGES}.top": {"mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]},
        OBS_STATE: {
            "q01": np.array([-1.0, -0.5, -2.0, 0.0, -1.0, 0.3], dtype=np.float32),
            "q99": np.array([1.0, 0.5, 2.0, 0.0, 1.5, 0.9], dtype=np.float32),
        },
    },
    norm_map={f"{OBS_IMAGES}.top": "mean_std", OBS_STATE: "quantiles"},
)


def lerobot_observation(pixels: np.ndarray, agent_pos: np.ndarray) -> dict[str, Any]:
    """LeRobot env processor + normaliser step on a dict observation."""
    observation = {"pixels": {"top": pixels}, "agent_pos": agent_pos}
    processed = dict(observation)
    images = processed.pop("pixels")
    for camera, img in images.items():
        processed[f"{OBS_IMAGES}.{camera}"] = process_single_image(img)
    state = torch.from_numpy(processed.pop("agent_pos")).float()
    if state.dim() == 1:
        state = state.unsqueeze(0)
    processed[OBS_STATE] = state
    normalized = _LEROBOT_NORM(processed)
    return {"image": normalized[f"{OBS_IMAGES}.top"], "state": normalized[OBS_STATE]}


class ActionChunkPolicy(nn.Module):
    """ACT-style head: a chunk of actions, unnormalised, served through a queue."""

    def __init__(self, state_dim: int = 6, chunk: int = 5, action_dim: int = 6) -> None:
        super().__init__()
        self.chunk, self.action_dim = chunk, action_dim
        self.head = nn.Linear(state_dim, chunk * action_dim)
        self.register_buffer("action_min", torch.linspace(-1.5, -0.5, action_dim))
        self.register_buffer("action_max", torch.linspace(0.5, 2.0, action_dim))
        self._queue: deque = deque(maxlen=chunk)

    def reset(self) -> None:
        self._queue = deque(maxlen=self.chunk)

    @torch.no_grad()
    def select_action(self, state: torch.Tensor) -> torch.Tensor:
        if len(self._queue) == 0:
            actions = self.head(state).view(state.shape[0], self.chunk, self.action_dim)
            actions = torch.tanh(actions)
            denom = self.action_max - self.action_min
            actions = (actions + 1) / 2 * denom + self.action_min
            self._queue.extend(actions.transpose(0, 1))
        return self._queue.popleft()


_ACT = ActionChunkPolicy().eval()
_JOINT_LOW = np.array([-1.2, -1.0, -1.4, -0.6, -1.5, 0.0], dtype=np.float32)
_JOINT_HIGH = np.array([1.2, 1.0, 1.4, 0.6, 1.5, 1.0], dtype=np.float32)


def lerobot_action_chunk(state: np.ndarray, present: np.ndarray) -> dict[str, Any]:
    """Policy chunk -> queue -> first action, relative to the present joints, clipped."""
    _ACT.reset()
    batch = torch.from_numpy(state).float().unsqueeze(0)
    action = _ACT.select_action(batch)
    action = action.squeeze(0).cpu().numpy()
    target = np_clip(present + 0.1 * action, _JOINT_LOW, _JOINT_HIGH)
    return {"action": action, "target": target}


# ------------------------------------------------------------------ robomimic
def recursive_apply(x: Any, type_func_dict: dict) -> Any:
    """Apply the function registered for each leaf's type (robomimic's TensorUtils idiom)."""
    if isinstance(x, dict):
        return {k: recursive_apply(v, type_func_dict) for k, v in x.items()}
    for t, f in type_func_dict.items():
        if isinstance(x, t):
            return f(x)
    raise NotImplementedError(f"Cannot handle data type {type(x)}")


def to_float(x: Any) -> Any:
    return recursive_apply(
        x, {torch.Tensor: lambda t: t.float(), np.ndarray: lambda a: a.astype(np.float32)}
    )


def batch_image_hwc_to_chw(im: Any) -> Any:
    start_dims = np.arange(len(im.shape) - 3).tolist()
    s = start_dims[-1] if len(start_dims) > 0 else -1
    if isinstance(im, np.ndarray):
        return im.transpose(start_dims + [s + 3, s + 1, s + 2])
    return im.permute(start_dims + [s + 3, s + 1, s + 2])


def process_frame(frame: Any, channel_dim: int, scale: float | None) -> Any:
    assert frame.shape[-1] == channel_dim
    frame = to_float(frame)
    if scale is not None:
        frame = frame / scale
        frame = frame.clip(0.0, 1.0)
    return batch_image_hwc_to_chw(frame)


_OBS_NORM_STATS = {
    "robot0_eef_pos": {
        "offset": np.array([[0.1, -0.05, 0.9]], dtype=np.float32),
        "scale": np.array([[0.3, 0.25, 0.2]], dtype=np.float32),
    },
    "robot0_gripper_qpos": {
        "offset": np.array([[0.02, -0.02]], dtype=np.float32),
        "scale": np.array([[0.02, 0.02]], dtype=np.float32),
    },
}


def normalize_dict(obs: dict, stats: dict) -> dict:
    for m in stats:
        offset, scale = stats[m]["offset"], stats[m]["scale"]
        shape_len_diff = len(offset.shape) - len(obs[m].shape)
        assert shape_len_diff in (0, 1)
        reshape_padding = tuple([1] * (len(obs[m].shape) - len(offset.shape[1:])))
        offset = offset.reshape(reshape_padding + tuple(offset.shape[1:]))
        scale = scale.reshape(reshape_padding + tuple(scale.shape[1:]))
        obs[m] = (obs[m] - offset) / scale
    return obs


def robomimic_observation(rgb: np.ndarray, depth: np.ndarray, eef: np.ndarray,
                          gripper: np.ndarray) -> dict[str, Any]:  # fmt: skip
    """robomimic rollout: normalise low-dim keys, process frames, to batched float tensors."""
    ob = {"agentview_image": rgb, "agentview_depth": depth,
          "robot0_eef_pos": eef, "robot0_gripper_qpos": gripper}  # fmt: skip
    ob = normalize_dict(deepcopy(ob), _OBS_NORM_STATS)
    ob["agentview_image"] = process_frame(ob["agentview_image"], 3, 255.0)
    ob["agentview_depth"] = process_frame(ob["agentview_depth"], 1, None)
    batch = recursive_apply(ob, {np.ndarray: lambda a: torch.from_numpy(a)[None]})
    batch = to_float(batch)
    low_dim = torch.cat([batch["robot0_eef_pos"], batch["robot0_gripper_qpos"]], dim=-1)
    return {"image": batch["agentview_image"], "depth": batch["agentview_depth"], "low": low_dim}


# ------------------------------------------------------------------ diffusion_policy
def dict_apply(x: dict, func: Any) -> dict:
    return {k: dict_apply(v, func) if isinstance(v, dict) else func(v) for k, v in x.items()}


class LinearNormalizer(nn.Module):
    """Per-key scale/offset held in a ParameterDict, as fitted on a dataset."""

    def __init__(self, params: dict[str, tuple[np.ndarray, np.ndarray]]) -> None:
        super().__init__()
        self.params_dict = nn.ParameterDict(
            {
                key: nn.ParameterDict(
                    {
                        "scale": nn.Parameter(torch.from_numpy(s), requires_grad=False),
                        "offset": nn.Parameter(torch.from_numpy(o), requires_grad=False),
                    }
                )
                for key, (s, o) in params.items()
            }
        )

    def _normalize(self, x: Any, params: Any, forward: bool = True) -> torch.Tensor:
        if isinstance(x, np.ndarray):
            x = torch.from_numpy(x)
        scale, offset = params["scale"], params["offset"]
        x = x.to(device=scale.device, dtype=scale.dtype)
        src_shape = x.shape
        x = x.reshape(-1, scale.shape[0])
        x = x * scale + offset if forward else (x - offset) / scale
        return x.reshape(src_shape)

    def normalize(self, x: dict) -> dict:
        return {k: self._normalize(v, self.params_dict[k]) for k, v in x.items()}

    def unnormalize(self, x: dict) -> dict:
        return {k: self._normalize(v, self.params_dict[k], forward=False) for k, v in x.items()}


def _sqrt_positive_part(x: torch.Tensor) -> torch.Tensor:
    ret = torch.zeros_like(x)
    positive_mask = x > 0
    ret[positive_mask] = torch.sqrt(x[positive_mask])
    return ret


def rotation_6d_to_matrix(d6: torch.Tensor) -> torch.Tensor:
    a1, a2 = d6[..., :3], d6[..., 3:]
    b1 = F.normalize(a1, dim=-1)
    b2 = a2 - (b1 * a2).sum(-1, keepdim=True) * b1
    b2 = F.normalize(b2, dim=-1)
    b3 = torch.cross(b1, b2, dim=-1)
    return torch.stack((b1, b2, b3), dim=-2)


def matrix_to_quaternion(matrix: torch.Tensor) -> torch.Tensor:
    batch_dim = matrix.shape[:-2]
    m00, m01, m02, m10, m11, m12, m20, m21, m22 = torch.unbind(
        matrix.reshape(batch_dim + (9,)), dim=-1
    )
    q_abs = _sqrt_positive_part(
        torch.stack(
            [
                1.0 + m00 + m11 + m22,
                1.0 + m00 - m11 - m22,
                1.0 - m00 + m11 - m22,
                1.0 - m00 - m11 + m22,
            ],
            dim=-1,
        )
    )
    quat_by_rijk = torch.stack(
        [
            torch.stack([q_abs[..., 0] ** 2, m21 - m12, m02 - m20, m10 - m01], dim=-1),
            torch.stack([m21 - m12, q_abs[..., 1] ** 2, m10 + m01, m02 + m20], dim=-1),
            torch.stack([m02 - m20, m10 + m01, q_abs[..., 2] ** 2, m12 + m21], dim=-1),
            torch.stack([m10 - m01, m20 + m02, m21 + m12, q_abs[..., 3] ** 2], dim=-1),
        ],
        dim=-2,
    )
    flr = torch.tensor(0.1).to(dtype=q_abs.dtype, device=q_abs.device)
    quat_candidates = quat_by_rijk / (2.0 * q_abs[..., None].max(flr))
    best = F.one_hot(q_abs.argmax(dim=-1), num_classes=4) > 0.5
    return quat_candidates[best, :].reshape(batch_dim + (4,))


def quaternion_to_axis_angle(quaternions: torch.Tensor) -> torch.Tensor:
    norms = torch.norm(quaternions[..., 1:], p=2, dim=-1, keepdim=True)
    half_angles = torch.atan2(norms, quaternions[..., :1])
    angles = 2 * half_angles
    eps = 1e-6
    small_angles = angles.abs() < eps
    sin_half_angles_over_angles = torch.empty_like(angles)
    sin_half_angles_over_angles[~small_angles] = (
        torch.sin(half_angles[~small_angles]) / angles[~small_angles]
    )
    sin_half_angles_over_angles[small_angles] = (
        0.5 - (angles[small_angles] * angles[small_angles]) / 48
    )
    return quaternions[..., 1:] / sin_half_angles_over_angles


class RotationTransformer:
    """rotation_6d -> matrix -> axis_angle (always through the matrix)."""

    def __init__(self) -> None:
        self.forward_funcs = [
            rotation_6d_to_matrix,
            matrix_to_quaternion,
            quaternion_to_axis_angle,
        ]

    def forward(self, x: Any) -> Any:
        x_ = torch.from_numpy(x) if isinstance(x, np.ndarray) else x
        for func in self.forward_funcs:
            x_ = func(x_)
        return x_.numpy() if isinstance(x, np.ndarray) else x_


_DP_NORMALIZER = LinearNormalizer(
    {
        "agent_pos": (np.full(4, 2.0, np.float32), np.array([-0.2, 0.1, 0.0, -1.0], np.float32)),
        "action": (
            np.linspace(0.5, 1.5, 10).astype(np.float32),
            np.linspace(-0.3, 0.3, 10).astype(np.float32),
        ),
    }
)
_ROT = RotationTransformer()
_N_OBS_STEPS = 2


def diffusion_policy_step(agent_pos: np.ndarray, naction: np.ndarray) -> dict[str, Any]:
    """Normalise a 2-step obs history, unnormalise the predicted action, 6-D rotation out."""
    np_obs = dict_apply({"agent_pos": agent_pos}, lambda x: x.astype(np.float32))
    obs = dict_apply(np_obs, lambda x: torch.from_numpy(x))
    nobs = _DP_NORMALIZER.normalize(obs)
    this_nobs = dict_apply(nobs, lambda x: x[:, :_N_OBS_STEPS, ...].reshape(-1, *x.shape[2:]))
    action_pred = _DP_NORMALIZER.unnormalize({"action": torch.from_numpy(naction)})["action"]
    start = _N_OBS_STEPS - 1
    action = action_pred[:, start : start + 3]
    np_action = dict_apply({"action": action}, lambda x: x.detach().to("cpu").numpy())["action"]
    pos, rot, gripper = np_action[..., :3], np_action[..., 3:9], np_action[..., 9:]
    rot = _ROT.forward(rot)
    env_action = np.concatenate([pos, rot, gripper], axis=-1)
    return {"nobs": this_nobs["agent_pos"], "env_action": env_action}


# ------------------------------------------------------------------ Stable-Baselines3
@dataclass
class Box:
    low: np.ndarray
    high: np.ndarray

    @property
    def shape(self) -> tuple[int, ...]:
        return self.low.shape


@dataclass
class MultiDiscrete:
    nvec: np.ndarray


class RunningMeanStd:
    def __init__(self, epsilon: float = 1e-4, shape: tuple[int, ...] = ()) -> None:
        self.mean = np.zeros(shape, np.float64)
        self.var = np.ones(shape, np.float64)
        self.count = epsilon


class VecNormalize:
    """Observation normalisation with frozen statistics (training=False at deploy)."""

    def __init__(self, keys: list[str], shapes: dict[str, tuple[int, ...]]) -> None:
        self.norm_obs_keys = keys
        self.obs_rms = {k: RunningMeanStd(shape=shapes[k]) for k in keys}
        for k in keys:
            self.obs_rms[k].mean = _RNG.normal(0, 0.5, shapes[k])
            self.obs_rms[k].var = _RNG.uniform(0.5, 2.0, shapes[k])
        self.clip_obs, self.epsilon = 5.0, 1e-8

    def _normalize_obs(self, obs: np.ndarray, obs_rms: RunningMeanStd) -> np.ndarray:
        return np.clip(
            (obs - obs_rms.mean) / np.sqrt(obs_rms.var + self.epsilon),
            -self.clip_obs,
            self.clip_obs,
        )

    def normalize_obs(self, obs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        obs_ = deepcopy(obs)
        for key in self.norm_obs_keys:
            obs_[key] = self._normalize_obs(obs[key], self.obs_rms[key]).astype(np.float32)
        return obs_


def preprocess_obs(obs: Any, space: Any, normalize_images: bool = True) -> torch.Tensor:
    if isinstance(space, Box):
        if space.low.ndim == 3 and normalize_images:
            return obs.float() / 255.0
        return obs.float()
    if isinstance(space, MultiDiscrete):
        return torch.cat(
            [
                F.one_hot(obs_.long(), num_classes=int(space.nvec[idx])).float()
                for idx, obs_ in enumerate(torch.split(obs.long(), 1, dim=1))
            ],
            dim=-1,
        ).view(obs.shape[0], sum(space.nvec))
    raise NotImplementedError(space)


_SB3_VECNORM = VecNormalize(["vec"], {"vec": (5,)})
_SB3_SPACES = {
    "image": Box(np.zeros((3, 16, 16), np.uint8), np.full((3, 16, 16), 255, np.uint8)),
    "vec": Box(np.full(5, -np.inf, np.float32), np.full(5, np.inf, np.float32)),
    "buttons": MultiDiscrete(np.array([3, 2, 4])),
}
_SB3_ACTION = Box(np.array([-1.0, -2.0, 0.0], np.float32), np.array([1.0, 2.0, 0.5], np.float32))
_SB3_ACTOR = nn.Linear(3 * 16 * 16 // 16 + 5 + 9, 3)


def sb3_policy(image: np.ndarray, vec: np.ndarray, buttons: np.ndarray) -> dict[str, Any]:
    """VecTransposeImage + VecNormalize + preprocess_obs + squashed action unscaling."""
    obs = {"image": np.transpose(image, (0, 3, 1, 2)), "vec": vec, "buttons": buttons}
    obs = _SB3_VECNORM.normalize_obs(obs)
    tensors = {k: torch.as_tensor(v) for k, v in obs.items()}
    features = [
        F.avg_pool2d(preprocess_obs(tensors["image"], _SB3_SPACES["image"]), 4).flatten(1),
        preprocess_obs(tensors["vec"], _SB3_SPACES["vec"]),
        preprocess_obs(tensors["buttons"], _SB3_SPACES["buttons"]),
    ]
    with torch.no_grad():
        scaled = torch.tanh(_SB3_ACTOR(torch.cat(features, dim=1)))
    actions = scaled.cpu().numpy().reshape((-1, *_SB3_ACTION.shape))
    low, high = _SB3_ACTION.low, _SB3_ACTION.high
    actions = low + (0.5 * (actions + 1.0) * (high - low))
    return {"actions": actions, "vec": obs["vec"]}


class MaxAndSkip:
    """Max over the last two raw frames, in a buffer made once (as the Atari wrapper does)."""

    def __init__(self, shape: tuple[int, ...]) -> None:
        self._obs_buffer = np.zeros((2, *shape), dtype=np.uint8)

    def observation(self, second_last: np.ndarray, last: np.ndarray) -> np.ndarray:
        self._obs_buffer[0] = second_last
        self._obs_buffer[1] = last
        return self._obs_buffer.max(axis=0)


class WarpFrame:
    def __init__(self, width: int = 21, height: int = 21) -> None:
        self.width, self.height = width, height

    def observation(self, frame: np.ndarray) -> np.ndarray:
        frame = cv2.cvtColor(frame, cv2.COLOR_RGB2GRAY)
        frame = cv2.resize(frame, (self.width, self.height), interpolation=cv2.INTER_AREA)
        return frame[:, :, None]


_MAX_SKIP = MaxAndSkip((42, 42, 3))
_WARP = WarpFrame()


def sb3_atari(frame_a: np.ndarray, frame_b: np.ndarray, history: np.ndarray) -> dict[str, Any]:
    """MaxAndSkip + WarpFrame, then a 4-frame stack rolled in like StackedObservations."""
    pooled = _MAX_SKIP.observation(frame_a, frame_b)
    warped = _WARP.observation(pooled)
    stacked = np.zeros((21, 21, 4), dtype=np.uint8)
    for past in history:  # the three previous warped frames
        stacked = np.roll(stacked, shift=-1, axis=-1)
        stacked[..., -1:] = past[..., None]
    stacked = np.roll(stacked, shift=-warped.shape[-1], axis=-1)
    stacked[..., -warped.shape[-1] :] = warped
    return {"stacked": stacked}


# ------------------------------------------------------------------ Gymnasium wrappers
class GrayscaleObservation:
    def __init__(self, keep_dim: bool = True) -> None:
        self.keep_dim = keep_dim

    def observation(self, observation: np.ndarray) -> np.ndarray:
        grey = np.sum(np.multiply(observation, np.array([0.2125, 0.7154, 0.0721])), axis=-1).astype(
            np.uint8
        )
        return np.expand_dims(grey, -1) if self.keep_dim else grey


class ResizeObservation:
    def __init__(self, shape: tuple[int, int]) -> None:
        self.shape = tuple(shape)

    def observation(self, observation: np.ndarray) -> np.ndarray:
        resized = cv2.resize(observation, self.shape[::-1], interpolation=cv2.INTER_AREA)
        return resized.reshape((*self.shape, -1))


class NormalizeObservation:
    def __init__(self, shape: tuple[int, ...], epsilon: float = 1e-8) -> None:
        self.obs_rms = RunningMeanStd(shape=shape)
        self.obs_rms.mean = np.linspace(-1, 1, math.prod(shape)).reshape(shape)
        self.obs_rms.var = np.linspace(0.5, 3.0, math.prod(shape)).reshape(shape)
        self.epsilon = epsilon
        self.update_running_mean = False

    def observation(self, observation: np.ndarray) -> np.ndarray:
        return np.float32(
            (observation - self.obs_rms.mean) / np.sqrt(self.obs_rms.var + self.epsilon)
        )


class RescaleAction:
    def __init__(self, low: np.ndarray, high: np.ndarray, min_action: float, max_action: float):
        self.low, self.high = low, high
        self.min_action = np.full(low.shape, min_action, dtype=np.float32)
        self.max_action = np.full(low.shape, max_action, dtype=np.float32)

    def action(self, action: np.ndarray) -> np.ndarray:
        action = self.low + (self.high - self.low) * (
            (action - self.min_action) / (self.max_action - self.min_action)
        )
        return np.clip(action, self.low, self.high)


_GRAY = GrayscaleObservation()
_RESIZE = ResizeObservation((12, 16))
_GYM_NORM = NormalizeObservation((4,))
_RESCALE = RescaleAction(np.array([-2.0, 0.0, -0.5]), np.array([2.0, 1.0, 0.5]), -1.0, 1.0)


def gymnasium_wrappers(rgb: np.ndarray, state: np.ndarray, action: np.ndarray) -> dict[str, Any]:
    """Grayscale -> resize observation; normalise a vector; rescale and clip an action."""
    grey = _RESIZE.observation(_GRAY.observation(rgb))
    return {
        "pixels": grey,
        "state": _GYM_NORM.observation(state),
        "action": _RESCALE.action(action),
    }


# ------------------------------------------------------------------ legged_gym (isaacgym utils)
def quat_rotate_inverse(q: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    shape = q.shape
    q_w = q[:, -1]
    q_vec = q[:, :3]
    a = v * (2.0 * q_w**2 - 1.0).unsqueeze(-1)
    b = torch.cross(q_vec, v, dim=-1) * q_w.unsqueeze(-1) * 2.0
    c = q_vec * torch.bmm(q_vec.view(shape[0], 1, 3), v.view(shape[0], 3, 1)).squeeze(-1) * 2.0
    return a - b + c


def quat_apply(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    shape = b.shape
    a = a.reshape(-1, 4)
    b = b.reshape(-1, 3)
    xyz = a[:, :3]
    t = xyz.cross(b, dim=-1) * 2
    return (b + a[:, 3:] * t + xyz.cross(t, dim=-1)).view(shape)


def wrap_to_pi(angles: torch.Tensor) -> torch.Tensor:
    angles %= 2 * np.pi
    angles -= 2 * np.pi * (angles > np.pi)
    return angles


def to_torch(x: Any, dtype: torch.dtype = torch.float, device: str = "cpu") -> torch.Tensor:
    return torch.tensor(x, dtype=dtype, device=device, requires_grad=False)


class LeggedRobotObs:
    """legged_gym's compute_observations / _compute_torques on buffers given by the sim."""

    class obs_scales:  # noqa: N801 - the config-class idiom
        lin_vel, ang_vel, dof_pos, dof_vel, height_measurements = 2.0, 0.25, 1.0, 0.05, 5.0

    clip_observations, clip_actions, action_scale = 100.0, 100.0, 0.25

    def __init__(self, num_dof: int = 12) -> None:
        self.up_axis_idx = 2
        self.commands_scale = torch.tensor(
            [self.obs_scales.lin_vel, self.obs_scales.lin_vel, self.obs_scales.ang_vel],
            requires_grad=False,
        )
        self.default_dof_pos = to_torch(np.tile([0.1, 0.8, -1.5], num_dof // 3)).unsqueeze(0)
        self.p_gains = torch.full((num_dof,), 20.0)
        self.d_gains = torch.full((num_dof,), 0.5)
        self.torque_limits = torch.linspace(20, 40, num_dof)
        self.forward_vec = to_torch([1.0, 0.0, 0.0])

    def compute(self, root_states: torch.Tensor, dof_pos: torch.Tensor, dof_vel: torch.Tensor,
                actions: torch.Tensor, commands: torch.Tensor, heights: torch.Tensor):  # fmt: skip
        num_envs = root_states.shape[0]
        gravity_vec = to_torch([0.0, 0.0, -1.0]).repeat((num_envs, 1))
        base_quat = root_states[:, 3:7]
        base_lin_vel = quat_rotate_inverse(base_quat, root_states[:, 7:10])
        base_ang_vel = quat_rotate_inverse(base_quat, root_states[:, 10:13])
        projected_gravity = quat_rotate_inverse(base_quat, gravity_vec)
        commands = commands.clone()
        forward = quat_apply(base_quat, self.forward_vec.repeat((num_envs, 1)))
        heading = torch.atan2(forward[:, 1], forward[:, 0])
        commands[:, 2] = torch.clip(0.5 * wrap_to_pi(commands[:, 3] - heading), -1.0, 1.0)
        self.actions = torch.clip(actions, -self.clip_actions, self.clip_actions)
        obs_buf = torch.cat(
            (
                base_lin_vel * self.obs_scales.lin_vel,
                base_ang_vel * self.obs_scales.ang_vel,
                projected_gravity,
                commands[:, :3] * self.commands_scale,
                (dof_pos - self.default_dof_pos) * self.obs_scales.dof_pos,
                dof_vel * self.obs_scales.dof_vel,
                self.actions,
            ),
            dim=-1,
        )
        measured = torch.clip(root_states[:, 2].unsqueeze(1) - 0.5 - heights, -1, 1.0)
        obs_buf = torch.cat((obs_buf, measured * self.obs_scales.height_measurements), dim=-1)
        obs_buf = torch.clip(obs_buf, -self.clip_observations, self.clip_observations)
        actions_scaled = self.actions * self.action_scale
        torques = (
            self.p_gains * (actions_scaled + self.default_dof_pos - dof_pos)
            - self.d_gains * dof_vel
        )
        return obs_buf, torch.clip(torques, -self.torque_limits, self.torque_limits)


_LEGGED = LeggedRobotObs()


def legged_gym_obs(root_states, dof_pos, dof_vel, actions, commands, heights):  # noqa: ANN001, ANN201
    obs, torques = _LEGGED.compute(root_states, dof_pos, dof_vel, actions, commands, heights)
    return {"obs": obs, "torques": torques}


# ------------------------------------------------------------------ Isaac Lab math + terms
@torch.jit.script
def scripted_quat_apply_inverse(quat: torch.Tensor, vec: torch.Tensor) -> torch.Tensor:
    xyz = quat[:, 1:]
    t = xyz.cross(vec, dim=-1) * 2
    return vec - quat[:, 0:1] * t + xyz.cross(t, dim=-1)


@torch.jit.script
def isaac_wrap_to_pi(angles: torch.Tensor) -> torch.Tensor:
    wrapped_angle = (angles + torch.pi) % (2 * torch.pi)
    return torch.where((wrapped_angle == 0) & (angles > 0), torch.pi, wrapped_angle - torch.pi)


def euler_xyz_from_quat(quat: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    q_w, q_x, q_y, q_z = quat[:, 0], quat[:, 1], quat[:, 2], quat[:, 3]
    sin_roll = 2.0 * (q_w * q_x + q_y * q_z)
    cos_roll = 1 - 2 * (q_x * q_x + q_y * q_y)
    roll = torch.atan2(sin_roll, cos_roll)
    sin_pitch = 2.0 * (q_w * q_y - q_z * q_x)
    pitch = torch.where(
        torch.abs(sin_pitch) >= 1, math.copysign(math.pi / 2.0, 1.0) * torch.sign(sin_pitch),
        torch.asin(sin_pitch),
    )  # fmt: skip
    sin_yaw = 2.0 * (q_w * q_z + q_x * q_y)
    cos_yaw = 1 - 2 * (q_y * q_y + q_z * q_z)
    yaw = torch.atan2(sin_yaw, cos_yaw)
    return roll % (2 * torch.pi), pitch % (2 * torch.pi), yaw % (2 * torch.pi)


def matrix_from_quat(quaternions: torch.Tensor) -> torch.Tensor:
    r, i, j, k = torch.unbind(quaternions, -1)
    two_s = 2.0 / (quaternions * quaternions).sum(-1)
    o = torch.stack(
        (
            1 - two_s * (j * j + k * k),
            two_s * (i * j - k * r),
            two_s * (i * k + j * r),
            two_s * (i * j + k * r),
            1 - two_s * (i * i + k * k),
            two_s * (j * k - i * r),
            two_s * (i * k - j * r),
            two_s * (j * k + i * r),
            1 - two_s * (i * i + j * j),
        ),
        -1,
    )
    return o.reshape(quaternions.shape[:-1] + (3, 3))


class JointPositionAction:
    """Raw policy actions -> joint targets: scale, offset, clip (an action term)."""

    def __init__(self, num_joints: int = 6) -> None:
        self._scale = torch.full((1, num_joints), 0.5)
        self._offset = torch.linspace(-0.2, 0.2, num_joints).unsqueeze(0)
        clip = torch.tensor([[-1.0, 1.0]]).repeat(num_joints, 1)
        self._clip = clip.unsqueeze(0)

    def process_actions(self, actions: torch.Tensor) -> torch.Tensor:
        self._raw_actions = actions.clone()
        self._processed_actions = self._raw_actions * self._scale + self._offset
        self._processed_actions = torch.clamp(
            self._processed_actions, min=self._clip[:, :, 0], max=self._clip[:, :, 1]
        )
        return self._processed_actions


_ISAAC_ACTION = JointPositionAction()
_GRAVITY_W = torch.tensor([0.0, 0.0, -1.0])


def isaaclab_terms(root_quat: torch.Tensor, joint_pos: torch.Tensor, episode_time: torch.Tensor,
                   raw_actions: torch.Tensor) -> dict[str, Any]:  # fmt: skip
    """Observation terms (projected gravity, euler, phase clock) and a joint action term."""
    num_envs = root_quat.shape[0]
    projected_gravity = scripted_quat_apply_inverse(root_quat, _GRAVITY_W.expand(num_envs, 3))
    roll, pitch, yaw = euler_xyz_from_quat(root_quat)
    euler = isaac_wrap_to_pi(torch.stack((roll, pitch, yaw), dim=-1))
    phase = (episode_time % 0.8) / 0.8
    clock = torch.cat([torch.sin(2 * torch.pi * phase), torch.cos(2 * torch.pi * phase)], dim=-1)
    rot = matrix_from_quat(root_quat)
    obs_terms = [projected_gravity, euler, joint_pos - 0.1, clock, rot.flatten(1)]
    obs = torch.cat(obs_terms, dim=-1).clip_(-5.0, 5.0).mul_(1.0)
    return {"obs": obs, "joint_targets": _ISAAC_ACTION.process_actions(raw_actions)}


# ------------------------------------------------------------------ Unitree deploy (NumPy)
class _MLP(nn.Module):
    def __init__(self, num_obs: int, num_actions: int) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(num_obs, 32), nn.ELU(), nn.Linear(32, num_actions))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


NUM_ACTIONS = 6
NUM_OBS = 9 + 3 * NUM_ACTIONS + 2
default_angles = np.array([0.1, 0.8, -1.5, -0.1, 0.8, -1.5], dtype=np.float32)
cmd_scale = np.array([2.0, 2.0, 0.25], dtype=np.float32)
ang_vel_scale, dof_pos_scale, dof_vel_scale, action_scale = 0.25, 1.0, 0.05, 0.25
simulation_dt, control_decimation = 0.005, 4
policy = torch.jit.script(_MLP(NUM_OBS, NUM_ACTIONS).eval())
obs = np.zeros(NUM_OBS, dtype=np.float32)  # made once, before the control loop


def get_gravity_orientation(quaternion: np.ndarray) -> np.ndarray:
    qw = quaternion[0]
    qx = quaternion[1]
    qy = quaternion[2]
    qz = quaternion[3]
    gravity_orientation = np.zeros(3)
    gravity_orientation[0] = 2 * (-qz * qx + qw * qy)
    gravity_orientation[1] = -2 * (qz * qy + qw * qx)
    gravity_orientation[2] = 1 - 2 * (qw * qw + qz * qz)
    return gravity_orientation


def unitree_deploy(qj, dqj, quat, omega, action, cmd, counter):  # noqa: ANN001, ANN201
    """A deploy loop's body: scaled joint state, gravity from the IMU quaternion, a gait
    phase clock from the step counter, the observation buffer, a TorchScript policy."""
    qj = (qj - default_angles) * dof_pos_scale
    dqj = dqj * dof_vel_scale
    gravity_orientation = get_gravity_orientation(quat)
    omega = omega * ang_vel_scale
    period = 0.8
    count = counter * simulation_dt * control_decimation
    phase = count % period / period
    sin_phase = np.sin(2 * np.pi * phase)
    cos_phase = np.cos(2 * np.pi * phase)
    obs[:3] = omega
    obs[3:6] = gravity_orientation
    obs[6:9] = cmd * cmd_scale
    obs[9 : 9 + NUM_ACTIONS] = qj
    obs[9 + NUM_ACTIONS : 9 + 2 * NUM_ACTIONS] = dqj
    obs[9 + 2 * NUM_ACTIONS : 9 + 3 * NUM_ACTIONS] = action
    obs[9 + 3 * NUM_ACTIONS : 9 + 3 * NUM_ACTIONS + 2] = np.array([sin_phase, cos_phase]).ravel()
    obs_tensor = torch.from_numpy(obs).unsqueeze(0)
    new_action = policy(obs_tensor).detach().numpy().squeeze()
    target_dof_pos = new_action * action_scale + default_angles
    return {"obs": obs.copy(), "target_dof_pos": target_dof_pos}


# ------------------------------------------------------------------ rl_games
class RLGamesRunningMeanStd(nn.Module):
    def __init__(self, insize: tuple[int, ...], epsilon: float = 1e-05) -> None:
        super().__init__()
        self.insize, self.epsilon = insize, epsilon
        self.register_buffer("running_mean", torch.linspace(-0.5, 0.5, insize[0]).double())
        self.register_buffer("running_var", torch.linspace(0.5, 2.0, insize[0]).double())
        self.register_buffer("count", torch.ones((), dtype=torch.float64))

    def forward(self, input: torch.Tensor, denorm: bool = False) -> torch.Tensor:  # noqa: A002
        current_mean, current_var = self.running_mean, self.running_var
        if denorm:
            y = torch.clamp(input, min=-5.0, max=5.0)
            return torch.sqrt(current_var.float() + self.epsilon) * y + current_mean.float()
        y = (input - current_mean.float()) / torch.sqrt(current_var.float() + self.epsilon)
        return torch.clamp(y, min=-5.0, max=5.0)


def rescale_actions(low: torch.Tensor, high: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
    d = (high - low) / 2.0
    m = (high + low) / 2.0
    return action * d + m


class RLGamesPlayer:
    def __init__(self) -> None:
        self.obs_shape = (8,)
        self.running_mean_std = RLGamesRunningMeanStd(self.obs_shape).eval()
        self.value_mean_std = RLGamesRunningMeanStd((1,)).eval()
        self.actor = nn.Linear(8, 3)
        self.critic = nn.Linear(8, 1)
        self.actions_low = torch.tensor([-1.0, -0.5, 0.0])
        self.actions_high = torch.tensor([1.0, 0.5, 2.0])
        self.clip_actions = True

    def _preproc_obs(self, obs_batch: torch.Tensor) -> torch.Tensor:
        if obs_batch.dtype == torch.uint8:
            obs_batch = obs_batch.float() / 255.0
        return self.running_mean_std(obs_batch)

    def unsqueeze_obs(self, obs: torch.Tensor) -> torch.Tensor:
        if len(obs.size()) == len(self.obs_shape):
            obs = obs.unsqueeze(0)
        return obs

    @torch.no_grad()
    def get_action(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        obs = self._preproc_obs(self.unsqueeze_obs(obs))
        mu = self.actor(obs)
        value = self.value_mean_std(self.critic(obs), denorm=True)
        current_action = mu
        if self.clip_actions:
            current_action = rescale_actions(
                self.actions_low, self.actions_high, torch.clamp(current_action, -1.0, 1.0)
            )
        return current_action.squeeze(0), value


_PLAYER = RLGamesPlayer()


def rl_games_player(obs: np.ndarray) -> dict[str, Any]:
    action, value = _PLAYER.get_action(torch.from_numpy(obs))
    return {"action": action, "value": value}


# ------------------------------------------------------------------ openpi transforms
def parse_image(image: np.ndarray) -> np.ndarray:
    image = np.asarray(image)
    if np.issubdtype(image.dtype, np.floating):
        image = (255 * image).astype(np.uint8)
    if image.shape[0] == 3:
        image = einops.rearrange(image, "c h w -> h w c")
    return image


def resize_with_pad(images: torch.Tensor, height: int, width: int) -> torch.Tensor:
    """Keep aspect, bilinear resize, pad with black (torch port of tf's resize_with_pad)."""
    cur_height, cur_width = images.shape[1:3]
    ratio = max(cur_width / width, cur_height / height)
    resized_height, resized_width = int(cur_height / ratio), int(cur_width / ratio)
    resized = F.interpolate(
        images.permute(0, 3, 1, 2).float(),
        size=(resized_height, resized_width),
        mode="bilinear",
        align_corners=False,
    )
    resized = resized.round().clamp(0, 255).to(torch.uint8)
    pad_h0, remainder_h = divmod(height - resized_height, 2)
    pad_w0, remainder_w = divmod(width - resized_width, 2)
    padded = F.pad(resized, (pad_w0, pad_w0 + remainder_w, pad_h0, pad_h0 + remainder_h), value=0)
    return padded.permute(0, 2, 3, 1)


@dataclass
class NormStats:
    q01: np.ndarray
    q99: np.ndarray


def pad_to_dim(x: np.ndarray, target_dim: int, axis: int = -1) -> np.ndarray:
    current_dim = x.shape[axis]
    if current_dim < target_dim:
        pad_width = [(0, 0)] * len(x.shape)
        pad_width[axis] = (0, target_dim - current_dim)
        return np.pad(x, pad_width)
    return x


def normalize_quantile(x: np.ndarray, stats: NormStats) -> np.ndarray:
    q01, q99 = stats.q01[..., : x.shape[-1]], stats.q99[..., : x.shape[-1]]
    return (x - q01) / (q99 - q01 + 1e-6) * 2.0 - 1.0


def unnormalize_quantile(x: np.ndarray, stats: NormStats) -> np.ndarray:
    q01, q99 = stats.q01, stats.q99
    if (dim := q01.shape[-1]) < x.shape[-1]:
        return np.concatenate([(x[..., :dim] + 1.0) / 2.0 * (q99 - q01 + 1e-6) + q01,
                               x[..., dim:]], axis=-1)  # fmt: skip
    return (x + 1.0) / 2.0 * (q99 - q01 + 1e-6) + q01


_PI_STATE = NormStats(
    np.linspace(-1, 0, 7).astype(np.float32), np.linspace(0.5, 2, 7).astype(np.float32)
)
_PI_ACTIONS = NormStats(
    np.linspace(-2, 0, 6).astype(np.float32), np.linspace(1, 3, 6).astype(np.float32)
)
_DELTA_MASK = np.array([True, True, True, False, True, True])


def openpi_transforms(image: np.ndarray, state: np.ndarray, actions: np.ndarray) -> dict[str, Any]:
    """Inputs: parse, resize with pad, normalise, pad; outputs: unnormalise, absolute actions."""
    img = parse_image(image)
    img = resize_with_pad(torch.from_numpy(img)[None], 24, 24)[0].numpy()
    nstate = pad_to_dim(normalize_quantile(state, _PI_STATE), 8)
    out = unnormalize_quantile(actions, _PI_ACTIONS)
    dims = _DELTA_MASK.shape[-1]
    out = out.copy()
    out[..., :dims] += np.expand_dims(np.where(_DELTA_MASK, state[..., :dims], 0), axis=-2)
    return {"image": img, "state": nstate, "actions": out}


# ------------------------------------------------------------------ inputs
class TutorialAgents:
    """The act() of the DQN / DDPG / A2C tutorials most RL code starts from: the legacy
    constructors on the NumPy observation (torch.FloatTensor(state).unsqueeze(0),
    torch.Tensor(obs)), a greedy action by argmax, an actor clipped to the action bounds,
    a LongTensor of the discrete action gathered from the Q-values."""

    def __init__(self) -> None:
        self.q_net = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 4)).eval()
        self.actor = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 2)).eval()
        self.max_action = 2.0

    def act(self, state: np.ndarray, obs: np.ndarray) -> dict[str, Any]:
        state_t = torch.FloatTensor(state).unsqueeze(0)
        with torch.no_grad():
            q_values = self.q_net(state_t)
        action = q_values.max(1)[1].view(1, 1)
        chosen = q_values.gather(1, torch.LongTensor(action.numpy()))
        obs_t = torch.Tensor(obs.reshape(1, -1))
        with torch.no_grad():
            mu = self.actor(obs_t) * self.max_action
        return {
            "action": action,
            "q": chosen,
            "mu": mu.clamp(-self.max_action, self.max_action).cpu().data.numpy().flatten(),
        }


_TUTORIAL = TutorialAgents()


def tutorial_agents(state: np.ndarray, obs: np.ndarray) -> dict[str, Any]:
    return _TUTORIAL.act(state, obs)


def _f32(rng: np.random.Generator, shape: Any, low: float = -1.0, high: float = 1.0):  # noqa: ANN202
    return rng.uniform(low, high, size=shape).astype(np.float32)


def _t32(rng: np.random.Generator, shape: Any, low: float = -1.0, high: float = 1.0):  # noqa: ANN202
    return torch.from_numpy(_f32(rng, shape, low, high))


def _quats(rng: np.random.Generator, n: int, scalar_last: bool = False) -> np.ndarray:
    q = rng.normal(size=(n, 4)).astype(np.float32)
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    return q


def _rot6d(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.normal(size=(*shape, 6)).astype(np.float32)


def _root_states(rng: np.random.Generator, n: int) -> torch.Tensor:
    root = _f32(rng, (n, 13))
    root[:, 3:7] = _quats(rng, n)
    return torch.from_numpy(root)


def _naction(rng: np.random.Generator) -> np.ndarray:
    a = _f32(rng, (2, 4, 10))
    a[..., 3:9] = _rot6d(rng, (2, 4))
    return a


P = harness.Pipeline
PIPELINES = [
    P("lerobot_observation", lerobot_observation,
      lambda r: {"pixels": harness._image(r, 24, 32), "agent_pos": _f32(r, (6,))}),
    P("lerobot_action_chunk", lerobot_action_chunk,
      lambda r: {"state": _f32(r, (6,)), "present": _f32(r, (6,))}),
    P("robomimic_observation", robomimic_observation,
      lambda r: {"rgb": harness._image(r, 24, 32), "depth": _f32(r, (24, 32, 1), 0, 1),
                 "eef": _f32(r, (3,)), "gripper": _f32(r, (2,), -0.04, 0.04)}),
    P("diffusion_policy_step", diffusion_policy_step,
      lambda r: {"agent_pos": _f32(r, (2, 3, 4)), "naction": _naction(r)}),
    P("sb3_policy", sb3_policy,
      lambda r: {"image": harness._image(r, 16, 16)[None], "vec": _f32(r, (1, 5), -3, 3),
                 "buttons": np.array([[r.integers(0, 3), r.integers(0, 2), r.integers(0, 4)]])}),
    P("sb3_atari", sb3_atari,
      lambda r: {"frame_a": harness._image(r, 42, 42), "frame_b": harness._image(r, 42, 42),
                 "history": r.integers(0, 256, size=(3, 21, 21)).astype(np.uint8)}),
    P("gymnasium_wrappers", gymnasium_wrappers,
      lambda r: {"rgb": harness._image(r, 24, 32), "state": _f32(r, (4,), -3, 3),
                 "action": _f32(r, (3,), -1.5, 1.5)}),
    P("legged_gym_obs", legged_gym_obs,
      lambda r: {"root_states": _root_states(r, 4), "dof_pos": _t32(r, (4, 12)),
                 "dof_vel": _t32(r, (4, 12), -5, 5), "actions": _t32(r, (4, 12), -2, 2),
                 "commands": _t32(r, (4, 4), -3, 3), "heights": _t32(r, (4, 5), -0.5, 0.5)}),
    P("isaaclab_terms", isaaclab_terms,
      lambda r: {"root_quat": torch.from_numpy(_quats(r, 4)), "joint_pos": _t32(r, (4, 6)),
                 "episode_time": _t32(r, (4, 1), 0, 20), "raw_actions": _t32(r, (4, 6), -3, 3)}),
    P("unitree_deploy", unitree_deploy,
      lambda r: {"qj": _f32(r, (6,)), "dqj": _f32(r, (6,), -5, 5), "quat": _quats(r, 1)[0],
                 "omega": _f32(r, (3,), -2, 2), "action": _f32(r, (6,)),
                 "cmd": _f32(r, (3,)), "counter": np.array([r.integers(0, 10000)], np.int64)}),
    P("rl_games_player", rl_games_player, lambda r: {"obs": _f32(r, (8,), -3, 3)}),
    P("tutorial_agents", tutorial_agents,
      lambda r: {"state": r.normal(size=6), "obs": _f32(r, (2, 3), -2, 2)}),
    P("openpi_transforms", openpi_transforms,
      lambda r: {"image": _f32(r, (3, 18, 30), 0, 1), "state": _f32(r, (7,), -1, 2),
                 "actions": _f32(r, (4, 7), -1, 1)}),
]  # fmt: skip


def main(names: list[str]) -> dict[str, dict[str, int]]:
    chosen = [p for p in PIPELINES if not names or p.name in names]
    return harness.run_table(chosen, "robot")


if __name__ == "__main__":
    main(sys.argv[1:])
