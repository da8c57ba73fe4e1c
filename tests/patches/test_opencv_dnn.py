"""cv2.dnn.blobFromImage / blobFromImages replacements vs real cv2 on random images."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchport.patches.opencv import dnn
from tests.script_runs import Script

from .helpers import PROPERTY, assert_matches, image, seeds

pytestmark = pytest.mark.filterwarnings("error:export_with='jit-script'")  # no trace fallback

FROM_IMPORT = Script(
    "vision_from_import",
    lambda folder: [sys.executable, Path(__file__).parent / "vision_from_import.py", folder],
    timeout=300,
)
BACKGROUND = [FROM_IMPORT]  # started in the background: tests/script_runs.py

sizes = st.one_of(st.just((0, 0)), st.tuples(st.integers(1, 40), st.integers(1, 40)))
means = st.one_of(
    st.just((0, 0, 0)),
    st.tuples(*[st.floats(-50, 200, allow_nan=False)] * 3),
    st.floats(-50, 200, allow_nan=False),
)
interpolations = st.sampled_from(
    [cv2.INTER_LINEAR, cv2.INTER_NEAREST, cv2.INTER_AREA, cv2.INTER_CUBIC]
)


@PROPERTY
@given(
    seed=seeds,
    height=st.integers(1, 40),
    width=st.integers(1, 40),
    cn=st.sampled_from([0, 1, 3, 4]),
    dtype=st.sampled_from(["uint8", "float32", "float64"]),
    scalefactor=st.sampled_from([1.0, 1 / 255.0, 1 / 127.5, 0.017, 2.0]),
    size=sizes,
    mean=means,
    swap=st.booleans(),
    crop=st.booleans(),
    interpolation=interpolations,
)
def test_blob_from_image_matches_opencv(
    seed, height, width, cn, dtype, scalefactor, size, mean, swap, crop, interpolation
):
    src = image(seed, height, width, cn, dtype)
    if dtype != "uint8":
        src = src * 255
    args = (scalefactor, size, mean, swap, crop, cv2.CV_32F, interpolation)
    expected = cv2.dnn.blobFromImage(src, *args)
    got = dnn.blobFromImage(src, *args)
    if dtype == "uint8" and interpolation == cv2.INTER_CUBIC:  # resize's cubic: within 1
        np.testing.assert_allclose(got, expected, rtol=0, atol=abs(scalefactor) * 1.0001)
    elif dtype == "uint8":
        np.testing.assert_array_equal(got, expected)  # declared exact
    else:
        assert_matches("subtract", expected, got, scale=float(np.abs(expected).max(initial=1)))


@PROPERTY
@given(
    seed=seeds,
    count=st.integers(1, 3),
    size=sizes,
    swap=st.booleans(),
    crop=st.booleans(),
)
def test_blob_from_images_matches_opencv(seed, count, size, swap, crop):
    rng = np.random.default_rng(seed)
    images = [
        image(seed + i, int(rng.integers(1, 30)), int(rng.integers(1, 30)), 3, "uint8")
        for i in range(count)
    ]
    args = (1 / 255.0, size, (104.0, 117.0, 123.0), swap, crop)
    np.testing.assert_array_equal(
        dnn.blobFromImages(images, *args), cv2.dnn.blobFromImages(images, *args)
    )


def test_uint8_blobs_keep_the_pixels():
    src = image(3, 17, 23, 3, "uint8")
    args = (1.0, (11, 7), (0, 0, 0), True, False, cv2.CV_8U)
    expected = cv2.dnn.blobFromImage(src, *args)
    got = dnn.blobFromImage(src, *args)
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got, expected)
    with pytest.raises(ValueError, match="argument scalefactor/mean="):
        dnn.blobFromImage(src, 2.0, (11, 7), ddepth=cv2.CV_8U)


@pytest.mark.parametrize(
    ("args", "named"),
    [
        ((image(1, 5, 5, 2, "uint8"),), "image channels=2"),
        ((image(1, 5, 5, 3, "uint8").astype(np.float16),), "image.dtype=float16"),
        ((image(1, 5, 5, 3, "uint8"), 1.0, (4, 0)), "size=(4, 0)"),
        ((image(1, 5, 5, 3, "uint8"), 1.0, (4, 4), 0, False, False, cv2.CV_64F), "ddepth=6"),
    ],
)
def test_unsupported_blobs_are_refused_naming_the_argument(args, named):
    with pytest.raises(ValueError, match=re.escape(f"argument {named}")):
        dnn.blobFromImage(*args)


def test_a_traced_frame_exports_its_blob_to_every_backend(tmp_path):
    """A detector's input line (letterboxed frame to blob) replays in each backend."""
    import patchport
    from patchport import annotate

    def prepare(frame):
        return {"blob": cv2.dnn.blobFromImage(frame, 1 / 127.5, (32, 24), (127.5,) * 3, True)}

    rng = np.random.default_rng(0)
    frames = [rng.integers(0, 256, (30, 40, 3), dtype=np.uint8) for _ in range(3)]
    with patchport.session("blob", str(tmp_path), patching=["opencv"], strict=True):
        for backend in ("onnx", "pt2", "jit"):
            frame = annotate.input_tensors(backend, {"frame": frames[0]})
            annotate.output_tensors(backend, prepare(frame), export_with=backend)
    manager = patchport.InferenceManager(patchport.compile_graph(visualize=False).yaml_path)
    outputs = manager.run_policy({f"{b}/frame": frames[2] for b in ("onnx", "pt2", "jit")})
    for backend in ("onnx", "pt2", "jit"):
        got = outputs[f"{backend}/blob"].numpy()
        np.testing.assert_array_equal(got, prepare(frames[2])["blob"])


def test_from_imported_replacements_run_as_a_script():
    """``from cv2.dnn import blobFromImage`` and ``from cv2 import pyrDown, ...`` in a real
    script: the captured names are patched, nothing is lost, the replay is exact."""
    assert "replayed ['n/blob', 'n/gray']" in FROM_IMPORT.result().output()
