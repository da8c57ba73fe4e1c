"""Torch ops that torch.onnx cannot convert, rewritten in ops it can, for ONNX export only.

``torch.linalg.inv`` / ``det`` / ``solve`` and ``torch.cumprod`` have no ONNX translation.
Before an fx graph goes to ``torch.onnx.export``, calls to them are pointed at the
decompositions below (Gauss-Jordan elimination with partial pivoting, a log-depth
prefix product), which export to plain ONNX operators. Shifts by a tensor (no
decomposition for ``aten.__lshift__.Tensor``; uint8 shifted wrong), clamps with an int and
a float bound, and numbers before a tensor (``2.5 - u``, ``7 // j``) are rewritten too, and
float32 bilinear ``F.interpolate`` whose result is rounded or cast to integers is written
in torch's own arithmetic (ONNX Resize rounds differently: see :mod:`.exact_resize`).
Other backends keep the originals.
"""

from __future__ import annotations

import copy
import operator
from typing import Any

import torch
from torch import fx

from .exact_resize import exact_where_discrete


def _eliminate(a: torch.Tensor, rhs: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
    """Gauss-Jordan with partial pivoting on ``[a | rhs]``: (a^-1 rhs, det a).

    Unrolled over the static matrix size; batch dims broadcast. Like LAPACK's getrf it
    picks the largest pivot in each column, so its accuracy is that of LU solving.
    """
    n = a.shape[-1]
    m = a if rhs is None else torch.cat([a, rhs.to(a.dtype)], dim=-1)
    rows = torch.arange(n)
    det = torch.ones(a.shape[:-2], dtype=a.dtype)
    for k in range(n):
        pivot_row = torch.argmax(torch.abs(m[..., k:, k]), dim=-1) + k  # (...,)
        p = pivot_row.unsqueeze(-1)
        order = torch.where(rows == k, p, torch.where(rows == p, k, rows))  # swap rows k, p
        m = torch.gather(m, -2, order.unsqueeze(-1).expand(m.shape))
        det = det * torch.where(pivot_row != k, -1.0, 1.0).to(a.dtype)
        pivot = m[..., k, k]
        det = det * pivot
        row = m[..., k : k + 1, :] / pivot.unsqueeze(-1).unsqueeze(-1)
        m = m - m[..., :, k : k + 1] * row
        m = torch.where((rows == k).unsqueeze(-1), row, m)
    return m[..., n:], det


def onnx_inv(a: torch.Tensor, *, out: Any = None) -> torch.Tensor:
    """``torch.linalg.inv`` by Gauss-Jordan elimination (exports to ONNX)."""
    eye = torch.eye(a.shape[-1], dtype=a.dtype).expand(a.shape)
    return _eliminate(a, eye)[0]


def onnx_det(a: torch.Tensor, *, out: Any = None) -> torch.Tensor:
    """``torch.linalg.det`` as the signed product of Gauss-Jordan pivots."""
    return _eliminate(a, None)[1]


def onnx_solve(a: torch.Tensor, b: torch.Tensor, *, left: bool = True, out: Any = None) -> Any:
    """``torch.linalg.solve`` (left=True) by Gauss-Jordan elimination."""
    if not left:
        return torch.linalg.solve(a, b, left=left)
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])
    rhs = b.unsqueeze(-1) if vector else b
    rhs = torch.broadcast_to(rhs, (*a.shape[:-2], *rhs.shape[-2:])) if a.ndim > 2 else rhs
    x = _eliminate(a, rhs)[0]
    return x.squeeze(-1) if vector else x


def onnx_cumprod(x: torch.Tensor, dim: int, *, dtype: Any = None, out: Any = None) -> Any:
    """``torch.cumprod`` as a log-depth prefix product (torch's integer promotion kept)."""
    if dtype is not None:
        x = x.to(dtype)
    elif not (x.dtype.is_floating_point or x.dtype.is_complex):
        x = x.to(torch.int64)
    if x.ndim == 0:
        return x.clone()
    dim = dim % x.ndim
    n = x.shape[dim]
    shift = 1
    while shift < n:
        ones = torch.ones_like(x.narrow(dim, 0, shift))
        x = x * torch.cat([ones, x.narrow(dim, 0, n - shift)], dim=dim)
        shift *= 2
    return x


def onnx_argsort(x: torch.Tensor, dim: int | None, stable: bool = False) -> torch.Tensor:
    """NumPy's stable argsort as ONNX TopK, which ONNX Runtime breaks ties by index in."""
    from ...tracing.numpy_table import np_argsort

    return np_argsort(x, dim, False)


def _has_tensor(x: Any, y: Any) -> bool:
    return isinstance(x, torch.Tensor) or isinstance(y, torch.Tensor)


def _float_operands(x: Any, y: Any) -> tuple[torch.Tensor, torch.Tensor] | None:
    """``x`` and ``y`` as tensors of their floating result dtype, or None for integers."""
    if not isinstance(x, torch.Tensor) and not isinstance(y, torch.Tensor):
        return None
    dtype = torch.result_type(x, y)
    if not dtype.is_floating_point:
        return None
    return torch.as_tensor(x, dtype=dtype), torch.as_tensor(y, dtype=dtype)


def _fmod_adjust(a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``fmod(a, b)`` and where it is nonzero with a sign other than ``b``'s."""
    mod = torch.fmod(a, b)
    return mod, (mod != 0) & ((b < 0) != (mod < 0))


def onnx_floor_divide(x: Any, y: Any) -> Any:
    """Float ``x // y`` by NumPy's and ATen's fmod-based rule; torch.onnx writes Floor(Div),
    one off near a cell border (``3.25 // 0.05`` is 64, ``floor(3.25 / 0.05)`` is 65)."""
    operands = _float_operands(x, y)
    if operands is None:  # integers, or sizes (SymInt // int) torch.floor_divide refuses
        return torch.floor_divide(x, y) if _has_tensor(x, y) else x // y
    a, b = operands
    mod, adjust = _fmod_adjust(a, b)
    div = (a - mod) / b - adjust.to(a.dtype)
    floor = torch.floor(div)
    floor = torch.where(div - floor > 0.5, floor + 1, floor)
    return torch.where(b == 0, a / b, floor)


def onnx_remainder(x: Any, y: Any) -> Any:
    """Float ``x % y`` by Python's rule (fmod, plus ``y`` where the signs differ)."""
    operands = _float_operands(x, y)
    if operands is None:  # integers, or sizes (SymInt % int) torch.remainder refuses
        return torch.remainder(x, y) if _has_tensor(x, y) else x % y
    a, b = operands
    mod, adjust = _fmod_adjust(a, b)
    return torch.where(adjust, mod + b, mod)


def _shift_operands(x: Any, count: Any) -> tuple[torch.Tensor, torch.Tensor, torch.dtype]:
    """``x`` and ``count`` as int64 tensors, and the dtype of the shift's result."""
    dtype = torch.result_type(x, count)
    x = torch.as_tensor(x).to(dtype) if not isinstance(x, torch.Tensor) else x
    return x.to(torch.int64), torch.as_tensor(count).to(torch.int64), dtype


def onnx_lshift(x: Any, count: Any) -> Any:
    """``x << count`` as ATen gives it (0 for a count < 0 or >= the width), computed in
    int64, whose shifts torch.onnx writes exactly (it has none for ``__lshift__.Tensor``
    and shifts uint8 wrong)."""
    if not _has_tensor(x, count):
        return x << count
    x64, count64, dtype = _shift_operands(x, count)
    if dtype.is_floating_point or dtype == torch.bool:
        return x << count  # torch refuses these itself
    bits = torch.iinfo(dtype).bits
    invalid = (count64 < 0) | (count64 >= bits)
    moved = torch.bitwise_left_shift(x64, count64.clamp(0, 63))
    return torch.where(invalid, torch.zeros_like(moved), moved).to(dtype)


def onnx_rshift(x: Any, count: Any) -> Any:
    """``x >> count`` as ATen gives it (a signed shift by a count < 0 or >= the width keeps
    the sign, an unsigned one gives 0), computed in int64 (see :func:`onnx_lshift`)."""
    if not _has_tensor(x, count):
        return x >> count
    x64, count64, dtype = _shift_operands(x, count)
    if dtype.is_floating_point or dtype == torch.bool:
        return x >> count
    info = torch.iinfo(dtype)
    if info.min < 0:
        top = info.bits - 1
        safe = torch.where((count64 < 0) | (count64 > top), torch.full_like(count64, top), count64)
        return torch.bitwise_right_shift(x64, safe).to(dtype)
    invalid = (count64 < 0) | (count64 >= info.bits)
    moved = torch.bitwise_right_shift(x64, count64.clamp(0, 63))
    return torch.where(invalid, torch.zeros_like(moved), moved).to(dtype)


def onnx_clamp(x: torch.Tensor, min: Any = None, max: Any = None) -> torch.Tensor:  # noqa: A002
    """``clamp`` with an int and a float bound made both floats (same result): torch.onnx
    turns the int into a tensor the float-bound overload then refuses."""
    numbers = [v for v in (min, max) if v is not None]
    if any(type(v) is float for v in numbers) and any(type(v) is int for v in numbers):
        min = float(min) if type(min) is int else min  # noqa: A001
        max = float(max) if type(max) is int else max  # noqa: A001
    return torch.clamp(x, min, max)


def onnx_np_floor_divide(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """The table's np.floor_divide with its float rule kept in ONNX."""
    from ...tracing.numpy_table.targets import np_floor_divide

    if _float_operands(x, y) is not None:
        return onnx_floor_divide(x, y)
    return np_floor_divide(x, y)


def onnx_np_remainder(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """The table's np.remainder with its float rule kept in ONNX."""
    from ...tracing.numpy_table.targets import np_remainder

    if _float_operands(x, y) is not None:
        return onnx_remainder(x, y)
    return np_remainder(x, y)


def onnx_np_divmod(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The table's np.divmod with the float rules kept in ONNX."""
    return onnx_np_floor_divide(x, y), onnx_np_remainder(x, y)


def _table_decompositions() -> dict[Any, Any]:
    """Swaps for the NumPy table's own graph helpers (imported on first use)."""
    from ...tracing.numpy_table import np_argsort
    from ...tracing.numpy_table.targets import np_divmod, np_floor_divide, np_remainder

    return {
        np_argsort: onnx_argsort,
        np_floor_divide: onnx_np_floor_divide,
        np_remainder: onnx_np_remainder,
        np_divmod: onnx_np_divmod,
    }


DECOMPOSITIONS: dict[Any, Any] = {
    torch.linalg.inv: onnx_inv,
    torch.linalg.det: onnx_det,
    torch.det: onnx_det,
    torch.linalg.solve: onnx_solve,
    torch.cumprod: onnx_cumprod,
    torch.floor_divide: onnx_floor_divide,
    torch.remainder: onnx_remainder,
    operator.floordiv: onnx_floor_divide,
    operator.mod: onnx_remainder,
    operator.lshift: onnx_lshift,
    operator.rshift: onnx_rshift,
    torch.bitwise_left_shift: onnx_lshift,
    torch.bitwise_right_shift: onnx_rshift,
    torch.clamp: onnx_clamp,
    torch.clip: onnx_clamp,
}
_METHODS = {
    "cumprod": onnx_cumprod,
    "det": onnx_det,
    "floor_divide": onnx_floor_divide,
    "__floordiv__": onnx_floor_divide,
    "remainder": onnx_remainder,
    "__mod__": onnx_remainder,
    "__lshift__": onnx_lshift,
    "__rshift__": onnx_rshift,
    "bitwise_left_shift": onnx_lshift,
    "bitwise_right_shift": onnx_rshift,
    "clamp": onnx_clamp,
    "clip": onnx_clamp,
}


def full_exact(size: Any, fill: torch.Tensor, **kwargs: Any) -> torch.Tensor:
    """``torch.full`` with a tensor fill (ones times the fill: exact in any dtype)."""
    return torch.ones(size, **kwargs) * fill


def full_like_exact(x: torch.Tensor, fill: torch.Tensor, **kwargs: Any) -> torch.Tensor:
    """``torch.full_like`` with a tensor fill."""
    return torch.ones_like(x, **kwargs) * fill


_FULLS = {torch.full: full_exact, torch.full_like: full_like_exact}


def decompose_for_onnx(module: Any, args: tuple = ()) -> Any:
    """A copy of an fx GraphModule ready for torch.onnx (the original is left unchanged).

    Unconvertible calls are decomposed; float64 Python literals that float32 cannot hold
    become float64 constants, since torch.onnx builds Python floats as float32 constants
    (``x * 0.1`` would multiply by 0.10000000149 and ``1e300`` would become inf).
    """
    if not isinstance(module, fx.GraphModule):
        return module
    from ..number_operands import numbers_as_tensors

    if args:
        module = numbers_as_tensors(module, args, bool_literals=False)
    module = exact_where_discrete(module, args)
    swaps = {**DECOMPOSITIONS, **_table_decompositions()}
    graph = copy.deepcopy(module.graph)
    out = fx.GraphModule(module, graph, class_name=type(module).__name__)
    for node in graph.nodes:
        if node.op == "call_function" and node.target in swaps:
            node.target = swaps[node.target]
        elif node.op == "call_method" and node.target in _METHODS:
            node.op, node.target = "call_function", _METHODS[node.target]
    if args:
        _exact_float64_literals(out, args)
    out.recompile()
    return out


def _inexact_in_float32(value: Any) -> bool:
    return type(value) is float and float(torch.tensor(value, dtype=torch.float32)) != value


def _exact_float64_literals(module: fx.GraphModule, args: tuple) -> None:
    """Replace float64 nodes' literals float32 cannot hold by float64 constant tensors."""
    from torch.fx.passes.shape_prop import ShapeProp

    if not any(
        _inexact_in_float32(a)
        for node in module.graph.nodes
        for a in (*node.args, *node.kwargs.values())
    ):
        return
    try:
        ShapeProp(module).propagate(*args)
    except Exception:  # noqa: BLE001 - without dtypes the literals are left as they are
        return
    count = 0
    for node in list(module.graph.nodes):
        meta = node.meta.get("tensor_meta")
        if node.op not in ("call_function", "call_method") or (
            getattr(meta, "dtype", None) != torch.float64
        ):
            continue
        if not any(_inexact_in_float32(a) for a in (*node.args, *node.kwargs.values())):
            continue

        def constant(value: Any, before: fx.Node) -> Any:
            nonlocal count
            if not _inexact_in_float32(value):
                return value
            name = f"_onnx_float64_literal_{count}"
            count += 1
            module.register_buffer(name, torch.tensor(value, dtype=torch.float64))
            with module.graph.inserting_before(before):
                return module.graph.get_attr(name)

        node.args = tuple(constant(a, node) for a in node.args)
        node.kwargs = {k: constant(v, node) for k, v in node.kwargs.items()}
        if node.op == "call_function" and node.target in _FULLS:
            node.target = _FULLS[node.target]
