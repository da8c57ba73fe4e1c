"""Traced ``scipy.special`` ufuncs robotics heads use: ``expit`` and ``logit``.

SciPy's ``softmax``, ``log_softmax`` and ``logsumexp`` are NumPy code and trace as they
are; ``expit`` and ``logit`` are compiled ufuncs, replaced here by SciPy's formulas in the
ufunc's own precision (float32 in float32, integers in float64).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ._base import describe, no_output, refuse, replaces, to_tensor

FAMILY = "special"
_ACCURACY = "SciPy's formula in the ufunc's precision; exp/log rounding: within 2 ulp"


def _operand(function: str, x: Any, out: Any, where: Any, kwargs: dict) -> torch.Tensor:
    """The ufunc's operand as a tensor in SciPy's loop dtype (float32 or float64)."""
    no_output(f"special.{function}", out, "out")
    if where is not True:
        raise refuse(f"special.{function}", "where", describe(where), "True")
    if kwargs:
        raise refuse(f"special.{function}", next(iter(kwargs)), "given", "no ufunc keywords")
    if isinstance(x, torch.Tensor):
        raise refuse(f"special.{function}", "x", describe(x), "a NumPy array or number")
    array = np.asarray(x)
    if array.dtype.kind not in "fiub":
        raise refuse(f"special.{function}", "x.dtype", array.dtype.name, "real numbers")
    if array.dtype == np.float16:
        raise refuse(f"special.{function}", "x.dtype", "float16", "float32, float64, integers")
    kind = np.float32 if array.dtype == np.float32 else np.float64  # SciPy's loop
    tensor = to_tensor(array)
    return tensor.to(torch.float32 if kind == np.float32 else torch.float64)


def _result(t: torch.Tensor, x: Any) -> Any:
    """A fresh array (a 0-d one for a traced scalar: what a NumPy scalar is when traced)."""
    return t.clone(memory_format=torch.contiguous_format).numpy()


@replaces(
    "special.expit",
    family=FAMILY,
    dtypes=("float32", "float64", "integers"),
    accuracy=_ACCURACY,
    arguments={"out": ("None",), "where": ("True",)},
    float_atol=1e-15,
    rtol=1e-6,
)
def expit(
    x: Any,
    /,
    out: Any = None,
    *,
    where: Any = True,
    casting: str = "same_kind",
    order: str = "K",
    dtype: Any = None,
    subok: bool = True,
    signature: Any = None,
) -> Any:
    """Traced ``scipy.special.expit``: 1 / (1 + exp(-x))."""
    options = {"dtype": dtype, "signature": signature}
    t = _operand("expit", x, out, where, {k: v for k, v in options.items() if v is not None})
    return _result(1 / (1 + torch.exp(-t)), x)


@replaces(
    "special.logit",
    family=FAMILY,
    dtypes=("float32", "float64", "integers"),
    accuracy=_ACCURACY,
    arguments={"out": ("None",), "where": ("True",)},
    float_atol=1e-15,
    rtol=1e-6,
)
def logit(
    x: Any,
    /,
    out: Any = None,
    *,
    where: Any = True,
    casting: str = "same_kind",
    order: str = "K",
    dtype: Any = None,
    subok: bool = True,
    signature: Any = None,
) -> Any:
    """Traced ``scipy.special.logit``: log(x / (1 - x)), and as SciPy near x = 0.5 (where
    that formula cancels) log1p(s) - log1p(-s) with s = 2 (x - 0.5), for 0.3 <= x <= 0.65."""
    options = {"dtype": dtype, "signature": signature}
    t = _operand("logit", x, out, where, {k: v for k, v in options.items() if v is not None})
    s = 2 * (t - 0.5)
    central = (t >= 0.3) & (t <= 0.65)
    return _result(
        torch.where(central, torch.log1p(s) - torch.log1p(-s), torch.log(t / (1 - t))), x
    )
