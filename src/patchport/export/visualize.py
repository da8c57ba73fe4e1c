"""A PNG picture of the pipeline: nodes with their ports (shape, dtype) and the edges.

Drawn with OpenCV so no plotting library is needed; when OpenCV is missing the picture
is skipped with a warning rather than failing the export.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np

from .pipeline import merge_flows

_FONT_SCALE = 0.45
_LINE = 18
_BOX_WIDTH = 330
_GAP = 150


def _port_text(port: dict[str, Any]) -> str:
    return f"{port['name']}: {port['dtype']}{list(port['shape'])}"


def draw_pipeline(spec: dict[str, Any], order: list[str], path: Path) -> Path | None:
    """Write the picture of ``spec``'s pipeline to ``path``; None when OpenCV is missing."""
    try:
        import cv2
    except ImportError:
        warnings.warn(
            "visualize=True needs OpenCV (opencv-python-headless); no picture written.",
            RuntimeWarning,
            stacklevel=3,
        )
        return None
    models = spec["models"]
    heights = {n: _LINE * (3 + len(m["inputs"]) + len(m["outputs"])) for n, m in models.items()}
    width = 40 + len(order) * (_BOX_WIDTH + _GAP)
    height = 80 + max(heights.values(), default=60)
    image = np.full((height, width, 3), 255, dtype=np.uint8)
    anchors: dict[str, tuple[int, int]] = {}
    black, blue, gray = (0, 0, 0), (160, 60, 0), (90, 90, 90)
    for index, node in enumerate(order):
        model = models[node]
        x0, y0 = 20 + index * (_BOX_WIDTH + _GAP), 50
        x1, y1 = x0 + _BOX_WIDTH, y0 + heights[node]
        cv2.rectangle(image, (x0, y0), (x1, y1), black, 2)
        title = f"{node} [{model['parameters'].get('backend')}]"
        cv2.putText(
            image,
            title,
            (x0 + 8, y0 + _LINE),
            cv2.FONT_HERSHEY_SIMPLEX,
            _FONT_SCALE + 0.1,
            blue,
            1,
            cv2.LINE_AA,
        )
        y = y0 + 2 * _LINE
        rows = [("> " + _port_text(p), p, x0, gray) for p in model["inputs"]]
        rows += [(_port_text(p) + " >", p, x1, black) for p in model["outputs"]]
        for text, port, anchor_x, colour in rows:
            cv2.putText(
                image,
                text,
                (x0 + 8, y),
                cv2.FONT_HERSHEY_SIMPLEX,
                _FONT_SCALE,
                colour,
                1,
                cv2.LINE_AA,
            )
            anchors[f"{node}/{port['name']}"] = (anchor_x, y - 5)
            y += _LINE
    pipeline = spec["pipeline"]
    for source, targets in merge_flows(
        pipeline.get("data_flow"), pipeline.get("feedback_flow")
    ).items():
        start = anchors.get(source)
        for target in targets:
            end = anchors.get(target)
            if start and end:
                cv2.arrowedLine(image, start, end, blue, 2, cv2.LINE_AA, tipLength=0.03)
    cv2.putText(
        image,
        path.stem,
        (20, 30),
        cv2.FONT_HERSHEY_SIMPLEX,
        0.7,
        black,
        2,
        cv2.LINE_AA,
    )
    if not cv2.imwrite(str(path), image):
        raise OSError(f"could not write the pipeline picture to {path}")
    return path
