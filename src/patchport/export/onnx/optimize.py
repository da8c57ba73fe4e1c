"""Graph-level clean-up of a translated ONNX graph, before it is encoded.

The translator writes each torch call as it comes, so its graphs carry Identity nodes,
cast round trips (``float -> uint8 -> float`` around a transpose), transpose pairs that
cancel, reshape chains and float64 arithmetic that NumPy's promotion asked for on values
that float32 holds exactly. Each rewrite here keeps every output bit: a cast goes only
where :mod:`.value_ranges` proves it exact on the values that reach it, float64 becomes
float32 only where every operand and result is exact in float32. Two rewrites save passes
ONNX Runtime would otherwise make: Round (and a Clip, a scale by 2**-k) then a cast to
uint8 becomes one QuantizeLinear where the values are proven in range, and a graph output
made by a Reshape of an element-wise result is written by the op itself (a Reshape at an
output copies). ONNX Runtime's own optimiser (run again when a session opens) does not
remove these: it cannot prove them.

ONNX Runtime's offline optimisation is not applied to the saved file: on the camera
pipeline its portable level (BASIC) finds nothing left after these rewrites, and the
EXTENDED/ALL levels write com.microsoft fused ops tied to its version and CPU while a
session at the default level applies the same fusions when it opens. The bundle records
what was done (``onnx optimisation``: rewrites, node counts, the ONNX Runtime version
that checked the result).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...dtype_table import BY_CODE, onnx_code
from . import combinations, value_ranges
from .proto import Node
from .value_ranges import Range

# ops whose output dtype is their first input's
_SAME = value_ranges.MOVEMENT | {"Concat", "Add", "Sub", "Mul", "Div", "Neg", "Abs", "Max"}
_SAME |= {"Min", "Floor", "Ceil", "Round", "Clip", "Relu", "Conv", "MatMul", "Gemm", "Pad"}
_SAME |= {"ReduceSum", "ReduceMax", "ReduceMin", "ReduceMean", "GlobalAveragePool", "Split"}
_UNARY_MOVES = {"Identity", "Reshape", "Transpose", "Slice", "Squeeze", "Unsqueeze", "Flatten"}
_NARROWABLE = {"Add", "Sub", "Mul", "Neg", "Abs", "Max", "Min", "Floor", "Ceil", "Round", "Relu"}
_FLOAT64, _FLOAT32 = np.dtype(np.float64), np.dtype(np.float32)


@dataclass
class Graph:
    """The graph being rewritten: nodes, constants by name, ports, and what the eager run
    showed of each traced value (dtype and shape)."""

    nodes: list[Node]
    constants: dict[str, np.ndarray]
    inputs: list[str]
    outputs: list[str]
    known: dict[str, tuple[np.dtype, tuple[int, ...]]] = field(default_factory=dict)
    ports: dict[str, tuple[int, tuple[int, ...]]] = field(default_factory=dict)  # ONNX types
    count: int = 0

    def fresh(self, base: str) -> str:
        self.count += 1
        return f"{base}_o{self.count}"

    def constant(self, array: np.ndarray, base: str) -> str:
        name = self.fresh(base)
        self.constants[name] = array
        return name


@dataclass
class _Facts:
    """Producers, consumers, dtypes and ranges of every value, rebuilt after each rewrite."""

    producer: dict[str, Node]
    consumers: dict[str, list[Node]]
    dtypes: dict[str, np.dtype]
    ranges: dict[str, Range | None]


def _facts(g: Graph) -> _Facts:
    producer = {out: node for node in g.nodes for out in node.outputs}
    consumers: dict[str, list[Node]] = {}
    for node in g.nodes:
        for name in node.inputs:
            consumers.setdefault(name, []).append(node)
    dtypes = {name: dtype for name, (dtype, _) in g.known.items()}
    dtypes.update({name: array.dtype for name, array in g.constants.items()})
    ranges: dict[str, Range | None] = {n: value_ranges.of_array(a) for n, a in g.constants.items()}
    for name in g.inputs:
        ranges[name] = value_ranges.of_dtype(dtypes[name]) if name in dtypes else None
    for node in g.nodes:  # nodes are in topological order
        if node.op_type == "Cast":
            dtype: np.dtype | None = np.dtype(BY_CODE[node.attributes["to"]].numpy or "O")
        elif node.op_type in _SAME and node.inputs and node.inputs[0] in dtypes:
            dtype = dtypes[node.inputs[0]]
        else:
            dtype = dtypes.get(node.outputs[0])
        if dtype is not None:
            dtypes[node.outputs[0]] = dtype
        shape = g.known.get(node.inputs[0], (None, None))[1] if node.inputs else None
        ins = [ranges.get(name) for name in node.inputs if name]

        def refine(exact: Range | None, node: Node = node) -> Range | None:
            return combinations.tighter(node, exact, producer, ranges, dtypes, g.constants)

        ranges[node.outputs[0]] = value_ranges.transfer(
            node, ins, g.constants, dtype, shape, refine
        )
        if node.op_type == "Split":  # every piece holds the input's values and dtype
            for out in node.outputs[1:]:
                ranges[out] = ranges.get(node.inputs[0])
                if dtype is not None:
                    dtypes[out] = dtype
    return _Facts(producer, consumers, dtypes, ranges)


def _replace_uses(g: Graph, old: str, new: str) -> None:
    for node in g.nodes:
        node.inputs = [new if name == old else name for name in node.inputs]


def _rename_all(g: Graph, renamed: dict[str, str]) -> None:
    """Every use of a key of ``renamed`` reads its value instead, in one sweep."""
    if renamed:
        for node in g.nodes:
            node.inputs = [renamed.get(name, name) for name in node.inputs]


def _bypass(g: Graph, node: Node, source: str) -> bool:
    """Remove ``node``, whose output equals ``source``; False where the ports forbid it."""
    out = node.outputs[0]
    if out in g.outputs:
        producer = next((n for n in g.nodes if source in n.outputs), None)
        if producer is None or source in g.outputs or source in g.inputs:
            return False  # a graph input or constant: the output keeps its Identity
        producer.outputs = [out if name == source else name for name in producer.outputs]
        _replace_uses(g, source, out)
    else:
        _replace_uses(g, out, source)
    g.nodes.remove(node)
    return True


def _sole_use(g: Graph, f: _Facts, name: str) -> bool:
    return len(f.consumers.get(name, [])) == 1 and name not in g.outputs


def _drop_identity(g: Graph, f: _Facts) -> int:
    """Identity nodes go in one sweep (an output port keeps its Identity where the ports
    forbid renaming); a rename map, not a pass over the graph per node."""
    renamed: dict[str, str] = {}
    kept: list[Node] = []
    at_ports: list[Node] = []
    for node in g.nodes:
        node.inputs = [renamed.get(name, name) for name in node.inputs]
        if node.op_type == "Identity" and node.outputs[0] not in g.outputs:
            renamed[node.outputs[0]] = node.inputs[0]
            continue
        kept.append(node)
        if node.op_type == "Identity":
            at_ports.append(node)
    g.nodes[:] = kept
    done = len(renamed)
    for node in at_ports:
        done += _bypass(g, node, node.inputs[0])
    return done


def _cast_exact(f: _Facts, name: str, dtype: np.dtype) -> bool:
    """A cast of value ``name`` to ``dtype`` keeps every value (provably)."""
    have = f.dtypes.get(name)
    if have is None or have.kind not in "iuf" or dtype.kind not in "iuf":
        return False
    return value_ranges.lossless(have, dtype) or value_ranges.exact_in(f.ranges.get(name), dtype)


def _collapse_casts(g: Graph, f: _Facts) -> int:
    """Cast(A->B) [-> unary data movement...] -> Cast(B->C), with A->B exact on the values,
    becomes the movement on A then Cast(A->C), or no cast at all where A == C; and a
    cast to the dtype it already has goes."""
    for node in g.nodes:
        if node.op_type != "Cast":
            continue
        want = f.dtypes.get(node.outputs[0])
        if want is not None and f.dtypes.get(node.inputs[0]) == want:
            if _bypass(g, node, node.inputs[0]):
                return 1
            continue
        chain: list[Node] = []
        value = node.inputs[0]
        while value in f.producer and f.producer[value].op_type in _UNARY_MOVES:
            if not _sole_use(g, f, value):
                break
            chain.append(f.producer[value])
            value = f.producer[value].inputs[0]
        first = f.producer.get(value)
        if first is None or first.op_type != "Cast" or not _sole_use(g, f, value):
            continue
        source = first.inputs[0]
        have = f.dtypes.get(source)
        if have is None or want is None or not _cast_exact(f, source, f.dtypes[value]):
            continue
        if want.kind in "iu" and not _cast_exact(f, source, want):
            continue  # a float -> int cast out of range is undefined: keep it as written
        through_int = f.dtypes[value].kind in "iu" and have.kind == "f" and want.kind == "f"
        r = f.ranges.get(source)
        if through_int and (r is None or not r.signed_zero_safe):
            continue  # float -> int -> float turns -0.0 into +0.0
        head = chain[-1] if chain else node
        head.inputs = [source, *head.inputs[1:]]
        g.nodes.remove(first)
        if have == want:
            _bypass(g, node, node.inputs[0])
        return 1
    return 0


def _transpose_pairs(g: Graph, f: _Facts) -> int:
    for node in g.nodes:
        first = f.producer.get(node.inputs[0]) if node.op_type == "Transpose" else None
        if first is None or first.op_type != "Transpose" or not _sole_use(g, f, node.inputs[0]):
            continue
        p1, p2 = first.attributes.get("perm"), node.attributes.get("perm")
        if p1 is None or p2 is None:
            continue
        perm = [p1[i] for i in p2]
        node.inputs = [first.inputs[0]]
        g.nodes.remove(first)
        if perm == sorted(perm):
            _bypass(g, node, node.inputs[0])
        else:
            node.attributes = {**node.attributes, "perm": perm}
        return 1
    return 0


def _reshape_chains(g: Graph, f: _Facts) -> int:
    """Reshape(Reshape(x)) -> Reshape(x); a Reshape to the shape it already has goes."""
    for node in g.nodes:
        if node.op_type != "Reshape" or node.attributes.get("allowzero"):
            continue
        shape = g.constants.get(node.inputs[1])
        if shape is None or (shape == 0).any():
            continue
        first = f.producer.get(node.inputs[0])
        if first is not None and first.op_type == "Reshape" and _sole_use(g, f, node.inputs[0]):
            node.inputs = [first.inputs[0], node.inputs[1]]
            g.nodes.remove(first)
            return 1
        before, after = _shape(g, node.inputs[0]), _reshaped(g, node)
        if before is not None and before == after and _bypass(g, node, node.inputs[0]):
            return 1
    return 0


def _reshaped(g: Graph, node: Node) -> tuple[int, ...] | None:
    """The shape a Reshape makes: as the eager run showed it, else from its constant
    shape (a -1 resolved from the input's size)."""
    known = _shape(g, node.outputs[0])
    shape, size = g.constants.get(node.inputs[1]), _shape(g, node.inputs[0])
    if known is not None or shape is None or size is None or (shape == 0).any():
        return known
    dims = [int(d) for d in shape.reshape(-1)]
    if dims.count(-1) == 1:
        rest = int(np.prod([d for d in dims if d != -1]))
        if rest == 0 or int(np.prod(size)) % rest:
            return None
        dims[dims.index(-1)] = int(np.prod(size)) // rest
    return tuple(dims) if int(np.prod(dims)) == int(np.prod(size)) else None


# element-wise ops: a reshape of the result is the op on reshaped operands of its shape
_ELEMENTWISE = {"Add", "Sub", "Mul", "Div", "Min", "Max", "Neg", "Abs", "Floor", "Ceil", "Round"}
_ELEMENTWISE |= {"Relu", "Cast", "Clip", "Where", "Equal", "Less", "Greater", "Not", "And", "Or"}
_ELEMENTWISE |= {"BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot"}


def _output_reshapes(g: Graph, f: _Facts) -> int:
    """A graph output made by a Reshape of an element-wise result: ONNX Runtime copies the
    data into the output there (0.03 ms a 480x640x3 uint8 frame), while a Reshape inside
    the graph shares its input's buffer. The op computes in the output's shape instead,
    each operand of the result's shape reshaped (constants folded); scalars stay."""
    for node in g.nodes:
        out = node.outputs[0]
        if node.op_type != "Reshape" or out not in g.outputs or not _sole_use(g, f, node.inputs[0]):
            continue
        op = f.producer.get(node.inputs[0])
        want, have = _reshaped(g, node), _shape(g, node.inputs[0])
        if op is None or op.op_type not in _ELEMENTWISE or want is None or have is None:
            continue
        shapes = [_shape(g, name) for name in op.inputs if name]
        if any(s is None or (s != have and int(np.prod(s)) != 1) for s in shapes):
            continue  # an operand that broadcasts
        added: list[Node] = []
        inputs = []
        for name in op.inputs:
            if not name or _shape(g, name) != have or have == want:
                inputs.append(name)
            elif name in g.constants:
                inputs.append(g.constant(g.constants[name].reshape(want), name))
            else:
                moved = g.fresh(name)
                added.append(Node("Reshape", [name, node.inputs[1]], [moved], {}))
                g.known[moved] = (g.known[name][0], want)
                inputs.append(moved)
        op.inputs, op.outputs = inputs, [out]
        g.nodes.remove(node)
        at = g.nodes.index(op)
        g.nodes[at:at] = added
        return 1
    return 0


_QUANTIZED = {np.dtype(np.uint8): (0.0, 255.0), np.dtype(np.int8): (-128.0, 127.0)}


def _quantize_casts(g: Graph, f: _Facts) -> int:
    """float32 ``Cast(Round(x * 2**-k))`` to uint8 or int8, where the rounded values lie in
    the type's range (or a Clip to exactly that range saturates them), is one
    QuantizeLinear (scale 2**k, zero point 0): the same round half to even and
    saturation, one pass where there were up to four (0.11 ms against 0.39 ms for
    Mul, Round, Cast on a 480x640x3 frame). x * 2**-k is exact, and so is ONNX Runtime's
    x / 2**k; the Round may be absent where the values are proven integers."""
    for node in g.nodes:
        want = f.dtypes.get(node.outputs[0])
        if node.op_type != "Cast" or want not in _QUANTIZED:
            continue
        low, high = _QUANTIZED[want]
        value, removed = node.inputs[0], []
        producer = f.producer.get(value)
        if producer is not None and producer.op_type == "Clip" and _sole_use(g, f, value):
            if _clip_bounds(g, producer) != (low, high):
                continue
            removed.append(producer)
            value = producer.inputs[0]
            producer = f.producer.get(value)
        r = f.ranges.get(value)
        if r is None or (len(removed) == 0 and not (low <= r.lo and r.hi <= high)):
            continue  # out of range, a float -> int cast is undefined: kept as written
        if producer is not None and producer.op_type == "Round" and _sole_use(g, f, value):
            removed.append(producer)
            value = producer.inputs[0]
        elif r.grid is None or r.grid < 0:
            continue  # not proven integers: rounding them is not the cast's truncation
        if f.dtypes.get(value) != _FLOAT32:
            continue
        scale, scaled = 1.0, f.producer.get(value)
        if scaled is not None and scaled.op_type == "Mul" and _sole_use(g, f, value):
            for i, name in enumerate(scaled.inputs):
                c = g.constants.get(name)
                factor = float(c.reshape(-1)[0]) if c is not None and c.size == 1 else 0.0
                if c is not None and c.dtype == _FLOAT32 and 0 < factor <= 1:
                    if np.frexp(factor)[0] == 0.5:  # 2**-k
                        scale, value = 1.0 / factor, scaled.inputs[1 - i]
                        removed.append(scaled)
                        break
        if not removed:
            continue  # a plain cast of integers in range: no pass to save
        zero = g.constant(np.zeros((), want), "zero")
        scale_name = g.constant(np.array(scale, np.float32), "scale")
        g.nodes[g.nodes.index(node)] = Node(
            "QuantizeLinear", [value, scale_name, zero], list(node.outputs), {}
        )
        for old in removed:
            g.nodes.remove(old)
        return 1
    return 0


def _dequantize_scales(g: Graph, f: _Facts) -> int:
    """A uint8 or int8 cast to float32 read only by a Mul by a positive one-element
    float32 constant is one DequantizeLinear (that scale, zero point 0): the cast is
    exact and both round the one product alike, one pass where there were two (0.04 ms
    against 0.07 ms for a 480x640 plane). The constant's rank must not exceed the
    cast's, so the product keeps the cast's shape."""
    for node in g.nodes:
        out = node.outputs[0]
        if node.op_type != "Mul" or f.dtypes.get(out) != _FLOAT32:
            continue
        for i, name in enumerate(node.inputs):
            scale = g.constants.get(name)
            cast = f.producer.get(node.inputs[1 - i])
            if scale is None or cast is None or cast.op_type != "Cast" or scale.size != 1:
                continue
            factor = float(scale.reshape(-1)[0])
            source, cast_shape = cast.inputs[0], _shape(g, cast.outputs[0])
            if (
                scale.dtype != _FLOAT32
                or not (0.0 < factor < np.inf)
                or factor == 1.0
                or f.dtypes.get(source) not in _QUANTIZED
                or f.dtypes.get(cast.outputs[0]) != _FLOAT32
                or not _sole_use(g, f, cast.outputs[0])
                or cast_shape is None
                or scale.ndim > len(cast_shape)
            ):
                continue
            zero = g.constant(np.zeros((), f.dtypes[source]), "zero")
            factor_name = g.constant(np.array(factor, np.float32), "scale")
            g.nodes[g.nodes.index(node)] = Node(
                "DequantizeLinear", [source, factor_name, zero], [out], {}
            )
            g.nodes.remove(cast)
            return 1
    return 0


_INDEX_INPUT = {"Gather": 1, "GatherElements": 1}  # ops whose indices may be int32 or int64
_INT64, _INT32 = np.dtype(np.int64), np.dtype(np.int32)


def _index_casts(g: Graph, f: _Facts) -> int:
    """A cast to int64 read only as the indices of Gather or GatherElements (which take
    int32 indices too) casts to int32 where every value fits, or goes where its input is
    int32 already: half the bytes written and read (0.07 ms against 0.14 ms for the
    indices of a 480x640x3 frame)."""
    for node in g.nodes:
        out = node.outputs[0]
        if node.op_type != "Cast" or f.dtypes.get(out) != _INT64 or out in g.outputs:
            continue
        uses = f.consumers.get(out, [])
        if not uses or any(
            u.op_type not in _INDEX_INPUT
            or [i for i, name in enumerate(u.inputs) if name == out] != [_INDEX_INPUT[u.op_type]]
            for u in uses
        ):
            continue
        if not _cast_exact(f, node.inputs[0], _INT32):
            continue
        if f.dtypes.get(node.inputs[0]) == _INT32:
            if _bypass(g, node, node.inputs[0]):
                return 1
            continue
        node.attributes = {**node.attributes, "to": onnx_code(_INT32)}
        if out in g.known:
            g.known[out] = (_INT32, g.known[out][1])
        return 1
    return 0


_BROADCASTING = {"Add", "Sub", "Mul", "Div", "Min", "Max", "Pow", "Mod", "Where", "PRelu"}
_BROADCASTING |= {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or"}
_BROADCASTING |= {"Xor", "BitwiseAnd", "BitwiseOr", "BitwiseXor"}
_SHAPE_KEEPING = {"Cast", "Neg", "Abs", "Not", "Floor", "Ceil", "Round", "Relu", "Sqrt", "Exp"}
_SHAPE_KEEPING |= {"Log", "Sigmoid", "Tanh", "Clip", "BitwiseNot", "Sign", "Reciprocal"}


def _scalar_ranks(g: Graph, f: _Facts) -> int:
    """A one-element constant of lower rank broadcast against a result whose last axis
    has one element, e.g. ``gray + 3`` on an (H, W, 1) image, takes the result's rank:
    ONNX Runtime broadcasts a 0-d scalar against such a tensor one element at a time
    (2.9 ms against 0.036 ms for an (H, W, 1) float32 Add at 480x640); the values and the
    result are the same. One sweep, shapes carried through element-wise ops."""
    shapes: dict[str, tuple[int, ...]] = {n: tuple(a.shape) for n, a in g.constants.items()}
    shapes.update({n: tuple(shape) for n, (_, shape) in g.known.items()})
    done = 0
    for node in g.nodes:
        out = node.outputs[0] if node.outputs else ""
        ins = [shapes.get(name) for name in node.inputs if name]
        if out not in shapes and ins and all(s is not None for s in ins):
            if node.op_type in _BROADCASTING or node.op_type in _SHAPE_KEEPING:
                try:
                    shapes[out] = tuple(np.broadcast_shapes(*ins))  # type: ignore[arg-type]
                except ValueError:
                    continue
        shape = shapes.get(out)
        if node.op_type not in _BROADCASTING or not shape or shape[-1] != 1:
            continue
        inputs = []
        for name in node.inputs:
            array = g.constants.get(name)
            if array is not None and array.size == 1 and array.ndim < len(shape):
                name = g.constant(array.reshape((1,) * len(shape)), name)
                done += 1
            inputs.append(name)
        node.inputs = inputs
    return done


def _shape(g: Graph, name: str) -> tuple[int, ...] | None:
    """A value's shape as the eager run showed it, or a constant's."""
    if name in g.constants:
        return tuple(g.constants[name].shape)
    return tuple(g.known[name][1]) if name in g.known else None


def _narrow_float64(g: Graph, f: _Facts) -> int:
    """A float64 op whose operands and result float32 holds exactly, fed by casts or
    constants, computes in float32 (a cast back to float64 after it, which the cast
    collapse removes where the next consumer narrows again)."""
    for index, node in enumerate(g.nodes):
        out = node.outputs[0]
        if node.op_type not in _NARROWABLE or f.dtypes.get(out) != _FLOAT64:
            continue
        names = [n for n in node.inputs if n]
        if not value_ranges.exact_in(f.ranges.get(out), _FLOAT32):
            continue
        if not all(value_ranges.exact_in(f.ranges.get(n), _FLOAT32) for n in names):
            continue
        if not all(
            n in g.constants or f.producer.get(n, Node("", [], [])).op_type == "Cast" for n in names
        ):
            continue
        added: list[Node] = []
        inputs = []
        for name in node.inputs:
            if name in g.constants:
                inputs.append(g.constant(g.constants[name].astype(np.float32), name))
            else:
                narrow = g.fresh(name)
                added.append(Node("Cast", [name], [narrow], {"to": onnx_code(_FLOAT32)}))
                inputs.append(narrow)
        narrow_out = g.fresh(out)
        g.known.pop(out, None)
        g.nodes[index : index + 1] = [
            *added,
            Node(node.op_type, inputs, [narrow_out], dict(node.attributes)),
            Node("Cast", [narrow_out], [out], {"to": onnx_code(_FLOAT64)}),
        ]
        return 1
    return 0


def _drop_noops(g: Graph, f: _Facts) -> int:
    """Round/Floor/Ceil of integers, Relu of values >= 0, a Clip its input never reaches."""
    for node in g.nodes:
        r = f.ranges.get(node.inputs[0]) if node.inputs else None
        if r is None or f.dtypes.get(node.inputs[0]) != f.dtypes.get(node.outputs[0]):
            continue
        noop = node.op_type in ("Round", "Floor", "Ceil") and r.grid is not None and r.grid >= 0
        noop |= node.op_type == "Relu" and r.lo >= 0 and r.signed_zero_safe
        if node.op_type == "Clip":
            noop = _clip_bounds(g, node) is not None
            if noop:
                low, high = _clip_bounds(g, node)  # type: ignore[misc]
                noop = low <= r.lo and r.hi <= high and r.signed_zero_safe
        if noop and _bypass(g, node, node.inputs[0]):
            return 1
    return 0


def _clip_bounds(g: Graph, node: Node) -> tuple[float, float] | None:
    """A Clip's constant scalar (min, max), infinite where absent; None if not constant."""
    bounds = [-np.inf, np.inf]
    for index in (1, 2):
        name = node.inputs[index] if len(node.inputs) > index else ""
        if name:
            value = g.constants.get(name)
            if value is None or value.size != 1:
                return None
            bounds[index - 1] = float(value.reshape(-1)[0])
    return bounds[0], bounds[1]


def _shared_constants(g: Graph) -> None:
    """One name per distinct constant (same dtype, shape and bytes)."""
    seen: dict[tuple, str] = {}
    renamed: dict[str, str] = {}
    for name, array in list(g.constants.items()):
        key = (array.dtype.str, array.shape, array.tobytes())
        first = seen.setdefault(key, name)
        if first != name and name not in g.outputs:
            renamed[name] = first
    _rename_all(g, renamed)


def _common_nodes(g: Graph, f: _Facts) -> int:
    """Two nodes of the same op on the same inputs with the same attributes: one."""
    seen: dict[tuple, Node] = {}
    renamed: dict[str, str] = {}
    kept: list[Node] = []
    for node in g.nodes:  # topological order: a node's inputs are renamed before it
        node.inputs = [renamed.get(name, name) for name in node.inputs]
        if len(node.outputs) == 1 and not node.op_type.startswith("Random"):
            key = (node.op_type, tuple(node.inputs), repr(sorted(node.attributes.items())))
            first = seen.setdefault(key, node)
            if first is not node and node.outputs[0] not in g.outputs:
                renamed[node.outputs[0]] = first.outputs[0]
                continue
        kept.append(node)
    g.nodes[:] = kept
    return len(renamed)


# The analysis is redone after each rewrite of the range-based passes (cheap on the
# graphs of a pipeline, quadratic on a graph of thousands of nodes): this bounds it to a
# few seconds; what is left is kept as translated, which is always right.
WORK_BUDGET = 300_000

_PASSES = {
    "identity": _drop_identity,
    "common": _common_nodes,
    "noops": _drop_noops,
    "casts": _collapse_casts,
    "transposes": _transpose_pairs,
    "reshapes": _reshape_chains,
    "output reshapes": _output_reshapes,
    "quantize": _quantize_casts,
    "index casts": _index_casts,
    "scalar ranks": _scalar_ranks,
    "float64": _narrow_float64,
    "dequantize": _dequantize_scales,  # last: a Mul the passes above fold stays theirs
}


def optimize(g: Graph, passes: Iterable[str] = tuple(_PASSES)) -> dict[str, int]:
    """Rewrite ``g`` in place until no pass applies; how many rewrites each pass made."""
    done = dict.fromkeys(passes, 0)
    _shared_constants(g)
    budget = WORK_BUDGET  # node visits of the fact analysis: a large graph stops early
    for _ in range(10 * len(g.nodes) + 10):  # each rewrite removes or narrows a node
        if budget < len(g.nodes):
            done["stopped early (work budget)"] = 1
            break
        for name in passes:
            budget -= len(g.nodes)
            count = _PASSES[name](g, _facts(g))
            if count:
                done[name] += count
                break
        else:
            break
    used = {name for node in g.nodes for name in node.inputs}
    for name in [n for n in g.constants if n not in used]:
        del g.constants[name]
    return {name: count for name, count in done.items() if count}


def op_counts(nodes: Iterable[Any]) -> dict[str, int]:
    """Nodes per op type, most frequent first (for the bundle and the benchmark)."""
    counts: dict[str, int] = {}
    for node in nodes:
        counts[node.op_type] = counts.get(node.op_type, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
