"""The contract every shipped replacement set shares (OpenCV's, SciPy's): declared cases,
refusals that name the argument, and the FunctionPatch list built from the declarations.

A :class:`Registry` holds one library's :class:`Support` declarations; the decorator
:meth:`Registry.replaces` records each replacement with what it supports, and the same
declarations feed ``all()``/``patch()``, the command line, the generated docs and the tests.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import UnsupportedCaseError
from ..patching import FunctionPatch

DEFAULT_LEVEL = "reference"  # the library's own arithmetic, exact or within the declared bound


@dataclass(frozen=True)
class Support:
    """What one replacement supports, argument by argument (values as the library names them)."""

    function: str
    replacement: Callable[..., Any]
    arguments: tuple[tuple[str, tuple[str, ...]], ...]
    dtypes: tuple[str, ...]
    channels: tuple[int, ...]
    accuracy: str
    family: str
    notes: str = ""
    uint8_units: int = 0  # largest difference from the library promised for uint8 results
    float_atol: float = 1e-6  # absolute slack for float results (beside ``rtol``)
    uint16_units: int | None = None  # other integer results; None: as uint8_units
    library: str = "cv2"  # the dotted prefix of the replaced callable
    rtol: float = 1e-5  # relative slack for float results
    magnitude_rtol: float = 0.0  # float slack as a fraction of the data's magnitude

    @property
    def atol(self) -> float:
        """One absolute tolerance for ``FunctionPatch(atol=...)``: the integer units when a
        difference is declared, else the float slack (exact integer results stay exact)."""
        units = max(self.uint8_units, self.uint16_units or 0)
        return float(units) if units else self.float_atol

    def tolerance(self, dtype: Any) -> tuple[float, float]:
        """Declared (rtol, atol) for a result of ``dtype``, as ``np.isclose`` reads them:
        uint8 within ``uint8_units``, other integers within ``uint16_units``, float results
        within ``rtol`` relative plus ``float_atol``."""
        kind = np.dtype(dtype)
        if kind == np.uint8 or kind == np.bool_:
            return 0.0, float(self.uint8_units)
        if kind.kind in "iu":
            units = self.uint8_units if self.uint16_units is None else self.uint16_units
            return 0.0, float(units)
        return self.rtol, self.float_atol

    @property
    def target(self) -> str:
        """Dotted name of the replaced function (``cv2.resize``, ``scipy.ndimage.zoom``)."""
        return f"{self.library}.{self.function}"

    def cases(self) -> str:
        """One line of supported cases, e.g. ``code: COLOR_BGR2RGB, ...; image dtypes: uint8``."""
        parts = [f"{arg}: {', '.join(values)}" for arg, values in self.arguments]
        if self.channels:
            parts.append(f"image dtypes: {', '.join(self.dtypes)}")
            parts.append(f"channels: {', '.join(map(str, self.channels))}")
        else:
            parts.append(f"dtypes: {', '.join(self.dtypes)}")
        return "; ".join(parts)


def resolve_target(library: str, function: str) -> tuple[Any, str]:
    """``(owner, attribute)`` of ``library.function``: ``("cv2", "dnn.blobFromImage")`` is
    ``(cv2.dnn, "blobFromImage")``, ``("scipy", "spatial.transform.Rotation.apply")`` is
    ``(Rotation, "apply")``; subpackages are imported as needed."""
    *path, name = function.split(".")
    owner: Any = importlib.import_module(library)
    for index, part in enumerate(path):
        try:
            owner = getattr(owner, part)
        except AttributeError:  # a subpackage not imported yet (scipy.ndimage)
            owner = importlib.import_module(".".join([library, *path[: index + 1]]))
    return owner, name


class Registry:
    """The replacements of one library: declarations, opt-in levels, the patch list."""

    def __init__(self, library: str, set_name: str) -> None:
        self.library = library  # "cv2", "scipy": the prefix of every target
        self.set_name = set_name  # "opencv", "scipy": the module under patchport.patches
        self.entries: dict[str, Support] = {}
        # level -> function -> the replacement used at that level instead of entries'
        self.levels: dict[str, dict[str, Support]] = {}
        self.families: tuple[str, ...] = ()  # docs order; unknown families last

    def replaces(
        self,
        function: str,
        *,
        family: str,
        dtypes: Sequence[str],
        accuracy: str,
        channels: Sequence[int] = (),
        arguments: dict[str, Sequence[str]] | None = None,
        notes: str = "",
        uint8_units: int = 0,
        float_atol: float = 1e-6,
        uint16_units: int | None = None,
        rtol: float = 1e-5,
        level: str | None = None,
        magnitude_rtol: float = 0.0,
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register the decorated function as the traceable replacement of
        ``<library>.<function>`` (at an opt-in accuracy ``level`` when given)."""

        def register(replacement: Callable[..., Any]) -> Callable[..., Any]:
            table = self.entries if level is None else self.levels.setdefault(level, {})
            table[function] = Support(
                function,
                replacement,
                tuple((k, tuple(v)) for k, v in (arguments or {}).items()),
                tuple(dtypes),
                tuple(channels),
                accuracy,
                family,
                notes,
                uint8_units,
                float_atol,
                uint16_units,
                self.library,
                rtol,
                magnitude_rtol,
            )
            return replacement

        return register

    def refuse(
        self, function: str, argument: str, got: Any, supported: str
    ) -> UnsupportedCaseError:
        """The error for an unsupported argument value (to raise)."""
        return UnsupportedCaseError(
            f"{self.library}.{function} (patchport replacement): argument {argument}={got} is "
            f"not supported; supported: {supported}. Change the call or trace this step "
            f"another way."
        )

    def supported(self) -> list[Support]:
        """Every declaration: by family (in ``families`` order), then as declared."""
        order = list(self.entries)
        rank = {family: index for index, family in enumerate(self.families)}
        return sorted(
            self.entries.values(),
            key=lambda s: (rank.get(s.family, len(rank)), order.index(s.function)),
        )

    def spec(self, function: str, level: str, caller: str) -> Support:
        """The Support of ``function`` at ``level`` (the reference one where the level has none)."""
        if level != DEFAULT_LEVEL and level not in self.levels:
            raise UnsupportedCaseError(
                f"patchport.patches.{self.set_name}.{caller}(level={level!r}): unknown accuracy "
                f"level; available: {', '.join([DEFAULT_LEVEL, *self.levels])}."
            )
        return self.levels.get(level, {}).get(function, self.entries[function])

    def patch(
        self, function: str, verify: bool | None = None, level: str = DEFAULT_LEVEL
    ) -> FunctionPatch:
        """The FunctionPatch of one replaced function, with its declared accuracy."""
        if function not in self.entries:
            raise UnsupportedCaseError(
                f"patchport.patches.{self.set_name}.patch({function!r}): no replacement for "
                f"{self.library}.{function}; available: {', '.join(self.entries)}."
            )
        spec = self.spec(function, level, "patch")
        owner, name = resolve_target(self.library, function)
        return FunctionPatch(
            owner,
            name,
            spec.replacement,
            verify=verify,
            rtol=spec.rtol,
            atol=spec.atol,
            magnitude_rtol=spec.magnitude_rtol,
        )

    def all(
        self, verify: bool | None = None, exclude: Iterable[str] = (), level: str = DEFAULT_LEVEL
    ) -> list[FunctionPatch]:
        """Every replacement as a FunctionPatch list; ``exclude`` names functions to leave out."""
        skipped = set(exclude)
        unknown = skipped - set(self.entries)
        if unknown:
            raise UnsupportedCaseError(
                f"patchport.patches.{self.set_name}.all(exclude=...): no replacement named "
                f"{', '.join(sorted(unknown))}; available: {', '.join(self.entries)}."
            )
        if self.entries:
            self.spec(next(iter(self.entries)), level, "all")  # an unknown level fails first
        return [
            self.patch(s.function, verify, level)
            for s in self.supported()
            if s.function not in skipped
        ]


def support_table(specs: list[Support], channels: bool = False) -> list[str]:
    """The markdown table of a replacement set's docs page (one row per function) and
    its notes: what ``patchport patches <set>-docs`` writes for every set."""
    head = ["function", "family", "supported cases", "dtypes"]
    head += ["channels", "accuracy"] if channels else ["accuracy"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for spec in specs:
        cases = "; ".join(f"`{arg}`: {', '.join(values)}" for arg, values in spec.arguments)
        cells = [f"`{spec.target}`", spec.family, markdown_cell(cases) or "all"]
        cells.append(", ".join(spec.dtypes))
        if channels:
            cells.append(", ".join(str(c) for c in spec.channels))
        cells.append(markdown_cell(spec.accuracy))
        lines.append("| " + " | ".join(cells) + " |")
    notes = [spec for spec in specs if spec.notes]
    if notes:
        lines += ["", "## Notes", ""]
        lines += [f"- `{spec.target}`: {spec.notes}" for spec in notes]
    return lines


def markdown_cell(text: str) -> str:
    """Text safe inside a markdown table cell."""
    return text.replace("|", "\\|")
