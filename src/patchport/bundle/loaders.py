"""Load a saved node model (``.onnx``, ``.pt2``, ``.pt``) and run it: the runtime half of the
backends (the writers are in :mod:`patchport.export.backends`).

The YAML records the model *type* (``jit``, ``onnx``, ``pt2``), which picks the loader.
A runner takes the node's inputs (NumPy arrays or tensors, in port order) and returns
its outputs in its runtime's own type: NumPy arrays from ONNX Runtime, tensors from torch.
Only the ``.pt``/``.pt2`` loaders import torch, so an ONNX bundle runs without it.

A runner is called once per ``run_policy``, so whatever does not change between calls
(the feed order, output names, session options) is worked out here, at load.
"""

from __future__ import annotations

import importlib
import io
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..backend_names import MODEL_SUFFIXES
from ..errors import ExportBackendError
from .arrays import as_numpy, as_tensor
from .bundle_safety import load_pt2 as load_pt2_safely

Runner = Callable[[Sequence[Any]], list[Any]]
Loader = Callable[..., Runner]  # (path, input_names, data, *, inputs_checked) -> Runner


def _runtime(module: str, path: Path) -> Any:
    """Import the library that runs ``path``'s model, or say which one to install."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        other = "export_with='onnx'" if module == "torch" else "another backend"
        raise ModuleNotFoundError(
            f"{path.name}: a {path.suffix} model runs on {module}, which cannot be imported "
            f"here ({exc}); install it (pip install {module}) or export the node with {other}.",
            name=module,
        ) from exc


def onnx_threads() -> int:
    """ONNX Runtime's intra-op threads: torch's count when torch is imported (the caller's
    ``torch.set_num_threads``, or ``OMP_NUM_THREADS``, also bounds the replayed graph, so a
    replay uses the parallelism the traced code had); 0 (ORT's default) otherwise."""
    torch = sys.modules.get("torch")
    get = getattr(torch, "get_num_threads", None)
    return int(get()) if get is not None else 0


def load_onnx(
    path: Path, input_names: list[str], data: bytes | None = None, *, inputs_checked: bool = False
) -> Runner:
    """ONNX Runtime on CPU; inputs fed by port name (an input ONNX dropped is skipped)."""
    onnxruntime = _runtime("onnxruntime", path)

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = onnx_threads()
    source = data if data is not None else str(path)
    session = onnxruntime.InferenceSession(source, options, providers=["CPUExecutionProvider"])
    wanted = [i.name for i in session.get_inputs()]
    position = {name: index for index, name in enumerate(input_names)}
    if any(name not in position for name in wanted):  # a file whose ports are unnamed
        position = {name: index for index, name in enumerate(wanted)}
    feed_order = [(name, position[name]) for name in wanted]
    output_names = [o.name for o in session.get_outputs()]
    run = session.run
    ndarray = np.ndarray

    def run_onnx(inputs: Sequence[Any]) -> list[Any]:
        feed = {}
        for name, index in feed_order:
            value = inputs[index]
            feed[name] = value if type(value) is ndarray else as_numpy(value)
        return run(output_names, feed)

    return run_onnx


def _torch_runner(call: Callable[..., Any], grad_free: bool) -> Runner:
    """A runner calling ``call`` on tensors; under ``no_grad`` unless ``grad_free``."""
    import torch

    tensor = torch.Tensor

    def run_torch(inputs: Sequence[Any]) -> list[Any]:
        args = [value if type(value) is tensor else as_tensor(value) for value in inputs]
        if grad_free:
            result = call(*args)
        else:
            with torch.no_grad():
                result = call(*args)
        if isinstance(result, tensor):
            return [result]
        return list(result)

    return run_torch


def load_jit(
    path: Path, input_names: list[str], data: bytes | None = None, *, inputs_checked: bool = False
) -> Runner:
    """A TorchScript file (scripted or traced), on CPU. A module without hooks (what export
    writes) runs through its compiled ``forward``: ``nn.Module.__call__`` would only add
    cost; one scripted with hooks is called, so they run. A frozen TorchScript module holds
    no parameters that need gradients."""
    torch = _runtime("torch", path)

    source = io.BytesIO(data) if data is not None else str(path)
    module = torch.jit.load(source, map_location="cpu").eval()
    hooked = module._forward_hooks or module._forward_pre_hooks
    return _torch_runner(module if hooked else module.forward, grad_free=True)


def load_pt2(
    path: Path, input_names: list[str], data: bytes | None = None, *, inputs_checked: bool = False
) -> Runner:
    """A saved ``torch.export`` program, run as a module; loaded weights-only (no code in
    a pickle runs), see :mod:`.bundle_safety`.

    ``inputs_checked``: the caller refuses any input whose shape or dtype differs from the
    port's (static ports only), so the module's own per-call input validation (guards and a
    pytree pre-hook, about a third of a small graph's run time) is redundant and is left out.
    """
    _runtime("torch", path)
    program = load_pt2_safely(data if data is not None else path, path.name)
    if not inputs_checked:
        return _torch_runner(program.module(), grad_free=False)
    try:
        module = program.module(check_guards=False)  # no guard function in the graph
    except TypeError:  # a torch before check_guards=: its guards run in the pre-hook
        module = program.module()
    module.validate_inputs = False  # torch.export's switch for callers that validate
    return _torch_runner(module, grad_free=False)


# the loader of each model type of :data:`patchport.backend_names.MODEL_SUFFIXES`
LOADERS: dict[str, Loader] = {"jit": load_jit, "onnx": load_onnx, "pt2": load_pt2}
MODEL_TYPE_OF_SUFFIX: dict[str, str] = {suffix: kind for kind, suffix in MODEL_SUFFIXES.items()}


def load_runner(
    model_type: str,
    path: Path,
    input_names: list[str],
    data: bytes | None = None,
    *,
    inputs_checked: bool = False,
) -> Runner:
    """Load a written model of a YAML ``backend`` type (from ``data`` when given: the bytes
    whose hash was checked); return a function running it on inputs in port order.

    ``inputs_checked``: every input will have its port's exact (static) shape and dtype,
    checked by the caller, so the runtime may skip checking them again."""
    loader = LOADERS.get(model_type)
    if loader is None:
        raise ExportBackendError(
            f"load_runner(backend={model_type!r}): cannot load this model type; "
            f"known types: {', '.join(LOADERS)}."
        )
    return loader(path, input_names, data, inputs_checked=inputs_checked)
