"""Run as a script: a spectral pipeline written with from-imports in ``__main__``.

``rfftfreq`` bound by ``from numpy.fft import ...`` before the session must still make a
table that a traced ``argmax`` reads as a gather; a NumPy scalar made from a traced value
must be reported at this file's line. Prints one line per check.
"""

import sys
import tempfile
import warnings

import numpy as np
from numpy.fft import rfft, rfftfreq
from numpy.lib.stride_tricks import sliding_window_view

import patchport
from patchport import annotate

RATE = 1000.0


def peak_frequency(signal):
    frames = sliding_window_view(signal, 32)[::16] * np.hanning(32)
    power = np.abs(rfft(frames, axis=-1)) ** 2
    freqs = rfftfreq(32, d=1 / RATE)  # a from-imported table maker
    return {"peak": freqs[np.argmax(power, axis=-1)], "energy": power.sum(axis=-1)}


rng = np.random.default_rng(0)
folder = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()
with patchport.session("spectral", save_path=folder):
    x = annotate.input_tensors("n", {"signal": rng.normal(size=128)})
    annotate.output_tensors("n", peak_frequency(x), export_with="onnx")
result = patchport.compile_graph(visualize=False)
fresh = rng.normal(size=128)
out = patchport.InferenceManager(result.yaml_path).run_policy({"n/signal": fresh})
want = peak_frequency(fresh)
assert np.allclose(np.asarray(out["n/peak"]), want["peak"]), (out["n/peak"], want["peak"])
assert np.allclose(np.asarray(out["n/energy"]), want["energy"])
print("from-imported spectral pipeline replays")

with patchport.session("scalar", save_path=folder):
    x = annotate.input_tensors("n", {"signal": rng.normal(size=16)})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gain = np.float32(x.std())  # NumPy copies the value in C
        line = sys._getframe().f_lineno - 1
        scaled = x * gain
    losses = [w for w in caught if issubclass(w.category, patchport.TraceLossWarning)]
    assert losses and losses[0].filename == __file__ and losses[0].lineno == line, [
        (w.filename, w.lineno, str(w.message)) for w in caught
    ]
    annotate.output_tensors("n", {"y": scaled})
print("np.float32 of a traced value reported at the script line")
