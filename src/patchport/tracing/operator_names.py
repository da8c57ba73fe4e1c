"""Names of Python's binary operators, shared by the NumPy and torch dispatchers, and the
name under which ``torch.Tensor`` holds a callable torch hands to ``__torch_function__``."""

from __future__ import annotations

from typing import Any

BINARY_OPERATORS: tuple[str, ...] = (
    "add",
    "sub",
    "mul",
    "truediv",
    "floordiv",
    "mod",
    "pow",
    "matmul",
    "and",
    "or",
    "xor",
    "lshift",
    "rshift",
)

# id(callable) -> the Tensor attribute holding it, for callables whose own __name__ is
# another one (built on first use: importing this module does not import torch)
_RENAMED: dict[int, tuple[Any, str]] | None = None


def tensor_attribute(func: Any) -> str | None:
    """The ``torch.Tensor`` attribute ``func`` is, or None.

    Usually ``func.__name__``; but some operators are Python wrappers named after what
    they call: ``Tensor.__pow__`` is named ``pow``, ``__ipow__`` ``pow_``,
    ``__rtruediv__`` ``__rdiv__``. Taking that name for the attribute records ``q ** 2``
    as a module function ``torch._tensor.pow`` that does not exist.
    """
    import torch

    name = getattr(func, "__name__", None)
    if type(name) is str and getattr(torch.Tensor, name, None) is func:
        return name
    global _RENAMED
    if _RENAMED is None:
        # Only the Python class's own entries: the C methods of ``TensorBase`` carry their
        # attribute's name, and its ~800 entries made this table cost a first traced pass
        # about 0.3 ms.
        renamed: dict[int, tuple[Any, str]] = {}
        for attribute, value in vars(torch.Tensor).items():
            if callable(value) and getattr(value, "__name__", None) != attribute:
                renamed.setdefault(id(value), (value, attribute))
        _RENAMED = renamed
    hit = _RENAMED.get(id(func))
    return hit[1] if hit is not None and hit[0] is func else None
