"""Pillow replacements (patching=["pil"]) against the installed Pillow: bit-exact resize for
every filter, box and mode, convert/crop/transpose, traced sessions replayed by ONNX Runtime,
torch.export and TorchScript on fresh images, the untraced path left alone, loud losses."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

PIL = pytest.importorskip("PIL")  # Pillow is an optional dependency: these tests need it

from PIL import Image  # noqa: E402

import patchport  # noqa: E402
from patchport import annotate  # noqa: E402
from patchport.patches import pil  # noqa: E402
from patchport.patches.pil import color, geometry  # noqa: E402
from tests.script_runs import Script  # noqa: E402

from .helpers import PROPERTY  # noqa: E402

SCRIPT = Script(
    "pil_pipeline",
    lambda folder: [sys.executable, Path(__file__).parent / "pil_pipeline.py", folder],
    timeout=600,
)
BACKGROUND = [SCRIPT]  # started in the background: tests/script_runs.py
DOCS = Path(__file__).resolve().parents[2] / "docs" / "pil.md"


def _image(seed: int, height: int, width: int, channels: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    shape = (height, width) if channels == 1 else (height, width, channels)
    pixels = rng.integers(0, 256, shape, dtype=np.uint8)
    if channels == 4:  # alpha with the edge values Pillow's premultiplication treats apart
        pixels[..., 3] = rng.choice(np.array([0, 1, 128, 254, 255], np.uint8), (height, width))
    return pixels


def _box(data, width: int, height: int):
    x0 = data.draw(st.floats(0, width - 1))
    y0 = data.draw(st.floats(0, height - 1))
    box = (x0, y0, data.draw(st.floats(x0, width)), data.draw(st.floats(y0, height)))
    return tuple(float(round(v)) for v in box) if data.draw(st.booleans()) else box


@PROPERTY
@given(
    seed=st.integers(0, 2**31),
    height=st.integers(1, 40),
    width=st.integers(1, 40),
    channels=st.sampled_from([1, 3, 4]),
    size=st.tuples(st.integers(1, 64), st.integers(1, 64)),
    resample=st.sampled_from([None, 0, 1, 2, 3, 4, 5]),
    data=st.data(),
)
def test_resize_is_bit_exact_with_pillow(seed, height, width, channels, size, resample, data):
    image = Image.fromarray(_image(seed, height, width, channels))
    box = _box(data, width, height) if data.draw(st.booleans()) else None
    try:
        want = np.asarray(image.resize(size, resample, box))
    except ValueError as error:  # an empty box: the replacement raises what Pillow raises
        with pytest.raises(ValueError, match=str(error)):
            geometry.resize(image, size, resample, box)
        return
    got = np.asarray(geometry.resize(image, size, resample, box))
    assert got.shape == want.shape and np.array_equal(got, want)


@pytest.mark.parametrize("source", ["L", "RGB", "RGBA"])
@pytest.mark.parametrize("target", ["L", "RGB", "RGBA"])
def test_convert_crop_transpose_are_bit_exact(source, target):
    image = Image.fromarray(_image(3, 17, 23, 4)).convert(source)
    assert np.array_equal(np.asarray(color.convert(image, target)), image.convert(target))
    for method in range(7):
        got = geometry.transpose(image, method)
        assert np.array_equal(np.asarray(got), image.transpose(method))
    for box in [(0, 0, 3, 3), (-2, -3, 4, 5), (1.5, 2.5, 9.7, 12.2), (3, 2, 30, 20)]:
        assert np.array_equal(np.asarray(geometry.crop(image, box)), image.crop(box))


def _traced(tmp_path, backend, pipeline, make, samples=3):
    """Trace ``pipeline`` with patching=["pil"], export with ``backend``, replay fresh inputs."""
    rng = np.random.default_rng(1)
    node = f"pil_{backend}"
    with (
        warnings.catch_warnings(record=True) as caught,
        patchport.session(node, tmp_path, patching=["pil"]),
    ):
        warnings.simplefilter("always")
        x = annotate.input_tensors(node, {"x": make(rng)})
        annotate.output_tensors(node, pipeline(x), export_with=backend)
    lost = [str(w.message) for w in caught if issubclass(w.category, patchport.TraceLossWarning)]
    assert not lost
    manager = patchport.InferenceManager(patchport.compile_graph(visualize=False).yaml_path)
    for _ in range(samples):
        fresh = make(rng)
        want = pipeline(fresh)
        got = manager.run_policy({f"{node}/x": fresh})
        for key, value in want.items():
            assert np.array_equal(np.asarray(got[f"{node}/{key}"]), value), (backend, key)


def _every_call(x):
    image = Image.fromarray(x[:, :, ::-1])  # BGR -> RGB: a negative-stride view
    outputs = {}
    for code in (0, 1, 2, 3, 4, 5):
        outputs[f"up{code}"] = np.asarray(image.resize((41, 37), code))
        outputs[f"down{code}"] = np.asarray(image.resize((13, 9), code, box=(1.5, 2.25, 30, 20)))
    rgba = image.convert("RGBA")
    outputs["rgba"] = np.asarray(rgba.resize((19, 11), Image.Resampling.BICUBIC))
    outputs["gray"] = np.array(image.convert("L").crop((-2, 3, 20, 40)).transpose(2))
    assert (image.width, image.height, image.mode) == (32, 24, "RGB")
    return outputs


@pytest.mark.parametrize("backend", ["onnx", "pt2", "jit"])
def test_traced_calls_replay_bit_exactly_on_fresh_images(tmp_path, backend):
    make = lambda rng: rng.integers(0, 256, (24, 32, 3), dtype=np.uint8)  # noqa: E731
    _traced(tmp_path, backend, _every_call, make)


def test_untraced_images_inside_a_session_are_pillow_s_own(tmp_path):
    plain = _image(5, 12, 10, 3)
    with patchport.session("plain", tmp_path, patching=["pil"]):
        x = annotate.input_tensors("plain", {"x": plain})
        image = Image.fromarray(plain)
        assert type(image) is Image.Image and not image.readonly
        assert type(Image.fromarray(x)) is pil.TracedImage
        resized = image.resize((5, 4))
        assert type(resized) is Image.Image
        assert np.asarray(resized).flags.writeable is False
        annotate.output_tensors("plain", {"y": x + 1})
    assert type(Image.fromarray(plain)) is Image.Image


def test_a_traced_image_behaves_like_pillow_s(tmp_path):
    with patchport.session("like", tmp_path, patching=["pil"]):
        x = annotate.input_tensors("like", {"x": _image(6, 12, 10, 3)})
        image = Image.fromarray(x)
        assert isinstance(image, Image.Image) and image.size == (10, 12) and image.mode == "RGB"
        assert (image.width, image.height) == (10, 12) and repr(image).startswith("<PIL.Image")
        assert not np.asarray(image).flags.writeable and np.array(image).flags.writeable
        gray = Image.fromarray(x[..., 0].copy())
        source = gray  # Pillow shares an L array's memory: later writes show in the image
        annotate.output_tensors("like", {"y": np.asarray(source)})


def test_other_pixel_reads_warn_at_the_user_line_and_stay_right(tmp_path):
    pixels = _image(7, 12, 10, 3)
    with patchport.session("loss", tmp_path, patching=["pil"]):
        x = annotate.input_tensors("loss", {"x": pixels})
        image = Image.fromarray(x)
        with pytest.warns(patchport.TraceLossWarning, match="Pillow reads the pixels") as caught:
            rotated = image.rotate(30)  # no replacement: Pillow's own result, loudly
        assert caught[0].filename == __file__
        assert np.array_equal(np.asarray(rotated), Image.fromarray(pixels).rotate(30))
        assert type(np.asarray(image)) is np.ndarray  # the image is the plain one now
        annotate.output_tensors("loss", {"y": x + 1})


def test_unsupported_cases_are_refused_naming_the_argument(tmp_path):
    with patchport.session("refused", tmp_path, patching=["pil"]):
        x = annotate.input_tensors("refused", {"x": _image(8, 12, 10, 3)})
        with pytest.raises(pil.UnsupportedCaseError, match="obj.dtype=float32"):
            Image.fromarray(x.astype(np.float32))
        image = Image.fromarray(x)
        with pytest.raises(pil.UnsupportedCaseError, match="reducing_gap"):
            image.resize((2, 2), Image.BILINEAR, reducing_gap=2.0)
        with pytest.raises(pil.UnsupportedCaseError, match="resample=6"):
            image.resize((5, 5), 6)
        with pytest.raises(pil.UnsupportedCaseError, match="mode='P'"):
            image.convert("P")
        annotate.output_tensors("refused", {"y": x + 1})


def test_docs_pil_md_is_up_to_date():
    assert DOCS.read_text(encoding="utf-8") == pil.render_markdown(), (
        "docs/pil.md is stale: run `patchport patches pil-docs -o docs/pil.md`"
    )


WITHOUT_PILLOW = textwrap.dedent(
    """
    import sys
    sys.modules["PIL"] = None  # as if Pillow were not installed: importing it fails
    import numpy as np
    import patchport
    from patchport import annotate

    print("imported:", "PIL" in sys.modules and sys.modules["PIL"] is not None)
    try:
        patchport.start("needs_pil", patching=["pil"])
    except ImportError as error:
        print("refused:", error)
    with patchport.session("plain"):
        x = annotate.input_tensors("n", {"x": np.arange(4.0)})
        annotate.output_tensors("n", {"y": np.sqrt(x) + 1.0})
    """
)


def test_patchport_works_without_pillow_and_refuses_the_pil_set_naming_the_fix():
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_PILLOW], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "imported: False"  # import patchport does not import Pillow
    assert lines[1].startswith("refused: patchport.patches.pil needs Pillow >= 11")
    assert "pip install 'patchport[pil]'" in lines[1]


def test_a_detectron2_style_predictor_runs_as_a_script():
    out = SCRIPT.result().output()
    assert out.split() == ["onnx", "right", "pt2", "right", "jit", "right"]
