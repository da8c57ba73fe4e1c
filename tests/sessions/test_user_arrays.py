"""Arrays user code made before the session: a deploy loop's observation buffer (a module
global), a wrapper's frame buffer (``self._obs_buffer`` from ``__init__``), a lookup table
read with traced indices. A plain ndarray gives Python no hook, so their traced writes
and reads were silent constants; for the session each is watched like a buffer made in it,
and a pass that leaves part of one unwritten (state from earlier calls) says so at the
line of its first write."""

from __future__ import annotations

import sys
import warnings
from typing import NamedTuple

import numpy as np
import pytest

import patchport
from patchport import annotate

OBS = np.zeros(8, dtype=np.float32)  # made once, filled each step (a deploy script)
GAMMA = (np.linspace(0, 1, 256) ** 0.5 * 255).astype(np.uint8)  # a lookup table
STACK = np.zeros((3, 4), dtype=np.float32)  # a frame stack: rolled, one row written


class MaxAndSkip:
    def __init__(self) -> None:
        self._obs_buffer = np.zeros((2, 4), dtype=np.float32)

    def observation(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        self._obs_buffer[0] = a
        self._obs_buffer[1] = b
        return self._obs_buffer.max(axis=0)


SKIP = MaxAndSkip()
TABLES = {"gamma": GAMMA.copy(), "scale": np.float32([0.5, 2.0, 4.0])}  # tables in a dict
OFFSETS = [np.float32([1.0, -1.0, 0.5])]  # and in a list
PAIR = (np.float32([3.0, 5.0, 7.0]), "kept")  # and in a tuple


class Gains(NamedTuple):
    kp: np.ndarray
    kd: float


GAINS = Gains(np.float32([0.5, 1.5, 2.5]), 0.1)  # and in a named tuple


class Normaliser:
    MEAN = np.float32([0.1, 0.2, 0.3])  # class attributes, read through self
    STD = np.float32([2.0, 4.0, 8.0])

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return (x - self.MEAN) / self.STD


def table_containers(pixels: np.ndarray, v: np.ndarray) -> dict:
    index = np.argmax(v) % 3
    return {
        "gamma": TABLES["gamma"][pixels],
        "scaled": v * TABLES["scale"][index] + OFFSETS[0][index],
        "normalised": Normaliser()(v),
        "paired": PAIR[0][index] * v + GAINS.kp[index] * GAINS.kd,
    }


def fill_observation(omega: np.ndarray, q: np.ndarray) -> dict:
    OBS[:3] = omega * 0.25
    OBS[3:] = q - 0.1
    return {"obs": OBS.copy(), "scaled": OBS * 2.0}


def max_frames(a: np.ndarray, b: np.ndarray) -> dict:
    return {"pooled": SKIP.observation(a, b)}


def gamma_lookup(pixels: np.ndarray) -> dict:
    return {"out": GAMMA[pixels]}


def push_frame(frame: np.ndarray) -> dict:
    global STACK
    STACK = np.roll(STACK, -1, axis=0)
    STACK[-1] = frame  # the older rows are state from earlier calls
    return {"stack": STACK.copy()}


def _export(fn, inputs: dict, tmp_path, backend: str = "onnx"):  # noqa: ANN001, ANN202
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with patchport.session("user", save_path=tmp_path):
            traced = annotate.input_tensors("n", inputs)
            traced = traced if isinstance(traced, tuple) else (traced,)
            annotate.output_tensors("n", fn(*traced), export_with=backend)
        result = patchport.compile_graph(visualize=False, strict=False)
    losses = [w for w in caught if issubclass(w.category, patchport.TraceLossWarning)]
    return patchport.InferenceManager(result.yaml_path), losses


def _rand(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.uniform(-1, 1, size=shape).astype(np.float32)


@pytest.mark.parametrize("backend", ["onnx", "jit"])
def test_global_buffer_filled_each_step_replays(tmp_path, backend) -> None:  # noqa: ANN001
    rng = np.random.default_rng(0)
    manager, losses = _export(
        fill_observation, {"omega": _rand(rng, 3), "q": _rand(rng, 5)}, tmp_path, backend
    )
    assert not losses, [str(w.message) for w in losses]
    omega, q = _rand(rng, 3), _rand(rng, 5)
    got = manager.run_policy({"n/omega": omega, "n/q": q})
    want = fill_observation(omega, q)
    np.testing.assert_allclose(got["n/obs"].numpy(), want["obs"], rtol=1e-6)
    np.testing.assert_allclose(got["n/scaled"].numpy(), want["scaled"], rtol=1e-6)


def test_attribute_buffer_of_a_wrapper_replays(tmp_path) -> None:  # noqa: ANN001
    rng = np.random.default_rng(1)
    manager, losses = _export(max_frames, {"a": _rand(rng, 4), "b": _rand(rng, 4)}, tmp_path)
    assert not losses
    a, b = _rand(rng, 4), _rand(rng, 4)
    got = manager.run_policy({"n/a": a, "n/b": b})["n/pooled"].numpy()
    np.testing.assert_allclose(got, np.maximum(a, b))


def test_module_table_read_with_traced_indices_replays(tmp_path) -> None:  # noqa: ANN001
    rng = np.random.default_rng(2)
    pixels = rng.integers(0, 256, (4, 5), dtype=np.uint8)
    manager, losses = _export(gamma_lookup, {"pixels": pixels}, tmp_path)
    assert not losses
    fresh = rng.integers(0, 256, (4, 5), dtype=np.uint8)
    np.testing.assert_array_equal(manager.run_policy({"n/pixels": fresh})["n/out"], GAMMA[fresh])


def test_tables_in_dicts_lists_and_class_attributes_replay(tmp_path) -> None:  # noqa: ANN001
    """One level into module-level dicts, lists and tuples, and a user class's own
    attributes: a plain array there read with a traced index was a silent constant."""
    rng = np.random.default_rng(5)

    def inputs() -> dict:
        return {"pixels": rng.integers(0, 256, (3, 4), dtype=np.uint8), "v": _rand(rng, 3)}

    manager, losses = _export(table_containers, inputs(), tmp_path)
    assert not losses, [str(w.message) for w in losses]
    for _ in range(3):
        fresh = inputs()
        got = manager.run_policy({f"n/{k}": v for k, v in fresh.items()})
        for name, want in table_containers(**fresh).items():
            np.testing.assert_allclose(got[f"n/{name}"].numpy(), want, rtol=1e-6)
    assert type(TABLES["gamma"]) is np.ndarray and type(Normaliser.MEAN) is np.ndarray
    assert type(PAIR[0]) is np.ndarray and type(GAINS.kp) is np.ndarray


def test_state_left_in_a_buffer_is_reported_at_its_first_write(tmp_path) -> None:  # noqa: ANN001
    _, losses = _export(push_frame, {"frame": _rand(np.random.default_rng(3), 4)}, tmp_path)
    messages = [str(w.message) for w in losses]
    line = push_frame.__code__.co_firstlineno + 3  # STACK[-1] = frame
    assert any(f"{__file__}:{line}" in m and "STACK" in m for m in messages), messages
    assert any(w.filename == __file__ and w.lineno == line for w in losses)


def test_arrays_are_given_back_when_the_session_stops(tmp_path) -> None:  # noqa: ANN001
    module = sys.modules[__name__]
    before = (OBS, GAMMA, SKIP._obs_buffer, PAIR, GAINS)
    with patchport.session("give_back", save_path=tmp_path):
        assert type(module.OBS) is not np.ndarray and np.shares_memory(module.OBS, before[0])
        assert module.PAIR is not before[3] and module.PAIR[1] == "kept"
        assert type(module.GAINS) is Gains and np.shares_memory(module.GAINS.kp, before[4].kp)
        module.GAMMA = rebound = np.arange(3)  # rebound by user code: kept
    assert module.OBS is before[0] and type(module.OBS) is np.ndarray
    assert SKIP._obs_buffer is before[2]
    assert module.PAIR is before[3] and module.GAINS is before[4]
    assert module.GAMMA is rebound
    module.GAMMA = before[1]


LOCAL_TABLES_SCRIPT = """
import sys
import numpy as np
import patchport
from patchport import annotate


class Preprocess:
    def __init__(self):
        self.lut = (np.linspace(0, 1, 256) ** 0.5).astype(np.float32)  # a lookup table
        self.gains = {"k": np.float32([0.5, 2.0, 4.0])}

    def __call__(self, pixels, v):
        return {"out": self.lut[pixels] * self.gains["k"][np.argmax(v) % 3]}


def main(folder):
    pre = Preprocess()  # made before the session, held by a local of this function
    tables = [np.float32([1.0, -1.0, 0.5])]
    rng = np.random.default_rng(0)
    with patchport.session("local", save_path=folder):
        pixels, v = annotate.input_tensors("n", {"pixels": rng.integers(0, 256, (3, 4),
                                                 dtype=np.uint8), "v": np.float32([3, 1, 2])})
        out = pre(pixels, v)
        out["shift"] = v + tables[0][np.argmax(v) % 3]
        annotate.output_tensors("n", out, export_with="onnx")
    manager = patchport.InferenceManager(patchport.compile_graph(visualize=False).yaml_path)
    worst = 0.0
    for _ in range(4):
        p, w = rng.integers(0, 256, (3, 4), dtype=np.uint8), rng.normal(size=3).astype(np.float32)
        got = manager.run_policy({"n/pixels": p, "n/v": w})
        want = dict(pre(p, w), shift=w + tables[0][np.argmax(w) % 3])
        for name in want:
            worst = max(worst, float(np.abs(got["n/" + name].numpy() - want[name]).max()))
    print("WORST", worst, type(pre.lut).__name__)


main(sys.argv[1])
"""


def test_tables_held_by_a_functions_locals_are_traced_as_a_script_runs(tmp_path) -> None:  # noqa: ANN001
    """A preprocessing object (or a list) made in ``main()`` before the session: reading its
    table with traced indices is traced, not silently frozen, and it gets its arrays back."""
    import subprocess

    script = tmp_path / "deploy.py"
    script.write_text(LOCAL_TABLES_SCRIPT)
    run = subprocess.run(
        [sys.executable, "-W", "error::patchport.TraceLossWarning", str(script), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "WORST 0.0 ndarray" in run.stdout, run.stdout + run.stderr[-2000:]


SCREWS = np.array([[0, 0, 1, 0, 0, 0], [0, 1, 0, -3, 0, 0], [0, 1, 0, -3, 0, 5]]).T  # int
POSE = np.zeros(4, dtype=np.float32)  # filled through np.asarray of it


def copy_then_fill(theta: np.ndarray) -> dict:
    """Modern Robotics' JacobianSpace buffer: a table copied by NumPy's converters (and
    cast), then columns written with traced data."""
    js = np.array(SCREWS).copy().astype(float)
    js[:, 1] = js[:, 1] * theta[0]
    cast = np.asarray(SCREWS, dtype=np.float64)
    cast[0] = theta[:3]
    contiguous = np.ascontiguousarray(SCREWS.T, dtype=np.float32)
    contiguous[2, :3] = theta
    local = np.array(np.zeros((2, 3)), dtype=np.float32)
    local[1] = theta
    view = np.asarray(POSE)  # the same memory: a write through it is a write of POSE
    view[1:] = theta
    view[0] = theta[0] * 2.0
    return {"js": js, "cast": cast, "c": contiguous, "local": local, "pose": POSE.copy()}


@pytest.mark.parametrize("backend", ["onnx", "pt2"])
def test_copies_of_a_table_by_np_array_take_traced_writes(tmp_path, backend) -> None:  # noqa: ANN001
    """``np.array(table)`` / ``np.asarray(table, dtype=...)`` / ``np.ascontiguousarray``
    of a table made before or in the session is a new buffer user code then fills: its
    traced writes were silently dropped (the copy was a plain array)."""
    rng = np.random.default_rng(6)
    manager, losses = _export(copy_then_fill, {"theta": _rand(rng, 3)}, tmp_path, backend)
    assert not losses, [str(w.message) for w in losses]
    for _ in range(2):
        theta = _rand(rng, 3)
        got = manager.run_policy({"n/theta": theta})
        for name, want in copy_then_fill(theta).items():
            np.testing.assert_allclose(got[f"n/{name}"].numpy(), want, rtol=1e-6, err_msg=name)
    assert type(SCREWS) is np.ndarray and type(POSE) is np.ndarray
