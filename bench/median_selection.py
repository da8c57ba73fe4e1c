"""What a traced median costs: the sorting-network selection against torch.sort of the taps.

For windows of 9 to 121 taps over a 240x320 float64 image, prints the CPU time (one thread)
of ``torch.sort(torch.stack(taps))`` at the middle rank, ``torch.median`` over the stack, and
:func:`patchport.patches.scipy.ndimage.select_rank` (which must agree exactly), then the time
``compile_graph`` takes to write a session's 3x3 ``scipy.ndimage.median_filter`` to ONNX and
which writer wrote it. Prints; not a test.
Run: python bench/median_selection.py
"""

from __future__ import annotations

import logging
import resource
import tempfile
import time

import numpy as np
import torch

import patchport
from patchport import annotate
from patchport.patches.scipy.ndimage import select_rank


def cpu_ms(run, repeats: int = 5) -> float:
    run()
    start = resource.getrusage(resource.RUSAGE_SELF).ru_utime
    for _ in range(repeats):
        run()
    return (resource.getrusage(resource.RUSAGE_SELF).ru_utime - start) / repeats * 1e3


def selection() -> None:
    torch.set_num_threads(1)
    generator = torch.Generator().manual_seed(0)
    print(f"{'taps':>5} {'sort ms':>9} {'median ms':>10} {'network ms':>11}")
    for n in (9, 25, 49, 121):
        taps = [torch.rand(240, 320, dtype=torch.float64, generator=generator) for _ in range(n)]
        middle = n // 2
        assert torch.equal(
            select_rank(taps, middle), torch.sort(torch.stack(taps), 0).values[middle]
        )
        sort = cpu_ms(lambda t=taps, m=middle: torch.sort(torch.stack(t), 0).values[m])
        median = cpu_ms(lambda t=taps: torch.stack(t).median(0).values)
        network = cpu_ms(lambda t=taps, m=middle: select_rank(t, m))
        print(f"{n:>5} {sort:>9.1f} {median:>10.1f} {network:>11.1f}")


class _Writer(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def export() -> None:
    import scipy.ndimage as ndi

    writer = _Writer()
    log = logging.getLogger("patchport.export.backends")
    log.addHandler(writer)
    log.setLevel(logging.DEBUG)
    image = np.random.default_rng(0).normal(size=(60, 80))
    with tempfile.TemporaryDirectory() as folder:
        with patchport.session("median", save_path=folder, patching=["scipy"]):
            x = annotate.input_tensors("n", {"x": image})
            annotate.output_tensors("n", {"m": ndi.median_filter(x, 3)}, export_with="onnx")
        start = time.perf_counter()
        patchport.compile_graph(visualize=False)
        seconds = time.perf_counter() - start
    print(f"compile_graph of a 3x3 median_filter to ONNX: {seconds:.2f} s")
    print("\n".join(line for line in writer.lines if line.startswith("onnx ")))


if __name__ == "__main__":
    selection()
    export()
