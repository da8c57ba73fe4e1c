"""The pipeline picture's layout for a dozen nodes with feedback loops."""

import itertools
import os
import sys
from pathlib import Path

import yaml

from patchport.bundle.bundle_view import load_view
from patchport.export.drawing import layout_scene, render_png, render_svg

from .bundle_fixtures import dozen_node_description
from .script_runs import Script


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


def test_loop_into_a_node_fed_only_by_feedback_stays_on_the_canvas(tmp_path):
    spec = {
        "name": "recurrent",
        "models": {
            "cell": {
                "parameters": {"backend": "onnx", "model_path": "cell.onnx"},
                "inputs": [{"name": "state", "shape": ["batch", 16], "dtype": "float32"}],
                "outputs": [{"name": "next_state", "shape": ["batch", 16], "dtype": "float32"}],
            },
            "head": {
                "parameters": {"backend": "jit", "model_path": "head.pt"},
                "inputs": [{"name": "state", "shape": ["batch", 16], "dtype": "float32"}],
                "outputs": [{"name": "action", "shape": ["batch", 2], "dtype": "float32"}],
            },
        },
        "pipeline": {
            "data_flow": {"cell/next_state": ["head/state"]},
            "feedback_flow": {"cell/next_state": ["cell/state"]},
            "outputs": {"head": ["action"]},
        },
    }
    path = tmp_path / "recurrent.yaml"
    path.write_text(yaml.safe_dump(spec))
    view = load_view(path)
    assert view.port("cell/state").describe() == "float32[batch, 16]"
    assert view.port("cell/state").dynamic == (0,)
    scene = layout_scene(view)
    loop = next(c for c in scene.curves if c.kind == "feedback")
    assert min(x for x, _ in loop.points()) > 0
    assert max(x for x, _ in loop.points()) < scene.width
    assert max(y for _, y in loop.points()) < scene.height
    assert 'text-anchor="start" dominant-baseline="central">state  float32[batch, 16]' in (
        render_svg(scene)
    )


DRAW = (
    "import sys; from patchport.bundle.bundle_view import load_view; "
    "from patchport.export.drawing import layout_scene, render_svg; "
    "sys.stdout.write(render_svg(layout_scene(load_view(sys.argv[1]))))"
)
SRC = str(Path(__file__).resolve().parents[1] / "src")
DRAWINGS = [  # one process per hash seed, each on the same description written in its folder
    Script(
        f"drawing_seed_{seed}",
        lambda folder: [sys.executable, "-c", DRAW, dozen_node_description(folder / "dozen.yaml")],
        options={"env": {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": SRC}},
    )
    for seed in ("1", "2")
]
BACKGROUND = DRAWINGS  # started in the background: tests/script_runs.py


def test_same_pipeline_same_picture_whatever_the_hash_seed():
    first, second = (drawing.result() for drawing in DRAWINGS)
    assert first.folder != second.folder
    assert (first.folder / "dozen.yaml").read_text() == (second.folder / "dozen.yaml").read_text()
    pictures = [first.output(), second.output()]
    assert 'class="edge feedback"' in pictures[0]
    assert pictures[0] == pictures[1]


def test_compile_graph_writes_the_picture_as_png_and_svg(tmp_path):
    """visualize=True writes <name>.png and <name>.svg beside the YAML, as LEAPP does."""
    import xml.etree.ElementTree as ElementTree

    import torch

    import patchport
    from patchport import annotate

    with patchport.session("pictured", save_path=tmp_path):
        x = annotate.input_tensors("first", {"x": torch.ones(2)})
        y = x * 2.0
        annotate.output_tensors("first", {"y": y}, export_with="jit")
        z = annotate.input_tensors("second", {"y": y})
        annotate.output_tensors("second", {"z": z + 1.0}, export_with="jit")
    result = patchport.compile_graph(visualize=True)
    folder = tmp_path / "pictured"
    assert result.picture == folder / "pictured.png"
    assert (folder / "pictured.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = (folder / "pictured.svg").read_text(encoding="utf-8")
    assert ElementTree.fromstring(svg).tag.endswith("svg")
    assert svg.count('class="node"') == 2
