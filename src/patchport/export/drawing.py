"""The pipeline picture: node boxes with backend and ports, data-flow and feedback edges.

Placement comes from a Sugiyama layered layout (``fast-sugiyama``) run on the forward
graph (pipeline inputs -> nodes -> pipeline outputs), read left to right; long edges
follow the layout's dummy vertices so they pass between boxes. Feedback edges are not
part of the layering: they run back along their own lane under the boxes, dashed and in
another colour. One scene is built and written as SVG (text) or PNG (Pillow).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from .bundle_view import BundleView, EdgeView, NodeView, PortView

FONT_SIZE = 13
TITLE_SIZE = 14
_PAD = 10
_HEADER = 26
_ROW = 19
_COLUMN_GAP = 110
_ROW_GAP = 36
_LANE = 24
_MARGIN = 24
_TOP = 72

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
_FEEDBACK_DASH = (7, 5)


class DrawingUnavailable(ImportError):
    """The picture needs the ``draw`` extra (fast-sugiyama, Pillow)."""


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
    width: float
    height: float
    title: str
    boxes: list[Box] = field(default_factory=list)
    labels: list[Label] = field(default_factory=list)
    dots: list[Dot] = field(default_factory=list)
    curves: list[Curve] = field(default_factory=list)


# --- text measurement ----------------------------------------------------------------------

_FONTS: dict[tuple[int, bool], Any] = {}


def _font(size: int, bold: bool = False) -> Any:
    """A TrueType font (DejaVu Sans when installed, Pillow's bundled font otherwise)."""
    key = (size, bold)
    if key not in _FONTS:
        from PIL import ImageFont

        names = ("DejaVuSans-Bold.ttf",) if bold else ("DejaVuSans.ttf",)
        font = None
        for name in names:
            try:
                font = ImageFont.truetype(name, size)
                break
            except OSError:
                continue
        _FONTS[key] = font or ImageFont.load_default(size=size)
    return _FONTS[key]


def _text_width(text: str, size: int = FONT_SIZE, bold: bool = False) -> float:
    try:
        return float(_font(size, bold).getlength(text))
    except ImportError:  # SVG without Pillow: an average glyph width is close enough
        return len(text) * size * 0.62


# --- layout --------------------------------------------------------------------------------


def _port_text(port: PortView) -> str:
    text = f"{port.name}  {port.describe()}"
    kind = port.semantics.get("kind")
    return f"{text}  ({kind})" if kind else text


def _terminal_text(port: PortView | None, key: str) -> str:
    return _port_text(port) if port is not None else key


@dataclass
class _Placed:
    ident: str
    w: float
    h: float
    x: float = 0.0
    y: float = 0.0
    column: tuple[float, float] = (0.0, 0.0)  # left and right edge of the box's column
    ports: dict[str, tuple[float, float]] = field(default_factory=dict)  # key -> anchor


def _node_size(node: NodeView) -> tuple[float, float]:
    title = _text_width(node.name, TITLE_SIZE, True) + _text_width(node.backend, 11, True) + 40
    rows = [_text_width(_port_text(p)) + 2 * _PAD + 8 for p in node.inputs + node.outputs]
    width = max([title, 150.0, *rows])
    height = _HEADER + _ROW * max(1, len(node.inputs) + len(node.outputs)) + 8
    return width, height


def _sugiyama(edges: list[tuple[str, str]]) -> tuple[dict[Any, tuple[float, float]], list]:
    """Positions (dummy vertices included) and the layout's edge chains, per component."""
    try:
        from fast_sugiyama import from_edges
    except ImportError as exc:
        raise DrawingUnavailable(
            'the pipeline picture needs fast-sugiyama and Pillow: pip install "patchport[draw]"'
        ) from exc
    layouts = from_edges(
        edges,
        vertex_spacing=1,
        dummy_vertices=True,
        crossing_minimization="median",
    ).dot_layout(spacing=1)
    positions: dict[Any, tuple[float, float]] = {}
    chains: list = []
    for placed, _, _, chain in layouts:
        positions.update(dict(placed))
        chains.extend(chain or [])
    return positions, chains


def _routes(chains: list, real: set[str]) -> dict[tuple[str, str], list[Any]]:
    """Each real edge's path through dummy vertices: (u, v) -> [dummy, dummy, ...]."""
    following: dict[Any, list[Any]] = {}
    for s, t in chains:
        following.setdefault(s, []).append(t)
    routes: dict[tuple[str, str], list[Any]] = {}
    for s, targets in following.items():
        if s not in real:
            continue
        for t in targets:
            via = []
            while t not in real and following.get(t):
                via.append(t)
                t = following[t][0]
            routes[(s, t)] = via
    return routes


def layout_scene(view: BundleView) -> Scene:
    """Place boxes, ports, terminals and edges of ``view``'s pipeline."""
    placed: dict[str, _Placed] = {}
    for node in view.nodes.values():
        w, h = _node_size(node)
        placed[f"node:{node.name}"] = _Placed(f"node:{node.name}", w, h)
    for kind, keys in (("in", view.inputs), ("out", view.outputs)):
        for key in keys:
            text = _terminal_text(view.port(key, kind), key)
            ident = f"{kind}:{key}"
            placed[ident] = _Placed(ident, _text_width(text) + 2 * _PAD + 10, _ROW + 12)

    graph_edges: list[tuple[str, str]] = []
    for edge in view.edges:
        if edge.feedback:
            continue
        pair = (f"node:{edge.source.split('/', 1)[0]}", f"node:{edge.target.split('/', 1)[0]}")
        if pair[0] != pair[1] and pair not in graph_edges:
            graph_edges.append(pair)
    for key in view.inputs:
        graph_edges.append((f"in:{key}", f"node:{key.split('/', 1)[0]}"))
    for key in view.outputs:
        graph_edges.append((f"node:{key.split('/', 1)[0]}", f"out:{key}"))
    graph_edges = [(s, t) for s, t in graph_edges if s in placed and t in placed]

    positions, chains = _sugiyama(graph_edges) if graph_edges else ({}, [])
    lone = [ident for ident in placed if ident not in positions]
    top = max((y for _, y in positions.values()), default=0.0)
    right = max((x for x, _ in positions.values()), default=-1.0)
    for index, ident in enumerate(lone):  # nodes with no edge at all: one more row
        positions[ident] = (right + 1 + index, top)

    # layers run top-down in the layout; the picture reads left to right
    column = {v: int(round(top - y)) for v, (_, y) in positions.items()}
    columns = max(column.values(), default=0) + 1
    widths = [0.0] * columns
    for ident, box in placed.items():
        widths[column[ident]] = max(widths[column[ident]], box.w)
    for v in positions:
        if v not in placed:
            widths[column[v]] = max(widths[column[v]], 20.0)
    feedback = [e for e in view.edges if e.feedback]
    margin = _MARGIN + (50 if feedback else 0)  # room for loops into the first column
    left = [margin + sum(widths[:c]) + c * _COLUMN_GAP for c in range(columns)]
    pitch = max((b.h for b in placed.values()), default=40.0) + _ROW_GAP
    ys = [x for x, _ in positions.values()]
    low = min(ys, default=0.0)

    shift = 0.0  # set below, once the boxes are placed, so the top row sits at _TOP

    def centre(v: Any) -> tuple[float, float]:
        c = column[v]
        return left[c] + widths[c] / 2, _TOP + (positions[v][0] - low) * pitch + shift

    for ident, box in placed.items():
        cx, cy = centre(ident)
        box.x, box.y = cx - box.w / 2, cy - box.h / 2
        box.column = (left[column[ident]], left[column[ident]] + widths[column[ident]])
        if ident.startswith("in:"):
            box.x = left[column[ident]] + widths[column[ident]] - box.w  # hug the first node
        elif ident.startswith("out:"):
            box.x = left[column[ident]]

    shift = _TOP - min((b.y for b in placed.values()), default=_TOP)
    for box in placed.values():
        box.y += shift
    bottom = max((b.y + b.h for b in placed.values()), default=_TOP)
    width = margin + sum(widths) + (columns - 1) * _COLUMN_GAP + margin + 40
    height = bottom + _MARGIN + (len(feedback) * _LANE + 24 if feedback else 0)
    scene = Scene(width, height, view.name)
    _draw_boxes(scene, view, placed)
    routes = _routes(chains, set(placed))
    waypoint = {v: centre(v) for v in positions if v not in placed}

    def anchor(key: str, side: str) -> tuple[float, float] | None:
        node = placed.get(f"node:{key.split('/', 1)[0]}")
        return node.ports.get(f"{side}:{key}") if node else None

    for edge in view.edges:
        start, end = anchor(edge.source, "out"), anchor(edge.target, "in")
        if start is None or end is None:
            continue
        if edge.feedback:
            continue
        pair = (f"node:{edge.source.split('/', 1)[0]}", f"node:{edge.target.split('/', 1)[0]}")
        via = [waypoint[v] for v in routes.get(pair, []) if v in waypoint]
        scene.curves.append(
            _flow_curve(start, via, end, COLOURS["data"], "data-flow", edge.source, edge.target)
        )
    for key in view.inputs:
        box, end = placed.get(f"in:{key}"), anchor(key, "in")
        if box and end:
            start = (box.x + box.w, box.y + box.h / 2)
            scene.curves.append(_flow_curve(start, [], end, COLOURS["terminal"], "input", key, key))
    for key in view.outputs:
        box, start = placed.get(f"out:{key}"), anchor(key, "out")
        if box and start:
            end = (box.x, box.y + box.h / 2)
            scene.curves.append(
                _flow_curve(start, [], end, COLOURS["terminal"], "output", key, key)
            )

    def span(edge: EdgeView) -> float:
        ends = anchor(edge.source, "out"), anchor(edge.target, "in")
        return abs(ends[0][0] - ends[1][0]) if None not in ends else 0.0

    for lane, edge in enumerate(sorted(feedback, key=span)):  # wider loops on outer lanes
        start, end = anchor(edge.source, "out"), anchor(edge.target, "in")
        if start is None or end is None:
            continue
        source = placed[f"node:{edge.source.split('/', 1)[0]}"]
        target = placed[f"node:{edge.target.split('/', 1)[0]}"]
        step = 5 * (lane % 6)  # side by side in the gap beside the column, clear of boxes
        out_x, in_x = source.column[1] + 14 + step, target.column[0] - 14 - step
        y = bottom + 30 + lane * _LANE
        scene.curves.append(_feedback_curve(start, end, out_x, in_x, y, edge))
    return scene


def _draw_boxes(scene: Scene, view: BundleView, placed: dict[str, _Placed]) -> None:
    for node in view.nodes.values():
        box = placed[f"node:{node.name}"]
        ident = f"node-{node.name}"
        fill = COLOURS.get(node.backend, COLOURS["other"])
        scene.boxes.append(
            Box(box.x, box.y, box.w, box.h, COLOURS["node_fill"], COLOURS["border"], "node", ident)
        )
        scene.boxes.append(Box(box.x, box.y, box.w, _HEADER, fill, None, "header", ident))
        scene.labels.append(
            Label(
                box.x + _PAD,
                box.y + _HEADER / 2,
                node.name,
                COLOURS["text"],
                TITLE_SIZE,
                True,
                role="node-title",
                ident=node.name,
            )
        )
        scene.labels.append(
            Label(
                box.x + box.w - _PAD,
                box.y + _HEADER / 2,
                node.backend,
                COLOURS["muted"],
                11,
                True,
                "end",
                role="backend",
                ident=node.name,
            )
        )
        y = box.y + _HEADER + 4 + _ROW / 2
        for port in node.inputs:
            box.ports[f"in:{port.key}"] = (box.x, y)
            scene.dots.append(Dot(box.x, y, COLOURS["data"], f"in:{port.key}"))
            scene.labels.append(
                Label(
                    box.x + _PAD, y, _port_text(port), COLOURS["text"], role="port", ident=port.key
                )
            )
            y += _ROW
        for port in node.outputs:
            box.ports[f"out:{port.key}"] = (box.x + box.w, y)
            scene.dots.append(Dot(box.x + box.w, y, COLOURS["data"], f"out:{port.key}"))
            scene.labels.append(
                Label(
                    box.x + box.w - _PAD,
                    y,
                    _port_text(port),
                    COLOURS["text"],
                    anchor="end",
                    role="port",
                    ident=port.key,
                )
            )
            y += _ROW
    for ident, box in placed.items():
        if ident.startswith("node:"):
            continue
        kind, key = ident.split(":", 1)
        role = "pipeline-input" if kind == "in" else "pipeline-output"
        scene.boxes.append(
            Box(
                box.x,
                box.y,
                box.w,
                box.h,
                COLOURS["terminal_fill"],
                COLOURS["terminal"],
                role,
                key,
                radius=box.h / 2,
            )
        )
        text = _terminal_text(view.port(key, kind), key)
        scene.labels.append(
            Label(
                box.x + box.w / 2,
                box.y + box.h / 2,
                text,
                COLOURS["text"],
                anchor="middle",
                role=role,
                ident=key,
            )
        )


def _flow_curve(
    start: tuple[float, float],
    via: list[tuple[float, float]],
    end: tuple[float, float],
    colour: str,
    kind: str,
    source: str,
    target: str,
) -> Curve:
    """Horizontal-tangent cubic segments from ``start`` through ``via`` to ``end``."""
    points = [start, *via, end]
    segments: list[tuple[Any, ...]] = []
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        bend = max(30.0, abs(x1 - x0) / 2)
        segments.append(("C", (x0 + bend, y0), (x1 - bend, y1), (x1, y1)))
    return Curve(start, segments, colour, kind, source, target)


def _feedback_curve(
    start: tuple[float, float],
    end: tuple[float, float],
    out_x: float,
    in_x: float,
    lane_y: float,
    edge: EdgeView,
) -> Curve:
    """Out of the source port, down to a lane under the boxes, back, up into the target."""
    source, target = edge.source, edge.target
    segments: list[tuple[Any, ...]] = [
        ("L", (out_x, start[1])),
        ("L", (out_x, lane_y)),
        ("L", (in_x, lane_y)),
        ("L", (in_x, end[1])),
        ("L", end),
    ]
    label = f"feedback {source} \u2192 {target}"
    return Curve(
        start,
        segments,
        COLOURS["feedback"],
        "feedback",
        source,
        target,
        dashed=True,
        label=label,
        label_at=((out_x + in_x) / 2, lane_y - 8),
    )


# --- writers -------------------------------------------------------------------------------

_FAMILY = "DejaVu Sans, Verdana, Arial, sans-serif"


def render_svg(scene: Scene) -> str:
    """The scene as a standalone SVG document."""
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{scene.width:.0f}" '
        f'height="{scene.height:.0f}" viewBox="0 0 {scene.width:.0f} {scene.height:.0f}" '
        f'font-family="{_FAMILY}">',
        f"<title>{escape(scene.title)}</title>",
        "<defs>",
    ]
    for name in ("data", "feedback", "terminal"):
        out.append(
            f'<marker id="arrow-{name}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
            f'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
            f'fill="{COLOURS[name]}"/></marker>'
        )
    out.append("</defs>")
    out.append('<rect width="100%" height="100%" fill="#ffffff"/>')
    out.extend(_svg_header(scene))
    for box in scene.boxes:
        stroke = f' stroke="{box.stroke}" stroke-width="1.5"' if box.stroke else ""
        out.append(
            f'<rect class={quoteattr(box.role)} data-id={quoteattr(box.ident)} x="{box.x:.1f}" '
            f'y="{box.y:.1f}" width="{box.w:.1f}" height="{box.h:.1f}" rx="{box.radius:.1f}" '
            f'fill="{box.fill}"{stroke}/>'
        )
    for curve in scene.curves:
        d = [f"M{curve.start[0]:.1f},{curve.start[1]:.1f}"]
        for seg in curve.segments:
            coords = " ".join(f"{x:.1f},{y:.1f}" for x, y in seg[1:])
            d.append(f"{seg[0]}{coords}")
        marker = {"feedback": "feedback", "data-flow": "data"}.get(curve.kind, "terminal")
        dash = ' stroke-dasharray="{} {}"'.format(*_FEEDBACK_DASH) if curve.dashed else ""
        out.append(
            f'<path class="edge {curve.kind}" data-source={quoteattr(curve.source)} '
            f'data-target={quoteattr(curve.target)} d="{" ".join(d)}" fill="none" '
            f'stroke="{curve.colour}" stroke-width="1.8"{dash} marker-end="url(#arrow-{marker})"/>'
        )
        if curve.label and curve.label_at:
            out.append(
                _svg_text(
                    Label(
                        *curve.label_at,
                        curve.label,
                        curve.colour,
                        11,
                        anchor="middle",
                        role="edge-label",
                    )
                )
            )
    for dot in scene.dots:
        out.append(
            f'<circle class="port-dot" data-port={quoteattr(dot.ident)} cx="{dot.x:.1f}" '
            f'cy="{dot.y:.1f}" r="3.5" fill="{dot.colour}"/>'
        )
    out.extend(_svg_text(label) for label in scene.labels)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _legend(scene: Scene) -> list[tuple[str, str, bool]]:
    kinds = {c.kind for c in scene.curves}
    items = [("data flow", COLOURS["data"], False)] if "data-flow" in kinds else []
    if "feedback" in kinds:
        items.append(("feedback (next step)", COLOURS["feedback"], True))
    if kinds & {"input", "output"}:
        items.append(("pipeline input / output", COLOURS["terminal"], False))
    return items


def _svg_header(scene: Scene) -> list[str]:
    out = [_svg_text(Label(_MARGIN, 22, scene.title, COLOURS["text"], 16, True, role="title"))]
    x = _MARGIN
    for text, colour, dashed in _legend(scene):
        dash = ' stroke-dasharray="{} {}"'.format(*_FEEDBACK_DASH) if dashed else ""
        out.append(
            f'<line class="legend" x1="{x}" y1="42" x2="{x + 28}" y2="42" stroke="{colour}" '
            f'stroke-width="2"{dash}/>'
        )
        out.append(_svg_text(Label(x + 34, 42, text, COLOURS["muted"], 11, role="legend")))
        x += 34 + _text_width(text, 11) + 24
    return out


def _svg_text(label: Label) -> str:
    weight = ' font-weight="bold"' if label.bold else ""
    if label.role == "edge-label":  # a white halo keeps it readable over lines
        weight += ' stroke="#ffffff" stroke-width="4" paint-order="stroke"'
    ident = f" data-id={quoteattr(label.ident)}" if label.ident else ""
    return (
        f'<text class={quoteattr(label.role)}{ident} x="{label.x:.1f}" y="{label.y:.1f}" '
        f'font-size="{label.size}"{weight} fill="{label.colour}" text-anchor="{label.anchor}" '
        f'dominant-baseline="central">{escape(label.text)}</text>'
    )


def render_png(scene: Scene, scale: float = 1.5) -> Any:
    """The scene as a Pillow image (``scale`` pixels per SVG unit)."""
    try:
        from PIL import Image, ImageDraw
    except ImportError as exc:
        raise DrawingUnavailable(
            'a PNG picture needs Pillow: pip install "patchport[draw]"'
        ) from exc
    image = Image.new("RGB", (int(scene.width * scale) + 1, int(scene.height * scale) + 1), "white")
    draw = ImageDraw.Draw(image)

    def s(point: tuple[float, float]) -> tuple[float, float]:
        return point[0] * scale, point[1] * scale

    def text(label: Label, halo: bool = False) -> None:
        font = _font(max(6, int(round(label.size * scale))), label.bold)
        anchor = {"start": "lm", "middle": "mm", "end": "rm"}[label.anchor]
        draw.text(
            s((label.x, label.y)),
            label.text,
            fill=label.colour,
            font=font,
            anchor=anchor,
            stroke_width=int(2 * scale) if halo else 0,
            stroke_fill="white",
        )

    text(Label(_MARGIN, 22, scene.title, COLOURS["text"], 16, True))
    x = _MARGIN
    for caption, colour, dashed in _legend(scene):
        _line(draw, [s((x, 42)), s((x + 28, 42))], colour, 2 * scale, dashed, scale)
        text(Label(x + 34, 42, caption, COLOURS["muted"], 11))
        x += 34 + _text_width(caption, 11) + 24
    for box in scene.boxes:
        corners = [*s((box.x, box.y)), *s((box.x + box.w, box.y + box.h))]
        draw.rounded_rectangle(
            corners,
            radius=box.radius * scale,
            fill=box.fill,
            outline=box.stroke,
            width=max(1, int(1.5 * scale)) if box.stroke else 0,
        )
    for curve in scene.curves:
        points = [s(p) for p in curve.points()]
        _line(draw, points, curve.colour, 1.8 * scale, curve.dashed, scale)
        _arrow_head(draw, points, curve.colour, scale)
        if curve.label and curve.label_at:
            text(Label(*curve.label_at, curve.label, curve.colour, 11, anchor="middle"), True)
    for dot in scene.dots:
        cx, cy = s((dot.x, dot.y))
        r = 3.5 * scale
        draw.ellipse([cx - r, cy - r, cx + r, cy + r], fill=dot.colour)
    for label in scene.labels:
        text(label)
    return image


def _line(draw: Any, points: list, colour: str, width: float, dashed: bool, scale: float) -> None:
    w = max(1, int(round(width)))
    if not dashed:
        draw.line(points, fill=colour, width=w, joint="curve")
        return
    on, off = (_FEEDBACK_DASH[0] * scale, _FEEDBACK_DASH[1] * scale)
    drawing, left = True, on
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        length = ((x1 - x0) ** 2 + (y1 - y0) ** 2) ** 0.5
        done = 0.0
        while done < length:
            step = min(left, length - done)
            if drawing:
                a, b = done / length, (done + step) / length
                draw.line(
                    [
                        (x0 + (x1 - x0) * a, y0 + (y1 - y0) * a),
                        (x0 + (x1 - x0) * b, y0 + (y1 - y0) * b),
                    ],
                    fill=colour,
                    width=w,
                )
            done += step
            left -= step
            if left <= 1e-9:
                drawing = not drawing
                left = on if drawing else off


def _arrow_head(draw: Any, points: list, colour: str, scale: float) -> None:
    (x0, y0), (x1, y1) = points[-2], points[-1]
    length = max(((x1 - x0) ** 2 + (y1 - y0) ** 2) ** 0.5, 1e-9)
    ux, uy = (x1 - x0) / length, (y1 - y0) / length
    size = 8 * scale
    base = (x1 - ux * size, y1 - uy * size)
    draw.polygon(
        [
            (x1, y1),
            (base[0] - uy * size / 2, base[1] + ux * size / 2),
            (base[0] + uy * size / 2, base[1] - ux * size / 2),
        ],
        fill=colour,
    )


def draw_bundle(view: BundleView, path: str | Path) -> Path:
    """Write the picture of ``view`` to ``path``: SVG for ``.svg``, PNG otherwise."""
    path = Path(path)
    scene = layout_scene(view)
    if path.suffix.lower() == ".svg":
        path.write_text(render_svg(scene), encoding="utf-8")
    else:
        render_png(scene).save(path, format="PNG")
    return path
