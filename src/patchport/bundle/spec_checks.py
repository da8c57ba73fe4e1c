"""A bundle's YAML checked when it is loaded, not when a policy first runs.

A binary or non-UTF-8 file, a misspelled ``data_flow`` (silently no edges: inputs go
missing at run time), ports written as one string (iterated character by character), and
ports whose shape, dtype or name no runtime can hold (a negative or fractional size, an
unknown dtype, buffers larger than the machine's memory) are reported with the file name,
the port and the fix, before any model file is opened.
"""

from __future__ import annotations

import difflib
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import BundleFormatError
from .arrays import _NUMPY_NAMES

PIPELINE_KEYS = (
    "configs",
    "data_flow",
    "feedback_flow",
    "initial_values",
    "inputs",
    "outputs",
)


def read_checked_spec(path: Path, read: Callable[[Path], dict[str, Any]]) -> dict[str, Any]:
    """``read(path)`` with a clear error naming the file, then :func:`check_spec`."""
    try:
        spec = read(path)
    except UnicodeDecodeError as exc:
        raise BundleFormatError(
            f"{path}: not a UTF-8 text file (undecodable byte at offset {exc.start}); "
            f"pass the bundle's .yaml written by compile_graph()."
        ) from exc
    except (OSError, BundleFormatError):
        raise
    except Exception as exc:  # yaml's scanner and reader errors
        if type(exc).__module__.startswith("yaml"):
            raise BundleFormatError(
                f"{path}: not valid YAML ({type(exc).__name__}: {exc}); pass the bundle's "
                f".yaml written by compile_graph()."
            ) from exc
        raise
    check_spec(path, spec)
    return spec


# bytes per element of every dtype name a bundle may hold (NumPy's, torch's, LEAPP's);
# the names of patchport.dtype_table, spelled here so the runtime imports no more modules
_NUMPY_DTYPES = (
    "bool uint8 int8 uint16 int16 uint32 int32 uint64 int64 float16 float32 float64 "
    "complex64 complex128"
).split()
ITEMSIZE: dict[str, int] = {
    **{name: np.dtype(name).itemsize for name in _NUMPY_DTYPES},
    **{name: np.dtype(numpy).itemsize for name, numpy in _NUMPY_NAMES.items()},
    "bfloat16": 2,
}


def _ports(path: Path, where: str, ports: Any) -> None:
    if isinstance(ports, str):
        raise BundleFormatError(
            f"{path}: {where} is the string {ports!r}; write a list of ports, e.g. [{ports}]."
        )


def _port_bytes(path: Path, where: str, port: Any) -> int:
    """The buffer size of one described port; refuses a port no runtime can hold."""
    if not isinstance(port, dict):
        return 0  # the description checks name what is missing
    name = port.get("name")
    if not isinstance(name, str) or not name or "/" in name:
        raise BundleFormatError(
            f"{path}: {where} has port name {name!r}; a port name is a non-empty string "
            f"without '/' (keys are 'node/port')."
        )
    where = f"{where} port {name!r}"
    dtype = str(port.get("dtype")).removeprefix("torch.")
    if dtype not in ITEMSIZE:
        raise BundleFormatError(
            f"{path}: {where} has unknown dtype {port.get('dtype')!r}; known dtypes: "
            f"{', '.join(sorted(ITEMSIZE))}."
        )
    shape = port.get("shape")
    if not isinstance(shape, list) or not all(type(size) is int and size >= 0 for size in shape):
        raise BundleFormatError(
            f"{path}: {where} has shape {shape!r}; a shape is a list of non-negative "
            f"integers (the sizes compile_graph traced)."
        )
    return math.prod(shape) * ITEMSIZE[dtype]


def _memory() -> int | None:
    """Physical memory in bytes (None where the system does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, OSError, ValueError):
        return None


def check_spec(path: Path, spec: dict[str, Any]) -> None:
    """Refuse unknown pipeline keys (with the likely spelling) and ports given as a string."""
    pipeline = spec.get("pipeline")
    if isinstance(pipeline, dict):
        for key in pipeline:
            if key not in PIPELINE_KEYS:
                close = difflib.get_close_matches(str(key), PIPELINE_KEYS, n=1)
                hint = f"did you mean {close[0]!r}? " if close else ""
                raise BundleFormatError(
                    f"{path}: unknown key pipeline.{key}; {hint}known keys: "
                    f"{', '.join(PIPELINE_KEYS)}."
                )
        for side in ("inputs", "outputs"):
            for node, ports in (pipeline.get(side) or {}).items():
                _ports(path, f"pipeline.{side}.{node}", ports)
    total, largest = 0, (0, "")
    models = spec.get("models")
    for node, model in models.items() if isinstance(models, dict) else ():
        if isinstance(model, dict):
            for side in ("inputs", "outputs"):
                where = f"models.{node}.{side}"
                _ports(path, where, model.get(side))
                ports = model.get(side)
                for port in ports if isinstance(ports, list) else ():
                    size = _port_bytes(path, where, port)
                    total += size
                    largest = max(largest, (size, f"{where} port {port.get('name')!r}"))
    memory = _memory()
    if memory is not None and total > memory:
        raise BundleFormatError(
            f"{path}: the ports need {total / 2**30:.1f} GiB of buffers (the largest: "
            f"{largest[1]}, {largest[0] / 2**30:.1f} GiB), more than this machine's memory "
            f"({memory / 2**30:.1f} GiB); the shapes were changed after export or the bundle "
            f"is not for this machine."
        )
