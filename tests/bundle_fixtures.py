"""Bundles for the CLI and drawing tests: a real exported three-node pipeline, a feedback
variant of it in LEAPP's key layout, and a dozen-node description with feedback loops."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import numpy as np
import torch
import yaml

import patchport
from patchport import annotate


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def export_three_nodes(folder: Path, verbose: bool | None = None) -> tuple[Path, list[str]]:
    """Trace normalize -> policy -> clip (jit) twice, compile; the YAML and the log lines."""
    torch.manual_seed(0)
    linear = torch.nn.Linear(4, 2)
    rng = np.random.default_rng(0)
    with patchport.session("three_nodes", save_path=folder):
        for _ in range(2):
            raw = rng.standard_normal((3, 4)).astype(np.float32)
            goal = rng.standard_normal((2,)).astype(np.float32)
            x = annotate.input_tensors("normalize", {"raw": raw})
            feats = annotate.output_tensors(
                "normalize", {"features": (x - x.mean(axis=0)) * 0.5}, export_with="jit"
            )
            f, g = annotate.input_tensors("policy", {"features": feats, "goal": goal})
            with torch.no_grad():
                f = torch.as_tensor(f)
                action = linear(f).mean(0) + torch.as_tensor(g)
                action, _ = annotate.output_tensors(
                    "policy", {"action": action, "hidden": f.sum(0)}, export_with="jit"
                )
            a = annotate.input_tensors("clip", {"action": action})
            annotate.output_tensors(
                "clip", {"safe_action": torch.clamp(a, -1.0, 1.0)}, export_with="jit"
            )
    log = logging.getLogger("patchport")
    handler, level = _Lines(), log.level
    log.addHandler(handler)
    log.setLevel(logging.NOTSET)  # whatever an earlier test did, start from the default
    try:
        result = patchport.compile_graph(verbose=verbose)
    finally:
        log.removeHandler(handler)
        log.setLevel(level)
    return result.yaml_path, handler.lines


def leapp_layout_with_feedback(yaml_path: Path, folder: Path) -> Path:
    """A copy of the bundle in LEAPP's layout (parameters, mappings, 'system information')
    with a feedback edge clip/safe_action -> policy/goal and semantics on one port."""
    shutil.copytree(yaml_path.parent, folder)
    spec = yaml.safe_load(yaml_path.read_text())
    for model in spec["models"].values():
        if "parameters" not in model:  # patchport's own layout: move to LEAPP's keys
            model["parameters"] = {
                "backend": model.pop("backend"),
                "model_path": model.pop("model_path"),
                "md5sum": "",
                "sha256sum": model.pop("sha256"),
            }
    spec["models"]["policy"]["inputs"][1]["kind"] = "state"
    pipeline = spec["pipeline"]
    if isinstance(pipeline["data_flow"], list):
        pipeline["data_flow"] = {e["source"]: e["targets"] for e in pipeline["data_flow"]}
    pipeline.setdefault("feedback_flow", {})
    pipeline["feedback_flow"] = {
        **(pipeline["feedback_flow"] or {}),
        "clip/safe_action": ["policy/goal"],
    }
    if "system_info" in spec:
        spec["system information"] = spec.pop("system_info")
    out = folder / yaml_path.name
    out.write_text(yaml.safe_dump(spec, sort_keys=False))
    return out


def dozen_node_description(path: Path) -> Path:
    """A 12-node description (LEAPP layout) with fan-out, long edges and 4 feedback loops."""

    def port(name: str) -> dict:
        return {"name": name, "shape": [1, 8], "dtype": "float32"}

    models = {}
    nodes = [
        ("camera_left", ["image"], ["feat"], "jit"),
        ("camera_right", ["image"], ["feat"], "jit"),
        ("imu", ["accel", "gyro"], ["motion"], "pt2"),
        ("stereo", ["left", "right"], ["depth", "disparity"], "onnx"),
        ("odometry", ["motion", "depth", "prev_pose"], ["pose"], "onnx"),
        ("mapper", ["depth", "pose", "prev_map"], ["map"], "onnx"),
        ("planner", ["map", "pose", "goal"], ["path"], "onnx"),
        ("tracker", ["disparity", "pose"], ["objects"], "onnx"),
        ("fusion", ["objects", "path"], ["plan"], "pt2"),
        ("policy", ["plan", "pose", "prev_action", "hidden"], ["action", "hidden_out"], "onnx"),
        ("safety", ["action", "objects"], ["safe_action"], "jit"),
        ("logger", ["safe_action", "map"], ["summary"], "jit"),
    ]
    for name, inputs, outputs, backend in nodes:
        models[name] = {
            "inputs": [port(p) for p in inputs],
            "outputs": [port(p) for p in outputs],
            "parameters": {"backend": backend, "model_path": f"./{name}.bin", "sha256sum": ""},
        }
    flow = {
        "camera_left/feat": ["stereo/left"],
        "camera_right/feat": ["stereo/right"],
        "imu/motion": ["odometry/motion"],
        "stereo/depth": ["odometry/depth", "mapper/depth"],
        "stereo/disparity": ["tracker/disparity"],
        "odometry/pose": ["mapper/pose", "planner/pose", "tracker/pose", "policy/pose"],
        "mapper/map": ["planner/map", "logger/map"],
        "tracker/objects": ["fusion/objects", "safety/objects"],
        "planner/path": ["fusion/path"],
        "fusion/plan": ["policy/plan"],
        "policy/action": ["safety/action"],
        "safety/safe_action": ["logger/safe_action"],
    }
    feedback = {
        "odometry/pose": ["odometry/prev_pose"],
        "mapper/map": ["mapper/prev_map"],
        "safety/safe_action": ["policy/prev_action"],
        "policy/hidden_out": ["policy/hidden"],
    }
    spec = {
        "name": "dozen",
        "models": models,
        "pipeline": {
            "data_flow": flow,
            "feedback_flow": feedback,
            "inputs": {
                "camera_left": ["image"],
                "camera_right": ["image"],
                "imu": ["accel", "gyro"],
                "planner": ["goal"],
            },
            "outputs": {"logger": ["summary"], "safety": ["safe_action"]},
        },
        "system information": {"python_version": "3.11"},
    }
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path
