"""The installed wrapper of a FunctionPatch: original for ordinary data, replacement for
traced data, and the seed's rules for replacements enforced on every traced call.

The ordinary path is the hot path: with no node being traced it is one list lookup and
the original call; while a node is traced it scans the arguments (tuples, lists, dicts)
for traced values of an active recorder.
"""

from __future__ import annotations

import inspect
import math
import threading
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import torch

from .._stack import user_stacklevel
from ..errors import PatchMismatchError, PatchMismatchWarning, PatchRuleError
from ..patching import FunctionPatch, PatchInfo, active_patch_of
from ..patching.source_diff import wraps_original
from ..tracing.fresh import untraced_as_plain
from ..tracing.location import _is_library, user_location
from ..tracing.recorder import _ACTIVE_COUNT
from ..tracing.values import active_recorder, find_recorder
from ..tracing.values import plain as plain_view
from .inplace import (
    inplace_refusal,
    may_receive,
    note_positions,
    split_inplace_dst,
    write_inplace,
)
from .verify import check_results, data_magnitude, plain_copy, same_bytes

_MAX_DEPTH = 4
# exact types that can never be or hold traced data: the common ordinary arguments
_PLAIN_TYPES = frozenset(
    {np.ndarray, torch.Tensor, int, float, bool, str, bytes, type(None), complex}
)
_running = threading.local()  # FunctionPatches whose replacement runs on this thread


def _required(signature: inspect.Signature | None, name: str) -> bool:
    """Whether ``signature`` has a parameter ``name`` without a default."""
    parameter = None if signature is None else signature.parameters.get(name)
    return parameter is not None and parameter.default is inspect.Parameter.empty


def iter_values(obj: Any, depth: int = 0) -> Iterator[Any]:
    """Leaves of nested tuples, lists and dicts (bounded depth), in order."""
    if isinstance(obj, (tuple, list)) and depth < _MAX_DEPTH:
        for item in obj:
            yield from iter_values(item, depth + 1)
    elif isinstance(obj, dict) and depth < _MAX_DEPTH:
        for item in obj.values():
            yield from iter_values(item, depth + 1)
    else:
        yield obj


class PatchedCall:
    """Shared state of one FunctionPatch in a session: what to call and how to check it."""

    def __init__(
        self,
        declaration: FunctionPatch,
        original: Callable[..., Any],
        verify: bool | None,
        on_nodes: Callable[[PatchInfo, list[Any]], None] | None = None,
        on_check: Callable[[str, float], None] | None = None,
    ) -> None:
        self.declaration = declaration
        self.original = original
        # None: check and warn beyond the declared accuracy; True: raise; False: no check
        self.verify = declaration.verify if declaration.verify is not None else verify
        self.on_nodes = on_nodes
        self.on_check = on_check
        try:
            self._signature: inspect.Signature | None = inspect.signature(declaration.replacement)
        except (TypeError, ValueError):
            self._signature = None
        # the names messages use, worked out once (the declaration is frozen)
        self._target_name = declaration.target_name
        self._replacement_name = getattr(declaration.replacement, "__name__", "replacement")
        # buffers are optional; a required dst (cv2.getAffineTransform(src, dst)) is an input
        # a required dst is an input (cv2.getAffineTransform(src, dst)) unless the
        # replacement declares it an output buffer (cv2.normalize(src, dst, ...))
        outputs = getattr(declaration.replacement, "__pp_buffers__", ())
        self._buffers = tuple(
            n for n in ("dst", "out") if n in outputs or not _required(self._signature, n)
        )
        note_positions(self._signature, ("dst", "out"))

    def make_dispatcher(self) -> Callable[..., Any]:
        """A new wrapper function for one installation point (module attribute or alias)."""
        original = self.original
        active = _ACTIVE_COUNT
        call = self

        def dispatcher(*args: Any, **kwargs: Any) -> Any:
            if not active[0]:
                return original(*args, **kwargs)
            for value in args:
                if type(value) not in _PLAIN_TYPES:
                    break
            else:
                for value in kwargs.values():
                    if type(value) not in _PLAIN_TYPES:
                        break
                else:  # only plain arrays, tensors and scalars: nothing can be traced
                    return original(*args, **kwargs)
            recorder = find_recorder(args, kwargs)
            if recorder is None:
                return original(*args, **kwargs)
            # the PatchInfo that installed this dispatcher marked it with itself
            return call.call_replacement(active_patch_of(dispatcher), recorder, args, kwargs)

        dispatcher.__pp_source__ = self.declaration.replacement  # type: ignore[attr-defined]
        return wraps_original(original)(dispatcher)  # invisible to plain code

    # -- the traced path ---------------------------------------------------------------
    def call_replacement(self, info: PatchInfo, recorder: Any, args: tuple, kwargs: dict) -> Any:
        """Run the replacement on traced data and enforce the rules around it.

        Installed with ``count_calls=False``, the dispatcher counts here, on its
        PatchInfo, only the calls that reach the replacement.
        """
        name, replacement_name = self._target_name, self._replacement_name
        running: set[int] = _running.__dict__.setdefault("ids", set())
        if id(self.declaration) in running:
            raise PatchRuleError(
                f"{replacement_name} (the replacement of {name}) calls {name} with traced data: "
                f"a replacement must not call the function it replaces (it would recurse). "
                f"Write the computation with torch/NumPy operations instead."
            )
        given = args, kwargs
        inplace_target = None
        if "dst" in self._buffers:
            args, kwargs, inplace_target = split_inplace_dst(self._signature, args, kwargs)
        args, kwargs = untraced_as_plain(args), untraced_as_plain(kwargs)  # np.ones kernels
        self._refuse_buffers(args, kwargs)
        inputs = [v for v in iter_values((args, kwargs)) if active_recorder(v) is not None]
        before = [plain_copy(v) for v in inputs]
        last_before = recorder.last_node()
        running.add(id(self.declaration))
        try:
            result = self.declaration.replacement(*args, **kwargs)
        except Exception as exc:  # the user's own error: kept as is, with where it came from
            if not isinstance(exc, PatchRuleError) and hasattr(exc, "add_note"):
                exc.add_note(
                    f"patchport: raised in {replacement_name}, the replacement of {name}, "
                    f"called on traced data at {user_location()}; fix the replacement (or "
                    f"remove its FunctionPatch to keep the original, untraced)."
                )
            raise
        finally:
            running.discard(id(self.declaration))
        info.calls += 1
        self._refuse_mutation(inputs, before)
        self._refuse_aliasing(inputs, result)
        if self.on_nodes is not None:
            self.on_nodes(info, _appended_after(recorder.graph, last_before))
        if self.verify is not False:
            self._check_against_original(*given, inputs, before, result)
        if inplace_target is not None:  # cv2.subtract(img, mean, img): img is written
            refusal = inplace_refusal(inplace_target, result, name)
            if refusal is not None:
                raise PatchRuleError(refusal)
            return write_inplace(recorder, inplace_target, result)
        return result

    def _check_against_original(
        self, args: tuple, kwargs: dict, inputs: list[Any], before: list[Any], result: Any
    ) -> None:
        """Run the original on the same concrete values; warn (raise with verify=True)
        where the replacement differs beyond its declared accuracy."""
        name, replacement_name = self._target_name, self._replacement_name
        plain_args, plain_kwargs = _replace_traced((args, kwargs), inputs, before)
        try:
            expected = self.original(*plain_args, **plain_kwargs)
        except Exception as exc:  # the replacement accepted what the original refuses
            largest, problem = (
                math.inf,
                (
                    f"{name} itself raised {type(exc).__name__}: {exc} on these values, so "
                    f"{replacement_name} could not be checked against it"
                ),
            )
        else:
            declaration = self.declaration
            magnitude_rtol = declaration.magnitude_rtol
            largest, problem = check_results(
                name,
                replacement_name,
                expected,
                result,
                declaration.rtol,
                declaration.atol,
                magnitude_rtol,
                data_magnitude(plain_args, plain_kwargs) if magnitude_rtol else 0.0,
            )
        if self.on_check is not None:
            self.on_check(name, largest)
        if problem is None:
            return
        if self.verify:
            raise PatchMismatchError(problem)
        warnings.warn(
            f"traced call at {user_location(2)}: {problem} The export follows the replacement; "
            f"fix it, declare its accuracy with FunctionPatch(..., atol=...), or pass "
            f"verify=False to stop checking.",
            PatchMismatchWarning,
            stacklevel=user_stacklevel(_is_library),
        )

    def _refuse_buffers(self, args: tuple, kwargs: dict) -> None:
        names = self._buffers
        buffers = {k: v for k, v in kwargs.items() if k in names and v is not None}
        signature = self._signature
        if (
            not buffers
            and signature is not None
            and any(may_receive(signature, name, args, kwargs) for name in names)
        ):
            try:
                bound = self._signature.bind(*args, **kwargs).arguments
            except TypeError:
                bound = {}
            buffers = {k: v for k, v in bound.items() if k in names and v is not None}
        if buffers:
            key = next(iter(buffers))
            raise PatchRuleError(
                f"{self.declaration.target_name} was called with traced data and a {key}= "
                f"buffer: patched calls cannot write into destination buffers. Use the return "
                f"value instead (drop {key}=)."
            )

    def _refuse_mutation(self, inputs: list[Any], before: list[Any]) -> None:
        for position, (value, snapshot) in enumerate(zip(inputs, before)):
            if not _same_data(plain_view(value), snapshot):  # no copy needed to compare
                raise PatchRuleError(
                    f"{self.declaration.replacement.__name__} (the replacement of "
                    f"{self.declaration.target_name}) modified traced input #{position} in place; "
                    f"replacements must be pure. Compute a new array and return it."
                )

    def _refuse_aliasing(self, inputs: list[Any], result: Any) -> None:
        for output in iter_values(result):
            for value in inputs:
                if _shares_memory(output, value):
                    raise PatchRuleError(
                        f"{self.declaration.replacement.__name__} (the replacement of "
                        f"{self.declaration.target_name}) returns its input or a view of it; "
                        f"input/output aliasing is unsupported. Return a copy (e.g. .clone())."
                    )


def _appended_after(graph: Any, last: Any) -> list[Any]:
    """The nodes appended to ``graph`` after ``last`` (None: all of them), walked from
    ``last`` rather than listing the whole graph on every replacement call."""
    node = next(iter(graph.nodes), None) if last is None else last.next
    appended = []
    while node is not None and node.op != "root":
        appended.append(node)
        node = node.next
    return appended


def _same_data(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray):
        if same_bytes(a, b):  # untouched: the common case, one memory comparison
            return True
        return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    if isinstance(a, torch.Tensor):
        return a.shape == b.shape and bool(torch.equal(a, b) or torch.allclose(a, b, 0, 0, True))
    return True


def _shares_memory(a: Any, b: Any) -> bool:
    if a is b:
        return True
    arrays = []
    for value in (a, b):
        if isinstance(value, np.ndarray):
            arrays.append(np.ndarray.view(value, np.ndarray))
        elif isinstance(value, torch.Tensor) and value.device.type == "cpu":
            with torch._C.DisableTorchFunctionSubclass():
                plain = value.detach().as_subclass(torch.Tensor)
                if plain.numel() == 0:
                    return False
                try:
                    arrays.append(plain.numpy())
                except (TypeError, RuntimeError):  # dtypes NumPy lacks (bfloat16, ...)
                    return _same_storage(a, b)
        else:
            return False
    return bool(np.shares_memory(arrays[0], arrays[1]))


def _same_storage(a: Any, b: Any) -> bool:
    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
        return False
    with torch._C.DisableTorchFunctionSubclass():
        return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def _replace_traced(structure: Any, inputs: list[Any], plain: list[Any]) -> Any:
    """Rebuild ``structure`` with each traced input replaced by its plain copy, and each
    stand-in object (its class defines ``__pp_plain__(self)``) by the plain object it
    stands in for, so the original runs on what it would see without patchport."""
    lookup = {id(v): p for v, p in zip(inputs, plain)}

    def rebuild(obj: Any, depth: int = 0) -> Any:
        if id(obj) in lookup:  # a traced 0-d array is a NumPy scalar in plain code
            value = lookup[id(obj)]
            return value[()] if isinstance(value, np.ndarray) and value.ndim == 0 else value
        if isinstance(obj, (tuple, list)) and depth < _MAX_DEPTH:
            return type(obj)(rebuild(item, depth + 1) for item in obj)
        if isinstance(obj, dict) and depth < _MAX_DEPTH:
            return {k: rebuild(v, depth + 1) for k, v in obj.items()}
        twin = getattr(type(obj), "__pp_plain__", None)
        if twin is not None:  # a stand-in object (traced PIL image): its plain library twin
            return twin(obj)
        return obj

    return rebuild(structure)
