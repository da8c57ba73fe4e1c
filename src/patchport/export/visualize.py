"""The picture compile_graph(visualize=True) writes beside the bundle.

It is drawn from the written YAML (so it shows what a user of the bundle gets) by
:mod:`patchport.export.drawing`; when the ``draw`` extra is missing the picture is
skipped with a warning rather than failing the export.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from .bundle_view import load_view


def draw_pipeline(yaml_path: Path, path: Path) -> Path | None:
    """Write the pipeline picture of the bundle at ``yaml_path`` to ``path`` (PNG or SVG).

    Returns None, with a ``RuntimeWarning``, when fast-sugiyama or Pillow is not installed.
    """
    from .drawing import DrawingUnavailable, draw_bundle

    try:
        return draw_bundle(load_view(yaml_path), path)
    except DrawingUnavailable as exc:
        warnings.warn(f"visualize=True: {exc}; no picture written.", RuntimeWarning, stacklevel=3)
        return None
