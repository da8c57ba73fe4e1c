"""Ufunc ``__call__``: the torch target of each ufunc and NumPy's loop-dtype plan."""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ..dtypes import HELD_AS_INT64, compute_dtype, dtype_of, torch_dtype, wrap_unsigned
from ..recorder import Recorder
from ..values import arg_of
from .calls import as_python, is_array
from .targets import (
    np_bitwise_count,
    np_cbrt,
    np_copysign,
    np_degrees,
    np_divmod,
    np_fabs,
    np_floor_divide,
    np_fmax,
    np_fmin,
    np_fmod,
    np_frexp,
    np_gcd,
    np_heaviside,
    np_hypot,
    np_isfinite,
    np_isinf,
    np_isnan,
    np_lcm,
    np_ldexp,
    np_left_shift,
    np_logical_xor,
    np_matmul,
    np_matvec,
    np_modf,
    np_nextafter,
    np_radians,
    np_reciprocal,
    np_remainder,
    np_right_shift,
    np_sign,
    np_spacing,
    np_true_divide,
    np_vecdot,
    np_vecmat,
)


@dataclass(frozen=True)
class UfuncSpec:
    """How to record a ufunc: torch callable, whether it returns bool, scalar handling."""

    fn: Callable
    predicate: bool = False  # output is bool whatever the inputs (comparisons, isnan, ...)
    # every argument as a tensor: torch needs it, or the target is scripted with Tensor arguments
    tensors_only: bool = False
    cast_inputs: bool = True  # cast array inputs to NumPy's loop dtype first
    nout: int = 1


U = UfuncSpec


UFUNCS: dict[np.ufunc, UfuncSpec] = {
    # math
    np.add: U(torch.add),
    np.subtract: U(torch.sub),
    np.multiply: U(torch.mul),
    np.matmul: U(np_matmul, tensors_only=True),
    np.divide: U(np_true_divide, tensors_only=True),
    np.logaddexp: U(torch.logaddexp, tensors_only=True),
    np.logaddexp2: U(torch.logaddexp2, tensors_only=True),
    np.floor_divide: U(np_floor_divide, tensors_only=True),
    np.negative: U(torch.neg),
    np.positive: U(torch.positive),
    np.power: U(torch.pow),
    np.float_power: U(torch.pow),
    np.remainder: U(np_remainder, tensors_only=True),
    np.fmod: U(np_fmod, tensors_only=True),
    np.divmod: U(np_divmod, tensors_only=True, nout=2),
    np.absolute: U(torch.abs),
    np.fabs: U(np_fabs),
    np.rint: U(torch.round),
    np.sign: U(np_sign),
    np.heaviside: U(np_heaviside, tensors_only=True),
    np.conjugate: U(torch.conj_physical),
    np.exp: U(torch.exp),
    np.exp2: U(torch.exp2),
    np.log: U(torch.log),
    np.log2: U(torch.log2),
    np.log10: U(torch.log10),
    np.expm1: U(torch.expm1),
    np.log1p: U(torch.log1p),
    np.sqrt: U(torch.sqrt),
    np.square: U(torch.square),
    np.cbrt: U(np_cbrt),
    np.reciprocal: U(np_reciprocal),
    np.gcd: U(np_gcd, tensors_only=True),
    np.lcm: U(np_lcm, tensors_only=True),
    np.vecdot: U(np_vecdot, tensors_only=True),
    # trigonometric
    np.sin: U(torch.sin),
    np.cos: U(torch.cos),
    np.tan: U(torch.tan),
    np.arcsin: U(torch.asin),
    np.arccos: U(torch.acos),
    np.arctan: U(torch.atan),
    np.arctan2: U(torch.atan2, tensors_only=True),
    np.hypot: U(np_hypot, tensors_only=True),
    np.sinh: U(torch.sinh),
    np.cosh: U(torch.cosh),
    np.tanh: U(torch.tanh),
    np.arcsinh: U(torch.asinh),
    np.arccosh: U(torch.acosh),
    np.arctanh: U(torch.atanh),
    np.degrees: U(np_degrees),
    np.radians: U(np_radians),
    np.deg2rad: U(np_radians),
    np.rad2deg: U(np_degrees),
    # bitwise (stay bitwise: never mapped to logical ops)
    np.bitwise_and: U(torch.bitwise_and),
    np.bitwise_or: U(torch.bitwise_or),
    np.bitwise_xor: U(torch.bitwise_xor),
    np.invert: U(torch.bitwise_not),
    np.left_shift: U(np_left_shift, tensors_only=True),
    np.right_shift: U(np_right_shift, tensors_only=True),
    np.bitwise_count: U(np_bitwise_count),
    # comparison and logical
    np.greater: U(torch.gt, predicate=True),
    np.greater_equal: U(torch.ge, predicate=True),
    np.less: U(torch.lt, predicate=True),
    np.less_equal: U(torch.le, predicate=True),
    np.not_equal: U(torch.ne, predicate=True),
    np.equal: U(torch.eq, predicate=True),
    np.logical_and: U(torch.logical_and, predicate=True, tensors_only=True),
    np.logical_or: U(torch.logical_or, predicate=True, tensors_only=True),
    np.logical_xor: U(np_logical_xor, predicate=True, tensors_only=True),
    np.logical_not: U(torch.logical_not, predicate=True),
    np.maximum: U(torch.maximum, tensors_only=True),
    np.minimum: U(torch.minimum, tensors_only=True),
    np.fmax: U(np_fmax, tensors_only=True),
    np.fmin: U(np_fmin, tensors_only=True),
    # floating
    np.isfinite: U(np_isfinite, predicate=True, cast_inputs=False),
    np.isinf: U(np_isinf, predicate=True, cast_inputs=False),
    np.isnan: U(np_isnan, predicate=True, cast_inputs=False),
    np.signbit: U(torch.signbit, predicate=True, cast_inputs=False),
    np.copysign: U(np_copysign, tensors_only=True),
    np.nextafter: U(np_nextafter, tensors_only=True),
    np.spacing: U(np_spacing),
    np.modf: U(np_modf, nout=2),
    np.ldexp: U(np_ldexp, tensors_only=True),
    np.frexp: U(np_frexp, nout=2),
    np.floor: U(torch.floor),
    np.ceil: U(torch.ceil),
    np.trunc: U(torch.trunc),
}


for _name, _fn in (("matvec", np_matvec), ("vecmat", np_vecmat)):
    if hasattr(np, _name):
        UFUNCS[getattr(np, _name)] = U(_fn, tensors_only=True)


# ufuncs that are the identity on booleans (torch has no bool kernel for them)
BOOL_IDENTITY = {np.absolute, np.floor, np.ceil, np.trunc, np.positive, np.rint}


# ufuncs that are the identity on integers (ONNX Runtime has no integer Floor or Ceil)
INT_IDENTITY = {np.floor, np.ceil, np.trunc, np.rint}


_LOOP_CACHE: dict[tuple, tuple[tuple[np.dtype, ...], tuple[np.dtype, ...]] | None] = {}


def loop_dtypes(ufunc: np.ufunc, inputs: tuple, dtype: Any = None) -> tuple | None:
    """NumPy's loop dtypes (inputs, outputs) for these operands, cached by operand kinds."""
    keys = []
    for value in inputs:
        if isinstance(value, (np.ndarray, np.generic)):
            keys.append(value.dtype)
        elif isinstance(value, torch.Tensor):
            keys.append(dtype_of(value))
        elif type(value) in (int, float, complex):
            keys.append(type(value))
        else:
            keys.append(np.asarray(value).dtype)
    key = (ufunc, dtype, *keys)
    hit = _LOOP_CACHE.get(key, False)
    if hit is not False:
        return hit
    try:
        if dtype is not None:
            resolved = ufunc.resolve_dtypes(
                tuple(keys) + (None,) * ufunc.nout,
                signature=((None,) * ufunc.nin + (np.dtype(dtype),) * ufunc.nout),
            )
        else:
            resolved = ufunc.resolve_dtypes(tuple(keys) + (None,) * ufunc.nout)
        hit = (tuple(resolved[: ufunc.nin]), tuple(resolved[ufunc.nin :]))
    except (TypeError, ValueError):
        hit = None
    _LOOP_CACHE[key] = hit
    return hit


_UFUNC_PLANS: dict[tuple, tuple] = {}


_NODE, _CAST, _FULL, _LITERAL = 0, 1, 2, 3


_SCALARS = (int, float, complex, bool)


def _ufunc_key(ufunc: np.ufunc, inputs: tuple, dtype: Any) -> tuple:
    key: list[Any] = [ufunc, dtype]
    for value in inputs:
        kind = type(value)
        if kind in _SCALARS:
            key.append(kind)
        elif isinstance(value, np.generic):
            key.append((value.dtype, "scalar"))
        else:
            key.append(dtype_of(value))
    return tuple(key)


def _ufunc_plan(ufunc: np.ufunc, inputs: tuple, result: Any, dtype: Any) -> tuple:
    """How to build the torch call for these operand kinds (cached per kinds)."""
    spec = UFUNCS[ufunc]
    loops = loop_dtypes(ufunc, inputs, dtype)
    outs = result if spec.nout > 1 else (result,)
    if loops is None:
        loop_in = tuple(dtype_of(o) for o in outs[:1]) * len(inputs)
        loop_out = tuple(dtype_of(o) for o in outs)
    else:
        loop_in, loop_out = loops
    # torch lacks most kernels for uint16/32/64: compute in int64, cast back (same wraparound)
    loop_in = tuple(compute_dtype(d) for d in loop_in)
    loop_out = tuple(compute_dtype(d) for d in loop_out)
    steps = []
    for position, (value, want) in enumerate(zip(inputs, loop_in)):
        if is_array(value):
            cast = spec.cast_inputs and dtype_of(value) != want
            steps.append((_CAST, torch_dtype(want)) if cast else (_NODE, None))
        elif isinstance(value, np.generic) or position == 0 or spec.tensors_only:
            steps.append((_FULL, torch_dtype(want)))
        else:
            steps.append((_LITERAL, None))
    identity = (loop_in[0] == np.bool_ and ufunc in BOOL_IDENTITY) or (
        loop_in[0].kind in "iu" and ufunc in INT_IDENTITY
    )
    haves = (np.dtype(bool),) if spec.predicate else loop_out
    return tuple(steps), spec, haves, identity, loops is not None


def _finish_output(rec: Recorder, node: Any, have: np.dtype, want: np.dtype) -> Any:
    """Cast a ufunc output from torch's dtype to NumPy's (masking held unsigned results)."""
    if have == want:
        return node
    target = torch_dtype(want)
    if torch_dtype(have) != target:
        node = rec.cast(node, target)
    return wrap_unsigned(rec, node, want) if want in HELD_AS_INT64 else node


def record_ufunc(rec: Recorder, ufunc: np.ufunc, inputs: tuple, result: Any, dtype: Any) -> Any:
    """Record a ufunc ``__call__``; returns a node (or tuple of nodes for nout > 1)."""
    key = _ufunc_key(ufunc, inputs, dtype)
    plan = _UFUNC_PLANS.get(key)
    if plan is None:
        plan = _ufunc_plan(ufunc, inputs, result, dtype)
        if plan[4]:
            _UFUNC_PLANS[key] = plan
    steps, spec, haves, identity, _ = plan
    args = []
    for value, (kind, td) in zip(inputs, steps):
        if kind == _NODE:
            args.append(arg_of(rec, value))
        elif kind == _CAST:
            args.append(rec.cast(arg_of(rec, value), td))
        elif kind == _FULL:
            args.append(rec.call(torch.full, ((), as_python(value)), {"dtype": td}))
        else:
            args.append(value)
    if identity:
        return args[0]
    node = rec.call(spec.fn, tuple(args))
    if spec.nout == 1:
        want = result.dtype if isinstance(result, (np.ndarray, np.generic)) else dtype_of(result)
        return node if haves[0] == want else _finish_output(rec, node, haves[0], want)
    nodes = []
    for i, (out, have) in enumerate(zip(result, haves)):
        part = rec.call(operator.getitem, (node, i))
        nodes.append(_finish_output(rec, part, have, dtype_of(out)))
    return tuple(nodes)
