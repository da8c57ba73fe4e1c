"""The pipeline picture's layout for a dozen nodes with feedback loops."""

import itertools

from patchport.export.bundle_view import load_view
from patchport.export.drawing import layout_scene, render_png, render_svg

from .bundle_fixtures import dozen_node_description


def test_dozen_nodes_laid_out_without_overlap_and_feedback_below(tmp_path):
    view = load_view(dozen_node_description(tmp_path / "dozen.yaml"))
    assert len(view.nodes) == 12 and len([e for e in view.edges if e.feedback]) == 4
    scene = layout_scene(view)
    boxes = [b for b in scene.boxes if b.role in ("node", "pipeline-input", "pipeline-output")]
    assert len(boxes) == 12 + 5 + 2
    for a, b in itertools.combinations(boxes, 2):
        apart = a.x + a.w <= b.x or b.x + b.w <= a.x or a.y + a.h <= b.y or b.y + b.h <= a.y
        assert apart, f"{a.ident} overlaps {b.ident}"
    node = {b.ident: b for b in boxes if b.role == "node"}
    # data flows left to right: every forward edge ends in a column right of its start
    for edge in view.edges:
        source, target = edge.source.split("/")[0], edge.target.split("/")[0]
        if not edge.feedback:
            assert node[f"node-{source}"].x < node[f"node-{target}"].x
    feedback = [c for c in scene.curves if c.kind == "feedback"]
    assert len(feedback) == 4 and all(c.dashed for c in feedback)
    bottom = max(b.y + b.h for b in boxes)
    lanes = [max(y for _, y in c.points()) for c in feedback]
    assert all(y > bottom for y in lanes)  # loops run back under the boxes, not through them
    assert len(set(lanes)) == 4  # one lane each
    inputs = [b for b in boxes if b.role == "pipeline-input"]
    outputs = [b for b in boxes if b.role == "pipeline-output"]
    assert max(b.x for b in inputs) < min(b.x for b in outputs)
    svg = render_svg(scene)
    assert svg.count('class="edge feedback"') == 4 and svg.count('class="node"') == 12
    image = render_png(scene, scale=1.0)
    assert image.size == (int(scene.width) + 1, int(scene.height) + 1)
    assert 1000 < image.size[0] < 6000
