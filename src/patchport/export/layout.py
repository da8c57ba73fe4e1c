"""Where everything in the pipeline picture goes.

Placement comes from a Sugiyama layered layout (``fast-sugiyama``) run on the forward
graph (pipeline inputs -> nodes -> pipeline outputs), read left to right; long edges
follow the layout's dummy vertices so they pass between boxes. Feedback edges are not
part of the layering: they run back along their own lane under the boxes, dashed and in
another colour.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..bundle.bundle_view import BundleView, EdgeView, NodeView, PortView
from ..errors import DrawingUnavailable
from .scene import COLOURS, MARGIN, TITLE_SIZE, Box, Curve, Dot, Label, Scene, text_width

_PAD = 10
_HEADER = 26
_ROW = 19
_COLUMN_GAP = 110
_ROW_GAP = 36
_LANE = 24
_TOP = 72


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
    title = text_width(node.name, TITLE_SIZE, True) + text_width(node.backend, 11, True) + 40
    rows = [text_width(_port_text(p)) + 2 * _PAD + 8 for p in node.inputs + node.outputs]
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
    # Vertices go in as small ints numbered in first-seen order: fast-sugiyama collects
    # vertices in a set, and a set of strings iterates in a per-process (hash-seeded)
    # order, which would lay the same pipeline out differently on every run.
    vertices = list(dict.fromkeys(v for edge in edges for v in edge))
    number = {v: i for i, v in enumerate(vertices)}
    layouts = from_edges(
        [(number[s], number[t]) for s, t in edges],
        vertex_spacing=1,
        dummy_vertices=True,
        crossing_minimization="median",
    ).dot_layout(spacing=1)

    def name(i: int) -> Any:
        return vertices[i] if i < len(vertices) else ("dummy", i)

    positions: dict[Any, tuple[float, float]] = {}
    chains: list = []
    for placed, _, _, chain in layouts:
        positions.update({name(i): xy for i, xy in placed})
        chains.extend((name(s), name(t)) for s, t in chain or [])
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
            placed[ident] = _Placed(ident, text_width(text) + 2 * _PAD + 10, _ROW + 12)

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
    margin = MARGIN + (50 if feedback else 0)  # room for loops into the first column
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
    height = bottom + MARGIN + (len(feedback) * _LANE + 24 if feedback else 0)
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
