"""``F.interpolate`` of float32 images (bilinear here; bicubic and antialiased bilinear or
bicubic, float32 and uint8, in :mod:`.exact_resize_separable`) written as torch's CPU
kernels compute it, for ONNX export: ONNX Runtime's Resize rounds differently (about 1e-6), so a
pipeline that resizes and then rounds to uint8 (resize-with-pad, a depth map scaled to
0..255) came out one off on a few pixels after ONNX export while pt2 and jit were exact.
The exact form costs 4-17x Resize's CPU time (bench/onnx_exact_resize.py), so the export
uses it only where the resized values reach a rounding, an integer cast or a comparison, or
are integers themselves (a uint8 image resized) (:func:`exact_where_discrete`); elsewhere a
difference of 1e-6 stays 1e-6.

torch (2.x, x86-64) has two float kernels, chosen per call:
- the channels-last kernel, for outputs with height + width <= 128, channels-last inputs
  of more than 3 channels, and 3-channel images when torch runs one thread: weights
  w00 = h0 * w0 ... and, per 8-channel vector, ``a*w00 + (b*w01 + (c*w10 + d*w11))``
  contracted to fused multiply-adds from the innermost product; the remaining channels
  ``((a*w00 + b*w01) + c*w10) + d*w11`` fused from the second product on;
- the generic kernel otherwise: along the width ``fma(left, w0, right * w1)``, then the
  same along the height.
Both take the source index ``fma(scale, dst + 0.5, -0.5)`` clamped at 0 (``scale * dst``
with align_corners), in float32, with scale ``1 / scale_factor`` when one is passed, else
``in / out``; a dimension whose size does not change is copied. Each fused multiply-add is
one rounding of a float64 product and sum (a float32 product is exact in float64).
Measured bit for bit against torch 2.13 on x86-64 (AVX2 and AVX-512 machines).
"""

from __future__ import annotations

import copy
import math
from typing import Any

import torch
import torch.nn.functional as F
from torch import fx

_F32, _F64 = torch.float32, torch.float64
_LANES = 8  # float32 lanes of torch's upsample vectors (compiled for AVX2 on x86-64)
_SMALL_OUTPUT = 128  # height + width at or below which torch takes the channels-last kernel


def interpolate(
    input: Any,
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",
    align_corners: Any = None,
    recompute_scale_factor: Any = None,
    antialias: bool = False,
) -> torch.Tensor:
    """``F.interpolate`` with float32 bilinear and bicubic resizing (antialiased or not) in
    torch's own arithmetic; every other case is ``F.interpolate`` itself."""
    arguments = (size, scale_factor, mode, align_corners, recompute_scale_factor, antialias)
    exact = bilinear(input, *arguments)
    if exact is None:
        exact = separable(input, *arguments)
    return F.interpolate(input, *arguments) if exact is None else exact


def bilinear(
    input: Any,
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",
    align_corners: Any = None,
    recompute_scale_factor: Any = None,
    antialias: bool = False,
) -> torch.Tensor | None:
    """The float32 bilinear case of ``F.interpolate`` in torch's arithmetic, or None for
    any other case (decided from the arguments alone, before any tensor operation)."""
    if mode != "bilinear" or antialias:
        return None
    arguments = (size, scale_factor, align_corners, recompute_scale_factor)
    plan = _plan(input, *arguments)
    if plan is None:
        return None
    (out_h, out_w), scales, corners = plan
    height = _taps(input.shape[2], out_h, scales[0], corners)
    width = _taps(input.shape[3], out_w, scales[1], corners)
    if _channels_last_kernel(input, out_h, out_w):
        return _channels_last(input, height, width)
    return _generic(input, height, width)


def separable(
    input: Any,
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",
    align_corners: Any = None,
    recompute_scale_factor: Any = None,
    antialias: bool = False,
) -> torch.Tensor | None:
    """The float32 bicubic, antialiased bilinear and antialiased bicubic cases of
    ``F.interpolate`` in torch's arithmetic (:mod:`.exact_resize_separable`), or None."""
    from . import exact_resize_separable

    if mode not in ("bicubic", "bilinear") or (mode == "bilinear" and not antialias):
        return None
    arguments = (size, scale_factor, align_corners, recompute_scale_factor)
    dtypes = (_F32, torch.uint8) if antialias else (_F32,)
    plan = _plan(input, *arguments, dtypes=dtypes)
    if plan is None:
        return None
    sizes, scales, corners = plan
    if antialias and input.dtype == torch.uint8:
        if input.shape[1] > 4:
            return None  # torch's AVX2 kernel takes at most 4 channels; others not measured
        return exact_resize_separable.antialiased_uint8(input, sizes, scales, corners, mode)
    if antialias and sizes[1] == 1 and sizes[0] != input.shape[2]:
        return None  # torch's vertical pass reads the first row's taps for every row then
    if antialias:
        return exact_resize_separable.antialiased(input, sizes, scales, corners, mode)
    return exact_resize_separable.bicubic(input, sizes, scales, corners)


def _plan(
    x: Any,
    size: Any,
    scale_factor: Any,
    align_corners: Any,
    recompute: Any,
    dtypes: tuple = (_F32,),
) -> Any:
    """((out_h, out_w), (scale_h, scale_w), align_corners) of an NCHW CPU tensor of one of
    ``dtypes`` and static shape, with the scales torch's kernel receives (None: from the
    sizes), or None."""
    if not isinstance(x, torch.Tensor):
        return None
    if x.dim() != 4 or x.dtype not in dtypes or x.device.type != "cpu":
        return None
    if any(isinstance(d, torch.SymInt) for d in x.shape):
        return None
    corners = bool(align_corners)
    if size is not None:
        if scale_factor is not None:
            return None
        sizes = (size, size) if isinstance(size, int) else tuple(size)
        if len(sizes) != 2 or not all(isinstance(s, int) and s > 0 for s in sizes):
            return None
        return sizes, (None, None), corners
    if scale_factor is None:
        return None
    factors = scale_factor if isinstance(scale_factor, (tuple, list)) else (scale_factor,) * 2
    if len(factors) != 2 or not all(isinstance(f, (int, float)) for f in factors):
        return None
    sizes = tuple(math.floor(float(n) * float(f)) for n, f in zip(x.shape[2:], factors))
    if min(sizes) <= 0:
        return None
    scales = (None, None) if recompute else tuple(float(f) for f in factors)
    return sizes, scales, corners


def _taps(size: int, out: int, scale: float | None, corners: bool):
    """(first, second, weight of first, weight of second) per output index, as torch's
    compute_source_index_and_lambda: int64 indices, float32 weights."""
    index = torch.arange(out)
    if out == size:  # torch copies a dimension whose size does not change
        return index, index, torch.ones(out, dtype=_F32), torch.zeros(out, dtype=_F32)
    if corners:
        step = torch.tensor(size - 1, dtype=_F32) / (out - 1) if out > 1 else 0.0
        real = torch.as_tensor(step, dtype=_F32) * index.to(_F32)
    else:
        ratio = 1.0 / scale if scale is not None and scale > 0 else None
        step = torch.tensor(size, dtype=_F32) / out if ratio is None else torch.tensor(ratio)
        step = step.to(_F32)
        real = _fma(step, index.to(_F32) + 0.5, torch.tensor(-0.5, dtype=_F32))
        real = torch.clamp(real, min=0.0)
    first = torch.clamp(torch.floor(real).to(torch.int64), max=size - 1)
    weight = torch.clamp(real - first.to(_F32), 0.0, 1.0)
    second = first + (first < size - 1).to(torch.int64)
    return first, second, 1.0 - weight, weight


def _fma(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    """float32 a * b + c rounded once (the float32 product is exact in float64)."""
    return (a.to(_F64) * b.to(_F64) + c.to(_F64)).to(_F32)


def _channels_last_kernel(x: torch.Tensor, out_h: int, out_w: int) -> bool:
    """Whether torch takes its channels-last kernel for this call."""
    channels = x.shape[1]
    if out_h + out_w <= _SMALL_OUTPUT:
        return True
    if x.is_contiguous(memory_format=torch.channels_last) and channels > 3:
        return True
    return torch.get_num_threads() == 1 and channels == 3


def _generic(x: torch.Tensor, height: Any, width: Any) -> torch.Tensor:
    """Along the width, then the height: fma(first, w_first, second * w_second) each."""
    x0, x1, wx0, wx1 = width
    y0, y1, wy0, wy1 = height
    rows = _fma(x[..., x0], wx0, x[..., x1] * wx1)
    h0, h1 = wy0.unsqueeze(-1), wy1.unsqueeze(-1)
    return _fma(rows[..., y0, :], h0, rows[..., y1, :] * h1)


def _channels_last(x: torch.Tensor, height: Any, width: Any) -> torch.Tensor:
    """Four taps weighted by h * w products, summed in the kernel's order per channel."""
    x0, x1, wx0, wx1 = width
    y0, y1, wy0, wy1 = height
    w00, w01 = wy0[:, None] * wx0[None, :], wy0[:, None] * wx1[None, :]
    w10, w11 = wy1[:, None] * wx0[None, :], wy1[:, None] * wx1[None, :]
    top, bottom = x[..., y0, :], x[..., y1, :]
    a, b, c, d = top[..., x0], top[..., x1], bottom[..., x0], bottom[..., x1]
    vector = x.shape[1] // _LANES * _LANES
    parts = []
    if vector:  # a*w00 + (b*w01 + (c*w10 + d*w11)), fused from the innermost product
        v = (t[:, :vector] for t in (a, b, c, d))
        va, vb, vc, vd = v
        inner = _fma(vd, w11, vc * w10)
        parts.append(_fma(va, w00, _fma(vb, w01, inner)))
    if vector < x.shape[1]:  # the scalar loop: ((a*w00 + b*w01) + c*w10) + d*w11
        ta, tb, tc, td = (t[:, vector:] for t in (a, b, c, d))
        first = _fma(ta, w00, tb * w01)
        parts.append(_fma(td, w11, _fma(tc, w10, first)))
    return parts[0] if len(parts) == 1 else torch.cat(parts, 1)


_ROUNDING = {"round", "floor", "ceil", "trunc", "fix", "rint", "around"}


def exact_where_discrete(module: Any, args: tuple = ()) -> Any:
    """A copy of the fx GraphModule ``module`` whose ``F.interpolate`` calls whose results
    reach a discrete operation (a rounding, or any operation giving integers or booleans:
    casts, comparisons, argmax) call :func:`interpolate` instead; ``module`` itself when
    there are none. Dtypes come from running the graph on ``args``; without them, a cast
    to an integer dtype or a rounding by name."""
    if not isinstance(module, fx.GraphModule):
        return module
    resizes = [
        n for n in module.graph.nodes if n.op == "call_function" and n.target is F.interpolate
    ]
    if not resizes:
        return module
    dtypes = _node_dtypes(module, args)
    chosen = {
        n.name for n in resizes if _integer(dtypes.get(n.name)) or _reaches_discrete(n, dtypes)
    }
    graph = copy.deepcopy(module.graph)
    for node in graph.nodes:
        if node.name in chosen:
            node.target = interpolate
        elif node.op == "call_function" and node.target is F.interpolate:
            node.target = interpolate_integers  # uint8 in: exact (dtypes may be unknown)
    out = fx.GraphModule(module, graph, class_name=type(module).__name__)
    out.recompile()
    return out


def _node_dtypes(module: fx.GraphModule, args: tuple) -> dict[str, list[torch.dtype]]:
    """Each node's output dtypes from a run on ``args`` ({} when it cannot run)."""
    from torch.fx.passes.shape_prop import ShapeProp

    if not args:
        return {}
    probe = fx.GraphModule(module, copy.deepcopy(module.graph))
    try:
        ShapeProp(probe).propagate(*args)
    except Exception:  # noqa: BLE001 - fall back to reading the calls
        return {}
    found: dict[str, list[torch.dtype]] = {}
    for node in probe.graph.nodes:
        meta = node.meta.get("tensor_meta")  # TensorMetadata (a named tuple) or a sequence
        metas = (
            [meta] if hasattr(meta, "dtype") else meta if isinstance(meta, (list, tuple)) else []
        )
        found[node.name] = [m.dtype for m in metas if hasattr(m, "dtype")]
    return found


def interpolate_integers(input: Any, *args: Any, **kwargs: Any) -> torch.Tensor:
    """:func:`interpolate` for a uint8 ``input`` (its result is integers: always exact),
    ``F.interpolate`` itself for any other."""
    if isinstance(input, torch.Tensor) and input.dtype == torch.uint8:
        return interpolate(input, *args, **kwargs)
    return F.interpolate(input, *args, **kwargs)


def _integer(dtypes: list[torch.dtype] | None) -> bool:
    """Whether a resize gives integers itself (a uint8 image resized)."""
    return bool(dtypes) and not any(d.is_floating_point or d.is_complex for d in dtypes)


def _reaches_discrete(start: fx.Node, dtypes: dict[str, list[torch.dtype]]) -> bool:
    """Whether a value computed from ``start`` is rounded or made integer or boolean."""
    seen, todo = set(), list(start.users)
    while todo:
        node = todo.pop()
        if node.name in seen or node.op == "output":
            continue
        seen.add(node.name)
        if _discrete(node, dtypes.get(node.name)):
            return True
        todo.extend(node.users)
    return False


def _discrete(node: fx.Node, dtypes: list[torch.dtype] | None) -> bool:
    name = node.target if isinstance(node.target, str) else getattr(node.target, "__name__", "")
    if name.lstrip("_").rstrip("_") in _ROUNDING:
        return True
    if dtypes:
        return any(not (d.is_floating_point or d.is_complex) for d in dtypes)
    values = (*node.args, *node.kwargs.values())
    return any(isinstance(v, torch.dtype) and not v.is_floating_point for v in values)
