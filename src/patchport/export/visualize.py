"""The picture compile_graph(visualize=True) writes beside the bundle.

It is drawn from the pipeline description (the content of the YAML, so it shows what a
user of the bundle gets) by :mod:`patchport.export.drawing`; when the ``draw`` extra is
missing the picture is skipped with a warning rather than failing the export.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from ..bundle.bundle_view import view_from_spec


def draw_pipeline(spec: dict[str, Any], order: list[str], path: Path, *more: Path) -> Path | None:
    """Write the picture of ``spec``'s pipeline to ``path`` and each of ``more`` (PNG, or
    SVG by suffix).

    ``order`` (compile_graph's run order) is not needed: the view orders the nodes by the
    same rule from the same edges. Returns None, with a ``RuntimeWarning``, when
    fast-sugiyama or Pillow is not installed.
    """
    from ..errors import DrawingUnavailable
    from .drawing import draw_bundle

    try:
        return draw_bundle(view_from_spec(spec, path.with_suffix(".yaml")), path, *more)
    except DrawingUnavailable as exc:
        warnings.warn(f"visualize=True: {exc}; no picture written.", RuntimeWarning, stacklevel=3)
        return None
