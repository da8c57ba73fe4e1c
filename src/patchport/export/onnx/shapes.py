"""Emitters of torch ops that move data without computing on it: reshapes, transposes,
flips, rolls, slices by a number, concatenation."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch

from ...errors import Untranslatable
from .builder import Builder
from .registry import emits


@emits(
    "reshape", "view", "flatten", "unsqueeze", "squeeze", "view_as", "reshape_as", "ravel",
    "unflatten",
)  # fmt: skip
def _reshape(b: Builder, out: torch.Tensor, x: torch.Tensor, *args: Any, **kwargs: Any) -> str:
    if args and isinstance(args[0], torch.dtype):
        raise Untranslatable("view(dtype)")
    return b.node("Reshape", [b.tensor(x), b.ints(out.shape)])


@emits("expand", "expand_as", "broadcast_to")
def _expand(b: Builder, out: torch.Tensor, x: torch.Tensor, *args: Any, **kwargs: Any) -> str:
    return b.node("Expand", [b.tensor(x), b.ints(out.shape)])


def _dims(args: tuple, kwargs: dict, key: str = "dims") -> list[int]:
    dims = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args
    return list(kwargs.get(key, dims))


@emits("permute")
def _permute(b: Builder, out: torch.Tensor, x: torch.Tensor, *args: Any, **kwargs: Any) -> str:
    perm = [d % max(x.ndim, 1) for d in _dims(args, kwargs)]
    return b.node("Transpose", [b.tensor(x)], perm=perm)


@emits("transpose", "swapaxes", "swapdims")
def _transpose(b: Builder, out: torch.Tensor, x: torch.Tensor, dim0: int, dim1: int) -> str:
    perm = list(range(x.ndim))
    a, c = dim0 % x.ndim, dim1 % x.ndim
    perm[a], perm[c] = perm[c], perm[a]
    return b.node("Transpose", [b.tensor(x)], perm=perm)


@emits("movedim", "moveaxis")
def _movedim(b: Builder, out: torch.Tensor, x: torch.Tensor, source: Any, destination: Any) -> str:
    """``torch.movedim``: the permutation torch builds (moved axes at their destinations,
    the others in order), as one Transpose."""
    sources = [source] if isinstance(source, int) else list(source)
    targets = [destination] if isinstance(destination, int) else list(destination)
    ndim = max(x.ndim, 1)
    sources, targets = [d % ndim for d in sources], [d % ndim for d in targets]
    rest = iter(d for d in range(x.ndim) if d not in sources)
    placed = dict(zip(targets, sources))
    perm = [placed[i] if i in placed else next(rest) for i in range(x.ndim)]
    return b.node("Transpose", [b.tensor(x)], perm=perm)


@emits("t")
def _t(b: Builder, out: torch.Tensor, x: torch.Tensor) -> str:
    return b.node("Transpose", [b.tensor(x)], perm=list(range(x.ndim))[::-1])


@emits("flip")
def _flip(b: Builder, out: torch.Tensor, x: torch.Tensor, *args: Any, **kwargs: Any) -> str:
    axes = sorted({d % x.ndim for d in _dims(args, kwargs)})
    if not axes:
        return b.node("Identity", [b.tensor(x)])
    return _flip_axes(b, b.tensor(x), axes, tuple(x.shape))


_SHORT_RUN = 64  # ONNX Runtime's reversed Slice copies each run of inner values on its own


def _flip_axes(b: Builder, name: str, axes: list[int], shape: tuple[int, ...] = ()) -> str:
    """Reverse ``axes``: a Slice with step -1. An axis whose inner runs are short (the
    columns of an (H, W, C) image: runs of C values, 1.2 ms at 480x640x3) is reversed
    with the leading axes moved last, where its runs are that many times longer: two
    transposes that ONNX Runtime runs as 2-D ones, and a Gather of long runs (0.19 ms;
    a Slice there would be moved back between the transposes by ONNX Runtime's own
    transpose optimiser, undoing the gain)."""
    short = [k for k in axes if shape and math.prod(shape[k + 1 :]) < _SHORT_RUN and shape[k] > 1]
    split = next((s for s in range(1, len(shape)) if math.prod(shape[:s]) >= _SHORT_RUN), None)
    if not short or split is None or split > short[0]:
        return _reversed(b, name, axes)
    n = len(shape)
    ahead = list(range(split, n)) + list(range(split))  # leading axes last
    turned = b.node("Transpose", [name], perm=ahead)
    for k in axes:
        if k >= split:
            backwards = b.ints(range(shape[k] - 1, -1, -1))
            turned = b.node("Gather", [turned, backwards], axis=k - split)
    back = b.node("Transpose", [turned], perm=[ahead.index(k) for k in range(n)])
    leading = [k for k in axes if k < split]
    return _reversed(b, back, leading) if leading else back


def _reversed(b: Builder, name: str, axes: list[int]) -> str:
    n = len(axes)
    inputs = [name, b.ints([-1] * n), b.ints([-(2**63)] * n), b.ints(axes), b.ints([-1] * n)]
    return b.node("Slice", inputs)


@emits("rot90")
def _rot90(b: Builder, out: torch.Tensor, x: torch.Tensor, k: int = 1, dims: Any = (0, 1)) -> str:
    first, second = (d % x.ndim for d in dims)
    k %= 4
    if k == 0:
        return b.node("Identity", [b.tensor(x)])
    if k == 2:
        return _flip_axes(b, b.tensor(x), sorted({first, second}), tuple(x.shape))
    perm = list(range(x.ndim))
    perm[first], perm[second] = perm[second], perm[first]
    flipped = _flip_axes(b, b.tensor(x), [second if k == 1 else first], tuple(x.shape))
    return b.node("Transpose", [flipped], perm=perm)


@emits("roll")
def _roll(b: Builder, out: torch.Tensor, x: torch.Tensor, shifts: Any, dims: Any = None) -> str:
    shifts = [shifts] if isinstance(shifts, int) else list(shifts)
    if dims is None or dims == ():
        name = b.node("Reshape", [b.tensor(x), b.ints([-1])])
        rolled = _roll_axes(b, name, [x.numel()], shifts, [0])
        return b.node("Reshape", [rolled, b.ints(out.shape)])
    dims = [dims] if isinstance(dims, int) else list(dims)
    return _roll_axes(b, b.tensor(x), list(x.shape), shifts, [d % x.ndim for d in dims])


def _roll_axes(b: Builder, name: str, shape: list[int], shifts: list, dims: list) -> str:
    for shift, dim in zip(shifts, dims):
        n = shape[dim]
        k = shift % n if n else 0
        if not k:
            continue
        tail = b.node("Slice", [name, b.ints([n - k]), b.ints([n]), b.ints([dim])])
        head = b.node("Slice", [name, b.ints([0]), b.ints([n - k]), b.ints([dim])])
        name = b.node("Concat", [tail, head], axis=dim)
    return name


@emits("narrow")
def _narrow(
    b: Builder, out: torch.Tensor, x: torch.Tensor, dim: int, start: Any, length: int
) -> str:
    if isinstance(start, torch.Tensor):
        raise Untranslatable("narrow with a tensor start")
    dim %= x.ndim
    start = start + x.shape[dim] if start < 0 else start
    inputs = [b.tensor(x), b.ints([start]), b.ints([start + length]), b.ints([dim])]
    return b.node("Slice", inputs)


@emits("cat", "concat", "concatenate")
def _cat(b: Builder, out: torch.Tensor, tensors: Sequence[Any], dim: int = 0) -> str:
    parts = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0 and out.ndim != 1)]
    return b.node("Concat", [b.value(t, out.dtype) for t in parts], axis=dim % out.ndim)


@emits("stack")
def _stack(b: Builder, out: torch.Tensor, tensors: Sequence[Any], dim: int = 0) -> str:
    dim %= out.ndim
    parts = []
    for t in tensors:
        shape = list(t.shape)
        shape.insert(dim, 1)
        parts.append(b.node("Reshape", [b.value(t, out.dtype), b.ints(shape)]))
    return b.node("Concat", parts, axis=dim)


_PAD_MODES = {"constant": "constant", "replicate": "edge", "reflect": "reflect", "circular": "wrap"}
_PAD_DTYPES = (torch.uint8, torch.int8, torch.int32, torch.int64, torch.float32, torch.float64)


@emits("pad")
def _pad(
    b: Builder, out: torch.Tensor, x: torch.Tensor, pad: Sequence[int], mode: str = "constant",
    value: Any = None,
) -> str:  # fmt: skip
    """F.pad as one ONNX Pad (constant, edge, reflect or wrap): one pass over the data where
    concatenated border strips take one per side. dtypes ONNX Runtime's Pad lacks (int16,
    uint16, bool) are padded as int32 or int64, exactly, and cast back."""
    if mode not in _PAD_MODES or len(pad) % 2 or len(pad) // 2 > x.ndim:
        raise Untranslatable(f"pad mode {mode!r} with {len(pad)} pads")
    if any(isinstance(p, torch.Tensor) for p in pad):
        raise Untranslatable("pad widths from a tensor")
    begins, ends = [0] * x.ndim, [0] * x.ndim
    for i in range(len(pad) // 2):  # torch lists (before, after) from the last dim back
        begins[x.ndim - 1 - i], ends[x.ndim - 1 - i] = int(pad[2 * i]), int(pad[2 * i + 1])
    compute = x.dtype if x.dtype in _PAD_DTYPES else torch.int32
    if x.dtype in (torch.uint32, torch.uint64, torch.bool):
        compute = torch.int64
    inputs = [b.value(x, compute), b.ints(begins + ends)]
    if mode == "constant":
        fill = torch.tensor(0 if value is None else value).to(x.dtype).to(compute)
        inputs.append(b.tensor(fill))
    result = b.node("Pad", inputs, mode=_PAD_MODES[mode])
    return b.cast(result, compute, out.dtype)
