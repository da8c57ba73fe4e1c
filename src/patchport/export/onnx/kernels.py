"""Fit an exported ONNX model to ONNX Runtime's CPU kernels, or refuse it with the fix.

ONNX Runtime's CPU provider lacks kernels for some (operator, dtype) pairs that ordinary
NumPy code exports to: ``Atan`` or ``Sinh`` in float64, ``Where`` on int16, most
operators on float16. Each such node runs in the nearest dtype that has a kernel,
between casts: exact for integer widening and float16/bfloat16 -> float32; float64 ->
float32 loses precision, which :class:`OnnxPrecisionWarning` states per operator. A node
no dtype rescues is refused, naming the operator, the dtype and the workaround.
"""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...dtype_table import ELEMENT_TYPES, numpy_name, torch_to_onnx
from ...errors import OnnxKernelError, OnnxPrecisionWarning

_TYPE_NAMES = {e.code: e.onnx for e in ELEMENT_TYPES}
_TYPE_CODES = {e.onnx: e.code for e in ELEMENT_TYPES}

# dtypes tried, in order, for a node ORT has no kernel for; all hold every value exactly
# except double -> float (stated by a warning)
_STAND_INS = {
    "float16": ("float",),
    "bfloat16": ("float",),
    "double": ("float",),
    "bool": ("uint8", "int32", "int64"),
    "int8": ("int16", "int32", "int64"),
    "uint8": ("int16", "int32", "int64"),
    "int16": ("int32", "int64"),
    "uint16": ("int32", "int64", "uint32"),
    "int32": ("int64",),
    "uint32": ("int64", "uint64"),
}
_LOSSY = {
    ("double", "float"): "values rounded to float32: about 7 significant digits, fewer where "
    "the function amplifies rounding (tan near its poles), magnitudes up to 3.4e38",
}


@dataclass(frozen=True)
class Lowering:
    """One node run in a stand-in dtype: operator, NumPy dtype names, and precision note."""

    op_type: str
    node: str
    have: str
    runs_in: str
    precision: str = "exact"


@functools.cache
def _cpu_kernels() -> dict[tuple[str, str], list[tuple[int, int, dict[str, set[str]]]]]:
    """ORT's CPU kernels: (domain, op) -> [(first version, last version, type constraints)]."""
    from onnxruntime.capi import _pybind_state

    table: dict[tuple[str, str], list] = {}
    for kernel in _pybind_state.get_all_opkernel_def():
        if kernel.provider != "CPUExecutionProvider":
            continue
        domain = "" if kernel.domain == "ai.onnx" else kernel.domain
        start, end = kernel.version_range
        constraints = {k: set(v) for k, v in kernel.type_constraints.items()}
        table.setdefault((domain, kernel.op_name), []).append((start, end, constraints))
    return table


def _runs(kernels: list, version: int, binding: dict[str, str]) -> bool:
    for start, end, constraints in kernels:
        if start <= version <= end and all(
            f"tensor({t})" in constraints.get(param, {f"tensor({t})"})
            for param, t in binding.items()
        ):
            return True
    return False


def _value_types(model: Any) -> dict[str, str]:
    """Element type name of every value the model's main graph knows (after inference)."""
    import onnx

    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001 - inference is a help, not a requirement
        inferred = model
    graph = inferred.graph
    types: dict[str, str] = {}
    for value in (*graph.input, *graph.output, *graph.value_info):
        code = value.type.tensor_type.elem_type
        if code in _TYPE_NAMES:
            types[value.name] = _TYPE_NAMES[code]
    for init in graph.initializer:
        if init.data_type in _TYPE_NAMES:
            types[init.name] = _TYPE_NAMES[init.data_type]
    for node in graph.node:
        if node.op_type == "Constant" and node.output:
            for attr in node.attribute:
                if attr.name == "value" and attr.t.data_type in _TYPE_NAMES:
                    types[node.output[0]] = _TYPE_NAMES[attr.t.data_type]
    return types


def _formal(params: list, index: int) -> Any:
    """Formal parameter of position ``index`` (the last one repeats when variadic)."""
    return params[min(index, len(params) - 1)] if params else None


def _binding(node: Any, schema: Any, types: dict[str, str]) -> dict[str, str] | None:
    """Type parameter -> element type for this node; None when a type is unknown."""
    binding: dict[str, str] = {}
    for names, params in ((node.input, schema.inputs), (node.output, schema.outputs)):
        for index, name in enumerate(names):
            formal = _formal(params, index)
            if not name or formal is None or "(" in formal.type_str:
                continue
            if name not in types:  # a sequence, or a type inference could not tell
                return None
            binding.setdefault(formal.type_str, types[name])
    return binding


def _stand_in(kernels: list, version: int, binding: dict[str, str]) -> dict[str, str] | None:
    """The first re-binding with a kernel, changing only the parameters without one."""
    missing = [
        param
        for param, t in binding.items()
        if not _runs(kernels, version, {param: t}) and t in _STAND_INS
    ]
    if not missing:
        return None
    candidates: list[dict[str, str]] = [{}]
    for param in missing:
        candidates = [{**c, param: s} for c in candidates for s in _STAND_INS[binding[param]]]
    for change in candidates:
        if _runs(kernels, version, {**binding, **change}):
            return change
    return None


def fit_to_onnx_runtime(path: Path, program: Any = None) -> list[Lowering]:
    """Rewrite the model at ``path`` so every node has an ORT CPU kernel; list the changes.

    ``program`` (what ``torch.onnx.export`` returned) gives the dtypes torch's outputs
    have; an output the exporter left in another dtype (float16 math it widened) is cast
    back. Raises :class:`OnnxKernelError` (before writing anything) for nodes no dtype
    rescues. Emits one :class:`OnnxPrecisionWarning` per operator computed less precisely.
    Patterns ORT's own optimiser miscomputes are rewritten (:mod:`.runtime_quirks`).
    """
    import onnx

    from .runtime_quirks import vector_products_as_matrix_products

    model = onnx.load(str(path))
    restored = _restore_output_dtypes(model, _torch_output_types(program))
    rewritten = vector_products_as_matrix_products(model)
    opsets = {("" if o.domain == "ai.onnx" else o.domain): o.version for o in model.opset_import}
    types = _value_types(model)
    kernels_of = _cpu_kernels()
    graph = model.graph
    new_nodes: list[Any] = []
    lowerings: list[Lowering] = []
    refused: dict[tuple[str, str], str] = {}
    used = {name for node in graph.node for name in (*node.input, *node.output)}
    for node in graph.node:
        domain = "" if node.domain == "ai.onnx" else node.domain
        kernels = kernels_of.get((domain, node.op_type))
        schema = _schema(node.op_type, opsets.get(domain), domain)
        binding = None if schema is None or not kernels else _binding(node, schema, types)
        version = schema.since_version if schema is not None else 0
        if not binding or _runs(kernels, version, binding) or not _covers(kernels, version):
            new_nodes.append(node)
            continue
        change = _stand_in(kernels, version, binding)
        if change is None:
            for param, t in binding.items():
                if not _runs(kernels, version, {param: t}):
                    refused.setdefault((node.op_type, t), node.name)
            new_nodes.append(node)
            continue
        new_nodes.extend(_cast_around(node, schema, change, binding, used))
        for param, runs_in in change.items():
            have = binding[param]
            lowerings.append(
                Lowering(
                    node.op_type,
                    node.name,
                    numpy_name(have),
                    numpy_name(runs_in),
                    _LOSSY.get((have, runs_in), "exact"),
                )  # fmt: skip
            )
    if refused:
        raise OnnxKernelError(_refusal(refused))
    if lowerings or restored or rewritten:
        del graph.node[:]
        graph.node.extend(new_nodes + restored)
        note = "; ".join(
            sorted({f"{lw.op_type} {lw.have}->{lw.runs_in} ({lw.precision})" for lw in lowerings})
        )
        if note:
            entry = model.metadata_props.add()
            entry.key, entry.value = "patchport.onnx_runtime_stand_ins", note
        onnx.save(model, str(path))
        _warn_precision(lowerings)
    return lowerings


def _torch_output_types(program: Any) -> list[str | None]:
    """ONNX type names of the exported program's outputs (None where unknown)."""
    exported = getattr(program, "exported_program", None)
    if exported is None:
        return []
    names = {dtype: e.onnx for dtype, e in torch_to_onnx().items()}
    out = []
    for node in exported.graph.nodes:
        if node.op == "output":
            for value in node.args[0]:
                val = getattr(value, "meta", {}).get("val")
                out.append(names.get(getattr(val, "dtype", None)))
    return out


def _restore_output_dtypes(model: Any, wanted: list[str | None]) -> list[Any]:
    """Cast nodes that give each graph output torch's dtype where the exporter changed it."""
    import onnx

    graph = model.graph
    if len(wanted) != len(graph.output):
        return []
    used = {name for node in graph.node for name in (*node.input, *node.output)}
    sources = {v.name for v in graph.input} | {i.name for i in graph.initializer}
    casts = []
    for value, want in zip(graph.output, wanted):
        have = _TYPE_NAMES.get(value.type.tensor_type.elem_type)
        if want is None or have is None or have == want or value.name in sources:
            continue
        raw = _fresh(f"{value.name}_as_{have}", used)
        for node in graph.node:
            node.output[:] = [raw if name == value.name else name for name in node.output]
            node.input[:] = [raw if name == value.name else name for name in node.input]
        casts.append(
            onnx.helper.make_node("Cast", [raw], [value.name], to=_TYPE_CODES[want], name=raw)
        )
        value.type.tensor_type.elem_type = _TYPE_CODES[want]
    return casts


def _schema(op_type: str, version: int | None, domain: str) -> Any:
    import onnx

    if version is None:
        return None
    try:
        return onnx.defs.get_schema(op_type, version, domain)
    except Exception:  # noqa: BLE001 - unknown or custom operators are left alone
        return None


def _covers(kernels: list, version: int) -> bool:
    """Whether ORT registers this operator version at all (else it may expand a function)."""
    return any(start <= version <= end for start, end, _ in kernels)


def _cast_around(
    node: Any, schema: Any, change: dict[str, str], binding: dict[str, str], used: set[str]
) -> list[Any]:
    """The node with its changed-type inputs cast to the stand-in and outputs cast back."""
    import onnx

    before: list[Any] = []
    after: list[Any] = []
    for index, name in enumerate(node.input):
        formal = _formal(schema.inputs, index)
        if name and formal is not None and formal.type_str in change:
            cast = _fresh(f"{name}_as_{change[formal.type_str]}", used)
            to = _TYPE_CODES[change[formal.type_str]]
            before.append(onnx.helper.make_node("Cast", [name], [cast], to=to, name=cast))
            node.input[index] = cast
    for index, name in enumerate(node.output):
        formal = _formal(schema.outputs, index)
        if name and formal is not None and formal.type_str in change:
            raw = _fresh(f"{name}_in_{change[formal.type_str]}", used)
            to = _TYPE_CODES[binding[formal.type_str]]
            after.append(onnx.helper.make_node("Cast", [raw], [name], to=to, name=f"{raw}_back"))
            node.output[index] = raw
    return [*before, node, *after]


def _fresh(name: str, used: set[str]) -> str:
    while name in used:
        name += "_"
    used.add(name)
    return name


_WORKAROUNDS = {
    "uint64": "cast to int64 in the pipeline where values stay below 2**63",
    "complex64": "split complex data into real and imaginary float arrays",
    "complex128": "split complex data into real and imaginary float arrays",
}


def _refusal(refused: dict[tuple[str, str], str]) -> str:
    lines = [
        f"  {op} on {numpy_name(t)} (node {name!r}): "
        f"{_WORKAROUNDS.get(t, 'cast to a dtype ONNX Runtime supports before this step')}"
        for (op, t), name in sorted(refused.items())
    ]
    return (
        "ONNX Runtime's CPU provider has no kernel for these exported operators and "
        "dtypes, and no wider dtype holds their values exactly:\n"
        + "\n".join(lines)
        + "\nFix it in the pipeline as suggested, or export this node with "
        "export_with='pt2' or 'jit', which keep the dtype."
    )


def _warn_precision(lowerings: list[Lowering]) -> None:
    lossy = sorted({(lw.op_type, lw.have, lw.runs_in, lw.precision)
                    for lw in lowerings if lw.precision != "exact"})  # fmt: skip
    for op, have, runs_in, precision in lossy:
        warnings.warn(
            f"ONNX Runtime has no CPU kernel for {op} on {have}: the exported model computes "
            f"it in {runs_in}: {precision}. Export with 'pt2' or 'jit' for full {have} "
            f"precision, or cast to {runs_in} in the pipeline to make this explicit.",
            OnnxPrecisionWarning,
            stacklevel=3,
        )
