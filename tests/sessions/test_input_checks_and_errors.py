"""run_policy checks its inputs against the bundle; bad bundles and arguments get clear
errors naming the file or argument and the fix (issue 13)."""

import numpy as np
import pytest
import torch
import yaml

import patchport
from patchport import annotate


def preprocess(raw):
    return np.clip(raw.astype(np.float32) / 255.0 - 0.5, -1.0, 1.0)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    save = tmp_path_factory.mktemp("bundle")
    rng = np.random.default_rng(1)
    with patchport.session("checked", save_path=save):
        raw = rng.integers(0, 256, size=(5, 3), dtype=np.uint8)
        x = annotate.input_tensors("pre", {"raw": raw})
        feats = annotate.output_tensors("pre", {"features": preprocess(x)}, export_with="jit")
        f = annotate.input_tensors("post", {"features": feats})
        annotate.output_tensors("post", {"total": torch.from_numpy(f).sum(0)}, export_with="jit")
    return patchport.compile_graph(visualize=False)


@pytest.fixture(scope="module")
def manager(bundle):
    return patchport.InferenceManager(bundle.yaml_path)


GOOD = np.zeros((5, 3), dtype=np.uint8)


@pytest.mark.parametrize(
    ("inputs", "error", "message"),
    [
        ([GOOD], TypeError, r"run_policy\(inputs=...\): expected a dict.*got list"),
        ({}, KeyError, r"missing inputs \['pre/raw'\]"),
        ({"pre/raw": GOOD, "pre/rwa": GOOD}, ValueError, r"'pre/rwa' is not a node input"),
        ({"pre/raw": GOOD, "post/total": GOOD}, ValueError, r"'post/total' is an output"),
        ({"pre/raw": GOOD[:4]}, ValueError, r"shape \[4, 3\] but its port expects \[5, 3\]"),
        ({"pre/raw": GOOD.astype(np.float64)}, ValueError, r"expected uint8\[5, 3\], got float64"),
        ({"pre/raw": torch.zeros(5, 3)}, ValueError, r"expected uint8\[5, 3\], got float32"),
        (
            {"pre/raw": GOOD.tolist()},
            TypeError,
            r"'pre/raw' must be a torch tensor or a NumPy array.*got list",
        ),
    ],
    ids=["list", "missing", "unknown", "output-name", "shape", "dtype", "tensor-dtype", "nested"],
)
def test_run_policy_refuses_inputs_that_do_not_match_the_bundle(manager, inputs, error, message):
    with pytest.raises(error, match=message) as info:
        manager.run_policy(inputs)
    assert isinstance(info.value, patchport.PatchportError)


def test_run_policy_accepts_matching_arrays_and_tensors(manager):
    from_array = manager.run_policy({"pre/raw": GOOD})
    from_tensor = manager.run_policy({"pre/raw": torch.from_numpy(GOOD)})
    assert np.array_equal(from_array["post/total"], from_tensor["post/total"])


def rewritten(bundle, tmp_path, edit):
    folder = tmp_path / "copy"
    folder.mkdir()
    for path in bundle.models.values():
        (folder / path.name).write_bytes(path.read_bytes())
    spec = yaml.safe_load(bundle.yaml_path.read_text())
    edit(spec)
    target = folder / "checked.yaml"
    target.write_text(yaml.safe_dump(spec, sort_keys=False))
    return target


def test_a_misspelled_data_flow_is_refused_when_loading(bundle, tmp_path):
    def misspell(spec):
        spec["pipeline"]["dataflow"] = spec["pipeline"].pop("data_flow")

    with pytest.raises(ValueError, match=r"checked.yaml: unknown key pipeline.dataflow; did you"):
        patchport.InferenceManager(rewritten(bundle, tmp_path, misspell))


def test_ports_given_as_a_string_are_refused_when_loading(bundle, tmp_path):
    def as_string(spec):
        spec["pipeline"]["inputs"]["pre"] = "raw"

    with pytest.raises(ValueError, match=r"pipeline.inputs.pre is the string 'raw'; write a list"):
        patchport.InferenceManager(rewritten(bundle, tmp_path, as_string))


@pytest.mark.parametrize(
    "content", [b"\x89PNG\r\n\x1a\n\x00\xff\xfe", "models: é".encode("latin-1")]
)
def test_a_binary_or_non_utf8_yaml_names_the_file(tmp_path, content):
    path = tmp_path / "broken.yaml"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=r"broken.yaml: not (a UTF-8 text file|valid YAML)"):
        patchport.InferenceManager(path)


def test_function_patch_tolerance_of_the_wrong_kind_is_named():
    with pytest.raises(TypeError, match=r"FunctionPatch\(rtol=...\) for numpy.clip: expected a"):
        patchport.FunctionPatch(np, "clip", lambda *a, **k: None, rtol="x")
    with pytest.raises(
        TypeError, match=r"FunctionPatch\(atol=...\) for numpy.clip: .*got NoneType"
    ):
        patchport.FunctionPatch(np, "clip", lambda *a, **k: None, atol=None)


@pytest.mark.parametrize(
    ("value", "phrase"),
    [
        (np.array([1, "a"], dtype=object), r"dtype object"),
        (np.array(["a", "b"]), r"dtype <U1"),
        (np.zeros(2, dtype=[("a", "f4")]), r"dtype"),
        (np.matrix([[1.0, 2.0]]), r"np\.matrix.*np\.asarray"),
        (np.ma.array([1.0, 2.0], mask=[0, 1]), r"masked array.*filled"),
        (torch.zeros(3, device="meta"), r"meta tensor"),
    ],
    ids=["object", "str", "structured", "matrix", "masked", "meta"],
)
def test_inputs_a_graph_cannot_hold_are_refused_naming_the_port(tmp_path, value, phrase):
    with patchport.session("bad", save_path=tmp_path):
        with pytest.raises(patchport.PatchDefinitionError, match=rf"'n'.*'x'.*{phrase}"):
            annotate.input_tensors("n", {"x": value})


@pytest.mark.parametrize(
    ("options", "phrase"),
    [
        ({"strict": "yes"}, r"strict='yes'.*True or False"),
        ({"dry_run": "no"}, r"dry_run='no'.*True or False"),
        ({"global_patching": None}, r"global_patching=None.*True or False"),
        ({"verify": "always"}, r"verify='always'.*True, False or None"),
        ({"non_traced": 5}, r"non_traced=5.*node names"),
    ],
)
def test_start_options_of_the_wrong_kind_are_refused_before_anything_changes(options, phrase):
    import cv2

    before = cv2.cvtColor
    with pytest.raises(patchport.PatchDefinitionError, match=phrase):
        patchport.start("opts", **options)
    assert cv2.cvtColor is before


def test_a_pass_whose_input_changed_shape_or_dtype_is_refused_naming_it(tmp_path):
    for label, values in (
        ("shape", [np.zeros(3, np.float32), np.zeros(4, np.float32)]),
        ("dtype", [np.zeros(3, np.float32), np.zeros(3, np.float64)]),
    ):
        with patchport.session(label, save_path=tmp_path):
            for value in values:
                x = annotate.input_tensors("n", {"x": value})
                annotate.output_tensors("n", {"y": x * 2}, export_with="onnx")
        expected = (
            r"node 'n' input 'x'.*pass 2.*\(4,\).*first pass.*\(3,\).*dynamic="
            if label == "shape"
            else r"node 'n' input 'x'.*pass 2.*float64.*first pass.*float32"
        )
        with pytest.raises(ValueError, match=expected):
            patchport.compile_graph(visualize=False)
        assert not (tmp_path / label).exists()  # refused before anything is written


def test_set_input_value_names_the_inputs_for_an_unknown_port(manager):
    with pytest.raises(patchport.PatchportError, match=r"'pre/nope' is not a node input"):
        manager.set_input_value("pre", "nope", GOOD)


def test_a_read_only_array_runs_without_a_library_warning(manager):
    import warnings

    frozen = np.frombuffer(GOOD.tobytes(), np.uint8).reshape(5, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        manager.run_policy({"pre/raw": frozen})
