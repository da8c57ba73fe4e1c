"""The in-place destination idiom of OpenCV: ``cv2.subtract(img, mean, img)``.

When ``dst`` is the traced first argument itself, the call is a functional replacement
call (without ``dst``) followed by an in-place write of the result into that array, as
NumPy's ``img -= mean`` is: its memory gets the new values, and its graph node (and those
of its views) the new computation, so later readers see the new value.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import torch

from ..tracing.values import active_recorder, arg_of, plain
from ..tracing.views import rebind


def split_inplace_dst(
    signature: inspect.Signature | None, args: tuple, kwargs: dict
) -> tuple[tuple, dict, Any]:
    """``(args, kwargs, target)`` with ``dst`` dropped when it is the traced first argument
    itself; ``target`` is None (and the call unchanged) otherwise."""
    if not args or active_recorder(args[0]) is None or signature is None:
        return args, kwargs, None
    if not may_receive(signature, "dst", args, kwargs):
        return args, kwargs, None
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError:
        return args, kwargs, None
    if bound.arguments.get("dst") is not args[0]:
        return args, kwargs, None
    bound.arguments["dst"] = None
    return bound.args, bound.kwargs, args[0]


_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def may_receive(signature: inspect.Signature, name: str, args: tuple, kwargs: dict) -> bool:
    """Whether parameter ``name`` can get a value from this call (by keyword, or by position
    when enough arguments are given): when not, binding the call cannot give it one, so
    the (costly) ``signature.bind`` is skipped on the traced path."""
    if name in kwargs:
        return True
    key = (id(signature), name)
    hit = _POSITIONS.get(key)
    if hit is None or hit[0] is not signature:
        if len(_POSITIONS) > 1024:
            _POSITIONS.clear()
        hit = _POSITIONS[key] = (signature, _position_of(signature, name))
    return hit[1] is not None and hit[1] < len(args)


# (id(signature), name) -> (signature, where a positional argument binds to ``name``, or
# None): a replacement's signature is read once, not on each traced call (bounded)
_POSITIONS: dict[tuple[int, str], tuple[inspect.Signature, int | None]] = {}


def note_positions(signature: inspect.Signature | None, names: tuple[str, ...]) -> None:
    """Read where ``names`` bind in ``signature`` now (a session's start), so that
    :func:`may_receive` finds them on the first traced call instead of walking the
    signature inside the traced pass."""
    if signature is not None:
        for name in names:
            may_receive(signature, name, (), {})


def _position_of(signature: inspect.Signature, name: str) -> int | None:
    for position, parameter in enumerate(signature.parameters.values()):
        if parameter.name == name:
            return position if parameter.kind in _POSITIONAL else None
    return None


def inplace_refusal(target: Any, result: Any, what: str) -> str | None:
    """Why ``result`` cannot be written into ``target`` (another shape or dtype), or None."""
    data = plain(result)
    shape, dtype = tuple(np.shape(data)), getattr(data, "dtype", None)
    if shape == tuple(target.shape) and str(dtype) == str(target.dtype):
        return None
    return (
        f"{what} was called with its traced input as dst= but the result is "
        f"{dtype}{list(shape)}, not the input's {target.dtype}{list(target.shape)}; it "
        f"cannot be written in place. Use the return value instead (drop dst=)."
    )


def write_inplace(recorder: Any, target: Any, result: Any) -> Any:
    """Make ``target`` hold ``result`` (values now, computation in the graph); return it.

    The caller checked :func:`inplace_refusal` first: shapes and dtypes agree.
    """
    data = plain(result)
    if isinstance(target, np.ndarray) and isinstance(data, torch.Tensor):
        data = data.numpy()
    if isinstance(target, np.ndarray):
        np.copyto(np.ndarray.view(target, np.ndarray), data)
    else:
        with torch._C.DisableTorchFunctionSubclass():
            target.as_subclass(torch.Tensor).copy_(torch.as_tensor(data))
    rebind(target, arg_of(recorder, result))
    return target
