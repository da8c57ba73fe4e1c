"""The pipeline description written beside the models (YAML): models, data flow, system."""

from __future__ import annotations

import hashlib
import platform
import sys
from pathlib import Path
from typing import Any

import yaml

from ..versions import installed_version


def sha256_of(path: Path) -> str:
    """Hex SHA-256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def system_info() -> dict[str, Any]:
    """Versions and platform that produced the models, for reproducibility."""
    import patchport

    info = {
        "python_version": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "patchport_version": patchport.__version__,
    }
    for package in (
        "torch",
        "numpy",
        "onnx",
        "onnxruntime",
        "onnxscript",
        "opencv-python-headless",
    ):
        info[f"{package.replace('-', '_')}_version"] = installed_version(package)
    info["executable"] = sys.executable
    return info


def write_spec(path: Path, spec: dict[str, Any]) -> Path:
    """Write the description as YAML (keys in insertion order)."""
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml when available
    with open(path, "w", encoding="utf-8") as handle:
        yaml.dump(spec, handle, Dumper=dumper, sort_keys=False)
    return path


def read_spec(path: Path) -> dict[str, Any]:
    """Read a description written by :func:`write_spec`, with a clear error if malformed."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with open(path, encoding="utf-8") as handle:
        spec = yaml.load(handle, Loader=loader)  # noqa: S506 - a safe loader
    if not isinstance(spec, dict) or "models" not in spec or "pipeline" not in spec:
        raise ValueError(f"{path}: not a patchport pipeline description (models/pipeline missing).")
    return spec
