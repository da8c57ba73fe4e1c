"""Prove a node's dynamic axes general before export, and replay it at other sizes.

The recorded graph holds Python numbers where the traced code computed with sizes
(``dsize`` from ``img.shape``, a crop at ``h // 2``): those sizes are fixed in the model.
:func:`narrowings` runs the graph with each dynamic dimension grown, sees which values'
sizes follow it, and says in words where a size that follows it was used as a number
(or where the graph stops running at the new size). :func:`generated_size_problems`
replays the written model at other sizes against the recorded graph run eagerly.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from torch import fx

from ..errors import DynamicShapeError
from ..sessions.state import NodeTrace
from .backends import as_numpy, as_tensor


def dynamic_axes(trace: NodeTrace) -> dict[str, dict[int, str]]:
    """``{port: {axis: name}}`` of the node's dynamic inputs."""
    return {port.name: dict(port.dynamic) for port in trace.inputs if port.dynamic}


def _sizes(trace: NodeTrace) -> dict[str, int]:
    """Traced size of each dimension name."""
    return {
        name: port.shape[axis]
        for port in trace.inputs
        for axis, name in (port.dynamic or {}).items()
    }


def resized_inputs(trace: NodeTrace, sizes: dict[str, int]) -> list[Any]:
    """The first sample's inputs with each named axis set to ``sizes[name]`` (values taken
    cyclically from the traced ones, so they stay plausible)."""
    sample = trace.samples[0].inputs
    inputs = []
    for port in trace.inputs:
        value = as_numpy(sample[port.name])
        for axis, name in (port.dynamic or {}).items():
            if name in sizes and sizes[name] != value.shape[axis]:
                index = np.arange(sizes[name]) % max(value.shape[axis], 1)
                value = np.take(value, index, axis=axis)
        inputs.append(np.ascontiguousarray(value))
    return inputs


class _Probe(fx.Interpreter):
    """Runs the graph, keeping each value's shape and the node that failed, if any."""

    def __init__(self, module: torch.nn.Module) -> None:
        super().__init__(module)
        self.shapes: dict[fx.Node, tuple[int, ...]] = {}
        self.current: fx.Node | None = None

    def run_node(self, n: fx.Node) -> Any:
        self.current = n
        out = super().run_node(n)
        if isinstance(out, torch.Tensor):
            self.shapes[n] = tuple(out.shape)
        return out


def _probe(module: torch.nn.Module, inputs: Sequence[Any]) -> tuple[_Probe, Exception | None]:
    probe = _Probe(module)
    try:
        with torch.no_grad():
            probe.run(*[as_tensor(v) for v in inputs])
    except Exception as exc:  # the failure is the finding
        return probe, exc
    return probe, None


def _grown(size: int) -> int:
    return size + 2 * max(1, size // 8)


def _where(node: fx.Node | None) -> str:
    if node is None:
        return "the recorded graph"
    target = getattr(node.target, "__name__", node.target)
    return f"{target} recorded at {node.meta.get('pp_location', '<unknown>')}"


def _name_output_axes(trace: NodeTrace, name: str, base: _Probe, grown: _Probe) -> None:
    """Give each output axis that follows dimension ``name`` that name (``name_derived``
    where it follows it with another size, as after a resize)."""
    outputs = next((n for n in trace.graph_module.graph.nodes if n.op == "output"), None)
    if outputs is None:
        return
    results = outputs.args[0]
    results = list(results) if isinstance(results, (tuple, list)) else [results]
    for port, node in zip(trace.outputs, results):
        before, after = base.shapes.get(node), grown.shapes.get(node)
        if before is None or after is None or len(before) != len(after):
            continue
        for axis, (a, b) in enumerate(zip(before, after)):
            if a != b and axis not in port.dynamic:
                port.dynamic[axis] = name if a == _sizes(trace)[name] else f"{name}_derived"


_SELECTING = {torch.index_select: 1, "index_select": 1, torch.gather: 1, "gather": 1}


def _constant(node: Any) -> bool:
    """Whether ``node`` is a graph constant (perhaps cast): indices fixed at trace time."""
    while isinstance(node, fx.Node) and node.op == "call_method" and node.target in ("to", "long"):
        node = node.args[0]
    return isinstance(node, fx.Node) and node.op == "get_attr"


def _constant_selections(graph: fx.Graph) -> list[tuple[fx.Node, fx.Node, int]]:
    """``(op, source, axis)`` of ops picking positions of ``source`` along ``axis`` with
    constant indices (a gather built from sizes in NumPy: right only at the traced size)."""
    found = []
    for node in graph.nodes:
        if node.op not in ("call_function", "call_method") or not node.args:
            continue
        source = node.args[0]
        if node.target in _SELECTING and len(node.args) >= 3:
            axis = node.args[1]
            if isinstance(axis, int) and _constant(node.args[2]):
                found.append((node, source, axis))
        elif node.target is operator.getitem and isinstance(node.args[1], (tuple, fx.Node)):
            index = node.args[1] if isinstance(node.args[1], tuple) else (node.args[1],)
            for axis, item in enumerate(index):
                if item is Ellipsis:
                    break
                if _constant(item):
                    found.append((node, source, axis))
    return found


def _item_picks(graph: fx.Graph) -> list[tuple[fx.Node, fx.Node, int]]:
    """``(op, source, axis)`` of ``x[3]``-style picks: one item of an axis, by number."""
    found = []
    for node in graph.nodes:
        if node.op != "call_function" or node.target is not operator.getitem:
            continue
        index = node.args[1] if isinstance(node.args[1], tuple) else (node.args[1],)
        for axis, item in enumerate(index):
            if item is Ellipsis:
                break
            if type(item) is int:
                found.append((node, node.args[0], axis))
    return found


def _outputs_follow(graph: fx.Graph, base: _Probe, grown: _Probe) -> bool:
    """Whether some output of the graph changes shape with the grown dimension."""
    output = next((n for n in graph.nodes if n.op == "output"), None)
    if output is None:
        return True
    flat: list[fx.Node] = []
    fx.node.map_arg(output.args, flat.append)
    return any(base.shapes.get(n) != grown.shapes.get(n) for n in flat)


def narrowings(trace: NodeTrace) -> list[str]:
    """Each way a dynamic dimension of ``trace`` is fixed in its recorded graph, in words.

    The outputs' axes that follow a dimension are named on the way (``Port.dynamic``)."""
    sizes = _sizes(trace)
    if not sizes or trace.graph_module is None:
        return []
    module = trace.graph_module
    base, failed = _probe(module, resized_inputs(trace, {}))
    if failed is not None:
        return []  # the traced inputs themselves fail: replay validation reports it
    uses = list(trace.recorder.shape_reads)
    found: list[str] = []
    for name, size in sizes.items():
        other = _grown(size)
        probe, exc = _probe(module, resized_inputs(trace, {name: other}))
        seen: set[tuple[str, str | None]] = set()
        for use in uses:
            before = base.shapes.get(use.node)
            after = probe.shapes.get(use.node)
            follows = before is None or after is None or before[use.axis] != after[use.axis]
            if not follows or (use.where, use.inside) in seen:
                continue
            seen.add((use.where, use.inside))
            inside = f" inside {use.inside}" if use.inside else ""
            found.append(
                f"{name} is fixed to {use.value} by a size read from traced data and used in "
                f"{use.how}{inside}, at {use.where}"
            )
        for node, source, axis in _constant_selections(module.graph):
            before, after = base.shapes.get(source), probe.shapes.get(source)
            if before is None or after is None or axis >= len(before):
                continue
            if before[axis] != after[axis] and (node.meta.get("pp_location"), None) not in seen:
                seen.add((node.meta.get("pp_location"), None))
                found.append(
                    f"{name} is fixed to {before[axis]} by {_where(node)}: it picks positions "
                    f"along axis {axis} with indices computed at the traced size"
                )
        if exc is None and not _outputs_follow(module.graph, base, probe):
            for node, source, axis in _item_picks(module.graph):
                before, after = base.shapes.get(source), probe.shapes.get(source)
                if before and after and axis < len(before) and before[axis] != after[axis]:
                    found.append(
                        f"{name} is fixed to {before[axis]} by {_where(node)}: it takes item "
                        f"{node.args[1]} of a dynamic axis by number (a Python loop over "
                        f"range(len(...)) or over the items?) and no output follows {name}"
                    )
                    break
        if exc is None:
            _name_output_axes(trace, name, base, probe)
        if exc is not None and not seen:
            first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
            found.append(
                f"{name} cannot change: at {name}={other} the recorded graph fails in "
                f"{_where(probe.current)}: {type(exc).__name__}: {first}"
            )
    return found


def generated_size_problems(
    trace: NodeTrace,
    runner: Callable[[Sequence[Any]], list[torch.Tensor]],
    rtol: float,
    atol: float,
) -> tuple[list[str], int]:
    """Replay the written model at generated sizes inside the dynamic axes (each dimension
    grown, and each shrunk where it can be) against the recorded graph run eagerly."""
    sizes = _sizes(trace)
    if not sizes:
        return [], 0
    variants = [{n: _grown(s) for n, s in sizes.items()}]
    shrunk = {n: max(1, s - max(1, s // 4)) for n, s in sizes.items()}
    if shrunk != sizes:
        variants.append(shrunk)
    problems = []
    for sizes_now in variants:
        label = ", ".join(f"{n}={v}" for n, v in sizes_now.items())
        inputs = resized_inputs(trace, sizes_now)
        with torch.no_grad():
            expected = trace.graph_module(*[as_tensor(v) for v in inputs])
        expected = [expected] if isinstance(expected, torch.Tensor) else list(expected)
        try:
            produced = runner(inputs)
        except Exception as exc:
            text = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
            problems.append(f"at {label}: the exported model failed: {type(exc).__name__}: {text}")
            continue
        for port, got, want in zip(trace.outputs, produced, expected):
            got, want = as_numpy(got), as_numpy(want)
            if got.shape != want.shape:
                problems.append(
                    f"at {label}, output {port.name}: shape {list(got.shape)} instead of "
                    f"{list(want.shape)}"
                )
            elif want.size and not np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True):
                diff = float(np.nanmax(np.abs(got.astype(np.float64) - want.astype(np.float64))))
                problems.append(f"at {label}, output {port.name}: max |diff| {diff:.3g}")
    return problems, len(variants)


def refuse_narrowings(traces: Sequence[NodeTrace]) -> None:
    """Raise :class:`DynamicShapeError` listing every fixed dynamic dimension (before any
    model is written): such a model would compute wrong values at other sizes."""
    lines = []
    for trace in traces:
        found = narrowings(trace)
        if found:
            lines.append(f"node {trace.name!r} (dynamic axes {dynamic_axes(trace)}):")
            lines += [f"  {text}" for text in found]
    if lines:
        raise DynamicShapeError(
            "compile_graph(): dynamic dimensions are fixed by the traced code, so the "
            "exported models would be wrong at other sizes:\n"
            + "\n".join(lines)
            + "\nfix: compute those sizes with traced operations (or use a replacement that "
            "does), or remove the dimension from annotate.input_tensors(..., dynamic=...)."
        )


def smallest_sizes(trace: NodeTrace, up_to: int = 8) -> dict[str, int]:
    """``{name: smallest size}`` for dimensions the recorded graph cannot run below
    (a 5x5 mirrored border needs 3 rows): from that size up to ``up_to`` (or the traced
    size) every size runs. Dimensions that run from 1 are left out."""
    found = {}
    for name, size in _sizes(trace).items():
        smallest = 1
        for candidate in range(min(size, up_to), 0, -1):
            if _probe(trace.graph_module, resized_inputs(trace, {name: candidate}))[1] is not None:
                smallest = candidate + 1
                break
        if smallest > 1:
            found[name] = smallest
    return found


def merge_smallest(
    ranges: dict[str, list[int | None]], smallest: dict[str, int]
) -> dict[str, list[int | None]]:
    """The exporter's accepted ranges, raised to the smallest sizes the graph runs at."""
    merged = {name: list(bounds) for name, bounds in ranges.items()}
    for name, size in smallest.items():
        bounds = merged.setdefault(name, [1, None])
        bounds[0] = max(bounds[0] or 1, size)
    return merged


def changed_samples(trace: NodeTrace) -> list[str]:
    """Each later pass whose input has another dtype, rank, or size on an axis that is not
    declared dynamic, than the first pass (the exported model takes the first one's)."""
    found = []
    for number, sample in enumerate(trace.samples[1:], 2):
        for port in trace.inputs:
            if port.name not in sample.inputs:
                continue
            value = sample.inputs[port.name]
            if isinstance(value, torch.Tensor):  # bfloat16 has no NumPy dtype
                dtype = str(value.dtype).removeprefix("torch.")
            else:
                dtype = str(np.asarray(value).dtype)
            shape = tuple(np.shape(value))
            sizes_differ = len(shape) != len(port.shape) or any(
                size != first
                for axis, (size, first) in enumerate(zip(shape, port.shape))
                if axis not in (port.dynamic or {})
            )
            where = f"node {trace.name!r} input {port.name!r}: pass {number}"
            if dtype != port.dtype:
                found.append(
                    f"{where} has dtype {dtype}, the first pass {port.dtype}; a port keeps "
                    f"one dtype: convert it before annotate.input_tensors (.astype({port.dtype!r}))"
                )
            elif sizes_differ:
                changed = [
                    axis
                    for axis, (size, first) in enumerate(zip(shape, port.shape))
                    if size != first and axis not in (port.dynamic or {})
                ]
                hint = ", ".join(f"{axis}: 'dim{axis}'" for axis in changed) or "..."
                found.append(
                    f"{where} has shape {shape}, the first pass {tuple(port.shape)}; declare "
                    f"the axes that change: annotate.input_tensors({trace.name!r}, ..., "
                    f"dynamic={{{port.name!r}: {{{hint}}}}}), or keep one shape"
                )
    return found


def refuse_changed_samples(traces: Sequence[NodeTrace]) -> None:
    """Raise :class:`DynamicShapeError` (before any model is written) when a later pass
    gave an input another dtype or a size the export fixes: its replay could only fail."""
    lines = [f"  {line}" for trace in traces for line in changed_samples(trace)]
    if lines:
        raise DynamicShapeError(
            "compile_graph(): passes disagree with the first one, whose shapes and dtypes "
            "the exported models take:\n" + "\n".join(lines)
        )


def refuse_dynamic_feedback(traces: Sequence[NodeTrace]) -> None:
    """Raise :class:`DynamicShapeError` for a fed-back input with dynamic axes: the bundle
    starts it from its first-pass value, stored at one shape, so any other size would
    meet a stored value of the traced size (refused before any model is written)."""
    from ..bundle.pipeline import split_edges

    nodes = {t.name: t for t in traces}
    sources = {
        t.name: {p.name: t.sources[p.name] for p in t.inputs if p.name in t.sources} for t in traces
    }
    index = {t.name: t.index for t in traces}
    outputs = {t.name: [p.name for p in t.outputs] for t in traces}
    _, feedback = split_edges(sources, index, outputs)
    lines = []
    for source, targets in feedback.items():
        for target in targets:
            node, port = target.split("/", 1)
            axes = next((p.dynamic for p in nodes[node].inputs if p.name == port), None)
            if axes:
                lines.append(
                    f"  {target!r} (dynamic axes {dict(axes)}) is fed back from {source}: "
                    f"its first value is stored at the traced shape"
                )
    if lines:
        raise DynamicShapeError(
            "compile_graph(): fed-back inputs cannot have dynamic axes:\n"
            + "\n".join(lines)
            + "\nfix: drop those axes from annotate.input_tensors(..., dynamic=...) for the "
            "fed-back input (its size then stays the traced one), or feed the value back "
            "in your own code as an ordinary input."
        )
