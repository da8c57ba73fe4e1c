"""FunctionPatch: the user's declaration "call this traceable replacement instead of that
library function whenever traced data is passed to it".

The declaration is a frozen dataclass so it can be shared and compared; validation
happens before a session changes anything, with errors that name the culprit.
"""

from __future__ import annotations

import numbers
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..errors import PatchDefinitionError, PatchTargetError
from .patch_info import describe_owner

_IMMUTABLE_TYPE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE: setattr on the class raises


@dataclass(frozen=True)
class FunctionPatch:
    """Route calls of ``module.function_name`` that carry traced data to ``replacement``.

    ``module`` may also be a class whose objects come from a native factory: a
    replacement of ``cv2.CLAHE.apply`` receives the object as its first argument.

    ``rtol``/``atol`` declare the replacement's accuracy against the original. Each traced
    call is also run through the original on the same concrete values; beyond that
    accuracy a :class:`~patchport.PatchMismatchWarning` names the call site
    (``verify=True`` raises :class:`~patchport.PatchMismatchError`, ``verify=False`` skips
    the check; ``None`` follows the session's ``verify``). ``magnitude_rtol`` widens the
    absolute slack of float results by that fraction of the data's magnitude (the larger of
    the first array argument's and the result's largest value): a filter's float sums that
    cancel near zero carry the rounding of the values they summed, not of the result.
    """

    module: types.ModuleType
    function_name: str
    replacement: Callable[..., Any]
    verify: bool | None = None
    rtol: float = 1e-5
    atol: float = 1e-6
    magnitude_rtol: float = 0.0

    def __post_init__(self) -> None:
        check_tolerances(self)  # a wrong kind fails here, where it was written

    @property
    def target_name(self) -> str:
        """Dotted name of the patched function, e.g. ``cv2.cvtColor``."""
        if isinstance(self.module, type):
            return f"{describe_owner(self.module)}.{self.function_name}"
        return f"{getattr(self.module, '__name__', self.module)!s}.{self.function_name}"

    def validate(self) -> None:
        """Raise a TypeError/ValueError naming what is wrong with this declaration."""
        if not isinstance(self.module, (types.ModuleType, type)):
            raise PatchDefinitionError(
                f"FunctionPatch(module=...) for {self.function_name!r}: expected a module such as "
                f"cv2 or numpy (or a class such as cv2.CLAHE), got {type(self.module).__name__}. "
                f"Pass the module object."
            )
        if isinstance(self.module, type) and self.module.__flags__ & _IMMUTABLE_TYPE:
            raise PatchDefinitionError(
                f"FunctionPatch: {self.target_name} cannot be patched: "
                f"{describe_owner(self.module)} is an immutable type (its methods cannot be "
                f"replaced). Patch the function that produces or consumes it instead."
            )
        if not isinstance(self.function_name, str) or not self.function_name:
            raise PatchTargetError(
                f"FunctionPatch(function_name=...) on {self.module.__name__}: expected a non-empty "
                f"attribute name, got {self.function_name!r}."
            )
        if not hasattr(self.module, self.function_name):
            raise PatchTargetError(
                f"FunctionPatch: {self.target_name} does not exist; check the spelling and the "
                f"installed version of {self.module.__name__}."
            )
        if not callable(getattr(self.module, self.function_name)):
            raise PatchDefinitionError(
                f"FunctionPatch: {self.target_name} is not callable; only functions can be patched."
            )
        if not callable(self.replacement):
            raise PatchDefinitionError(
                f"FunctionPatch(replacement=...) for {self.target_name}: expected a function, got "
                f"{type(self.replacement).__name__}."
            )
        check_tolerances(self)
        if not (self.rtol >= 0 and self.atol >= 0 and self.magnitude_rtol >= 0):
            raise PatchDefinitionError(
                f"FunctionPatch for {self.target_name}: rtol, atol and magnitude_rtol must be "
                f">= 0, got rtol={self.rtol}, atol={self.atol}, "
                f"magnitude_rtol={self.magnitude_rtol}."
            )


def check_tolerances(declaration: FunctionPatch) -> None:
    """Refuse a tolerance that is not a real number, naming it (before any comparison)."""
    for name in ("rtol", "atol", "magnitude_rtol"):
        value = getattr(declaration, name, 0.0)
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise PatchDefinitionError(
                f"FunctionPatch({name}=...) for {declaration.target_name}: expected a number "
                f"such as 1e-5, got {type(value).__name__} {value!r}."
            )


def validate_function_patches(patching: Iterable[Any]) -> list[FunctionPatch]:
    """Check every declaration and refuse duplicates; return them as a list."""
    declared = list(patching)
    seen: dict[tuple[int, str], FunctionPatch] = {}
    for index, item in enumerate(declared):
        if not isinstance(item, FunctionPatch):
            raise PatchDefinitionError(
                f"start(patching=...): item {index} is a {type(item).__name__}, not a "
                f"FunctionPatch; write patchport.FunctionPatch(module, 'name', replacement)."
            )
        item.validate()
        key = (id(item.module), item.function_name)
        if key in seen:
            raise PatchTargetError(
                f"start(patching=...): {item.target_name} is patched twice (items "
                f"{declared.index(seen[key])} and {index}); keep one FunctionPatch per function."
            )
        seen[key] = item
    return declared
