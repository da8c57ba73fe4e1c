"""Dynamic axes: one export for every batch size and resolution, on every backend.

A node declared with ``dynamic=`` is exported once and replayed at sizes the trace never
saw; sizes the traced code fixed are refused in words before anything is written, and
``run_policy`` refuses inputs that do not fit the declared shape.
"""

import cv2
import numpy as np
import pytest
import torch
import yaml

import patchport
from patchport import annotate
from patchport.errors import DynamicShapeError, InputShapeError, PatchDefinitionError
from patchport.sessions.lifecycle import last_session

POLICY_BACKENDS = {"policy_onnx": "onnx", "policy_pt2": "pt2", "policy_jit": "jit"}
MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)


def make_head():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(12, 5), torch.nn.Tanh()).eval()


def policy(head, obs):
    """Flatten per batch item with the batch size read from the data (recorded as a size)."""
    return head(obs.reshape(obs.shape[0], -1))


def camera(bgr):
    """Flip, color conversion, blur and normalisation: all shape-generic replacements."""
    image = cv2.flip(bgr, 1)
    image = cv2.cvtColor(image, cv2.COLOR_BGR2RGB)
    image = cv2.GaussianBlur(image, (5, 5), 0)
    image = (image.astype(np.float32) / 255.0 - MEAN) / STD
    return np.ascontiguousarray(image.transpose(2, 0, 1))


def frame(height, width, seed=0):
    return np.random.default_rng(seed).integers(0, 256, (height, width, 3), dtype=np.uint8)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    """One session: the policy on three backends (dynamic batch) and a camera node
    (dynamic height/width) traced at two resolutions; compiled once."""
    head = make_head()
    with torch.no_grad(), patchport.session("dyn", save_path=tmp_path_factory.mktemp("dyn"),
                                            patching=["opencv"]):  # fmt: skip
        obs = torch.rand(4, 3, 4)
        for node, backend in POLICY_BACKENDS.items():
            x = annotate.input_tensors(node, {"obs": obs}, dynamic={"obs": {0: "batch"}})
            annotate.output_tensors(node, {"action": policy(head, x)}, export_with=backend)
        for height, width in [(48, 64), (40, 56)]:
            bgr = annotate.input_tensors(
                "camera", {"bgr": frame(height, width)}, dynamic={"bgr": {0: "h", 1: "w"}}
            )
            annotate.output_tensors("camera", {"chw": camera(bgr)})
    result = patchport.compile_graph(visualize=False)
    return result, head


def test_yaml_records_dynamic_axes_on_inputs_and_outputs(bundle):
    result, _ = bundle
    spec = yaml.safe_load(result.yaml_path.read_text())
    policy_model = spec["models"]["policy_onnx"]
    assert policy_model["inputs"][0]["dynamic_axes"] == {0: "batch"}
    assert policy_model["inputs"][0]["shape"] == [4, 3, 4]  # LEAPP's key keeps the traced size
    assert policy_model["outputs"][0]["dynamic_axes"] == {0: "batch"}
    camera_model = spec["models"]["camera"]
    assert camera_model["inputs"][0]["dynamic_axes"] == {0: "h", 1: "w"}
    assert camera_model["outputs"][0]["dynamic_axes"] == {1: "h", 2: "w"}
    assert result.ok, result.summary()


@pytest.mark.parametrize("node", list(POLICY_BACKENDS))
def test_dynamic_batch_on_every_backend(bundle, node):
    result, head = bundle
    manager = patchport.InferenceManager(result.yaml_path)
    others = {key: value for key, value in manager.get_mock_input().items() if key != f"{node}/obs"}
    for batch in (1, 2, 9):
        obs = torch.rand(batch, 3, 4)
        out = manager.run_policy({**others, f"{node}/obs": obs})
        with torch.no_grad():
            torch.testing.assert_close(out[f"{node}/action"], policy(head, obs))


def test_dynamic_height_and_width_through_opencv_replacements(bundle):
    result, _ = bundle
    manager = patchport.InferenceManager(result.yaml_path)
    mock = manager.get_mock_input()
    for height, width, seed in [(120, 160, 1), (33, 47, 2)]:
        bgr = frame(height, width, seed)
        out = manager.run_policy({**mock, "camera/bgr": torch.from_numpy(bgr)})["camera/chw"]
        assert out.shape == (3, height, width)
        np.testing.assert_allclose(out.numpy(), camera(bgr), rtol=1e-5, atol=1e-5)
    # the 5x5 mirrored border needs 3 rows: smaller frames are refused by name, not run
    with pytest.raises(
        InputShapeError, match=r"'camera/bgr' has h=2 but .* accepts h in \[3, inf\]"
    ):
        manager.run_policy({**mock, "camera/bgr": torch.from_numpy(frame(2, 40))})


@pytest.mark.parametrize("node", [*POLICY_BACKENDS, "camera"])
def test_wrong_shape_refused_on_each_backend(bundle, node):
    result, _ = bundle
    manager = patchport.InferenceManager(result.yaml_path)
    inputs = manager.get_mock_input()
    key = next(k for k in inputs if k.startswith(f"{node}/"))
    wrong = torch.zeros(2, 3, 5) if node != "camera" else torch.zeros(20, 30, 4, dtype=torch.uint8)
    with pytest.raises(InputShapeError) as caught:
        manager.run_policy({**inputs, key: wrong})
    text = str(caught.value)
    assert repr(key) in text and str(list(wrong.shape)) in text
    assert ("['batch', 3, 4]" in text) if node != "camera" else ("['h', 'w', 3]" in text)
    with pytest.raises(InputShapeError):
        manager.set_input_value(*key.split("/"), wrong)


def test_frozen_dimension_reported_in_words(tmp_path):
    patchport.start("frozen", save_path=tmp_path, patching=["opencv"])
    try:
        bgr = annotate.input_tensors(
            "crop", {"bgr": frame(48, 64)}, dynamic={"bgr": {0: "height", 1: "width"}}
        )
        top = bgr[: int(bgr.shape[0] * 0.5)]  # FROZEN-HEIGHT
        annotate.output_tensors("crop", {"top": top})
        small = annotate.input_tensors("small", {"bgr": frame(48, 64)}, dynamic={"bgr": {1: "w"}})
        annotate.output_tensors("small", {"fixed": cv2.resize(small, (32, 24))})
        odd = annotate.input_tensors("odd", {"bgr": frame(48, 64)}, dynamic={"bgr": {0: "rows"}})
        annotate.output_tensors("odd", {"out": cv2.resize(odd, None, fx=0.5, fy=0.7)})
    finally:
        patchport.stop()
    with pytest.raises(DynamicShapeError) as caught:
        patchport.compile_graph(visualize=False)
    text = str(caught.value)
    line = next(i for i, s in enumerate(open(__file__), 1) if "# FROZEN-HEIGHT" in s)
    assert "height is fixed to 48 by a size read from traced data" in text
    assert f"{__file__}:{line}" in text
    assert "w is fixed to 64" in text and "geometry.resize" in text
    assert "give fx and fy instead of dsize" in text
    assert "rows is fixed to 48" in text and "cvRound(size * 0.7)" in text
    assert "width is fixed" not in text  # the crop keeps every width
    assert not any(tmp_path.rglob("*.onnx")) and not any(tmp_path.rglob("*.yaml"))


def test_shared_dimension_names_mean_equal_sizes(tmp_path):
    with patchport.session("shared", save_path=tmp_path):
        left, right = annotate.input_tensors(
            "pair",
            {"left": torch.rand(3, 2), "right": torch.rand(3, 4)},
            dynamic={"left": {0: "batch"}, "right": {0: "batch"}},
        )
        annotate.output_tensors("pair", {"both": torch.cat([left, right], 1)}, export_with="pt2")
    result = patchport.compile_graph(visualize=False)
    manager = patchport.InferenceManager(result.yaml_path)
    out = manager.run_policy({"pair/left": torch.ones(5, 2), "pair/right": torch.ones(5, 4)})
    assert out["pair/both"].shape == (5, 6)
    with pytest.raises(InputShapeError, match="'pair/left' has batch=5"):
        manager.run_policy({"pair/left": torch.ones(5, 2), "pair/right": torch.ones(6, 4)})


@pytest.mark.parametrize(
    ("dynamic", "message"),
    [
        ([0], "expected a dict {port: {axis: name}}"),
        ({"rgb": {0: "batch"}}, "'rgb' is not an input of this call"),
        ({"obs": {3: "batch"}}, "axis 3 is not an axis of its shape [4, 3]"),
        ({"obs": {0: "two words"}}, "must be an identifier"),
        ({"obs": {0: "n", 1: "n"}}, "'n' names two axes of one port"),
        ({"obs": {0: "n"}, "goal": {0: "n"}}, "'goal' axis 0 has size 2 but 'n' already names"),
    ],
)
def test_dynamic_argument_refused_before_anything_changes(tmp_path, dynamic, message):
    with patchport.session("bad", save_path=tmp_path):
        inputs = {"obs": torch.rand(4, 3), "goal": torch.rand(2, 3)}
        with pytest.raises(PatchDefinitionError, match="annotate.input_tensors") as caught:
            annotate.input_tensors("node", inputs, dynamic=dynamic)
        assert message in str(caught.value)
        assert "node" not in last_session().nodes


GENERAL_REPLACEMENTS = {
    "flip": lambda x: cv2.flip(x, -1),
    "gray": lambda x: cv2.cvtColor(x, cv2.COLOR_BGR2GRAY),
    "hsv": lambda x: cv2.cvtColor(x, cv2.COLOR_BGR2HSV),
    "bgra": lambda x: cv2.cvtColor(x, cv2.COLOR_BGR2BGRA),
    "lut": lambda x: cv2.LUT(x, np.arange(255, -1, -1).astype(np.uint8)),
    "masked": lambda x: cv2.bitwise_and(x, x, mask=x[..., 0]),
    "blur": lambda x: cv2.blur(x, (3, 3)),
    "box": lambda x: cv2.boxFilter(x, -1, (5, 5)),
    "gauss_replicate": lambda x: cv2.GaussianBlur(x, (3, 3), 0, borderType=cv2.BORDER_REPLICATE),
    "normalize": lambda x: cv2.normalize(x.astype(np.float32), None, 0, 1, cv2.NORM_MINMAX),
}


def test_shipped_replacements_keep_height_and_width_dynamic(tmp_path):
    """The recorded graphs hold no size fixed at trace time, and each output axis is named
    after the dimension it follows (checked without exporting, to stay fast)."""
    from patchport.export.dynamic_check import narrowings

    with patchport.session("general", save_path=tmp_path, patching=["opencv"]):
        for name, function in GENERAL_REPLACEMENTS.items():
            bgr = annotate.input_tensors(
                name, {"bgr": frame(24, 32)}, dynamic={"bgr": {0: "h", 1: "w"}}
            )
            annotate.output_tensors(name, {"out": function(bgr)})
    for name, trace in last_session().nodes.items():
        assert narrowings(trace) == [], name
        assert trace.outputs[0].dynamic == {0: "h", 1: "w"}, name


RESHAPES = {
    "minus_one": lambda x: x.reshape(-1, 3) * 2,
    "product_of_sizes": lambda x: np.reshape(x, (x.shape[0] * x.shape[1], 3)) + 1,
    "batch_first": lambda x: np.reshape(x, shape=(x.shape[0], -1)) - 1,
    "ravel": lambda x: np.ravel(x) * 3,
}


def test_numpy_reshape_keeps_sizes_symbolic(tmp_path):
    """-1 and products of sizes read from the data stay computed from the input's sizes:
    nothing is fixed, and the recorded graph runs at other sizes."""
    from patchport.export.dynamic_check import narrowings, resized_inputs

    with patchport.session("reshape", save_path=tmp_path):
        for name, function in RESHAPES.items():
            x = annotate.input_tensors(
                name, {"x": frame(6, 8).astype(np.float32)}, dynamic={"x": {0: "h", 1: "w"}}
            )
            annotate.output_tensors(name, {"out": function(x)})
    for name, trace in last_session().nodes.items():
        assert narrowings(trace) == [], name
        (grown,) = resized_inputs(trace, {"h": 9, "w": 5})
        got = trace.graph_module(torch.from_numpy(grown))
        got = got[0] if isinstance(got, (tuple, list)) else got
        np.testing.assert_array_equal(got.numpy(), RESHAPES[name](grown))


def test_sizes_into_arange_stay_symbolic_or_are_reported(tmp_path):
    """np.arange / torch.arange of sizes read from traced data are computed in the graph
    from the input's sizes; an arange the graph cannot take (float steps) is reported in
    words at compile time, naming the line, before anything is written."""
    from patchport.export.dynamic_check import narrowings

    with patchport.session("ranges", save_path=tmp_path):
        x = annotate.input_tensors(
            "ramp", {"x": np.ones((5, 7), dtype=np.float32)}, dynamic={"x": {1: "w"}}
        )
        columns = np.arange(x.shape[1]) + torch.arange(1, x.shape[1] + 1).numpy()
        annotate.output_tensors("ramp", {"out": x * columns})
    (trace,) = last_session().nodes.values()
    assert narrowings(trace) == []
    got = trace.graph_module(torch.ones(5, 9))
    got = got[0] if isinstance(got, (tuple, list)) else got
    np.testing.assert_array_equal(got.numpy(), np.ones((5, 9)) * (2 * np.arange(9) + 1))

    patchport.start("float_ranges", save_path=tmp_path, patching=[])
    try:
        x = annotate.input_tensors(
            "steps", {"x": np.ones((4, 6), dtype=np.float32)}, dynamic={"x": {1: "cols"}}
        )
        annotate.output_tensors("steps", {"out": x * np.arange(0, x.shape[1], 0.5)[::2]})  # STEPS
    finally:
        patchport.stop()
    with pytest.raises(DynamicShapeError) as caught:
        patchport.compile_graph(visualize=False)
    line = next(i for i, s in enumerate(open(__file__), 1) if "# STEPS" in s)
    assert "cols is fixed to 6 by a size read from traced data and used in np.arange" in str(
        caught.value
    )
    assert f"{__file__}:{line}" in str(caught.value)


def test_dynamic_state_axes_are_refused_naming_the_port(tmp_path):
    """A state's initial value is stored at one shape and fed back at that shape, so a state
    cannot take dynamic axes: refused before the node changes, naming the port and fix."""
    with patchport.session("state", save_path=tmp_path):
        annotate.input_tensors("filter", {"obs": torch.rand(4, 3)}, dynamic={"obs": {0: "batch"}})
        with pytest.raises(PatchDefinitionError) as caught:
            annotate.state_tensors(
                "filter", {"memory": torch.zeros(4, 3)}, dynamic={"memory": {0: "batch"}}
            )
        text = str(caught.value)
        assert "annotate.state_tensors('filter'" in text and "'memory'" in text
        assert "initial value" in text
        assert [p.name for p in last_session().nodes["filter"].inputs] == ["obs"]


def test_dynamic_axes_on_a_fed_back_input_are_refused_naming_the_port(tmp_path):
    """A fed-back input starts from its first-pass value, stored at one shape: a dynamic
    axis there would meet a stored value of the traced size, so compile_graph refuses it
    in words before writing anything (the forward input of the same node is fine)."""
    with patchport.session("loop", save_path=tmp_path):
        memory = torch.zeros(4, 2)
        for step in range(2):
            obs, mem = annotate.input_tensors(
                "policy",
                {"obs": torch.full((4, 2), 1.0 + step), "memory_in": memory},
                dynamic={"obs": {0: "batch"}, "memory_in": {0: "batch"}} if step == 0 else None,
            )
            memory = torch.tanh(obs + mem)
            annotate.output_tensors("policy", {"memory_out": memory}, export_with="onnx")
    with pytest.raises(DynamicShapeError) as caught:
        patchport.compile_graph(visualize=False)
    text = str(caught.value)
    assert "'policy/memory_in'" in text and "policy/memory_out" in text and "batch" in text
    assert "'policy/obs'" not in text
    assert not any(tmp_path.rglob("*.onnx")) and not any(tmp_path.rglob("*.yaml"))


def test_iteration_over_a_dynamic_axis_is_reported_in_words(tmp_path):
    patchport.start("rows", save_path=tmp_path)
    try:
        pts = annotate.input_tensors(
            "n", {"pts": np.ones((5, 3), np.float32)}, dynamic={"pts": {0: "count"}}
        )
        rows = [row * 2 for row in pts]  # ITERATE-ROWS
        annotate.output_tensors("n", {"out": np.stack(rows)})
    finally:
        patchport.stop()
    with pytest.raises(DynamicShapeError) as caught:
        patchport.compile_graph(visualize=False)
    text = str(caught.value)
    assert "count is fixed to 5" in text and "iteration over a traced array" in text
