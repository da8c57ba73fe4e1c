"""torch's legacy constructors on traced data: ``torch.Tensor(obs)``, the typed ones
(``torch.FloatTensor(state)``, ``torch.LongTensor(actions)``) and ``Variable(t)`` that
older RL and robotics code calls on NumPy observations.

torch reads an ndarray handed to them in C, with no hook, so the copy would silently drop
the trace. In a session ``torch.Tensor.__new__`` and the typed constructors' names on the
``torch`` module stand in for them: traced arrays (and lists of them) become a recorded
copy in the constructor's dtype; a traced tensor its alias; everything else reaches
torch's own constructor. A typed stand-in answers ``isinstance`` / ``issubclass`` and
every attribute as its type does, and ``Tensor.type`` accepts it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from ..patching import PatchFamily, PatchInfo
from ..patching.source_diff import wraps_original
from .interop import tensor
from .recorder import _ACTIVE_COUNT
from .values import TracedArray, TracedTensor, active_recorder, find_recorder, make_traced, plain

_TENSOR_NEW = vars(torch._C.TensorBase)["__new__"]
_TENSOR_TYPE = vars(torch._C.TensorBase)["type"]
TYPED_NAMES = (
    "FloatTensor",
    "DoubleTensor",
    "HalfTensor",
    "BFloat16Tensor",
    "ByteTensor",
    "CharTensor",
    "ShortTensor",
    "IntTensor",
    "LongTensor",
    "BoolTensor",
)


def _traced_copy(data: Any, dtype: torch.dtype) -> torch.Tensor | None:
    """A recorded copy of traced array data (or a list holding it) in ``dtype``, else None."""
    if type(data) is TracedArray and active_recorder(data) is not None:
        return tensor(data, dtype=dtype)
    if type(data) in (list, tuple) and find_recorder(data) is not None:
        return tensor(data, dtype=dtype)
    return None


def _traced_alias(construct: Callable[..., torch.Tensor], data: Any) -> torch.Tensor | None:
    """torch's alias of a traced tensor (or its refusal of another dtype), still traced."""
    if type(data) is not TracedTensor or active_recorder(data) is None:
        return None
    with torch._C.DisableTorchFunctionSubclass():
        result = construct(plain(data))
    return make_traced(data._pp.rec, result, data._pp.node)


def legacy_tensor_new(cls: type, *args: Any, **kwargs: Any) -> torch.Tensor:
    """``torch.Tensor(data)``: a float32 (default dtype) copy of traced arrays, kept traced;
    subclasses, sizes and plain data are torch's own constructor."""
    if cls is torch.Tensor and len(args) == 1 and not kwargs and _ACTIVE_COUNT[0]:
        data = args[0]
        copied = _traced_copy(data, torch.get_default_dtype())
        if copied is not None:
            return copied
        aliased = _traced_alias(lambda t: _TENSOR_NEW(cls, t), data)
        if aliased is not None:
            return aliased
    return _TENSOR_NEW(cls, *args, **kwargs)


_VARIABLE_NEW = vars(torch._C._LegacyVariableBase)["__new__"]


def legacy_variable_new(cls: type, *args: Any, **kwargs: Any) -> torch.Tensor:
    """``torch.autograd.Variable(tensor, ...)``: torch detaches in C (no hook); a traced
    tensor's result is the same values, so it stays that tensor's node."""
    if args and type(args[0]) is TracedTensor and _ACTIVE_COUNT[0]:
        data = args[0]
        if active_recorder(data) is not None:
            with torch._C.DisableTorchFunctionSubclass():
                result = _VARIABLE_NEW(cls, plain(data), *args[1:], **kwargs)
            return make_traced(data._pp.rec, result, data._pp.node)
    return _VARIABLE_NEW(cls, *args, **kwargs)


class TypedConstructor:
    """Stands for ``torch.<dtype>Tensor`` in a session (see the module docstring)."""

    def __init__(self, original: Any) -> None:
        self.original = original

    def __call__(self, *args: Any, **kwargs: Any) -> torch.Tensor:
        if len(args) == 1 and not kwargs and _ACTIVE_COUNT[0]:
            copied = _traced_copy(args[0], self.original.dtype)
            if copied is not None:
                return copied
            aliased = _traced_alias(self.original, args[0])
            if aliased is not None:
                return aliased
        return self.original(*args, **kwargs)

    def __instancecheck__(self, obj: Any) -> bool:
        return isinstance(obj, self.original)

    def __subclasscheck__(self, cls: Any) -> bool:
        return issubclass(cls, self.original)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.original, name)

    def __eq__(self, other: Any) -> bool:
        return other is self or other is self.original

    def __hash__(self) -> int:
        return hash(self.original)

    def __repr__(self) -> str:
        return repr(self.original)

    def __reduce__(self) -> str:
        return f"{self.original.__name__}"  # pickled by name: torch.<dtype>Tensor


def tensor_type(self: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
    """``Tensor.type``, taking a typed stand-in for the type it stands for."""
    if args and type(args[0]) is TypedConstructor:
        args = (args[0].original, *args[1:])
    if type(kwargs.get("dtype")) is TypedConstructor:
        kwargs["dtype"] = kwargs["dtype"].original
    return _TENSOR_TYPE(self, *args, **kwargs)


# installed, they wear the faces of the originals (same __doc__, __name__, signature...)
legacy_tensor_new = wraps_original(_TENSOR_NEW)(legacy_tensor_new)
tensor_type = wraps_original(_TENSOR_TYPE)(tensor_type)
legacy_variable_new = wraps_original(_VARIABLE_NEW)(legacy_variable_new)


def legacy_tensor_patch_infos(aliases: Any = None) -> list[PatchInfo]:
    """The constructor stand-ins as PatchInfo objects (family ``interop``); with ``aliases``
    also where user code from-imported a typed constructor (``from torch import
    FloatTensor``)."""
    points: list[tuple[Any, str, Any]] = [
        (torch.Tensor, "__new__", staticmethod(legacy_tensor_new)),
        (torch.Tensor, "type", tensor_type),
        (torch.autograd.Variable, "__new__", staticmethod(legacy_variable_new)),
    ]
    typed = {id(getattr(torch, n)): getattr(torch, n) for n in TYPED_NAMES if hasattr(torch, n)}
    stand_ins = {key: TypedConstructor(original) for key, original in typed.items()}
    points += [(torch, o.__name__, stand_ins[key]) for key, o in typed.items()]
    if aliases is not None:
        points += [(m, name, stand_ins[id(o)]) for m, name, o in aliases(typed)]
    return [
        PatchInfo(
            replacement,
            owner,
            attribute,
            family=PatchFamily.INTEROP,
            description="keeps traced data traced through torch's legacy constructors",
            count_calls=False,
        )
        for owner, attribute, replacement in points
    ]
