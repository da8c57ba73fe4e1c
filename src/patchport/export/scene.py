"""What the pipeline picture is made of: boxes, labels, port dots and curves on a canvas,
plus the font measurements that size them. Layout fills a :class:`Scene`; the writers in
:mod:`patchport.export.drawing` turn it into SVG or PNG.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import DrawingUnavailable as DrawingUnavailable  # its historical home

FONT_SIZE = 13
TITLE_SIZE = 14
MARGIN = 24
COLOURS = {
    "text": "#1b1b1b",
    "muted": "#666666",
    "border": "#3a3a3a",
    "data": "#1f4e9a",
    "feedback": "#d9480f",
    "terminal": "#6b6b6b",
    "terminal_fill": "#f1f3f5",
    "node_fill": "#ffffff",
    "onnx": "#d0e4ff",
    "pt2": "#d3f2d9",
    "jit": "#e8dcff",
    "other": "#e9ecef",
}
FEEDBACK_DASH = (7, 5)


# --- scene -------------------------------------------------------------------------------


@dataclass
class Box:
    """A rectangle in the scene; ``role`` is node, header, terminal or badge."""

    x: float
    y: float
    w: float
    h: float
    fill: str
    stroke: str | None
    role: str
    ident: str = ""
    radius: float = 4.0


@dataclass
class Label:
    """A line of text anchored at its start, middle or end."""

    x: float
    y: float  # baseline-centred: the text's vertical middle
    text: str
    colour: str
    size: int = FONT_SIZE
    bold: bool = False
    anchor: str = "start"  # start, middle, end
    role: str = "text"
    ident: str = ""


@dataclass
class Dot:
    """A port's anchor on a box edge."""

    x: float
    y: float
    colour: str
    ident: str


@dataclass
class Curve:
    """An edge: a start point then segments ``("L", p)`` or ``("C", c1, c2, p)``."""

    start: tuple[float, float]
    segments: list[tuple[Any, ...]]
    colour: str
    kind: str  # data-flow, feedback, input, output
    source: str
    target: str
    dashed: bool = False
    label: str = ""
    label_at: tuple[float, float] | None = None

    def points(self, steps: int = 16) -> list[tuple[float, float]]:
        """The curve as a polyline (Bezier segments sampled), for raster drawing."""
        out = [self.start]
        for seg in self.segments:
            if seg[0] == "L":
                out.append(seg[1])
                continue
            (x0, y0), (x1, y1), (x2, y2), (x3, y3) = out[-1], seg[1], seg[2], seg[3]
            for i in range(1, steps + 1):
                t = i / steps
                a, b, c, d = (1 - t) ** 3, 3 * (1 - t) ** 2 * t, 3 * (1 - t) * t**2, t**3
                out.append((a * x0 + b * x1 + c * x2 + d * x3, a * y0 + b * y1 + c * y2 + d * y3))
        return out


@dataclass
class Scene:
    """A canvas of ``width`` x ``height`` units (SVG user units; PNG scales them)."""

    width: float
    height: float
    title: str
    boxes: list[Box] = field(default_factory=list)
    labels: list[Label] = field(default_factory=list)
    dots: list[Dot] = field(default_factory=list)
    curves: list[Curve] = field(default_factory=list)


# --- text measurement ----------------------------------------------------------------------

_FONTS: dict[tuple[int, bool], Any] = {}


def font(size: int, bold: bool = False) -> Any:
    """A TrueType font (DejaVu Sans when installed, Pillow's bundled font otherwise)."""
    key = (size, bold)
    if key not in _FONTS:
        from PIL import ImageFont

        names = ("DejaVuSans-Bold.ttf",) if bold else ("DejaVuSans.ttf",)
        found = None
        for name in names:
            try:
                found = ImageFont.truetype(name, size)
                break
            except OSError:
                continue
        _FONTS[key] = found or ImageFont.load_default(size=size)
    return _FONTS[key]


def text_width(text: str, size: int = FONT_SIZE, bold: bool = False) -> float:
    """How wide ``text`` is drawn, in canvas units, so boxes fit their labels."""
    try:
        return float(font(size, bold).getlength(text))
    except ImportError:  # SVG without Pillow: an average glyph width is close enough
        return len(text) * size * 0.62


def legend(scene: Scene) -> list[tuple[str, str, bool]]:
    """(caption, colour, dashed) for each kind of edge the scene draws."""
    kinds = {c.kind for c in scene.curves}
    items = [("data flow", COLOURS["data"], False)] if "data-flow" in kinds else []
    if "feedback" in kinds:
        items.append(("feedback (next step)", COLOURS["feedback"], True))
    if kinds & {"input", "output"}:
        items.append(("pipeline input / output", COLOURS["terminal"], False))
    return items
