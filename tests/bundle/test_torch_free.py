"""An ONNX bundle runs where torch cannot be imported, and loads no tracer module.

Each bundle is compiled here (torch and the tracer are needed to make it); it is then run in
a fresh interpreter whose import system refuses ``torch`` and patchport's tracer and
exporter packages, as on a robot image holding only NumPy, PyYAML and ONNX Runtime.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch

import patchport
from patchport import annotate

SRC = Path(__file__).resolve().parents[2] / "src"
TRACER = ("patchport.tracing", "patchport.sessions", "patchport.export")
# what running an ONNX bundle may import of patchport: the runtime and its two leaves
RUNTIME = ("patchport", "patchport.errors", "patchport.versions", "patchport.backend_names")

BLOCKER = textwrap.dedent(
    """
    import sys

    class _Refuse:
        # an import finder that fails the imports named in BLOCKED, as if not installed
        def find_spec(self, name, path=None, target=None):
            if any(name == b or name.startswith(b + ".") for b in BLOCKED):
                raise ModuleNotFoundError(f"blocked by the test: {name}", name=name)
            return None

    sys.meta_path.insert(0, _Refuse())
    """
)


def _weights() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    return rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal(3).astype("f4")


def _pre(raw):
    return (raw - raw.mean(axis=0)) * 0.5


def expected(raw: np.ndarray) -> dict[str, np.ndarray]:
    """The eager pipeline on plain NumPy: what the bundle must return (``pre/feats`` feeds
    the policy, so only the action is a pipeline output)."""
    weight, bias = _weights()
    return {"policy/action": np.tanh(_pre(raw) @ weight.T + bias)}


def export_two_nodes(folder: Path, policy_backend: str = "onnx") -> Path:
    """Trace pre (NumPy) -> policy (torch), compile; the YAML's path."""
    weight, bias = (torch.from_numpy(a) for a in _weights())
    rng = np.random.default_rng(0)
    with patchport.session("two_nodes", save_path=folder):
        for _ in range(2):
            raw = annotate.input_tensors("pre", {"raw": rng.standard_normal((2, 4)).astype("f4")})
            feats = annotate.output_tensors("pre", {"feats": _pre(raw)}, export_with="onnx")
            f = annotate.input_tensors("policy", {"feats": feats})
            with torch.no_grad():
                action = torch.tanh(torch.as_tensor(f) @ weight.T + bias)
            annotate.output_tensors("policy", {"action": action}, export_with=policy_backend)
    return patchport.compile_graph(visualize=False).yaml_path


@pytest.fixture(scope="module")
def onnx_bundle(tmp_path_factory) -> Path:
    return export_two_nodes(tmp_path_factory.mktemp("onnx_bundle"))


@pytest.fixture(scope="module")
def pt2_bundle(tmp_path_factory) -> Path:
    return export_two_nodes(tmp_path_factory.mktemp("pt2_bundle"), policy_backend="pt2")


def run_child(code: str, *args: str, blocked: tuple[str, ...]) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter that cannot import ``blocked`` (and their submodules)."""
    script = f"BLOCKED = {blocked!r}\n{BLOCKER}\n{textwrap.dedent(code)}"
    env = {**os.environ, "PYTHONPATH": str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    return done


REPORT = """
        ours = sorted(m for m in sys.modules if m == "patchport" or m.startswith("patchport."))
        print(json.dumps({"patchport": ours, "torch": "torch" in sys.modules}))
"""  # indented like the children's code, which is dedented with it


def _report(done: subprocess.CompletedProcess) -> dict:
    return json.loads(done.stdout.strip().splitlines()[-1])


def _runtime_only(modules: list[str]) -> list[str]:
    return [m for m in modules if m not in RUNTIME and not m.startswith("patchport.bundle")]


def test_the_blocker_really_blocks_torch_and_the_tracer():
    code = """
        for name in ("torch", "torch.nn", "patchport.sessions", "patchport.export.backends"):
            try:
                __import__(name)
            except ImportError:
                continue
            raise SystemExit(f"{name} was imported")
        import patchport
        try:
            patchport.annotate  # the lazy public name reaches into sessions
        except ImportError:
            print("refused")
    """
    done = run_child(code, blocked=("torch", *TRACER))
    assert done.stdout.strip() == "refused"


def test_an_onnx_bundle_runs_on_numpy_without_torch_or_the_tracer(onnx_bundle, tmp_path):
    rng = np.random.default_rng(7)
    calls = [rng.standard_normal((2, 4)).astype(np.float32) for _ in range(2)]
    np.savez(tmp_path / "in.npz", *calls)
    code = (
        """
        import json, sys
        import numpy as np
        from patchport import InferenceManager

        manager = InferenceManager(sys.argv[1])
        assert manager.arrays == "numpy", manager.arrays
        with np.load(sys.argv[2]) as given:
            calls = [given[k] for k in given.files]
        got = {}
        for index, raw in enumerate(calls):
            out = manager.run_policy({"pre/raw": raw})
            assert all(type(v) is np.ndarray for v in out.values()), out
            got.update({f"{index}:{k}": v for k, v in out.items()})
        np.savez(sys.argv[3], **got)
        """
        + REPORT
    )
    out = tmp_path / "out.npz"
    done = run_child(
        code, str(onnx_bundle), str(tmp_path / "in.npz"), str(out), blocked=("torch", *TRACER)
    )
    report = _report(done)
    assert report["torch"] is False
    assert "patchport.bundle.inference" in report["patchport"]
    assert _runtime_only(report["patchport"]) == [], report["patchport"]
    with np.load(out) as got:
        assert sorted(got.files) == ["0:policy/action", "1:policy/action"]
        for index, raw in enumerate(calls):
            for key, want in expected(raw).items():
                np.testing.assert_allclose(got[f"{index}:{key}"], want, rtol=1e-5, atol=1e-6)
                assert got[f"{index}:{key}"].dtype == np.float32


@pytest.mark.parametrize("action", ["run", "check", "info"])
def test_the_bundle_command_runs_an_onnx_bundle_without_torch(onnx_bundle, tmp_path, action):
    raw = np.random.default_rng(3).standard_normal((2, 4)).astype(np.float32)
    np.savez(tmp_path / "in.npz", **{"pre/raw": raw})
    argv = {
        "run": ["run", str(onnx_bundle), "--inputs", str(tmp_path / "in.npz"), "--out"],
        "check": ["check", str(onnx_bundle)],
        "info": ["info", str(onnx_bundle)],
    }[action]
    if action == "run":
        argv.append(str(tmp_path / "out.npz"))
    code = (
        """
        import json, runpy, sys
        sys.argv = ["patchport", "bundle", *sys.argv[1:]]
        try:
            runpy.run_module("patchport.cli", run_name="__main__")
        except SystemExit as exit:
            assert exit.code == 0, exit.code
        """
        + REPORT
    )
    done = run_child(code, *argv, blocked=("torch", *TRACER))
    report = _report(done)
    assert report["torch"] is False
    # patchport.cli itself ran as __main__; the bundle commands are its only other import
    assert _runtime_only(report["patchport"]) == ["patchport.cli_bundle"], report["patchport"]
    if action == "run":
        with np.load(tmp_path / "out.npz") as got:
            for key, want in expected(raw).items():
                np.testing.assert_allclose(got[key], want, rtol=1e-5, atol=1e-6)
    elif action == "check":
        assert "ok: every hash verified" in done.stdout
    else:
        assert "run order: pre -> policy" in done.stdout


def test_a_pt2_bundle_imports_torch_itself_and_returns_tensors(pt2_bundle, tmp_path):
    raw = np.random.default_rng(5).standard_normal((2, 4)).astype(np.float32)
    np.save(tmp_path / "raw.npy", raw)
    code = (
        """
        import json, sys
        import numpy as np
        assert "torch" not in sys.modules
        from patchport import InferenceManager

        manager = InferenceManager(sys.argv[1])  # the .pt2 model loads torch
        import torch

        assert manager.arrays == "torch", manager.arrays
        out = manager.run_policy({"pre/raw": np.load(sys.argv[2])})
        assert all(type(v) is torch.Tensor for v in out.values()), out
        np.savez(sys.argv[3], **{k: v.numpy() for k, v in out.items()})
        """
        + REPORT
    )
    out = tmp_path / "out.npz"
    done = run_child(code, str(pt2_bundle), str(tmp_path / "raw.npy"), str(out), blocked=TRACER)
    report = _report(done)
    assert report["torch"] is True
    assert _runtime_only(report["patchport"]) == [], report["patchport"]
    with np.load(out) as got:
        for key, want in expected(raw).items():
            np.testing.assert_allclose(got[key], want, rtol=1e-5, atol=1e-6)


def test_a_pt2_bundle_without_torch_names_the_model_and_the_fix(pt2_bundle):
    code = """
        import sys
        from patchport import InferenceManager

        try:
            InferenceManager(sys.argv[1])
        except ModuleNotFoundError as exc:
            print(exc)
    """
    done = run_child(code, str(pt2_bundle), blocked=("torch", *TRACER))
    assert "policy.pt2: a .pt2 model runs on torch, which cannot be imported" in done.stdout
    assert "pip install torch" in done.stdout and "export_with='onnx'" in done.stdout


def test_with_torch_imported_the_manager_keeps_leapps_tensor_contract(onnx_bundle):
    raw = np.random.default_rng(9).standard_normal((2, 4)).astype(np.float32)
    manager = patchport.InferenceManager(onnx_bundle)
    assert manager.arrays == "torch"
    for given in (raw, torch.from_numpy(raw)):
        out = manager.run_policy({"pre/raw": given})
        assert all(type(v) is torch.Tensor for v in out.values())
        np.testing.assert_allclose(
            out["policy/action"].numpy(), expected(raw)["policy/action"], rtol=1e-5
        )
    assert all(type(v) is torch.Tensor for v in manager.get_mock_input().values())


def test_arrays_numpy_gives_numpy_everywhere_even_with_torch_imported(onnx_bundle):
    raw = np.random.default_rng(11).standard_normal((2, 4)).astype(np.float32)
    manager = patchport.InferenceManager(onnx_bundle, arrays="numpy")
    assert manager.arrays == "numpy"
    mock = manager.get_mock_input()
    assert type(mock["pre/raw"]) is np.ndarray and mock["pre/raw"].dtype == np.float32
    manager.set_input_value("pre", "raw", torch.from_numpy(raw))  # a tensor is converted
    assert type(manager.value_dict["pre"]["raw"]) is np.ndarray
    out = manager.run_policy({})
    assert all(type(v) is np.ndarray for v in out.values())
    np.testing.assert_allclose(out["policy/action"], expected(raw)["policy/action"], rtol=1e-5)
    manager.reset()
    assert not manager.value_dict["pre"]["raw"].any()
    with pytest.raises(ValueError, match=r"arrays='jax'.*'torch', 'numpy' or None"):
        patchport.InferenceManager(onnx_bundle, arrays="jax")
