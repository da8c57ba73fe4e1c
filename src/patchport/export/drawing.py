"""The pipeline picture written as SVG (text) or PNG (Pillow), from one laid-out scene.

Every node is a box with its backend and ports; data-flow edges join ports, feedback
edges are dashed in another colour on their own lanes, pipeline inputs and outputs are
terminals at the edges (see :mod:`patchport.export.layout`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from ..bundle.bundle_view import BundleView
from ..errors import DrawingUnavailable
from .layout import layout_scene
from .scene import COLOURS, FEEDBACK_DASH, MARGIN, Label, Scene, font, legend, text_width

__all__ = ["DrawingUnavailable", "draw_bundle", "layout_scene", "render_png", "render_svg"]

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
        dash = ' stroke-dasharray="{} {}"'.format(*FEEDBACK_DASH) if curve.dashed else ""
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


def _svg_header(scene: Scene) -> list[str]:
    out = [_svg_text(Label(MARGIN, 22, scene.title, COLOURS["text"], 16, True, role="title"))]
    x = MARGIN
    for text, colour, dashed in legend(scene):
        dash = ' stroke-dasharray="{} {}"'.format(*FEEDBACK_DASH) if dashed else ""
        out.append(
            f'<line class="legend" x1="{x}" y1="42" x2="{x + 28}" y2="42" stroke="{colour}" '
            f'stroke-width="2"{dash}/>'
        )
        out.append(_svg_text(Label(x + 34, 42, text, COLOURS["muted"], 11, role="legend")))
        x += 34 + text_width(text, 11) + 24
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
        font_ = font(max(6, int(round(label.size * scale))), label.bold)
        anchor = {"start": "lm", "middle": "mm", "end": "rm"}[label.anchor]
        draw.text(
            s((label.x, label.y)),
            label.text,
            fill=label.colour,
            font=font_,
            anchor=anchor,
            stroke_width=int(2 * scale) if halo else 0,
            stroke_fill="white",
        )

    text(Label(MARGIN, 22, scene.title, COLOURS["text"], 16, True))
    x = MARGIN
    for caption, colour, dashed in legend(scene):
        _line(draw, [s((x, 42)), s((x + 28, 42))], colour, 2 * scale, dashed, scale)
        text(Label(x + 34, 42, caption, COLOURS["muted"], 11))
        x += 34 + text_width(caption, 11) + 24
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
    on, off = (FEEDBACK_DASH[0] * scale, FEEDBACK_DASH[1] * scale)
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


def draw_bundle(view: BundleView, path: str | Path, *more: str | Path) -> Path:
    """Write the picture of ``view`` to ``path`` (and to each of ``more``, laid out once):
    SVG for ``.svg``, PNG otherwise. Returns ``path``."""
    scene = layout_scene(view)
    for target in (Path(path), *map(Path, more)):
        if target.suffix.lower() == ".svg":
            target.write_text(render_svg(scene), encoding="utf-8")
        else:
            render_png(scene).save(target, format="PNG")
    return Path(path)
