"""The one table of export backends: names, the model type each writes, each type's suffix.

Plain data and no imports, so every layer can check a name against it: ``sessions`` when
``annotate.output_tensors(export_with=...)`` is called, ``bundle`` to pick a loader by the
YAML's model type, ``export`` to pick a writer. Each of those tables is built from this one.
"""

# model type (the YAML's ``backend`` key, which picks the loader) -> its file's suffix
MODEL_SUFFIXES: dict[str, str] = {"jit": ".pt", "onnx": ".onnx", "pt2": ".pt2"}

# canonical backend name (LEAPP's; what ``export_with=`` takes) -> the model type it writes
BACKEND_TYPES: dict[str, str] = {
    "jit-script": "jit",
    "jit-trace": "jit",
    "onnx-dynamo": "onnx",
    "onnx-torchscript": "onnx",
    "exported-program": "pt2",
}

# LEAPP's short names
ALIASES: dict[str, str] = {"jit": "jit-script", "onnx": "onnx-dynamo", "pt2": "exported-program"}

# every name ``export_with=`` accepts, canonical names first
NAMES: tuple[str, ...] = (*BACKEND_TYPES, *ALIASES)


def canonical_name(name: object) -> str | None:
    """The canonical backend for an ``export_with=`` name; None if it names none."""
    if not isinstance(name, str):
        return None
    name = ALIASES.get(name, name)
    return name if name in BACKEND_TYPES else None


def unknown_backend(name: object) -> str:
    """The message for an ``export_with=`` value that names no backend."""
    return (
        f"export_with={name!r}: unknown backend; use one of "
        f"{', '.join(repr(b) for b in NAMES)}, or None with "
        f"backend_params={{'model_path': ...}}."
    )
