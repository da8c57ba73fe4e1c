"""A traced graph's boundary: user data in as graph inputs, traced values out as outputs.

:func:`trace_input` gives the traced copy of an input (the caller's data is untouched);
:func:`finish` closes a recorder's graph on traced outputs and returns the GraphModule
(:func:`seal` closes it and leaves the GraphModule to be made on first use).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import fx

from .dtypes import to_numpy_side, to_torch_side
from .prior_buffers import check as check_prior_buffers
from .recorder import Recorder
from .unhooked_copies import check as check_unhooked_copies
from .values import arg_of, make_traced


def trace_input(recorder: Recorder, name: str, value: np.ndarray | torch.Tensor) -> Any:
    """Make ``value`` a graph input named ``name``; returns a traced copy (input untouched)."""
    if not recorder.active:
        raise RuntimeError(f"recorder {recorder.name!r} is closed")
    node = recorder.placeholder(name)
    if isinstance(value, torch.Tensor):
        copy = value.detach().as_subclass(torch.Tensor).clone()
    elif isinstance(value, (np.ndarray, np.generic)):
        copy = np.array(value, copy=True, subok=False)
    else:
        raise TypeError(f"input {name!r} must be a numpy array or torch tensor, got {value!r}")
    if not isinstance(copy, torch.Tensor):
        node = to_numpy_side(recorder, node, copy.dtype)
    return make_traced(recorder, copy, node)


def finish(recorder: Recorder, outputs: Any) -> fx.GraphModule:
    """Close ``recorder``'s graph on ``outputs`` (traced values, nested in tuples/lists/dicts)
    and return it as a GraphModule; the recorder is closed afterwards."""
    seal(recorder, outputs)
    return recorder.module()


def seal(recorder: Recorder, outputs: Any) -> None:
    """:func:`finish` without making the GraphModule yet (``recorder.module()`` makes it
    on first use): what a traced pass does, so the pass does not pay fx's class making."""
    if recorder.finished:
        raise RuntimeError(f"recorder {recorder.name!r} was already finished")
    check_unhooked_copies(recorder)
    recorder.seal(_output_nodes(recorder, outputs))
    check_prior_buffers(recorder)


def _output_nodes(recorder: Recorder, outputs: Any) -> Any:
    """Turn a structure of traced values into the same structure of fx nodes."""
    if isinstance(outputs, (tuple, list)):
        return type(outputs)(_output_nodes(recorder, o) for o in outputs)
    if isinstance(outputs, dict):
        return {k: _output_nodes(recorder, v) for k, v in outputs.items()}
    if isinstance(outputs, np.generic):  # a plain NumPy scalar: a 0-d constant, not a literal
        outputs = np.asarray(outputs)
    if isinstance(outputs, np.ndarray):
        return to_torch_side(recorder, arg_of(recorder, outputs), outputs.dtype)
    if isinstance(outputs, torch.Tensor):
        return arg_of(recorder, outputs)
    raise TypeError(f"graph outputs must be arrays or tensors, got {type(outputs).__name__}")
