"""A bundle with dynamic axes still loads and runs in the real leapp 0.7.2 (it ignores
``dynamic_axes``), at the traced shape; ours runs it at other sizes too."""

import leapp  # the test extra pins leapp==0.7.2: interop is checked against the real package
import torch

import patchport
from patchport import annotate


def test_leapp_runs_a_bundle_with_dynamic_axes(tmp_path):
    torch.manual_seed(0)
    layer = torch.nn.Linear(3, 2).eval()
    with torch.no_grad(), patchport.session("dynamic", save_path=tmp_path):
        x = annotate.input_tensors("policy", {"obs": torch.rand(4, 3)}, dynamic={"obs": {0: "n"}})
        annotate.output_tensors("policy", {"action": layer(x)})
    result = patchport.compile_graph(visualize=False)
    theirs = leapp.InferenceManager(str(result.yaml_path))
    ours = patchport.InferenceManager(result.yaml_path)
    obs = torch.rand(4, 3)
    expected = theirs.run_policy({"policy/obs": obs})["policy/action"]
    torch.testing.assert_close(ours.run_policy({"policy/obs": obs})["policy/action"], expected)
    with torch.no_grad():
        more = torch.rand(7, 3)
        torch.testing.assert_close(
            ours.run_policy({"policy/obs": more})["policy/action"], layer(more)
        )
