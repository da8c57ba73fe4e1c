"""The feedback initial values beside a bundle's YAML, read as a shared bundle is read.

The file must resolve inside the bundle folder (like a model file), is read once, and every
value must name a node input (``"node/port"``) and match its port's dtype and shape;
anything else is refused when the manager loads, naming the file, the key and the fix,
instead of failing (or computing with a wrong dtype) on the first ``run_policy``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import BundleFormatError
from .bundle_safety import resolve_inside


def read_initial_values(bundle_yaml: Path, filename: Any) -> bytes:
    """The bytes of ``pipeline.initial_values``, refused outside the bundle folder."""
    path = resolve_inside(bundle_yaml, None, filename, "pipeline.initial_values")
    if not path.is_file():
        raise FileNotFoundError(
            f"InferenceManager: {bundle_yaml.name} names initial values {filename!r}, which "
            f"is missing from {path.parent}; copy the bundle folder whole."
        )
    return path.read_bytes()


def _dtype_name(value: Any) -> str:
    return str(value.dtype).removeprefix("torch.")


def checked_initial_values(
    data: bytes, filename: str, models: dict[str, Any], arrays: Any
) -> dict[str, Any]:
    """``{"node/port": value}`` from the file's bytes, each checked against its port."""
    try:
        values = arrays.loads(data)
    except Exception as exc:  # safetensors' own error types differ between its backends
        raise BundleFormatError(
            f"{filename}: not a safetensors file of initial values ({type(exc).__name__}: "
            f"{exc}); restore the file compile_graph() wrote."
        ) from exc
    ports = {
        f"{node}/{port['name']}": port
        for node, model in models.items()
        for port in model.get("inputs") or []
    }
    for key, value in values.items():
        if key.count("/") != 1:
            raise BundleFormatError(
                f"{filename}: key {key!r} is not 'node/port' (too many values to unpack); "
                f"restore the file compile_graph() wrote."
            )
        port = ports.get(key)
        if port is None:
            raise BundleFormatError(
                f"{filename}: {key!r} is not a node input; the node inputs are {sorted(ports)}."
            )
        dynamic = {int(axis) for axis in port.get("dynamic_axes") or {}}
        shape = list(value.shape)
        fits = len(shape) == len(port["shape"]) and all(
            axis in dynamic or size == expected
            for axis, (size, expected) in enumerate(zip(shape, port["shape"]))
        )
        if not fits or value.dtype != arrays.dtype(port["dtype"]):
            raise BundleFormatError(
                f"{filename}: initial value {key!r}: its port takes "
                f"{str(port['dtype']).removeprefix('torch.')}{list(port['shape'])}, the file "
                f"holds {_dtype_name(value)}{shape}; restore the file compile_graph() wrote."
            )
    return values
