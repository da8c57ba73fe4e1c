"""What running an ONNX bundle costs to start: modules imported and time to the first result.

Builds a two-node ONNX bundle (a NumPy normalisation feeding a torch linear policy) in this
process, then, in fresh interpreters, times ``from patchport import InferenceManager``,
loading the bundle and one ``run_policy`` on NumPy inputs, and counts the modules it left
in ``sys.modules``: patchport's (and how many of them are the tracer's, ``tracing/`` and
``sessions/``), all of them, and whether torch was imported; once for a caller on NumPy and
once for one that imported torch first (its import counted too). Prints; not a test.
Run: python bench/bundle_import.py [repeats]   (PYTHONPATH picks the patchport measured)
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

CHILD = textwrap.dedent(
    """
    import json, sys, time
    started = time.perf_counter()
    if sys.argv[2] == "torch":  # a caller that works in torch, as LEAPP's users do
        import torch
    import numpy as np
    from patchport import InferenceManager
    imported = time.perf_counter()
    manager = InferenceManager(sys.argv[1])
    loaded = time.perf_counter()
    out = manager.run_policy({"pre/raw": np.ones((2, 4), np.float32)})
    done = time.perf_counter()
    ours = sorted(m for m in sys.modules if m == "patchport" or m.startswith("patchport."))
    tracer = [m for m in ours if m.startswith(("patchport.tracing", "patchport.sessions"))]
    print(json.dumps({
        "import_ms": (imported - started) * 1e3,
        "load_ms": (loaded - imported) * 1e3,
        "first_run_ms": (done - loaded) * 1e3,
        "total_ms": (done - started) * 1e3,
        "patchport_modules": len(ours),
        "tracer_modules": len(tracer),
        "export_modules": sum(m.startswith("patchport.export") for m in ours),
        "all_modules": len(sys.modules),
        "torch_imported": "torch" in sys.modules,
        "output_type": type(next(iter(out.values()))).__module__,
        "patchport_file": sys.modules["patchport"].__file__,
    }))
    """
)


def build_bundle(folder: Path) -> Path:
    """Trace and compile the two-node ONNX pipeline; the YAML's path."""
    import numpy as np
    import torch

    import patchport
    from patchport import annotate

    torch.manual_seed(0)
    linear = torch.nn.Linear(4, 3)
    rng = np.random.default_rng(0)
    with patchport.session("two_nodes", save_path=folder):
        for _ in range(2):
            raw = annotate.input_tensors("pre", {"raw": rng.standard_normal((2, 4)).astype("f4")})
            feats = annotate.output_tensors(
                "pre", {"feats": (raw - raw.mean(axis=0)) * 0.5}, export_with="onnx"
            )
            f = annotate.input_tensors("policy", {"feats": feats})
            with torch.no_grad():
                action = torch.tanh(linear(torch.as_tensor(f)))
            annotate.output_tensors("policy", {"action": action}, export_with="onnx")
    return patchport.compile_graph(visualize=False).yaml_path


def main(repeats: int = 5) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        yaml_path = build_bundle(Path(tmp))
        runs: dict[str, list[dict]] = {"numpy": [], "torch": []}
        for _ in range(repeats):
            for caller, found in runs.items():  # alternately, so machine load hits both
                done = subprocess.run(
                    [sys.executable, "-c", CHILD, str(yaml_path), caller],
                    capture_output=True,
                    text=True,
                    check=True,
                )
                found.append(json.loads(done.stdout))
    print(f"patchport measured: {runs['numpy'][0]['patchport_file']}")
    for caller, found in runs.items():
        print(f"\n-- caller on {caller}" + (" (imports torch first)" if caller == "torch" else ""))
        report(found, repeats)


def report(runs: list[dict], repeats: int) -> None:
    first = runs[0]
    print(
        f"modules: {first['patchport_modules']} patchport ({first['tracer_modules']} from "
        f"tracing/ and sessions/, {first['export_modules']} from export/), "
        f"{first['all_modules']} in all; torch imported: {first['torch_imported']}; "
        f"outputs are {first['output_type']} arrays"
    )
    for key in ("import_ms", "load_ms", "first_run_ms", "total_ms"):
        values = [run[key] for run in runs]
        print(
            f"{key:>13}: median {statistics.median(values):8.1f} ms  "
            f"(min {min(values):.1f}, {repeats} fresh interpreters)"
        )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
