"""Buffers user code creates in a session and fills with traced data are recorded."""

import warnings

import numpy as np
import pytest
import torch

import patchport

from .pipeline_check import export_and_replay

RNG = np.random.default_rng(0)


def _obs_by_slice(ang_vel, gravity):
    obs = np.zeros((1, 9), np.float32)
    obs[0, 0:3] = ang_vel * 0.25
    obs[0, 3:6] = gravity
    obs[0, 6] = 1.0  # a plain write stays a plain value in the graph
    obs[0, 7:] = ang_vel[:2] - gravity[:2]
    return {"obs": obs}


def _rows_by_view(ang_vel, gravity):
    out = np.ones((2, 3), np.float32)
    row = out[1]  # a view of the fresh buffer, written through
    row[:] = ang_vel
    out[0] *= gravity
    return {"out": out}


def _mask_and_fancy(ang_vel, gravity):
    buf = np.full((3,), -1.0, np.float32)
    buf[ang_vel > 0] = gravity[ang_vel > 0]
    eye = np.eye(3, dtype=np.float32)
    eye[[0, 2], [2, 0]] = ang_vel[:2]
    return {"buf": buf, "eye": eye}


def _put_copyto_out(ang_vel, gravity):
    a = np.empty((3,), np.float32)
    np.copyto(a, gravity)
    b = np.zeros(3, np.float32)
    np.put(b, [0, 2], ang_vel[:2])
    c = np.identity(3, np.float32)[0]
    np.multiply(ang_vel, gravity, out=c)
    d = np.zeros(3, np.float32)
    d += ang_vel
    e = np.zeros(3, np.float32)
    np.putmask(e, gravity > 0, ang_vel)
    return {"a": a, "b": b, "c": c, "d": d, "e": e}


def _list_of_traced_scalars(ang_vel, gravity):
    obs = np.zeros((1, 6), np.float32)
    w, x, y = ang_vel  # a list of traced scalars written into a slice
    obs[0, 0:3] = [y, x * w, gravity[0] + w]
    obs[0, 3:] = [1.0, 2.0, 3.0]  # a list of plain numbers stays a constant
    return {"obs": obs}


@pytest.mark.parametrize(
    "fn",
    [_obs_by_slice, _rows_by_view, _mask_and_fancy, _put_copyto_out, _list_of_traced_scalars],
)
def test_fresh_buffer_filled_with_traced_data_replays_new_inputs(fn, tmp_path):
    first = {"ang_vel": RNG.normal(size=3).astype(np.float32), "gravity": RNG.normal(size=3)}
    first["gravity"] = first["gravity"].astype(np.float32)
    second = {k: RNG.normal(size=3).astype(np.float32) for k in first}
    replay, warned = export_and_replay(fn, first, second, tmp_path)
    assert not warned, [str(w.message) for w in warned]
    expected = fn(**second)
    for key, value in expected.items():
        np.testing.assert_allclose(replay[key].reshape(value.shape), value, rtol=1e-6)


def test_scatter_into_point_map(tmp_path):
    def scatter(pts):
        xyz = np.zeros((4, 5, 3), np.float32)
        vs = np.array([0, 1, 3])
        us = np.array([4, 2, 0])
        xyz[vs, us] = pts
        return {"xyz": xyz}

    first = {"pts": RNG.normal(size=(3, 3)).astype(np.float32)}
    second = {"pts": RNG.normal(size=(3, 3)).astype(np.float32)}
    replay, warned = export_and_replay(scatter, first, second, tmp_path)
    assert not warned
    np.testing.assert_allclose(replay["xyz"], scatter(**second)["xyz"])


def test_library_creation_calls_stay_plain_arrays():
    import numpy.lib._function_base_impl as library  # a NumPy module calling np.zeros

    with patchport.session("plain"):
        made_here = np.zeros(3)
        made_by_numpy = library.zeros(3) if hasattr(library, "zeros") else np.asarray([0.0])
        assert type(made_by_numpy) is np.ndarray
        # user buffers behave like plain arrays until traced data is written
        assert isinstance(made_here, np.ndarray)
        assert np.array_equal(made_here + 1, np.ones(3))
        assert type(np.median(np.arange(5.0))) is np.float64


def test_traced_write_into_an_array_made_before_the_session_warns_at_the_line():
    before = np.zeros(3)
    with patchport.session("loud"):
        x = patchport.annotate.input_tensors("n", {"x": np.ones(3)})
        with pytest.warns(patchport.TraceLossWarning, match="np.copyto") as record:
            np.copyto(before, x)
        patchport.annotate.output_tensors("n", {"y": x + 1})
    assert record[0].filename == __file__


def test_lookup_table_built_in_the_session_is_a_gather(tmp_path):
    def colorize(idx):
        lut = np.array([((i / 255.0) ** 0.5) * 255 for i in range(256)]).astype(np.uint8)
        wheel = np.zeros((8, 3))
        wheel[:, 0] = np.arange(8) * 30
        colors = wheel[idx % 8]
        return {"g": lut[idx], "c": colors}

    first = {"idx": RNG.integers(0, 256, size=(4, 5)).astype(np.uint8)}
    second = {"idx": RNG.integers(0, 256, size=(4, 5)).astype(np.uint8)}
    replay, warned = export_and_replay(colorize, first, second, tmp_path)
    assert not warned, [str(w.message) for w in warned]
    expected = colorize(**second)
    for key in expected:
        np.testing.assert_array_equal(replay[key], expected[key])


def test_tables_from_numpy_window_and_frequency_functions_are_gathers(tmp_path):
    """Tables NumPy's own functions make for user code (FFT bin frequencies, windows,
    log-spaced grids) read with traced indices are gathers, like np.arange's."""

    def peaks(spectrum):
        k = np.argmax(spectrum, axis=0)
        freqs = np.fft.rfftfreq(2 * (spectrum.shape[0] - 1), d=1 / 100)
        window = np.hanning(spectrum.shape[0])
        grid = np.logspace(0, 2, spectrum.shape[0])
        return {"f": freqs[k], "w": window[k] * grid[k], "half": np.fft.fftfreq(8)[k % 8]}

    first = {"spectrum": RNG.uniform(size=(9, 3))}
    second = {"spectrum": RNG.uniform(size=(9, 3))}
    replay, warned = export_and_replay(peaks, first, second, tmp_path)
    assert not warned, [str(w.message) for w in warned]
    expected = peaks(**second)
    for key in expected:
        np.testing.assert_allclose(replay[key], expected[key])


def test_a_kernel_made_with_np_ones_reaches_a_replacement_as_a_plain_array(tmp_path):
    cv2 = pytest.importorskip("cv2")

    def morph(bgr):
        kernel = np.ones((3, 3), np.uint8)  # a fresh buffer nobody writes traced data into
        return {"eroded": cv2.erode(bgr, kernel, iterations=1)}

    rng = np.random.default_rng(1)
    first = {"bgr": rng.integers(0, 256, size=(12, 16, 3), dtype=np.uint8)}
    second = {"bgr": rng.integers(0, 256, size=(12, 16, 3), dtype=np.uint8)}
    with patchport.session("morph", save_path=tmp_path, patching=["opencv"]):
        x = patchport.annotate.input_tensors("n", first)
        patchport.annotate.output_tensors("n", morph(x))
    result = patchport.compile_graph(visualize=False)
    manager = patchport.InferenceManager(result.yaml_path)
    got = np.asarray(manager.run_policy({"n/bgr": second["bgr"]})["n/eroded"])
    np.testing.assert_array_equal(got, morph(**second)["eroded"])


def _rotation_by_slots(axis_angle):
    """monodepth2's rot_from_axisangle / get_translation_matrix: torch.zeros filled by
    index writes, a device move, an in-place scale and a copy_."""
    vec = torch.from_numpy(axis_angle).reshape(1, 1, 3)
    angle = torch.norm(vec, 2, 2, True)
    axis = vec / (angle + 1e-7)
    ca, sa = torch.cos(angle), torch.sin(angle)
    x, y, z = (axis[..., i].unsqueeze(1) for i in range(3))
    rot = torch.zeros((vec.shape[0], 4, 4)).to(device=vec.device)
    rot[:, 0, 0] = torch.squeeze(x * x * (1 - ca) + ca)
    rot[:, 0, 1] = torch.squeeze(x * y * (1 - ca) - z * sa)
    rot[:, 1, 0] = torch.squeeze(x * y * (1 - ca) + z * sa)
    rot[:, 3, 3] = 1
    t = torch.zeros(1, 4, 4)
    t[:, :3, 3, None] = vec.view(-1, 3, 1)
    t *= -1
    full = torch.full((2, 3), 0.5)
    full.copy_(vec.reshape(1, 3).expand(2, 3))
    return {"rot": torch.matmul(rot, t).numpy(), "full": full.numpy()}


@pytest.mark.parametrize("backend", ["onnx", "pt2", "jit"])
def test_torch_buffer_filled_with_traced_data_replays_new_inputs(backend, tmp_path):
    first = {"axis_angle": RNG.normal(size=3).astype(np.float32)}
    second = {"axis_angle": RNG.normal(size=3).astype(np.float32)}
    replay, warned = export_and_replay(_rotation_by_slots, first, second, tmp_path, backend)
    assert not warned, [str(w.message) for w in warned]
    for key, value in _rotation_by_slots(**second).items():
        np.testing.assert_allclose(replay[key].reshape(value.shape), value, rtol=1e-6)


def test_traced_write_into_a_tensor_made_before_the_session_warns_at_the_line():
    before = torch.zeros(3)
    with patchport.session("loud"):
        x = patchport.annotate.input_tensors("n", {"x": torch.ones(3)})
        with pytest.warns(patchport.TraceLossWarning, match="untraced tensor") as record:
            before[:] = x
        patchport.annotate.output_tensors("n", {"y": x + 1})
    assert record[0].filename == __file__
    assert type(before) is torch.Tensor


def test_torch_creation_in_a_session_stays_plain_and_scripts():
    with patchport.session("plain"):
        made_here = torch.zeros(3)
        assert type(made_here) is torch.Tensor and torch.equal(made_here + 1, torch.ones(3))

        @torch.jit.script
        def shifted(x: torch.Tensor) -> torch.Tensor:
            return x + torch.zeros(3) + torch.arange(3) + torch.tensor([1.0, 2.0, 3.0])

        assert torch.equal(shifted(torch.ones(3)), torch.tensor([2.0, 4.0, 6.0]))


def test_graphs_record_torch_creation_functions_not_the_session_stand_ins(tmp_path) -> None:  # noqa: ANN001
    """A session replaces torch.full_like & co. to note fresh buffers; a graph recording one
    names the torch function itself, which ONNX export's tables know (np.angle's float64 pi
    was written as a float32 fill: the stand-in missed the exact full_like rewrite)."""
    from patchport.tracing import Recorder

    original = torch.full_like
    with patchport.session("stand_ins", save_path=tmp_path):
        assert torch.full_like is not original  # the session's stand-in is installed
        rec = Recorder("r")
        node = rec.call(torch.full_like, (rec.graph.placeholder("x"), 1.5))
    assert node.target is original


def test_buffer_a_library_fills_with_the_traced_data_it_was_given_is_recorded(tmp_path):
    """A library function handed traced data (transformers' framewise NumPy spectrogram)
    makes its own np.zeros / np.empty buffers and writes the frames into them: recorded as
    user code's buffers are, not a silent constant."""
    audio_utils = pytest.importorskip("transformers.audio_utils")
    window = np.hanning(64)

    def log_power(wave):
        spec = audio_utils.spectrogram(
            wave, window, frame_length=64, hop_length=32, fft_length=64, power=2.0
        )
        return {"spec": np.log(spec + 1e-6).astype(np.float32)}

    first = {"wave": RNG.normal(size=256).astype(np.float32)}
    second = {"wave": RNG.normal(size=256).astype(np.float32)}
    replay, warned = export_and_replay(log_power, first, second, tmp_path, export_with="pt2")
    assert not warned, [str(w.message) for w in warned]
    np.testing.assert_allclose(replay["spec"], log_power(**second)["spec"], rtol=1e-4, atol=1e-4)


def test_library_buffers_stay_plain_while_the_library_holds_no_traced_data():
    audio_utils = pytest.importorskip("transformers.audio_utils")
    with patchport.session("plain"):
        patchport.annotate.input_tensors("n", {"x": np.ones(3)})
        spec = audio_utils.spectrogram(np.ones(128), np.hanning(64), 64, 32, power=2.0)
        assert type(spec) is np.ndarray


def test_adopting_an_uninitialised_buffer_raises_no_numpy_warning():
    """np.empty's garbage may hold a signalling NaN: finding a uniform start is silent."""
    with patchport.session("quiet"):
        x = patchport.annotate.input_tensors("n", {"x": np.ones(3, np.float32)})
        buf = np.empty(4, np.complex64)
        np.ndarray.view(buf, np.ndarray).view(np.uint32)[3] = 0x7F800001  # garbage
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            buf[:3] = x
        patchport.annotate.output_tensors("n", {"y": x + 1})


def _spectra_into_complex64(frames):
    spectra = np.empty((frames.shape[0], frames.shape[1] // 2 + 1), dtype=np.complex64)
    for i in range(frames.shape[0]):  # a float64 FFT stored frame by frame (complex128 in)
        spectra[i] = np.fft.rfft(frames[i])
    spectra[:, 0] = 0.0  # a real number written into the complex buffer
    widened = np.abs(spectra.astype(np.complex128)) ** 2  # a complex-to-complex cast
    return {"power": np.abs(spectra) ** 2, "widened": widened}


@pytest.mark.parametrize("backend", ["onnx", "pt2", "jit"])
def test_complex_buffer_filled_with_ffts_replays_on_every_backend(backend, tmp_path):
    """A complex64 buffer filled with complex128 FFTs and widened again (transformers'
    spectrogram does both): ONNX export had no complex cast or complex setitem."""
    first, second = ({"frames": RNG.normal(size=(3, 16))} for _ in range(2))
    replay, warned = export_and_replay(_spectra_into_complex64, first, second, tmp_path, backend)
    assert not warned, [str(w.message) for w in warned]
    for key, value in _spectra_into_complex64(**second).items():
        np.testing.assert_allclose(replay[key].reshape(value.shape), value, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("backend", ["onnx", "jit"])
def test_np_take_of_a_plain_table_by_traced_indices_is_traced(tmp_path, backend):
    """``np.take(table, indices)`` dispatches on the table alone: a table made before the
    session (a local, not a watched global) read by traced indices was silently frozen."""
    table = (np.linspace(0.0, 1.0, 16) ** 2).astype(np.float32)

    def lookup(codes):
        return {"out": np.take(table, codes), "wrapped": np.take(table, codes + 20, mode="wrap")}

    codes = RNG.integers(0, 16, (3, 4))
    fresh = RNG.integers(0, 16, (3, 4))
    got, caught = export_and_replay(lookup, {"codes": codes}, {"codes": fresh}, tmp_path, backend)
    assert not [w for w in caught if issubclass(w.category, patchport.TraceLossWarning)]
    np.testing.assert_array_equal(got["out"], table[fresh])
    np.testing.assert_array_equal(got["wrapped"], np.take(table, fresh + 20, mode="wrap"))
    assert type(np.take(table, fresh)) is np.ndarray  # plain calls stay plain


def test_arrays_that_can_never_hold_traced_numbers_stay_plain_ndarrays(tmp_path):
    """Structured, record, string and datetime arrays made in a session keep their type:
    NumPy's own test_records checks type(eval(repr(view))) is np.ndarray, and no traced
    number can be written into them."""
    fields = [("foo", int), ("bar", "S4")]
    with patchport.session("plain_kinds", tmp_path):
        made = [
            np.array([(1, "ABC"), (2, "DEF")], dtype=fields),
            np.zeros(2, dtype=np.dtype((np.record, fields))),
            np.array(["left", "right"]),
            np.array([b"a", b"b"]),
            np.array(["2026-01-01"], dtype="datetime64[D]"),
            np.zeros(3, dtype="timedelta64[s]"),
        ]
        numeric = np.zeros(3)
    assert [type(a) for a in made] == [np.ndarray] * len(made)
    assert type(numeric) is not np.ndarray  # a numeric buffer stays fresh (writes recorded)
