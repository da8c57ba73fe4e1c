"""Write a node's GraphModule with one backend, and load it back as a runner.

A runner takes the node's inputs (NumPy arrays or tensors, in port order) and returns
its outputs as NumPy arrays, whatever the backend, so replay and comparison are uniform.
"""

from __future__ import annotations

import contextlib
import io
import logging
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..errors import PatchportError
from .bundle_safety import load_pt2

SUFFIX = {"onnx": ".onnx", "pt2": ".pt2", "jit": ".pt"}

Runner = Callable[[Sequence[Any]], list[np.ndarray]]


class ExportBackendError(PatchportError, RuntimeError):
    """A backend failed to write or load a node's model."""


def as_tensor(value: Any) -> torch.Tensor:
    """A plain CPU tensor for a NumPy array or tensor (no copy where possible)."""
    kind = type(value)
    if kind is torch.Tensor:
        return value
    if kind is np.ndarray and value.flags.c_contiguous:  # the common case, on the hot path
        return torch.from_numpy(value)
    if isinstance(value, torch.Tensor):
        return value.as_subclass(torch.Tensor)
    return torch.from_numpy(np.ascontiguousarray(value))


def as_numpy(value: Any) -> np.ndarray:
    """A NumPy array for a tensor or array-like output."""
    if type(value) is torch.Tensor and not value.requires_grad and value.device.type == "cpu":
        return value.numpy()  # the common case, on the hot path
    if isinstance(value, torch.Tensor):
        return value.detach().as_subclass(torch.Tensor).cpu().numpy()
    return np.asarray(value)


@contextlib.contextmanager
def _quiet_logger(name: str) -> Iterator[None]:
    """Silence a library logger's progress chatter for the block, then restore its level."""
    log = logging.getLogger(name)
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        log.setLevel(level)


_ONNX_REGISTRIES: dict[Any, Any] = {}


def reuse_onnx_registry(cls: Any, *args: Any, **kwargs: Any) -> Any:
    """Build torch.onnx's op registry once per opset and reuse it for later exports.

    torch rebuilds it from torchlib on every export (about 1 s on a laptop CPU); the
    registry is read-only during an export without a custom translation table.
    """
    from ..patching import original_of

    key = (cls, args, tuple(sorted(kwargs.items())))
    if key not in _ONNX_REGISTRIES:
        original = original_of(cls, "from_torchlib")
        _ONNX_REGISTRIES[key] = original.__get__(None, cls)(*args, **kwargs)
    return _ONNX_REGISTRIES[key]


def _onnx_export_patches() -> Any:
    """The patches applied around patchport's own ONNX exports (listed like any other)."""
    from torch.onnx._internal.exporter import _registration

    from ..patching import PatchDetails, PatchInfo

    return PatchDetails(
        [
            PatchInfo(
                classmethod(reuse_onnx_registry),
                _registration.ONNXRegistry,
                "from_torchlib",
                family="export",
                description="reuse the ONNX op registry across exports",
            ),
        ]
    )


def name_onnx_ports(path: Path, input_names: list[str], output_names: list[str]) -> None:
    """Give the ONNX graph's inputs and outputs the node's port names, keeping names unique.

    The exporter names inner values after operators (``mul``, ``transpose``...), so a port
    with such a name would be defined twice; inner values are renamed out of the way first.
    """
    import onnx

    model = onnx.load(str(path))
    graph = model.graph
    wanted: dict[str, str] = {}
    for values, names in ((graph.input, input_names), (graph.output, output_names)):
        if len(values) == len(names):  # otherwise the exporter's own names are kept
            wanted.update(zip([v.name for v in values], names))
    used = {name for node in graph.node for name in (*node.input, *node.output)}
    used |= {v.name for v in (*graph.input, *graph.output)} | {i.name for i in graph.initializer}
    mapping: dict[str, str] = {}
    for current, target in wanted.items():
        if current == target:
            continue
        if target in used and target not in wanted:
            spare = f"{target}_inner"
            while spare in used:
                spare += "_"
            mapping[target] = spare
            used.add(spare)
        mapping[current] = target
    if not mapping:
        return
    for node in graph.node:
        node.input[:] = [mapping.get(name, name) for name in node.input]
        node.output[:] = [mapping.get(name, name) for name in node.output]
    for value in (*graph.input, *graph.output, *graph.value_info):
        value.name = mapping.get(value.name, value.name)
    for initializer in graph.initializer:
        initializer.name = mapping.get(initializer.name, initializer.name)
    onnx.save(model, str(path))


def write_model(
    graph_module: torch.nn.Module,
    example_inputs: Sequence[Any],
    input_names: list[str],
    output_names: list[str],
    backend: str,
    path: Path,
) -> Path:
    """Export ``graph_module`` with ``backend`` to ``path``; return the path."""
    args = tuple(as_tensor(value) for value in example_inputs)
    try:
        if backend == "onnx":
            with warnings.catch_warnings(), _quiet_logger("torch.onnx"), _onnx_export_patches():
                warnings.simplefilter("ignore")
                torch.onnx.export(
                    graph_module,
                    args,
                    str(path),
                    dynamo=True,
                    verbose=False,
                    optimize=True,
                    external_data=False,
                )
            name_onnx_ports(path, input_names, output_names)
        elif backend == "pt2":
            program = torch.export.export(graph_module, args)
            torch.export.save(program, str(path))
        elif backend == "jit":
            traced = torch.jit.trace(graph_module.eval(), args, check_trace=False, strict=False)
            torch.jit.save(torch.jit.freeze(traced), str(path))  # constants folded in
        else:
            raise ExportBackendError(f"write_model(backend={backend!r}): use onnx, pt2 or jit.")
    except ExportBackendError:
        raise
    except Exception as exc:
        raise ExportBackendError(
            f"exporting node model {path.stem!r} with backend {backend!r} failed: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    return path


def load_runner(
    backend: str, path: Path, input_names: list[str], data: bytes | None = None
) -> Runner:
    """Load a written model (from ``data`` when given: the bytes whose hash was checked);
    return a function running it on inputs in port order."""
    if backend == "onnx":
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3
        session = onnxruntime.InferenceSession(
            data if data is not None else str(path), options, providers=["CPUExecutionProvider"]
        )
        wanted = [i.name for i in session.get_inputs()]
        position = {name: index for index, name in enumerate(input_names)}

        def run_onnx(inputs: Sequence[Any]) -> list[np.ndarray]:
            feed = {name: as_numpy(inputs[position[name]]) for name in wanted}
            return list(session.run(None, feed))

        return run_onnx
    if backend == "pt2":
        module = load_pt2(data if data is not None else path, path.name).module()
    elif backend == "jit":
        module = torch.jit.load(io.BytesIO(data) if data is not None else str(path))
    else:
        raise ExportBackendError(f"load_runner(backend={backend!r}): use onnx, pt2 or jit.")

    # a frozen TorchScript module holds no parameters that need gradients
    grad_context = contextlib.nullcontext if backend == "jit" else torch.no_grad

    def run_torch(inputs: Sequence[Any]) -> list[np.ndarray]:
        with grad_context():
            result = module(*[as_tensor(value) for value in inputs])
        if isinstance(result, torch.Tensor):
            result = [result]
        return [as_numpy(item) for item in result]

    return run_torch
