"""The bundle description written beside the models (YAML), in LEAPP's layout and keys.

``models.<node>``: ``inputs``/``outputs`` (name, dtype, shape, type, semantic labels) and
``parameters`` (``model_path``, ``md5sum``, ``sha256sum``, ``backend``...);
``pipeline``: ``data_flow`` and ``feedback_flow`` (``"node/out": ["node/in", ...]``),
``inputs``, ``outputs``, ``initial_values`` (a safetensors file) and ``configs``;
``system information``. LEAPP's ``InferenceManager`` loads it, and ours loads LEAPP's.
"""

from __future__ import annotations

import hashlib
import platform
import sys
from pathlib import Path
from typing import Any

import yaml

from ..versions import installed_version

SYSTEM_KEY = "system information"
FORMAT_VERSION = "1.3"  # the LEAPP bundle format version this layout follows


def digests_of(path: Path) -> tuple[str, str]:
    """Hex ``(md5, sha256)`` of a file, read once in chunks."""
    md5, sha256 = hashlib.md5(usedforsecurity=False), hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            md5.update(chunk)
            sha256.update(chunk)
    return md5.hexdigest(), sha256.hexdigest()


def sha256_of(path: Path) -> str:
    """Hex SHA-256 of a file, read in chunks."""
    return digests_of(path)[1]


def system_info() -> dict[str, Any]:
    """Versions and platform that produced the models, for reproducibility."""
    import patchport

    torch_version = installed_version("torch")
    cuda = None
    try:
        import torch

        cuda = torch.version.cuda
    except ImportError:  # pragma: no cover - torch is a dependency
        pass
    info: dict[str, Any] = {
        "cuda version": str(cuda),
        "leapp config version": FORMAT_VERSION,
        "os": platform.platform(),
        "python version": platform.python_version(),
        "torch version": torch_version,
        "patchport version": patchport.__version__,
    }
    for package in ("numpy", "onnx", "onnxruntime", "onnxscript", "opencv-python-headless"):
        info[f"{package} version"] = installed_version(package)
    # what exported OpenCV arithmetic follows, whichever distribution (contrib, gui) ships cv2
    cv2 = sys.modules.get("cv2")
    info["opencv version"] = getattr(cv2, "__version__", None)
    return info


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """Safe YAML with short lists of scalars on one line (``shape: [1, 16]``)."""


def _represent_list(dumper: Any, data: list[Any]) -> Any:
    flow = len(data) <= 16 and all(not isinstance(item, (dict, list)) for item in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flow or None)


_Dumper.add_representer(list, _represent_list)


def write_spec(path: Path, spec: dict[str, Any]) -> Path:
    """Write the description as YAML (keys in insertion order)."""
    with open(path, "w", encoding="utf-8") as handle:
        yaml.dump(spec, handle, Dumper=_Dumper, sort_keys=False, default_flow_style=False)
    return path


LEAPP_KEYS = "Leapp description file must contain models, pipeline, and system_info"
"""LEAPP's wording for a description missing a top-level section (users grep for it)."""


def read_spec(path: Path) -> dict[str, Any]:
    """Read a bundle description (ours or LEAPP's), with a clear error if malformed."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with open(path, encoding="utf-8") as handle:
        spec = yaml.load(handle, Loader=loader)  # noqa: S506 - a safe loader
    if not isinstance(spec, dict) or not isinstance(spec.get("models"), dict):
        raise ValueError(
            f"{path}: not a pipeline description (the 'models' mapping is missing); {LEAPP_KEYS}."
        )
    if not isinstance(spec.get("pipeline"), dict):
        raise ValueError(
            f"{path}: not a pipeline description (the 'pipeline' mapping is missing); {LEAPP_KEYS}."
        )
    for node, model in spec["models"].items():
        missing = [k for k in ("inputs", "outputs", "parameters") if k not in (model or {})]
        if missing:
            raise ValueError(
                f"{path}: model {node!r} lacks {missing} (Model description must contain "
                f"inputs, outputs, and parameters)."
            )
    return spec
