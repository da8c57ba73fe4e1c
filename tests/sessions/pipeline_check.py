"""Run a NumPy function through a session, export it, and replay it on a new input."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

import patchport
from patchport import annotate


def export_and_replay(
    fn: Callable[..., dict],
    inputs: dict[str, np.ndarray],
    fresh: dict[str, np.ndarray],
    tmp_path: Path,
    export_with: str = "onnx",
) -> tuple[dict[str, np.ndarray], list[warnings.WarningMessage]]:
    """Trace ``fn(**inputs)`` in a session, compile, run the bundle on ``fresh``.

    Returns the replayed outputs and the patchport warnings raised while tracing.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with patchport.session("pipe", save_path=tmp_path):
            traced = annotate.input_tensors("n", dict(inputs))
            if len(inputs) == 1:
                traced = (traced,)
            values = traced if isinstance(traced, dict) else dict(zip(inputs, traced))
            annotate.output_tensors("n", fn(**values), export_with=export_with)
        result = patchport.compile_graph(visualize=False)
    manager = patchport.InferenceManager(result.yaml_path)
    outputs = manager.run_policy({f"n/{k}": v for k, v in fresh.items()})
    replay = {k.split("/")[-1]: np.asarray(v) for k, v in outputs.items()}
    found = [w for w in caught if issubclass(w.category, patchport.PatchportWarning)]
    return replay, found
