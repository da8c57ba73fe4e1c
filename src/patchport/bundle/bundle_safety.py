"""Opening a bundle's model files as if the folder came from someone else.

A bundle (YAML + model files) may be shared, so loading it must not reach outside its
folder nor run code hidden in a pickle: a model path must resolve (symlinks followed)
inside the folder holding the YAML; each file is read once, its SHA-256 checked on
those very bytes, and the model built from them (no second read to swap in between);
``.pt2`` archives load with torch's weights-only unpickler, and archive entries that
torch would unpickle without it (custom or opaque objects) are refused.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import BundleSafetyError, ModelIntegrityError


def resolve_inside(bundle_yaml: Path, node: str | None, model_path: Any, field: str = "") -> Path:
    """A file the YAML names, refused unless it resolves inside the YAML's folder.

    ``node``'s ``model_path`` by default; with ``node=None``, ``field`` names the
    pipeline-level entry (``pipeline.initial_values``).
    """
    folder = bundle_yaml.resolve().parent
    owner = f"node {node!r}" if node is not None else field
    field = field or "model_path"
    if not isinstance(model_path, str) or not model_path:
        raise BundleSafetyError(
            f"InferenceManager: {owner} in {bundle_yaml.name} has {field} "
            f"{model_path!r}; expected a file name relative to the bundle folder."
        )
    if os.path.isabs(model_path) or Path(model_path).is_absolute():
        raise BundleSafetyError(
            f"InferenceManager: {owner} in {bundle_yaml.name} names an absolute "
            f"{field} {model_path!r}; a bundle may only load files inside its folder "
            f"{folder}. Use a path relative to it, e.g. './{Path(model_path).name}'."
        )
    resolved = (folder / model_path).resolve()
    if not resolved.is_relative_to(folder):
        raise BundleSafetyError(
            f"InferenceManager: {owner} in {bundle_yaml.name}: {field} "
            f"{model_path!r} resolves to {resolved}, outside the bundle folder {folder} "
            f"('..' or a symlink pointing out); refused. Keep the bundle's files inside the "
            f"folder."
        )
    return resolved


def read_verified(bundle_yaml: Path, node: str, model_path: Any, sha256: Any) -> tuple[Path, bytes]:
    """Read ``node``'s model once and check its SHA-256 on the bytes read; return both."""
    path = resolve_inside(bundle_yaml, node, model_path)
    if not isinstance(sha256, str) or len(sha256) != 64:
        raise ModelIntegrityError(
            f"InferenceManager: node {node!r} in {bundle_yaml.name} records no valid sha256 "
            f"for {model_path!r} (got {sha256!r}); a model is loaded only when its hash is "
            f"known. Re-run compile_graph() to write a complete bundle."
        )
    if not path.is_file():
        raise FileNotFoundError(f"InferenceManager: model of node {node!r} is missing: {path}")
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != sha256.lower():
        raise ModelIntegrityError(
            f"InferenceManager: SHA256 checksum mismatch: {path.name} (node {node!r}) has "
            f"sha256 {digest[:12]}… but "
            f"{bundle_yaml.name} records {sha256[:12]}…; it changed after export. Re-run "
            f"compile_graph() or restore the file."
        )
    return path, data


@contextlib.contextmanager
def _weights_only_everywhere() -> Iterator[None]:
    """Make every ``torch.load`` inside the block weights-only, even ``weights_only=False``."""
    saved = {key: os.environ.get(key) for key in ("TORCH_FORCE_WEIGHTS_ONLY_LOAD",)}
    saved["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] = os.environ.pop(
        "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", None
    )
    os.environ["TORCH_FORCE_WEIGHTS_ONLY_LOAD"] = "1"
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def load_pt2(source: bytes | str | Path, name: str) -> Any:
    """``torch.export.load`` without arbitrary unpickling (from bytes or a path)."""
    import torch
    from torch.export.pt2_archive import constants

    data = source if isinstance(source, bytes) else Path(source).read_bytes()
    refused = (constants.CUSTOM_OBJ_FILENAME_PREFIX, constants.OPAQUE_OBJ_FILENAME_PREFIX)
    try:
        entries = zipfile.ZipFile(io.BytesIO(data)).namelist()
    except zipfile.BadZipFile as exc:
        raise BundleSafetyError(f"{name}: not a .pt2 archive ({exc}).") from exc
    unsafe = [entry for entry in entries if os.path.basename(entry).startswith(refused)]
    if unsafe:
        raise BundleSafetyError(
            f"{name}: the archive holds pickled objects {unsafe[:3]} that torch would load "
            f"with the unrestricted unpickler (able to run code); refused. Export the model "
            f"without custom or opaque objects."
        )
    with _weights_only_everywhere():
        try:
            return torch.export.load(io.BytesIO(data))
        except Exception as exc:
            if "weights_only" in str(exc) or "Weights only load failed" in str(exc):
                raise BundleSafetyError(
                    f"{name}: loading needs the unrestricted unpickler (the archive holds "
                    f"something other than tensors and plain data); refused: {exc}"
                ) from exc
            raise
