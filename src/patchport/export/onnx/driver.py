"""A direct translator from a recorded ``torch.fx`` graph to ONNX, without torch.onnx.

torch.onnx's exporter spends seconds on start-up (torch.export, decomposition, its op
registry) before it writes a single node. patchport's graphs are made of a small set of
torch operations, so this module runs the graph once on the example inputs under a
``TorchFunctionMode`` and writes each torch call it sees as the equivalent ONNX nodes,
with the exact dtypes the eager run produced (values that do not depend on an input are
folded into initializers). Anything outside its table raises :class:`Untranslatable`, and
the caller falls back to torch.onnx. Shapes are the example's: graphs with dynamic
dimensions are not translated here.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

from ...errors import Untranslatable
from ...tracing.operator_names import tensor_attribute
from . import elementwise, neural, optimize, proto, reductions, shapes  # noqa: F401 - register emitters
from .builder import Builder
from .indexing import setitem
from .optimize import Graph
from .registry import TABLE
from .runtime_quirks import cast_before_transposes_into_products

OPSET = 20
_log = logging.getLogger(__name__)


# results that depend only on an input's (static) shape and dtype: folded to constants
_SHAPE_ONLY = {"zeros_like", "ones_like", "full_like", "new_zeros", "new_ones", "new_full"}


class _Translating(TorchFunctionMode):
    """Runs the graph's torch calls eagerly and writes the ONNX node(s) for each."""

    def __init__(self, builder: Builder) -> None:
        super().__init__()
        self.b = builder

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: Any = None):
        kwargs = kwargs or {}
        b = self.b
        name = tensor_attribute(func) or getattr(func, "__name__", "")
        touched = name not in _SHAPE_ONLY and (b.traced(args) or b.traced(kwargs))
        if name == "__get__":
            attr = getattr(getattr(func, "__self__", None), "__name__", "")
            result = func(*args, **kwargs)
            if touched and isinstance(result, torch.Tensor):
                if attr not in ("data", "T", "mT", "real"):
                    raise Untranslatable(f"Tensor.{attr}")
                x = args[0]
                if attr in ("T", "mT") and x.ndim > 1:
                    perm = list(range(x.ndim))
                    perm = perm[::-1] if attr == "T" else perm[:-2] + perm[-2:][::-1]
                    b.bind(result, b.node("Transpose", [b.tensor(x)], perm=perm))
                elif attr == "real" and x.is_complex():
                    raise Untranslatable("complex")
                else:
                    b.bind(result, b.node("Identity", [b.tensor(x)]))
            return result
        if name == "__setitem__" and touched:
            return setitem(b, func, *args)
        if name in ("__setitem__",) or (name.endswith("_") and not name.startswith("_")):
            if touched or (args and id(args[0]) in b.names):
                raise Untranslatable(f"in-place {name}")
            return func(*args, **kwargs)
        result = func(*args, **kwargs)
        if not touched:
            return result  # computed from constants only: folded
        if "out" in kwargs or not isinstance(result, torch.Tensor):
            if isinstance(result, (bool, int, float)) or result is None:
                if name in ("item", "tolist", "__bool__", "__int__", "__float__", "__index__"):
                    raise Untranslatable(f"data-dependent {name}")
                return result  # shape or dtype queries
            raise Untranslatable(f"{name} returning {type(result).__name__}")
        emit = TABLE.get(name)
        if emit is None or not _is_torch_callable(func, name):
            raise Untranslatable(f"no ONNX translation for torch {name!r}")
        try:
            value = emit(b, result, *args, **kwargs)
        except TypeError as exc:  # a signature the emitter does not know
            raise Untranslatable(f"{name}: {exc}") from None
        b.bind(result, value)
        return result


def _is_torch_callable(func: Any, name: str) -> bool:
    owners = (torch.Tensor, torch, F, torch._C._nn, torch._C._VariableFunctions, torch.special)
    if name.startswith("special_") and getattr(torch.special, name[8:], None) is func:
        return True  # torch.special.log1p is named special_log1p
    return any(getattr(owner, name, None) is func for owner in owners)


def _translated(
    graph_module: torch.nn.Module,
    args: Sequence[torch.Tensor],
    input_names: list[str],
    output_names: list[str],
    opset: int,
) -> tuple[Graph, list[Any]]:
    """The graph of ``graph_module`` on ``args`` before encoding, and its eager outputs."""
    from torch import fx
    from torch.utils import _pytree

    if not isinstance(graph_module, fx.GraphModule):
        raise Untranslatable("not an fx graph")
    if opset < 18:
        raise Untranslatable(f"opset {opset} < 18")
    placeholders = [n for n in graph_module.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(args) or len(input_names) != len(args):
        raise Untranslatable("inputs do not match the graph's placeholders")
    b = Builder(set(input_names) | set(output_names))
    ports: dict[str, tuple[int, tuple[int, ...]]] = {}  # ONNX element type and shape
    feeds = []
    for name, value in zip(input_names, args):
        tensor = value.detach().as_subclass(torch.Tensor).clone()
        if tensor.dtype not in b.onnx_type or tensor.device.type != "cpu":
            raise Untranslatable(f"input {name!r} of dtype {tensor.dtype}")
        b.bind(tensor, name)
        ports[name] = (b.onnx_type[tensor.dtype], tuple(tensor.shape))
        feeds.append(tensor)
    with torch.no_grad(), _Translating(b):
        result = fx.Interpreter(graph_module).run(*feeds)
    flat, _ = _pytree.tree_flatten(result)
    if len(flat) != len(output_names) or not all(isinstance(t, torch.Tensor) for t in flat):
        raise Untranslatable("outputs do not match the node's output ports")
    for name, tensor in zip(output_names, flat):
        if tensor.dtype not in b.onnx_type:
            raise Untranslatable(f"output {name!r} of dtype {tensor.dtype}")
        b.nodes.append(proto.Node("Identity", [b.tensor(tensor)], [name]))
        ports[name] = (b.onnx_type[tensor.dtype], tuple(tensor.shape))
        if tensor.dtype in b.numpy_type:
            b.known[name] = (b.numpy_type[tensor.dtype], tuple(tensor.shape))
    graph = Graph(b.nodes, b.constants_by_name, list(input_names), list(output_names), b.known)
    graph.ports = ports
    return graph, [t.detach().clone() for t in flat]


def _encode(g: Graph, opset: int) -> bytes:
    """ModelProto bytes of ``g`` (its ports typed and shaped as the eager run saw them),
    with the patterns that crash ONNX Runtime's optimiser rewritten (runtime_quirks)."""
    cast_before_transposes_into_products(g.nodes, g.outputs)
    ports = [
        [proto.value_info(name, *g.ports[name]) for name in names]
        for names in (g.inputs, g.outputs)
    ]
    initializers = [proto.tensor(name, array) for name, array in g.constants.items()]
    return proto.model(g.nodes, initializers, ports[0], ports[1], opset)


def translate(
    graph_module: torch.nn.Module,
    args: Sequence[torch.Tensor],
    input_names: list[str],
    output_names: list[str],
    opset: int = OPSET,
) -> tuple[Any, list[Any]]:
    """The ONNX model bytes of ``graph_module`` on ``args`` (as translated, not
    optimised), and the eager outputs they must give. Raises :class:`Untranslatable`
    when some call is outside the table.
    """
    graph, expected = _translated(graph_module, args, input_names, output_names, opset)
    return _encode(graph, opset), expected


def _same(got: np.ndarray, want: torch.Tensor) -> bool:
    want_np = want.numpy()
    if got.dtype != want_np.dtype or got.shape != want_np.shape:
        return False
    if want_np.dtype.kind in "fc":
        return bool(np.allclose(got, want_np, rtol=1e-5, atol=1e-6, equal_nan=True))
    return bool(np.array_equal(got, want_np))


def write_direct(
    graph_module: torch.nn.Module,
    args: Sequence[torch.Tensor],
    input_names: list[str],
    output_names: list[str],
    path: Any,
    opset: int = OPSET,
) -> dict[str, Any]:
    """Translate, optimise (:mod:`.optimize`), check the model in ONNX Runtime against
    the eager graph on ``args``, and save it to ``path``; raise :class:`Untranslatable`
    (nothing written) otherwise. Returns what the optimiser did, for the bundle: the
    optimised graph is kept only where it gives the translated graph's outputs bit for
    bit on ``args`` and on random inputs."""
    import onnxruntime

    graph, expected = _translated(graph_module, args, input_names, output_names, opset)
    plain = _encode(graph, opset)
    optimised, report = _optimised(graph, opset)
    feed = {
        name: a.detach().as_subclass(torch.Tensor).numpy() for name, a in zip(input_names, args)
    }
    try:
        session = _session(plain)
        got = session.run(None, feed)
    except Exception as exc:  # a kernel ONNX Runtime lacks for some dtype
        raise Untranslatable(f"ONNX Runtime refused the translation: {exc}") from None
    for name, have, want in zip(output_names, got, expected):
        if not _same(np.asarray(have), want):
            raise Untranslatable(f"output {name!r} differs from the eager graph")
    if optimised is not None:
        report = _verified(session, optimised, feed, got, report)
    Path(path).write_bytes(optimised if report.get("applied") else plain)
    report["ort_version"] = onnxruntime.__version__
    return report


def _session(data: bytes) -> Any:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    return onnxruntime.InferenceSession(data, options, providers=["CPUExecutionProvider"])


def _optimised(graph: Graph, opset: int) -> tuple[bytes | None, dict[str, Any]]:
    """The optimised graph's bytes (None where nothing changed) and what was done."""
    before = len(graph.nodes)
    copy = Graph(
        [dataclasses.replace(node) for node in graph.nodes],
        dict(graph.constants),
        list(graph.inputs),
        list(graph.outputs),
        dict(graph.known),
        dict(graph.ports),
    )
    rewrites = optimize.optimize(copy)
    report: dict[str, Any] = {"nodes_before": before, "nodes_after": len(copy.nodes)}
    if not rewrites:
        return None, {**report, "applied": False}
    return _encode(copy, opset), {**report, "rewrites": rewrites}


RANDOM_CHECKS = 3  # random inputs the optimised graph must match the translated one on


def _verified(
    plain: Any, optimised: bytes, feed: dict[str, np.ndarray], got: list[Any], report: dict
) -> dict[str, Any]:
    """``report`` with ``applied``: whether the optimised graph gives ``plain``'s outputs bit
    for bit on ``feed`` and on random inputs of the same dtypes and shapes."""
    rng = np.random.default_rng(0)
    try:
        session = _session(optimised)
        feeds = [feed] + [_random_like(feed, rng) for _ in range(RANDOM_CHECKS)]
        quiet = _quiet_run_options()  # a random input ORT rejects is expected, not news
        for index, inputs in enumerate(feeds):
            try:
                want = got if index == 0 else plain.run(None, inputs, quiet)
            except Exception:  # e.g. random indices out of range: not a valid input
                continue
            have = session.run(None, inputs)
            if not all(_identical(a, b) for a, b in zip(have, want)):
                _log.warning("ONNX graph optimisation changed an output; kept the translation")
                return {**report, "applied": False, "nodes_after": report["nodes_before"]}
    except Exception as exc:  # ONNX Runtime refused the rewritten graph: keep the translation
        _log.warning("ONNX graph optimisation refused by ONNX Runtime (%s); not applied", exc)
        return {**report, "applied": False, "nodes_after": report["nodes_before"]}
    return {**report, "applied": True}


def _quiet_run_options() -> Any:
    """Run options that keep ONNX Runtime from logging the errors of a refused input."""
    import onnxruntime

    options = onnxruntime.RunOptions()
    options.log_severity_level = 4  # fatal only
    return options


def _random_like(feed: dict[str, np.ndarray], rng: np.random.Generator) -> dict[str, np.ndarray]:
    out = {}
    for name, array in feed.items():
        if array.dtype.kind in "iu":
            info = np.iinfo(array.dtype)
            out[name] = rng.integers(
                info.min, info.max, array.shape, dtype=array.dtype, endpoint=True
            )
        elif array.dtype.kind == "b":
            out[name] = rng.random(array.shape) < 0.5
        else:
            out[name] = (rng.standard_normal(array.shape) * 100).astype(array.dtype)
    return out


def _identical(a: Any, b: Any) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind in "fc":
        return bool(np.array_equal(a, b, equal_nan=True)) and bool(
            (np.signbit(a) == np.signbit(b)).all()
        )
    return bool(np.array_equal(a, b))
