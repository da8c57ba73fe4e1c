"""A LEAPP-style program runs as a script with ``import patchport as leapp``; its bundle
replays in both packages like the eager filter."""

import sys
from pathlib import Path

import leapp
import torch
import yaml

import patchport

from ..script_runs import Script
from .leapp_style_program import filter_step

PROGRAM = Path(__file__).with_name("leapp_style_program.py")
RUN = Script("leapp_style_program", lambda folder: [sys.executable, PROGRAM, folder])
BACKGROUND = [RUN]  # started in the background: tests/script_runs.py


def test_leapp_style_script_exports_a_bundle_both_packages_replay():
    done = RUN.result()
    done.output()
    tmp_path = done.folder
    yaml_path = tmp_path / "arm_filter" / "arm_filter.yaml"
    spec = yaml.safe_load(yaml_path.read_text())
    assert spec["pipeline"]["configs"] == {"frequency": 100}
    assert spec["models"]["filter"]["inputs"][0]["kind"] == "state/joint/position"
    ours, theirs = patchport.InferenceManager(yaml_path), leapp.InferenceManager(str(yaml_path))
    memory = torch.zeros(2)
    for value in (0.0, 0.3, -0.2, 0.9):
        feed = {"filter/position": torch.full((2,), value), "filter/command": torch.ones(2)}
        memory, expected = filter_step(feed["filter/position"], feed["filter/command"], memory)
        torch.testing.assert_close(ours.run_policy(feed)["filter/target"], expected)
        torch.testing.assert_close(theirs.run_policy(feed)["filter/target"].cpu(), expected)
