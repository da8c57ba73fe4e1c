"""LEAPP test behaviours, re-expressed, run against patchport and against leapp 0.7.2.

Each check restates (in our own code) one behaviour a test of nvidia-isaac/leapp's public
suite asserts: passthrough outside a session, dry runs, ``non_traced`` nodes, what
``ExportManager`` detects, and what ``InferenceManager`` refuses or reads. The same check
runs on both packages, each in its own fresh interpreter (``--side``), so the count says how
far patchport is a drop-in for what LEAPP's tests rely on. Not part of the tests.
Run: python bench/leapp_behaviours.py [-v]   (one side: ... --side patchport|leapp, JSON)
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CHECKS: dict[str, Callable[[Any], None]] = {}
G = "graph"  # the graph name every check uses; written under the current directory


def check(func: Callable[[Any], None]) -> Callable[[Any], None]:
    CHECKS[func.__name__] = func
    return func


def side(name: str) -> SimpleNamespace:
    """The package under test, behind LEAPP's public names."""
    if name == "leapp":
        import leapp
        from leapp.leapp_graph.datatypes import TracedTensor

        return SimpleNamespace(
            pkg=leapp,
            manager=leapp.ExportManager(),
            InferenceManager=leapp.InferenceManager,
            traced=lambda v: isinstance(v, TracedTensor),
        )
    import patchport
    from patchport import annotate
    from patchport.tracing import is_traced

    return SimpleNamespace(
        pkg=patchport,
        # before ExportManager existed the annotation module stood in (for a baseline count)
        manager=patchport.ExportManager() if "ExportManager" in patchport.__all__ else annotate,
        InferenceManager=patchport.InferenceManager,
        traced=is_traced,
    )


def _yaml() -> str:
    return os.path.join(G, f"{G}.yaml")


def _count(flow: dict[str, Any]) -> int:
    return sum(len(v) for v in flow.values())


def _simple(api: Any) -> str:
    torch = __import__("torch")
    api.pkg.start(G)
    x = api.manager.input_tensors("simple", {"x": torch.tensor([1.0, 2.0, 3.0])})
    api.manager.output_tensors("simple", {"y": x * 2.0}, export_with="jit")
    api.pkg.stop()
    api.pkg.compile_graph(visualize=False)
    return _yaml()


def _stateful(api: Any, counter: Any) -> None:
    torch = __import__("torch")
    obs = torch.tensor([1.0, 2.0, 3.0])
    api.pkg.start(G)
    o = api.manager.input_tensors("policy", {"observation": obs})
    c = api.manager.state_tensors("policy", {"counter": counter})
    api.manager.update_state("policy", {"counter": c + o})
    api.manager.output_tensors("policy", {"action": o * 2.0}, export_with="jit")
    api.pkg.stop()
    api.pkg.compile_graph(visualize=False)


def _split(api: Any) -> None:
    torch = __import__("torch")
    api.pkg.start(G)
    x = api.manager.input_tensors("node_a", {"x": torch.tensor([1.0, 2.0, 3.0])})
    to_b, _ = api.manager.output_tensors(
        "node_a", {"to_b": x * 2.0, "final_a": x + 10.0}, export_with="jit"
    )
    y = api.manager.input_tensors("node_b", {"x": to_b})
    api.manager.output_tensors("node_b", {"final_b": y - 1.0}, export_with="jit")
    api.pkg.stop()
    api.pkg.compile_graph(visualize=False)


def _edit(change: Callable[[dict], None]) -> None:
    import yaml

    with open(_yaml()) as handle:
        data = yaml.safe_load(handle)
    change(data)
    with open(_yaml(), "w") as handle:
        yaml.safe_dump(data, handle)


def _raises(kind: type, phrase: str, call: Callable[[], Any]) -> None:
    try:
        call()
    except kind as exc:
        assert phrase in str(exc), str(exc)
        return
    raise AssertionError(f"no {kind.__name__}")


# ---------------------------------------------------------------- passthrough
@check
def outside_inputs_and_outputs_are_the_objects_given(api: Any) -> None:
    torch = __import__("torch")
    a, b = torch.ones(3), torch.zeros(3)
    got_a, got_b = api.manager.input_tensors("n", {"a": a, "b": b})
    assert got_a is a and got_b is b and not api.traced(got_a)
    out = a + b
    assert api.manager.output_tensors("n", {"out": out}, export_with="jit") is out
    assert not hasattr(out, "leapp_tag")


@check
def outside_state_is_the_object_given(api: Any) -> None:
    torch = __import__("torch")
    state = torch.zeros(3)
    assert api.manager.state_tensors("n", {"s": state}) is state
    new = state + 1
    assert api.manager.update_state("n", {"s": new}) is new


@check
def outside_method_gets_plain_tensors(api: Any) -> None:
    torch = __import__("torch")
    seen = []

    @api.manager.method(export_with="jit")
    def policy(x):
        seen.append(api.traced(x))
        return x * 2.0 + 1.0

    y = policy(torch.tensor([1.0, 2.0]))
    assert seen == [False] and not api.traced(y) and torch.equal(y, torch.tensor([3.0, 5.0]))


@check
def outside_module_keeps_its_buffers(api: Any) -> None:
    torch = __import__("torch")
    model = torch.nn.Module()
    model.register_buffer("running", torch.zeros(4))
    before = id(model.running)
    api.manager.module("policy", model)
    assert id(model.running) == before and not api.traced(model.running)


@check
def inside_inputs_are_traced(api: Any) -> None:
    torch = __import__("torch")
    api.pkg.start(G)
    try:
        x = api.manager.input_tensors("n", {"x": torch.ones(3)})
        assert api.traced(x)
        api.manager.output_tensors("n", {"y": x + 1}, export_with="jit")
    finally:
        api.pkg.stop()


# ---------------------------------------------------------------- dry run, non_traced
@check
def dry_run_writes_the_yaml_but_no_model(api: Any) -> None:
    torch = __import__("torch")
    api.pkg.start(G, dry_run=True)
    a = api.manager.input_tensors("node_a", {"a": torch.ones(3)})
    out = a * 3.0
    api.manager.output_tensors("node_a", {"out": out}, export_with="jit")
    b = api.manager.input_tensors("node_b", {"out": out})
    api.manager.output_tensors("node_b", {"final": b - 1.0}, export_with="jit")
    api.pkg.stop()
    api.pkg.compile_graph(visualize=False)
    assert os.path.exists(_yaml())
    assert not any(os.path.exists(os.path.join(G, f"node_a{s}")) for s in (".pt", ".onnx"))
    assert set(api.manager.detected_nodes) == {"node_a", "node_b"}
    assert api.manager.detected_pipeline["data_flow"] == {"node_a/out": ["node_b/out"]}


@check
def dry_run_still_finds_feedback(api: Any) -> None:
    torch = __import__("torch")
    api.pkg.start(G, dry_run=True)
    o = api.manager.input_tensors("s", {"obs": torch.ones(3)})
    c = api.manager.state_tensors("s", {"state": torch.zeros(3)})
    api.manager.update_state("s", {"state": c + o})
    api.manager.output_tensors("s", {"action": o + c}, export_with="jit")
    api.pkg.stop()
    api.pkg.compile_graph(visualize=False)
    assert len(api.manager.detected_pipeline["feedback_flow"]) >= 1


@check
def non_traced_node_is_described_not_exported(api: Any) -> None:
    torch = __import__("torch")
    api.pkg.start(G, non_traced=["raw"])
    x = api.manager.input_tensors("raw", {"x": torch.tensor([2.0, 4.0])})
    y = x / 2.0
    api.manager.output_tensors("raw", {"y": y}, export_with="jit")
    z = api.manager.input_tensors("traced", {"y": y})
    api.manager.output_tensors("traced", {"z": z.square()}, export_with="jit")
    api.pkg.stop()
    api.pkg.compile_graph(visualize=False, validate=True)
    assert os.path.exists(os.path.join(G, "traced.pt"))
    assert not os.path.exists(os.path.join(G, "raw.pt"))
    assert api.manager.detected_pipeline["data_flow"] == {"raw/y": ["traced/y"]}


# ---------------------------------------------------------------- detected graph
@check
def detected_chain_counts(api: Any) -> None:
    torch = __import__("torch")
    api.pkg.start(G)
    x = api.manager.input_tensors("a", {"x": torch.ones(3)})
    y = api.manager.output_tensors("a", {"y": x * 2}, export_with="jit")
    z = api.manager.input_tensors("b", {"y": y})
    api.manager.output_tensors("b", {"z": z + 1}, export_with="jit")
    api.pkg.stop()
    api.pkg.compile_graph(visualize=False)
    pipeline = api.manager.detected_pipeline
    assert len(api.manager.detected_nodes) == 2
    assert _count(pipeline["inputs"]) == 1 and _count(pipeline["outputs"]) == 1
    assert _count(pipeline["data_flow"]) == 1 and len(pipeline["feedback_flow"]) == 0
    assert [p.name for p in api.manager.nodes["b"].inputs] == ["y"]


@check
def detected_loop_feedback(api: Any) -> None:
    torch = __import__("torch")
    api.pkg.start(G)
    action = torch.zeros(2)
    for step in range(2):
        obs, last = api.manager.input_tensors(
            "policy", {"obs": torch.ones(2) * step, "last": action}
        )
        action = api.manager.output_tensors("policy", {"action": obs + last}, export_with="jit")
    api.pkg.stop()
    api.pkg.compile_graph(visualize=False)
    pipeline = api.manager.detected_pipeline
    assert pipeline["feedback_flow"] == {"policy/action": ["policy/last"]}, pipeline
    assert _count(pipeline["inputs"]) == 1


# ---------------------------------------------------------------- InferenceManager
@check
def sha256_mismatch(api: Any) -> None:
    path = _simple(api)
    with open(os.path.join(G, "simple.pt"), "ab") as handle:
        handle.write(b"\x00\xff")
    _raises(ValueError, "SHA256 checksum mismatch", lambda: api.InferenceManager(path))


@check
def missing_description_file(api: Any) -> None:
    _raises(
        FileNotFoundError,
        "Leapp description file not found",
        lambda: api.InferenceManager(os.path.join(G, "nothing.yaml")),
    )


@check
def description_must_end_with_yaml(api: Any) -> None:
    path = _simple(api)
    shutil.copy(path, os.path.join(G, "graph.txt"))
    _raises(
        ValueError,
        "must end with .yaml",
        lambda: api.InferenceManager(os.path.join(G, "graph.txt")),
    )


@check
def missing_top_level_sections(api: Any) -> None:
    for section in ("models", "pipeline", "system information"):
        path = _simple(api)
        _edit(lambda data, section=section: data.pop(section))
        _raises(
            ValueError,
            "Leapp description file must contain models, pipeline, and system_info",
            lambda path=path: api.InferenceManager(path),
        )


@check
def missing_model_parameters(api: Any) -> None:
    for key in ("model_path", "md5sum", "sha256sum", "backend"):
        path = _simple(api)
        _edit(lambda data, key=key: next(iter(data["models"].values()))["parameters"].pop(key))
        _raises(
            ValueError,
            "Model description must contain model_path, md5sum, sha256sum, and backend",
            lambda path=path: api.InferenceManager(path),
        )


@check
def flows_may_be_absent(api: Any) -> None:
    for flow in ("feedback_flow", "data_flow"):
        path = _simple(api)
        _edit(lambda data, flow=flow: data["pipeline"].pop(flow))
        assert api.InferenceManager(path).feedback_inputs == []


@check
def initial_state_is_loaded_and_reset(api: Any) -> None:
    torch = __import__("torch")
    start = torch.tensor([42.0, 43.0, 44.0])
    _stateful(api, start)
    manager = api.InferenceManager(_yaml())
    assert torch.equal(manager.value_dict["policy"]["counter"].cpu(), start)
    manager.run_policy({"policy/observation": torch.tensor([1.0, 2.0, 3.0])})
    manager.reset()
    assert torch.equal(manager.value_dict["policy"]["counter"].cpu(), start)
    assert not manager.value_dict["policy"]["observation"].any()
    assert not manager.value_dict["==out=="]["policy/action"].any()


@check
def fan_out_consumers_get_their_own_tensor(api: Any) -> None:
    torch = __import__("torch")
    api.pkg.start(G)
    x = api.manager.input_tensors("node_a", {"x": torch.tensor([1.0, 2.0, 3.0])})
    api.manager.output_tensors("node_a", {"out": x * 2.0}, export_with="jit")
    api.pkg.stop()
    api.pkg.compile_graph(visualize=False)
    shutil.copy(os.path.join(G, "node_a.pt"), os.path.join(G, "node_b.pt"))
    data = Path(G, "node_b.pt").read_bytes()

    def add_b(spec: dict) -> None:
        port = {"dtype": "float32", "shape": [3], "type": "tensor"}
        spec["models"]["node_b"] = {
            "inputs": [{"name": "x", **port}],
            "outputs": [{"name": "out", **port}],
            "parameters": {
                "model_path": "node_b.pt",
                "backend": "jit",
                "md5sum": hashlib.md5(data).hexdigest(),  # noqa: S324 - LEAPP's field
                "sha256sum": hashlib.sha256(data).hexdigest(),
            },
        }
        spec["pipeline"].update(
            data_flow={"node_a/out": ["node_b/x"]},
            outputs={"node_a": ["out"], "node_b": ["out"]},
            inputs={"node_a": ["x"]},
        )

    _edit(add_b)
    manager = api.InferenceManager(_yaml())
    result = manager.run_policy({"node_a/x": torch.tensor([1.0, 2.0, 3.0])})
    assert torch.equal(result["node_b/out"], torch.tensor([4.0, 8.0, 12.0]))
    routed = manager.value_dict["node_b"]["x"]
    assert routed.data_ptr() != manager.value_dict["==out=="]["node_a/out"].data_ptr()


@check
def split_outputs_are_routed(api: Any) -> None:
    torch = __import__("torch")
    _split(api)
    manager = api.InferenceManager(_yaml())
    assert {"to_b", "final_a"} <= set(manager.organized_pipeline_connections["node_a"])
    result = manager.run_policy({"node_a/x": torch.tensor([1.0, 2.0, 3.0])})
    assert torch.equal(result["node_b/final_b"], torch.tensor([1.0, 3.0, 5.0]))


@check
def unroutable_output_is_refused(api: Any) -> None:
    _split(api)
    _edit(lambda data: data["pipeline"]["outputs"].update(node_a=[]))
    _raises(ValueError, "unroutable outputs", lambda: api.InferenceManager(_yaml()))


@check
def inner_port_can_be_set(api: Any) -> None:
    torch = __import__("torch")
    _stateful(api, torch.zeros(3))
    manager = api.InferenceManager(_yaml())
    manager.set_input_value("policy", "counter", torch.tensor([5.0, 5.0, 5.0]))
    assert torch.equal(manager.value_dict["policy"]["counter"], torch.tensor([5.0, 5.0, 5.0]))


# ---------------------------------------------------------------- runner
def run_side(name: str, verbose: bool) -> dict[str, str]:
    api = side(name)
    results = {}
    for check_name, func in CHECKS.items():
        folder = tempfile.mkdtemp(prefix=f"leapp_behaviours_{name}_")
        cwd = os.getcwd()
        os.chdir(folder)
        try:
            func(api)
            results[check_name] = "ok"
        except BaseException as exc:  # noqa: BLE001 - a failed check is a result
            results[check_name] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
            if verbose:
                traceback.print_exc()
            current = getattr(api.pkg, "sessions", None)
            if current is not None and current.current_session() is not None:
                api.pkg.stop()
            elif name == "leapp" and api.manager.is_interpret_graph_enabled():
                api.pkg.stop()
        finally:
            os.chdir(cwd)
            shutil.rmtree(folder, ignore_errors=True)
    return results


def main() -> None:
    verbose = "-v" in sys.argv
    if "--side" in sys.argv:
        name = sys.argv[sys.argv.index("--side") + 1]
        print(json.dumps(run_side(name, verbose)))
        return
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    found = {}
    for name in ("patchport", "leapp"):
        command = [sys.executable, __file__, "--side", name] + (["-v"] if verbose else [])
        run = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
        lines = [line for line in run.stdout.splitlines() if line.startswith("{")]
        if not lines:
            sys.exit(f"{name} side failed:\n{run.stderr[-3000:]}")
        found[name] = json.loads(lines[-1])
    width = max(len(n) for n in CHECKS)
    for check_name in CHECKS:
        row = [found[side_name][check_name] for side_name in ("patchport", "leapp")]
        print(f"{check_name:<{width}}  patchport: {row[0][:60]:<60}  leapp: {row[1][:60]}")
    for side_name in ("patchport", "leapp"):
        passed = sum(v == "ok" for v in found[side_name].values())
        print(f"{side_name}: {passed} of {len(CHECKS)} LEAPP test behaviours")


if __name__ == "__main__":
    main()
