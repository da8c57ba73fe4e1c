"""A bundle from someone else: no file outside its folder, no code run while loading."""

import builtins
import hashlib
import io
import json
import shutil
import zipfile

import numpy as np
import pytest
import torch
import yaml

import patchport
from patchport import annotate
from patchport.errors import BundleFormatError, BundleSafetyError, ModelIntegrityError


class Policy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.linear = torch.nn.Linear(3, 2)

    def forward(self, x):
        return torch.tanh(self.linear(x))


def compiled_bundle(tmp_path, backend):
    policy = Policy()
    with patchport.session("shared", save_path=tmp_path):
        x = annotate.input_tensors("policy", {"x": torch.randn(1, 3)})
        with torch.no_grad():
            annotate.output_tensors("policy", {"y": policy(x)}, export_with=backend)
    return patchport.compile_graph(visualize=False)


def edit_spec(yaml_path, **changes):
    """Change the policy model's parameters (LEAPP's layout: sha256 is ``sha256sum``)."""
    spec = yaml.safe_load(yaml_path.read_text())
    if "sha256" in changes:
        changes["sha256sum"] = changes.pop("sha256")
    spec["models"]["policy"]["parameters"].update(changes)
    yaml_path.write_text(yaml.safe_dump(spec, sort_keys=False))


@pytest.fixture(scope="module")
def jit_bundle(tmp_path_factory):
    return compiled_bundle(tmp_path_factory.mktemp("jit"), "jit")


@pytest.mark.parametrize("model_path", ["/etc/hostname", "../outside.pt", "./sub/../../outside.pt"])
def test_model_paths_outside_the_bundle_folder_are_refused(jit_bundle, tmp_path, model_path):
    folder = tmp_path / "bundle"
    folder.mkdir()
    (tmp_path / "outside.pt").write_bytes(jit_bundle.models["policy"].read_bytes())
    yaml_path = folder / "shared.yaml"
    yaml_path.write_text(jit_bundle.yaml_path.read_text())
    edit_spec(yaml_path, model_path=model_path)
    with pytest.raises(BundleSafetyError, match="node 'policy'"):
        patchport.InferenceManager(yaml_path)


@pytest.mark.parametrize("model_path", ["", None])
def test_a_node_without_a_model_path_is_refused_naming_it(jit_bundle, tmp_path, model_path):
    folder = tmp_path / "bundle"
    folder.mkdir()
    yaml_path = folder / "shared.yaml"
    yaml_path.write_text(jit_bundle.yaml_path.read_text())
    edit_spec(yaml_path, model_path=model_path)
    with pytest.raises(ValueError, match="node 'policy' has no model in shared.yaml"):
        patchport.InferenceManager(yaml_path)


def test_a_symlink_pointing_out_of_the_folder_is_refused(jit_bundle, tmp_path):
    folder = tmp_path / "bundle"
    folder.mkdir()
    (tmp_path / "outside.pt").write_bytes(jit_bundle.models["policy"].read_bytes())
    (folder / "policy.pt").symlink_to(tmp_path / "outside.pt")
    (folder / "shared.yaml").write_text(jit_bundle.yaml_path.read_text())
    with pytest.raises(BundleSafetyError, match="outside the bundle folder"):
        patchport.InferenceManager(folder / "shared.yaml")


def test_a_yaml_without_sha256_is_refused_with_a_clear_error(jit_bundle, tmp_path):
    folder = tmp_path / "copy"
    folder.mkdir()
    (folder / "policy.pt").write_bytes(jit_bundle.models["policy"].read_bytes())
    (folder / "shared.yaml").write_text(jit_bundle.yaml_path.read_text())
    edit_spec(folder / "shared.yaml", sha256=None)
    with pytest.raises(ModelIntegrityError, match="records no valid sha256.*compile_graph"):
        patchport.InferenceManager(folder / "shared.yaml")


class RunsCode:
    def __reduce__(self):
        return (exec, ("import builtins; builtins.PATCHPORT_PWNED = True",))


def poison_pt2(path):
    """Rewrite one stored tensor of a .pt2 as a pickle that runs code when unpickled."""
    source = zipfile.ZipFile(io.BytesIO(path.read_bytes()))
    payload = io.BytesIO()
    torch.save(RunsCode(), payload)
    entries = {name: source.read(name) for name in source.namelist()}
    for name, content in list(entries.items()):
        if name.endswith(("model_weights_config.json", "model_constants_config.json")):
            config = json.loads(content)
            for meta in config["config"].values():
                if meta.get("path_name", "").startswith(("weight_", "tensor_")):
                    meta["use_pickle"] = True
                    target = name.rsplit("/", 1)[0] + "/" + meta["path_name"]
                    entries[target] = payload.getvalue()
                    entries[name] = json.dumps(config).encode()
                    break
    assert any(v == payload.getvalue() for v in entries.values()), "no tensor entry found"
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, content in entries.items():
            archive.writestr(name, content)
    path.write_bytes(out.getvalue())
    return hashlib.sha256(out.getvalue()).hexdigest()


def test_a_pt2_weight_rewritten_as_a_code_running_pickle_is_refused(tmp_path):
    result = compiled_bundle(tmp_path, "pt2")
    manager = patchport.InferenceManager(result.yaml_path)  # the honest bundle loads
    x = np.ones((1, 3), dtype=np.float32)
    assert manager.run_policy({"policy/x": x})["policy/y"].shape == (1, 2)
    digest = poison_pt2(result.models["policy"])
    edit_spec(result.yaml_path, sha256=digest)  # the attacker updates the hash too
    with pytest.raises(BundleSafetyError, match="policy.pt2"):
        patchport.InferenceManager(result.yaml_path)
    assert not hasattr(builtins, "PATCHPORT_PWNED")


def test_the_bytes_hashed_are_the_bytes_loaded(jit_bundle, tmp_path, monkeypatch):
    # swapping the file after the hash check cannot work: the file is read exactly once
    reads = []
    original = type(jit_bundle.models["policy"]).read_bytes

    def counting(self):
        reads.append(self.name)
        return original(self)

    monkeypatch.setattr(type(jit_bundle.models["policy"]), "read_bytes", counting)
    opened = []
    real_open = builtins.open
    monkeypatch.setattr(
        builtins, "open", lambda f, *a, **k: opened.append(f) or real_open(f, *a, **k)
    )
    patchport.InferenceManager(jit_bundle.yaml_path)
    assert reads == ["policy.pt"]
    assert not [f for f in opened if str(f).endswith(".pt")]


@pytest.fixture(scope="module")
def stateful_bundle(tmp_path_factory):
    """A jit node with a recurrent counter: the bundle has an initial-values file."""
    with patchport.session("state", save_path=tmp_path_factory.mktemp("state")):
        counter = torch.zeros(3)
        for _ in range(2):
            x = annotate.input_tensors("policy", {"x": torch.randn(3)})
            state = annotate.state_tensors("policy", {"counter": counter})
            counter = annotate.update_state("policy", {"counter": state + x})
            annotate.output_tensors("policy", {"y": state * 2}, export_with="jit")
    return patchport.compile_graph(visualize=False).yaml_path.parent


def bundle_copy(source, tmp_path):
    folder = tmp_path / "bundle"
    shutil.copytree(source, folder)
    return folder, folder / "state.yaml", folder / "state_initial_values.safetensors"


def edit_pipeline(yaml_path, edit):
    spec = yaml.safe_load(yaml_path.read_text())
    edit(spec)
    yaml_path.write_text(yaml.safe_dump(spec, sort_keys=False))


@pytest.mark.parametrize("where", ["absolute", "relative", "symlink"])
def test_initial_values_outside_the_bundle_folder_are_refused(stateful_bundle, tmp_path, where):
    folder, yaml_path, values = bundle_copy(stateful_bundle, tmp_path)
    outside = tmp_path / "outside.safetensors"
    shutil.move(values, outside)
    if where == "symlink":
        values.symlink_to(outside)
    else:
        name = str(outside) if where == "absolute" else "../outside.safetensors"
        edit_pipeline(yaml_path, lambda spec: spec["pipeline"].update(initial_values=name))
    with pytest.raises(BundleSafetyError, match="initial_values"):
        patchport.InferenceManager(yaml_path)


@pytest.mark.parametrize(
    ("values", "phrase"),
    [
        ({"policy/counter/extra": torch.zeros(3)}, "too many values to unpack"),
        ({"other/counter": torch.zeros(3)}, "'other/counter' is not a node input"),
        ({"policy/counter": torch.zeros(7, 5)}, r"float32\[3\].*float32\[7, 5\]"),
        ({"policy/counter": torch.zeros(3, dtype=torch.int64)}, r"float32\[3\].*int64\[3\]"),
    ],
)
def test_initial_values_that_fit_no_input_are_refused_at_load(
    stateful_bundle, tmp_path, values, phrase
):
    from safetensors.torch import save_file

    _, yaml_path, path = bundle_copy(stateful_bundle, tmp_path)
    save_file(values, str(path))
    with pytest.raises(BundleFormatError, match=f"state_initial_values.safetensors.*{phrase}"):
        patchport.InferenceManager(yaml_path)


def test_an_initial_values_file_that_is_not_safetensors_is_refused(stateful_bundle, tmp_path):
    _, yaml_path, path = bundle_copy(stateful_bundle, tmp_path)
    path.write_bytes(b"not a safetensors file" * 4)
    with pytest.raises(BundleFormatError, match="state_initial_values.safetensors"):
        patchport.InferenceManager(yaml_path)


@pytest.mark.parametrize(
    ("field", "value", "phrase"),
    [
        ("shape", [-3], "non-negative integers"),
        ("shape", "3", "non-negative integers"),
        ("shape", [3.5], "non-negative integers"),
        ("shape", [True], "non-negative integers"),
        ("dtype", "float99", "unknown dtype 'float99'"),
        ("dtype", "object", "unknown dtype 'object'"),
        ("name", "x/y", "port name"),
        ("shape", [100000, 100000, 100000], "more than this machine's memory"),
    ],
)
def test_malformed_port_descriptions_are_refused_before_any_model_loads(
    stateful_bundle, tmp_path, monkeypatch, field, value, phrase
):
    from patchport.bundle import inference

    _, yaml_path, _ = bundle_copy(stateful_bundle, tmp_path)
    edit_pipeline(
        yaml_path, lambda spec: spec["models"]["policy"]["inputs"][0].update({field: value})
    )
    monkeypatch.setattr(inference, "load_runner", lambda *a, **k: pytest.fail("a model loaded"))
    with pytest.raises(BundleFormatError, match=f"models.policy.inputs.*{phrase}"):
        patchport.InferenceManager(yaml_path)


class _Payload:
    def __reduce__(self):
        return (exec, ("import builtins; builtins.PATCHPORT_PWNED = True",))


@pytest.mark.parametrize("content", ["pickle", "garbage"])
def test_a_model_file_that_is_not_its_backends_format_is_refused_naming_the_node(
    jit_bundle, tmp_path, content
):
    """The hash matches (the attacker rewrote it), but the file is a plain pickle or junk:
    refused as a bundle error naming the node and file, with no code run."""
    folder = tmp_path / "copy"
    folder.mkdir()
    model = folder / "policy.pt"
    if content == "pickle":
        torch.save(_Payload(), model)
    else:
        model.write_bytes(b"PK\x03\x04" + b"\x00" * 64)
    (folder / "shared.yaml").write_text(jit_bundle.yaml_path.read_text())
    edit_spec(folder / "shared.yaml", sha256=hashlib.sha256(model.read_bytes()).hexdigest())
    with pytest.raises(BundleFormatError, match=r"node 'policy'.*policy\.pt.*jit"):
        patchport.InferenceManager(folder / "shared.yaml")
    assert not hasattr(builtins, "PATCHPORT_PWNED")
