"""Ready-made, verified traceable replacements for the OpenCV calls robotics pipelines use.

``start(patching=patchport.patches.opencv.all())`` (or ``patching=["opencv"]``) routes
traced calls of these cv2 functions to torch implementations that reproduce OpenCV's
results; every other case is refused with a ValueError naming the argument.

``all(level="fast")`` (or ``patching=["opencv:fast"]``) opts into faster lowerings with a
declared accuracy (e.g. remap in float32 weights, within 1 on uint8); the largest
difference from OpenCV each traced call showed is in ``compile_graph(...).summary()``.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable

from ...patching import FunctionPatch
from . import (
    arithmetic,
    calibration,
    channels,
    color,
    convolution,
    dnn,
    elementwise,
    fast,  # noqa: F401 - registers the replacements of the opt-in "fast" level
    filters,
    geometry,
    histogram,
    morphology,
    polar,
    pyramids,
    transforms,
)
from ._base import LEVELS, REGISTRY, Support, UnsupportedCaseError, cv2

__all__ = [
    "LEVELS",
    "Support",
    "UnsupportedCaseError",
    "all",
    "patch",
    "render_markdown",
    "supported",
]

_MODULES = (
    color,
    geometry,
    transforms,
    calibration,
    filters,
    convolution,
    pyramids,
    morphology,
    arithmetic,
    elementwise,
    polar,
    channels,
    histogram,
    dnn,
)  # the families, in docs order
_FAMILIES = tuple(module.__name__.rsplit(".", 1)[-1] for module in _MODULES)
DEFAULT_LEVEL = "reference"  # OpenCV's own arithmetic: bit-exact or within 1 as declared


def supported() -> list[Support]:
    """What every replacement supports: by family (color, geometry, ...), then as declared."""
    order = list(REGISTRY)
    return sorted(
        REGISTRY.values(), key=lambda s: (_FAMILIES.index(s.family), order.index(s.function))
    )


def _spec(function: str, level: str, caller: str) -> Support:
    """The Support of ``function`` at ``level`` (the reference one where the level has none)."""
    if level != DEFAULT_LEVEL and level not in LEVELS:
        raise UnsupportedCaseError(
            f"patchport.patches.opencv.{caller}(level={level!r}): unknown accuracy level; "
            f"available: {', '.join([DEFAULT_LEVEL, *LEVELS])}."
        )
    return LEVELS.get(level, {}).get(function, REGISTRY[function])


def patch(function: str, verify: bool | None = None, level: str = DEFAULT_LEVEL) -> FunctionPatch:
    """The FunctionPatch of one replaced function, e.g. ``patch("resize")``; ``level="fast"``
    takes the faster replacement where that level has one (see :data:`LEVELS`)."""
    if function not in REGISTRY:
        raise UnsupportedCaseError(
            f"patchport.patches.opencv.patch({function!r}): no replacement for cv2.{function}; "
            f"available: {', '.join(REGISTRY)}."
        )
    spec = _spec(function, level, "patch")
    owner, _, name = function.rpartition(".")  # "CLAHE.apply": a method of cv2.CLAHE objects
    target = getattr(cv2, owner) if owner else cv2
    return FunctionPatch(target, name, spec.replacement, verify=verify, rtol=1e-5, atol=spec.atol)


def all(  # noqa: A001 - the name the issue asks for
    verify: bool | None = None, exclude: Iterable[str] = (), level: str = DEFAULT_LEVEL
) -> list[FunctionPatch]:
    """Every OpenCV replacement as a FunctionPatch list for ``start(patching=...)``;
    ``exclude`` names functions to leave out (e.g. to pass your own replacement);
    ``level="fast"`` opts into the faster replacements of :data:`LEVELS` (declared
    accuracy, checked against OpenCV on every traced call like the others)."""
    skipped = set(exclude)
    unknown = skipped - set(REGISTRY)
    if unknown:
        raise UnsupportedCaseError(
            f"patchport.patches.opencv.all(exclude=...): no replacement named "
            f"{', '.join(sorted(unknown))}; available: {', '.join(REGISTRY)}."
        )
    _spec(next(iter(REGISTRY)), level, "all")  # an unknown level fails before anything
    return [patch(s.function, verify, level) for s in supported() if s.function not in skipped]


_RELEASES = (
    "## OpenCV 4 and 5",
    "",
    "The replacements compute what the installed OpenCV computes; where releases differ,",
    "`patchport/patches/opencv/semantics.py` holds the difference (one table, read once",
    "from `cv2.__version__`). OpenCV 4.x and 5.0 round a fractional Scalar of `add`,",
    "`subtract` and `absdiff` on integer images first (`subtract(gray, 40.5)` is",
    "`gray - 40`); 5.1 computes in float32 and rounds the result half to even (41 -> 0,",
    "42 -> 2), and its `absdiff` saturates an all-integer Scalar to the image's range.",
    "uint8 `addWeighted` and `multiply` round exact ties by which of OpenCV's loops",
    "computes an element: 16-element SIMD steps with a scalar tail (4.14), 16 covering the",
    "row (5.0), 32 covering the row (5.1; measured on x86-64 with AVX2). OpenCV 4 rounds",
    "every `remap`, `warpAffine` and `warpPerspective` position to 1/32 pixel and samples",
    "through its weight table (reproduced bit for bit); 5.1 computes warp positions in",
    "double. uint8 INTER_CUBIC resizes blend rows in 11-bit integers in 4.x and in float32",
    "in 5.1. An exported model keeps the arithmetic of the OpenCV it was traced with.",
    "Under OpenCV 4, some `getGaussianKernel` kernels (a 9-tap one in the filter tests)",
    "are not yet reproduced.",
)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_markdown() -> str:
    """docs/opencv.md: the supported functions and cases, generated from the declarations."""
    lines = [
        "# OpenCV replacements",
        "",
        "<!-- generated by `patchport patches opencv-docs`; do not edit by hand -->",
        "",
        '`patchport.patches.opencv.all()` (or `start(patching=["opencv"])`) routes traced',
        "calls of these functions to torch implementations. Calls with ordinary arrays still",
        "reach OpenCV. Each replacement takes OpenCV's arguments (same order and keyword",
        "names) and refuses every case not listed with a `ValueError` naming the argument.",
        "`dst=` buffers are always refused. The recorded graph holds torch operations only, so",
        "it exports to ONNX, `.pt2` and TorchScript. Images, remap maps, inRange bounds, LUT",
        "tables and array operands may be traced; sizes, codes, kernels, thresholds, weights",
        "and border values are constants (one computed from traced data is frozen, and the",
        "session says so with a TraceLossWarning).",
        "",
        "Accuracy is checked against the installed cv2 by property tests in `tests/patches/`",
        '(run under OpenCV 5.1, 5.0 and 4.14): "exact" is bit-exact; "within 1" allows one',
        "unit on integer results, and says where and why;",
        "float32 results are within 1e-5 relative to the data's magnitude. The same promise",
        "is data: `opencv.REGISTRY[name].tolerance(dtype)` gives `(rtol, atol)` per result",
        "dtype, and `opencv.patch(name)` passes it to `FunctionPatch(rtol=..., atol=...)`.",
        "`opencv.all(verify=True)` also compares every traced call with OpenCV at trace time;",
        '`opencv.all(exclude=["cvtColor"])` leaves functions out for your own replacements.',
        "",
        "| function | family | supported cases | dtypes | channels | accuracy |",
        "|---|---|---|---|---|---|",
    ]
    for spec in supported():
        cases = "; ".join(f"`{arg}`: {', '.join(values)}" for arg, values in spec.arguments)
        lines.append(
            f"| `cv2.{spec.function}` | {spec.family} | {_cell(cases) or 'all'} | "
            f"{', '.join(spec.dtypes)} | {', '.join(builtins.map(str, spec.channels))} | "
            f"{_cell(spec.accuracy)} |"
        )
    notes = [spec for spec in supported() if spec.notes]
    if notes:
        lines += ["", "## Notes", ""]
        lines += [f"- `cv2.{spec.function}`: {spec.notes}" for spec in notes]
    lines += ["", *_RELEASES]
    return "\n".join(lines + _levels_section()) + "\n"


def _levels_section() -> list[str]:
    """The opt-in accuracy levels and what each replaces, for docs/opencv.md."""
    lines = [
        "",
        "## Opt-in accuracy levels",
        "",
        '`opencv.all(level="fast")` (or `start(patching=["opencv:fast"])`) trades OpenCV\'s',
        "exact arithmetic for lowerings ONNX Runtime runs in fewer passes, with the accuracy",
        "declared below; every other function keeps its replacement above. Each traced call",
        "is still compared with OpenCV, and `compile_graph(...).summary()` reports the largest",
        "difference measured (`patch cv2.remap: largest difference from cv2.remap 1 ...`).",
        "",
    ]
    for level, table in LEVELS.items():
        lines += [f"- `{level}`, `cv2.{name}`: {spec.accuracy}" for name, spec in table.items()]
    return lines
