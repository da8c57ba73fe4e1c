"""`patchport bundle info|check|run|draw` on a real exported bundle, through the CLI."""

import json
import os
import re
import shutil
import subprocess
import sys
from xml.etree import ElementTree

import numpy as np
import pytest
from PIL import Image

from patchport.bundle import InferenceManager
from patchport.cli import main

from .bundle_fixtures import export_three_nodes, leapp_layout_with_feedback

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    """(plain YAML, LEAPP-layout YAML with feedback, compile log lines verbose, quiet)."""
    root = tmp_path_factory.mktemp("bundle")
    yaml_path, verbose_lines = export_three_nodes(root / "verbose", verbose=True)
    _, quiet_lines = export_three_nodes(root / "quiet")
    feedback = leapp_layout_with_feedback(yaml_path, root / "leapp")
    return yaml_path, feedback, verbose_lines, quiet_lines


def cli(*args, check=True):
    """Run the real `python -m patchport.cli` in a subprocess."""
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run(
        [sys.executable, "-m", "patchport.cli", "bundle", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
    )
    if check:
        assert done.returncode == 0, done.stderr
    return done


def test_info_lists_run_order_ports_edges_constants_system(bundle):
    out = cli("info", bundle[0]).stdout
    assert "run order: normalize -> policy -> clip" in out
    assert re.search(r"\n\[2\] policy  backend jit  (\./)?policy\.pt  sha256 \w{12}…\n", out)
    lines = out.splitlines()
    goal = next(line for line in lines if line.strip().startswith("in  goal"))
    assert "float32[2]" in goal and "<- pipeline input" in goal
    features = next(line for line in lines if line.strip().startswith("in  features"))
    assert "float32[3, 4]" in features and "<- normalize/features" in features
    assert "constants (2):" in out and "_const_0 float32[2, 4] 32 B" in out
    assert "  normalize/features -> policy/features" in out
    assert "feedback (0):" in out
    assert "pipeline outputs: policy/hidden, clip/safe_action" in out
    made = next(line for line in lines if line.startswith("made with: "))
    assert re.search(r"\btorch 2\.\d+", made) and "patchport" in made


def test_info_json_reads_leapp_layout_with_feedback_and_semantics(bundle, capsys):
    assert main(["bundle", "info", str(bundle[1]), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["run_order"] == ["normalize", "policy", "clip"]
    policy = info["nodes"][1]
    assert policy["backend"] == "jit" and policy["model_path"].endswith("policy.pt")
    assert len(policy["sha256"]) == 64
    assert policy["inputs"][1]["semantics"] == {"kind": "state"}
    assert info["feedback_flow"] == [{"source": "clip/safe_action", "target": "policy/goal"}]
    assert {"source": "policy/action", "target": "clip/action"} in info["data_flow"]
    torch_keys = [k for k in info["system_info"] if k.startswith("torch")]
    assert torch_keys and str(info["system_info"][torch_keys[0]]).startswith("2.")
    assert main(["bundle", "info", str(bundle[1])]) == 0
    assert "clip/safe_action -> policy/goal  (next step)" in capsys.readouterr().out


def test_check_passes_with_per_node_times(bundle):
    out = cli("check", bundle[0]).stdout
    for node in ("normalize", "policy", "clip"):
        row = next(line for line in out.splitlines() if line.strip().startswith(node))
        cells = row.split()
        assert cells[1:3] == ["jit", "ok"] and cells[-1] == "ok"
        assert all(float(ms) >= 0 for ms in cells[3:6])  # load, first run, warm run
    assert "pipeline: InferenceManager loaded" in out
    assert out.rstrip().endswith("the pipeline ran")


def test_check_fails_on_changed_and_missing_model(bundle, tmp_path, capsys):
    copy = tmp_path / "copy"
    shutil.copytree(bundle[0].parent, copy)
    yaml_path = copy / bundle[0].name
    with open(copy / "policy.pt", "ab") as handle:
        handle.write(b"\0")
    (copy / "clip.pt").unlink()
    assert main(["bundle", "check", str(yaml_path)]) == 1
    captured = capsys.readouterr()
    assert "policy               jit      MISMATCH" in captured.out
    assert "node 'policy': policy.pt does not match the sha256 recorded" in captured.err
    assert "node 'clip': model file" in captured.err and "is missing" in captured.err
    assert "pipeline: " in captured.err  # the InferenceManager refuses it too
    assert main(["bundle", "check", str(copy / "nope.yaml")]) == 2
    assert "no such bundle description" in capsys.readouterr().err


def test_run_from_npz_matches_inference_manager(bundle, tmp_path):
    manager = InferenceManager(bundle[0])
    rng = np.random.default_rng(3)
    inputs = {
        "normalize/raw": rng.standard_normal((3, 4)).astype(np.float32),
        "goal": rng.standard_normal(2).astype(np.float32),  # a bare port name is accepted
    }
    np.savez(tmp_path / "in.npz", **inputs)
    out = cli("run", bundle[0], "--inputs", tmp_path / "in.npz", "--out", tmp_path / "out.npz")
    assert "clip/safe_action: float32[2]" in out.stdout
    want = manager.run_policy(
        {"normalize/raw": inputs["normalize/raw"], "policy/goal": inputs["goal"]}
    )
    with np.load(tmp_path / "out.npz") as got:
        assert sorted(got.files) == sorted(want)
        for key, value in want.items():
            np.testing.assert_array_equal(got[key], np.asarray(value))


def test_run_mock_and_refusals(bundle, tmp_path, capsys):
    assert main(["bundle", "run", str(bundle[0]), "--mock"]) == 0
    assert "clip/safe_action: float32[2]" in capsys.readouterr().out
    np.savez(tmp_path / "short.npz", raw=np.zeros((3, 4), np.float32))
    assert main(["bundle", "run", str(bundle[0]), "--inputs", str(tmp_path / "short.npz")]) == 2
    err = capsys.readouterr().err
    assert "missing ['policy/goal']" in err and "'normalize/raw', 'policy/goal'" in err
    assert main(["bundle", "run", str(bundle[0])]) == 2
    assert "exactly one of --inputs FILE.npz or --mock" in capsys.readouterr().err


def test_draw_svg_and_png_of_a_feedback_pipeline(bundle, tmp_path, capsys):
    svg = tmp_path / "pipeline.svg"
    cli("draw", bundle[1], "-o", svg)
    text = svg.read_text()
    root = ElementTree.fromstring(text)  # well-formed XML
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    for node in ("normalize", "policy", "clip"):
        assert f'class="node" data-id="node-{node}"' in text
        assert f'class="node-title" data-id="{node}"' in text
    for port in ("normalize/raw", "normalize/features", "policy/goal", "clip/safe_action"):
        assert f'class="port" data-id="{port}"' in text
    assert text.count('class="backend"') == 3 and ">jit</text>" in text
    feedback = [line for line in text.splitlines() if 'class="edge feedback"' in line]
    assert len(feedback) == 1
    assert 'data-source="clip/safe_action" data-target="policy/goal"' in feedback[0]
    assert "stroke-dasharray" in feedback[0]
    flow = [line for line in text.splitlines() if 'class="edge data-flow"' in line]
    assert len(flow) == 2 and not any("stroke-dasharray" in line for line in flow)
    assert text.count('class="pipeline-input"') == 4  # two terminals, each box and label
    assert main(["bundle", "draw", str(bundle[1]), "-o", str(tmp_path / "p.png")]) == 0
    with Image.open(tmp_path / "p.png") as image:
        width, height = image.size
        colours = {c for _, c in image.convert("RGB").getcolors(1 << 20)}
    assert 600 < width < 4000 and 200 < height < 2000
    assert (217, 72, 15) in colours  # the feedback colour is drawn
    assert main(["bundle", "draw", str(bundle[1]), "-o", str(tmp_path / "p.jpg")]) == 2
    assert "write a .png or an .svg" in capsys.readouterr().err


def test_compile_graph_progress_lines_only_when_verbose(bundle):
    _, _, verbose_lines, quiet_lines = bundle
    assert quiet_lines == []
    exported = [line for line in verbose_lines if " exported in " in line]
    validated = [line for line in verbose_lines if " validated in " in line]
    assert [line.split()[2] for line in exported] == ["normalize", "policy", "clip"]
    assert exported[1].startswith("compile_graph: [2/3] policy [jit] exported in ")
    assert all(": ok on 2 sample(s), max |diff| 0" in line for line in validated)
    assert len(validated) == 3
    picture = bundle[0].with_suffix(".png")
    assert picture.is_file() and picture.stat().st_size > 5000


LEAPP_EXPORT = """
import sys, torch, leapp
from leapp import annotate
torch.manual_seed(0)
linear, hidden = torch.nn.Linear(4, 4), torch.zeros(1, 4)
leapp.start("leapp_pipe", save_path=sys.argv[1])
for _ in range(2):
    x = annotate.input_tensors("encoder", {"obs": torch.randn(1, 4)})
    feat = annotate.output_tensors("encoder", {"feat": torch.tanh(x * 2.0)}, export_with="jit")
    f = annotate.input_tensors("rnn", {"feat": feat})
    state = annotate.state_tensors("rnn", {"hidden": hidden})
    with torch.no_grad():
        hidden = annotate.update_state("rnn", {"hidden": torch.tanh(linear(f) + state)})
    annotate.output_tensors("rnn", {"action": hidden * 0.5}, export_with="jit")
leapp.stop()
leapp.compile_graph(visualize=False)
"""


def test_real_leapp_bundle_info_draw_and_per_node_check(tmp_path, capsys):
    subprocess.run(
        [sys.executable, "-c", LEAPP_EXPORT, str(tmp_path)],
        check=True,
        capture_output=True,
        cwd=tmp_path,
    )
    yaml_path = tmp_path / "leapp_pipe" / "leapp_pipe.yaml"
    assert main(["bundle", "info", str(yaml_path), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["run_order"] == ["encoder", "rnn"]
    assert [n["backend"] for n in info["nodes"]] == ["jit", "jit"]
    assert info["feedback_flow"] == [{"source": "rnn/hidden", "target": "rnn/hidden"}]
    assert info["data_flow"] == [{"source": "encoder/feat", "target": "rnn/feat"}]
    assert info["initial_values"] == "leapp_pipe_initial_values.safetensors"
    assert main(["bundle", "info", str(yaml_path)]) == 0
    assert "leapp 0.7.2" in capsys.readouterr().out
    assert main(["bundle", "draw", str(yaml_path), "-o", str(tmp_path / "p.svg")]) == 0
    svg = (tmp_path / "p.svg").read_text()
    assert 'class="edge feedback" data-source="rnn/hidden" data-target="rnn/hidden"' in svg
    main(["bundle", "check", str(yaml_path)])  # the pipeline line depends on InferenceManager
    rows = capsys.readouterr().out.splitlines()
    for node in ("encoder", "rnn"):  # LEAPP's hashes verify and its models load and run
        cells = next(r for r in rows if r.strip().startswith(node)).split()
        assert cells[1:3] == ["jit", "ok"] and cells[-1] == "ok"
