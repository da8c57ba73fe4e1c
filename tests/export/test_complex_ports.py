"""A complex spectrum as a node's port: pt2 and jit keep it; ONNX (which holds complex
data as real pairs) is refused before anything is written, naming the port and the fix."""

from __future__ import annotations

import numpy as np
import pytest

import patchport
from patchport import annotate
from patchport.errors import OnnxKernelError

# the compile check measures a complex difference whole; dropping the imaginary part warns
pytestmark = pytest.mark.filterwarnings("error::numpy.exceptions.ComplexWarning")


def _trace(tmp_path, backend: str) -> None:  # noqa: ANN001
    with patchport.session("spectrum", save_path=tmp_path):
        x = annotate.input_tensors("n", {"x": np.random.default_rng(0).normal(size=(3, 8))})
        spectrum = np.fft.rfft(x)
        annotate.output_tensors(
            "n", {"spec": spectrum, "power": np.abs(spectrum) ** 2}, export_with=backend
        )


def test_a_complex_port_is_refused_for_onnx_before_anything_is_written(tmp_path) -> None:  # noqa: ANN001
    _trace(tmp_path, "onnx")
    with pytest.raises(OnnxKernelError, match=r"(?s)'n/spec' is complex128.*np.abs.*pt2"):
        patchport.compile_graph(visualize=False)
    assert not list((tmp_path / "spectrum").glob("*.onnx"))


@pytest.mark.parametrize("backend", ["pt2", "jit"])
def test_a_complex_port_replays_with_pt2_and_jit(tmp_path, backend: str) -> None:  # noqa: ANN001
    _trace(tmp_path, backend)
    result = patchport.compile_graph(visualize=False)
    fresh = np.random.default_rng(1).normal(size=(3, 8))
    out = patchport.InferenceManager(result.yaml_path).run_policy({"n/x": fresh})
    np.testing.assert_allclose(np.asarray(out["n/spec"]), np.fft.rfft(fresh))
    np.testing.assert_allclose(np.asarray(out["n/power"]), np.abs(np.fft.rfft(fresh)) ** 2)


@pytest.mark.parametrize("backend", ["pt2", "jit"])
def test_a_complex_input_port_replays_with_pt2_and_jit(tmp_path, backend: str) -> None:  # noqa: ANN001
    """A complex input (a spectrum from another node, a phasor) is held by pt2 and jit."""
    with patchport.session("phasor", save_path=tmp_path):
        z = annotate.input_tensors("n", {"z": np.exp(1j * np.arange(4.0))})
        annotate.output_tensors("n", {"m": np.abs(z) * 2, "r": z.real + 1}, export_with=backend)
    result = patchport.compile_graph(visualize=False)
    fresh = np.exp(1j * np.arange(4.0) * 0.3) * 2
    out = patchport.InferenceManager(result.yaml_path).run_policy({"n/z": fresh})
    np.testing.assert_allclose(np.asarray(out["n/m"]), np.abs(fresh) * 2)
    np.testing.assert_allclose(np.asarray(out["n/r"]), fresh.real + 1)
