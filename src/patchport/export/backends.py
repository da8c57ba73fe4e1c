"""The export backends: one registry entry (name, YAML type, suffix, write, load) each,
built from the names and types of :mod:`patchport.backend_names`, the writers here and the
loaders of :mod:`patchport.bundle.loaders`.

``export_with=`` names an entry (LEAPP's names and aliases: ``jit``/``jit-script``,
``jit-trace``, ``onnx``/``onnx-dynamo``, ``onnx-torchscript``, ``pt2``/``exported-program``).
The YAML records the model *type* (``jit``, ``onnx``, ``pt2``), which picks the loader.
The runners :func:`load_runner` gives return torch tensors whatever the backend, so replay
and comparison are uniform (the bundle's own runners return their runtime's type).
"""

from __future__ import annotations

import contextlib
import copy
import logging
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from .._stack import user_stacklevel
from ..backend_names import ALIASES, BACKEND_TYPES, MODEL_SUFFIXES, canonical_name, unknown_backend
from ..bundle.arrays import as_numpy as as_numpy  # compile and dynamic_check read these here
from ..bundle.arrays import as_tensor as as_tensor
from ..bundle.arrays import numpy_tensor as numpy_tensor
from ..bundle.loaders import LOADERS, Loader, Runner
from ..bundle.loaders import MODEL_TYPE_OF_SUFFIX as MODEL_TYPE_OF_SUFFIX
from ..bundle.loaders import load_runner as load_model
from ..errors import ExportBackendError, PatchportWarning

_log = logging.getLogger(__name__)


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

    from ..patching import PatchDetails, PatchFamily, PatchInfo

    return PatchDetails(
        [
            PatchInfo(
                classmethod(reuse_onnx_registry),
                _registration.ONNXRegistry,
                "from_torchlib",
                family=PatchFamily.EXPORT,
                description="reuse the ONNX op registry across exports",
            ),
        ]
    )


def onnx_output_names(input_names: list[str], output_names: list[str]) -> list[str]:
    """ONNX names of the outputs: the port names, except that an output named like an
    input (``{"obs": ...}`` in and out) becomes ``obs_out`` (ONNX needs unique names).

    Runners read outputs by position, so the node's ports keep the user's names.
    """
    taken = set(input_names) | set(output_names)
    names = []
    for name in output_names:
        if name in input_names:
            spare = f"{name}_out"
            while spare in taken:
                spare += "_"
            taken.add(spare)
            name = spare
        names.append(name)
    return names


def name_onnx_ports(path: Path, input_names: list[str], output_names: list[str]) -> None:
    """Give the ONNX graph's inputs and outputs the node's port names, keeping names unique.

    The exporter names inner values after operators (``mul``, ``transpose``...), so a port
    with such a name would be defined twice; inner values are renamed out of the way first.
    """
    import onnx

    model = onnx.load(str(path))
    graph = model.graph
    wanted: dict[str, str] = {}
    output_names = onnx_output_names(input_names, output_names)
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


@dataclass
class ExportJob:
    """What a backend's writer needs: the graph, example inputs, port names, target path."""

    graph_module: torch.nn.Module
    example_inputs: Sequence[Any]
    input_names: list[str]
    output_names: list[str]
    path: Path
    params: dict[str, Any] = field(default_factory=dict)  # annotate's backend_params
    dynamic: dict[str, dict[int, str]] = field(default_factory=dict)  # port -> {axis: name}
    # set by the writer: {name: [min, max]} a dynamic dimension is accepted in, if narrower
    dynamic_ranges: dict[str, list[int | None]] = field(default_factory=dict)

    @property
    def args(self) -> tuple[torch.Tensor, ...]:
        return tuple(as_tensor(value) for value in self.example_inputs)

    def export_arguments(self, exporter: str) -> tuple[tuple, dict[str, Any]]:
        """Example args and the dynamic-axes keywords for ``exporter`` (see dynamic_export)."""
        from .dynamic_export import export_arguments

        return export_arguments(self.args, self.input_names, self.dynamic, exporter)

    def export_dynamic(self, export: Callable[..., Any], args: tuple) -> Any:
        """``export(args, **dynamic_shapes)``: with this node's dynamic axes if it has any."""
        if not self.dynamic:
            return export(args)
        from .dynamic_export import export_dynamic

        return export_dynamic(export, args, self.input_names, self.dynamic)

    def read_ranges(self, program: Any) -> None:
        """Keep the sizes the exported program accepts (refuses a dimension torch fixed)."""
        from .dynamic_export import accepted_ranges

        self.dynamic_ranges = accepted_ranges(
            self.path.stem, program, self.input_names, self.dynamic
        )

    @property
    def signature_module(self) -> torch.nn.Module:
        """The graph with its ports as named ``forward`` parameters (a lazily compiled fx
        module takes ``*args``, which ``dynamic_shapes`` cannot describe)."""
        from torch import fx

        module = self.graph_module
        if self.dynamic and isinstance(module, fx.GraphModule):
            return fx.GraphModule(module, module.graph)
        return module


Writer = Callable[[ExportJob], None]
Metadata = Callable[[ExportJob], dict[str, Any]]  # what the YAML records of the written file


@dataclass(frozen=True)
class Backend:
    """One way to write a node's model, and how the written file is loaded back."""

    name: str  # canonical name (LEAPP's)
    model_type: str  # what the YAML's ``backend`` key holds; chooses the loader
    suffix: str
    write: Writer
    metadata: Metadata
    load: Loader


def _no_metadata(job: ExportJob) -> dict[str, Any]:
    return {}


def _write_onnx_direct(job: ExportJob) -> bool:
    """Write the graph with the direct FX->ONNX translator; False where it cannot."""
    from ..errors import Untranslatable
    from .onnx.decompositions import decompose_for_translator
    from .onnx.driver import OPSET, write_direct
    from .onnx.exact_resize import exact_where_discrete

    declared = {**vars(job), **job.params}  # dynamic dims, wherever a caller declares them
    if any("dynamic" in key and value for key, value in declared.items()):
        _log.debug("onnx %s: dynamic dimensions, using torch.onnx", job.path.stem)
        return False
    names = onnx_output_names(job.input_names, job.output_names)
    opset = job.params.get("opset_version", OPSET)
    try:
        module = decompose_for_translator(job.graph_module, job.args)
        module = exact_where_discrete(module, job.args)
        optimisation = write_direct(module, job.args, job.input_names, names, job.path, opset)
    except Untranslatable as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        _log.debug("onnx %s: torch.onnx fallback (%s)", job.path.stem, reason)
        return False
    _log.debug("onnx %s: written by the direct FX->ONNX translator", job.path.stem)
    _DIRECT_OPSETS[job.path] = int(opset)
    _DIRECT_OPTIMISATIONS[job.path] = optimisation
    return True


_DIRECT_OPSETS: dict[Path, int] = {}  # path -> opset of files the direct writer just wrote
_DIRECT_OPTIMISATIONS: dict[Path, dict[str, Any]] = {}  # path -> what export.onnx.optimize did


def _write_onnx_dynamo(job: ExportJob) -> None:
    if _write_onnx_direct(job):
        return
    from .onnx.decompositions import decompose_for_onnx
    from .onnx.kernels import fit_to_onnx_runtime

    args, _ = job.export_arguments("onnx-dynamo")
    module = decompose_for_onnx(job.signature_module, args)

    def export(args: tuple, **dynamic: Any) -> Any:
        return torch.onnx.export(
            module,
            args,
            str(job.path),
            dynamo=True,
            verbose=False,
            optimize=False,  # its rewrites drop constants within 1e-8 of 0 or 1
            external_data=False,
            **_onnx_options(job),
            **dynamic,
        )

    with (
        warnings.catch_warnings(),
        _quiet_logger("torch.onnx"),
        _quiet_logger("onnx_ir"),  # "attribute type is ambiguous" notes of its own translation
        _onnx_export_patches(),
    ):
        warnings.simplefilter("ignore")
        program = job.export_dynamic(export, args)
    name_onnx_ports(job.path, job.input_names, job.output_names)
    if job.dynamic:
        job.read_ranges(program.exported_program)
        from .dynamic_export import name_onnx_dims

        name_onnx_dims(job.path, job.input_names, job.dynamic)
    fit_to_onnx_runtime(job.path, program)


def _write_onnx_torchscript(job: ExportJob) -> None:
    """The TorchScript-based ONNX exporter: what LEAPP recommends for GRU/LSTM nodes."""
    args, dynamic = job.export_arguments("onnx-torchscript")
    from .onnx.exact_resize import exact_where_discrete

    module = exact_where_discrete(job.graph_module, job.args)
    with warnings.catch_warnings(), _quiet_logger("torch.onnx"):
        warnings.simplefilter("ignore")
        torch.onnx.export(
            module.eval(),
            args,
            str(job.path),
            dynamo=False,
            input_names=list(job.input_names),
            output_names=onnx_output_names(job.input_names, job.output_names),
            **_onnx_options(job),
            **dynamic,
        )
    _keep_every_input(job)
    name_onnx_ports(job.path, job.input_names, job.output_names)
    from .onnx.kernels import fit_to_onnx_runtime

    fit_to_onnx_runtime(job.path)  # ONNX Runtime's CPU kernels, as for the dynamo exporter


def _keep_every_input(job: ExportJob) -> None:
    """Put back graph inputs the TorchScript exporter dropped as unused, in port order.

    The bundle lists every port, and a runtime that feeds inputs by position (LEAPP's)
    needs the model to take each of them.
    """
    import onnx

    model = onnx.load(str(job.path))
    graph = model.graph
    present = {value.name: value for value in graph.input}
    if all(name in present for name in job.input_names):
        return
    ordered = []
    for name, example in zip(job.input_names, job.example_inputs):
        if name in present:
            ordered.append(present.pop(name))
            continue
        array = as_numpy(example)
        element = onnx.helper.np_dtype_to_tensor_dtype(array.dtype)
        ordered.append(onnx.helper.make_tensor_value_info(name, element, list(array.shape)))
    ordered.extend(present.values())  # anything else the exporter declared stays, last
    del graph.input[:]
    graph.input.extend(ordered)
    onnx.save(model, str(job.path))


def _onnx_options(job: ExportJob) -> dict[str, Any]:
    return {"opset_version": job.params["opset_version"]} if "opset_version" in job.params else {}


def _onnx_metadata(job: ExportJob) -> dict[str, Any]:
    opset = _DIRECT_OPSETS.pop(job.path, None)
    optimisation = _DIRECT_OPTIMISATIONS.pop(job.path, None)
    if opset is not None:  # written here: no need to import onnx to read it back
        return {"opset_version": opset, "onnx optimisation": optimisation}
    import onnx

    model = onnx.load(str(job.path), load_external_data=False)
    opsets = [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")]
    return {"opset_version": int(opsets[0])} if opsets else {}


def _write_pt2(job: ExportJob) -> None:
    args, _ = job.export_arguments("torch.export")
    program = job.export_dynamic(
        lambda a, **dynamic: torch.export.export(job.signature_module, a, **dynamic), args
    )
    if job.dynamic:
        job.read_ranges(program)
    torch.export.save(program, str(job.path))


def _write_jit_trace(job: ExportJob) -> None:
    module = _bare_single_output(job.graph_module)
    traced = torch.jit.trace(module.eval(), job.args, check_trace=False, strict=False)
    torch.jit.save(torch.jit.freeze(traced), str(job.path))  # constants folded in


def _bare_single_output(module: torch.nn.Module) -> torch.nn.Module:
    """A copy of an fx ``module`` returning ``x`` where it returns ``(x,)``: a TorchScript
    model of one output returns the tensor itself, as LEAPP's do (its 1-tuple cost about
    3 us a call, 4% of a small node's replay); ``module`` itself otherwise."""
    from torch import fx

    if not isinstance(module, fx.GraphModule):
        return module
    output = next((n for n in reversed(module.graph.nodes) if n.op == "output"), None)
    value = output.args[0] if output is not None and output.args else None
    if not isinstance(value, (tuple, list)) or len(value) != 1:
        return module
    if not isinstance(value[0], fx.Node):
        return module
    graph = copy.deepcopy(module.graph)
    last = next(n for n in reversed(graph.nodes) if n.op == "output")
    last.args = (last.args[0][0],)
    return fx.GraphModule(module, graph)


def _first_lines(text: str, count: int = 2, limit: int = 240) -> str:
    """The first ``count`` non-empty lines of an error, joined: TorchScript's messages
    start with a blank line and put the failing source line second."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return " ".join(lines[:count])[:limit] or "no message"


def _write_jit_script(job: ExportJob) -> None:
    """Script the graph (keeps shape-dependent code general); trace where scripting fails."""
    from torch import fx

    from ..tracing.indexing import inline_index_puts
    from .number_operands import numbers_as_tensors

    module = job.graph_module
    if isinstance(module, fx.GraphModule):  # a copy: a lazily compiled one cannot be scripted
        module = numbers_as_tensors(inline_index_puts(module), job.args)
    module = _bare_single_output(module)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scripted = torch.jit.script(module.eval())
    except Exception as exc:  # fx code TorchScript cannot compile: tracing still records it
        warnings.warn(
            f"export_with='jit-script': TorchScript could not compile node model "
            f"{job.path.stem!r} ({type(exc).__name__}: {_first_lines(str(exc))}); "
            f"it was traced instead (export_with='jit-trace'), which fixes its shapes.",
            PatchportWarning,
            stacklevel=user_stacklevel(),
        )
        _write_jit_trace(job)
        return
    torch.jit.save(torch.jit.freeze(scripted), str(job.path))


# the writer and the YAML metadata of each backend of :data:`patchport.backend_names.BACKEND_TYPES`
_WRITERS: dict[str, tuple[Writer, Metadata]] = {
    "jit-script": (_write_jit_script, _no_metadata),
    "jit-trace": (_write_jit_trace, _no_metadata),
    "onnx-dynamo": (_write_onnx_dynamo, _onnx_metadata),
    "onnx-torchscript": (_write_onnx_torchscript, _onnx_metadata),
    "exported-program": (_write_pt2, _no_metadata),
}

BACKENDS: dict[str, Backend] = {
    name: Backend(name, kind, MODEL_SUFFIXES[kind], *_WRITERS[name], load=LOADERS[kind])
    for name, kind in BACKEND_TYPES.items()
}
BACKENDS.update({alias: BACKENDS[name] for alias, name in ALIASES.items()})


def load_runner(
    model_type: str, path: Path, input_names: list[str], data: bytes | None = None
) -> Runner:
    """The bundle's loader for a YAML ``backend`` type, its outputs as torch tensors whatever
    the backend (replay compares every backend the same way)."""
    run = load_model(model_type, path, input_names, data)

    def run_as_torch(inputs: Sequence[Any]) -> list[torch.Tensor]:
        return [
            value if type(value) is torch.Tensor else numpy_tensor(value) for value in run(inputs)
        ]

    return run_as_torch


def backend_named(name: str) -> Backend:
    """The registry entry for an ``export_with=`` name, or a clear error listing them."""
    canonical = canonical_name(name)
    if canonical is None:
        raise ExportBackendError(unknown_backend(name))
    return BACKENDS[canonical]


def write_model(backend: str, job: ExportJob) -> dict[str, Any]:
    """Export ``job.graph_module`` with ``backend`` to ``job.path``; return YAML metadata."""
    entry = backend_named(backend)
    try:
        entry.write(job)
        return entry.metadata(job)
    except ExportBackendError:
        raise
    except Exception as exc:
        if job.dynamic:
            from .dynamic_export import DynamicShapeError, explain_export_failure

            if isinstance(exc, DynamicShapeError):
                raise
            raise DynamicShapeError(
                explain_export_failure(job.path.stem, job.dynamic, exc)
            ) from exc
        from .failure_site import failing_site

        site = failing_site(job.graph_module, exc)
        failed = canonical_name(backend)
        others = " or ".join(repr(b) for b in ("onnx", "pt2", "jit") if canonical_name(b) != failed)
        where = (
            f"the operation it could not convert is {site}: export this node with {others}, "
            f"or compute that value with operations {backend!r} takes. "
            if site
            else ""
        )
        raise ExportBackendError(
            f"exporting node model {job.path.stem!r} with backend {backend!r} failed: "
            f"{where}{type(exc).__name__}: {exc}"
        ) from exc
