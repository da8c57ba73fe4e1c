"""Run as a script: from-imported OpenCV functions in ``__main__`` (issue 9, bugs 1 and 2).

``import torch`` registers this module a second time as ``__mp_main__``; start() must
still patch each alias once. A from-imported native function without a replacement
must warn at this file's line like ``cv2.erode(...)`` does. Prints one line per check.
"""

import sys
import warnings

import cv2
import numpy as np
import torch
from cv2 import COLOR_BGR2RGB, cvtColor, erode
from numpy import asarray
from torch import from_numpy

import patchport
from patchport import annotate
from patchport.tracing import is_traced


def flip(src, code, dst=None, dstCn=0):
    return torch.from_numpy(src).flip((-1,)).numpy()


assert sys.modules.get("__mp_main__") is sys.modules["__main__"], "torch no longer aliases"
frame = np.random.default_rng(0).integers(0, 256, size=(6, 8, 3), dtype=np.uint8)
original = cvtColor

patchport.start("aliases", patching=[patchport.FunctionPatch(cv2, "cvtColor", flip)])
try:
    print("started")
    x = annotate.input_tensors("n", {"bgr": frame})
    rgb = cvtColor(x, COLOR_BGR2RGB)  # the from-import reaches the replacement
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        eroded = erode(x, None)  # native, unpatched, through a from-import
    losses = [w for w in caught if issubclass(w.category, patchport.TraceLossWarning)]
    assert losses and "cv2.erode" in str(losses[0].message), [str(w.message) for w in caught]
    assert losses[0].filename == __file__, losses[0].filename
    print("erode alias warned at the script line")
    assert is_traced(from_numpy(rgb)) and is_traced(asarray(from_numpy(rgb)))
    print("from-imported conversions keep data traced")
    annotate.output_tensors("n", {"rgb": rgb})
finally:
    patchport.stop()
assert cvtColor is original and erode is cv2.erode, "aliases were not restored"
assert from_numpy is torch.from_numpy and asarray is np.asarray, "aliases were not restored"
patch = patchport.session_patches().find("__main__.cvtColor")
assert patch is not None and patch.calls == 1, patchport.session_patches()
print("alias patched once and restored")

with patchport.session("strict", strict=True):
    x = annotate.input_tensors("n", {"bgr": frame})
    try:
        erode(x, None)
    except patchport.TraceLossError as exc:
        assert "cv2.erode" in str(exc)
        print("erode alias raises when strict")
    annotate.output_tensors("n", {"bgr": x + 1})
