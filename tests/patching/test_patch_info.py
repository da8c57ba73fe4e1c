import pytest

import patchport
from patchport.errors import PatchDefinitionError, PatchStateError, PatchTargetError
from patchport.patching import PatchInfo, original_of

from . import targets


def triple(x, factor=3):
    """Multiply by three."""
    return x * factor


def test_do_undo_and_name_like_the_seed():
    patch = PatchInfo.make(triple, targets, "scale", family="custom")
    original = targets.scale
    patch.do()
    try:
        assert targets.scale.__name__ == "triple"
        assert targets.scale(2) == 6
        assert patch.applied and patch.name == "triple"
        assert patch.target_name == "tests.patching.targets.scale"
    finally:
        patch.undo()
    assert targets.scale is original
    assert not patch.applied


def test_public_names_are_reexported():
    assert patchport.PatchInfo is PatchInfo
    assert patchport.PatchDetails.__name__ == "PatchDetails"


def test_calls_are_counted_while_applied_only():
    patch = PatchInfo.make(triple, targets, "scale")
    patch.do()
    targets.scale(1)
    targets.scale(2)
    patch.undo()
    targets.scale(3)
    assert patch.calls == 2


def test_diff_is_available_before_and_after_and_names_both_sides():
    patch = PatchInfo.make(triple, targets, "scale", family="custom")
    before = patch.make_diff()
    patch.do()
    patch.undo()
    after = patch.format_diff(format="raw")
    assert before in after
    assert after.splitlines()[0] == "custom: tests.patching.targets.scale -> triple"
    assert "--- original" in after and "+++ rewritten" in after
    assert "-def scale(x, factor=2):" in after and "+def triple(x, factor=3):" in after


def test_rst_diff_has_a_stable_anchor():
    patch = PatchInfo.make(triple, targets, "scale", family="custom")
    rst = patch.format_diff(format="rst")
    assert rst.startswith(".. _patch-custom-tests-patching-targets-scale:")
    assert ".. code-block:: diff" in rst
    assert PatchInfo.make(triple, targets, "scale", family="custom").refid == patch.refid
    with pytest.raises(ValueError, match="format='html'"):
        patch.format_diff(format="html")


def test_applying_twice_and_undoing_unapplied_are_refused():
    patch = PatchInfo.make(triple, targets, "scale")
    with pytest.raises(PatchStateError, match="not applied on tests.patching.targets.scale"):
        patch.undo()
    patch.do()
    try:
        with pytest.raises(PatchStateError, match="already applied"):
            patch.do()
        other = PatchInfo.make(triple, targets, "scale")
        with pytest.raises(PatchStateError, match="already patched by triple"):
            other.do()
    finally:
        patch.undo()


def test_missing_target_names_it():
    with pytest.raises(PatchTargetError, match=r"tests\.patching\.targets\.nope does not exist"):
        PatchInfo.make(triple, targets, "nope")


@pytest.mark.parametrize(
    "args, message",
    [
        (("not callable", targets, "scale"), "must be callable"),
        ((triple, targets.scale, "scale"), "expected a module or a class"),
        ((triple, targets, "a.b"), "expected an attribute name"),
        ((triple, targets.Child, "size"), "is a property"),
    ],
)
def test_bad_definitions_are_refused(args, message):
    with pytest.raises((PatchDefinitionError, PatchTargetError), match=message):
        PatchInfo.make(*args)


def test_inherited_method_is_patched_on_the_subclass_and_inherited_again():
    def greet(self):
        return "patched"

    patch = PatchInfo.make(greet, targets.Child, "greet")
    patch.do()
    try:
        assert targets.Child().greet() == "patched"
        assert targets.Base().greet() == "base"
    finally:
        patch.undo()
    assert "greet" not in vars(targets.Child)
    assert targets.Child().greet() == "base"


def test_staticmethod_and_classmethod_keep_their_kind():
    def tool(x):
        return x - 10

    def make(cls):
        return "made " + cls.__name__

    patches = [
        PatchInfo.make(tool, targets.Child, "tool"),
        PatchInfo.make(make, targets.Child, "make"),
    ]
    for p in patches:
        p.do()
    try:
        assert targets.Child.tool(11) == 1 and targets.Child().tool(11) == 1
        assert targets.Child.make() == "made Child"
        assert patches[0].calls == 2 and patches[1].calls == 1
    finally:
        for p in reversed(patches):
            p.undo()
    assert isinstance(vars(targets.Child)["tool"], staticmethod)
    assert targets.Child.tool(11) == 10 and targets.Child.make() == "Child"


def test_original_of_sees_through_an_applied_patch():
    original = targets.offset

    def offset_twice(x):
        return original_of(targets, "offset")(original_of(targets, "offset")(x))

    patch = PatchInfo.make(offset_twice, targets, "offset")
    patch.do()
    try:
        assert targets.offset(0) == 2
        assert original_of(targets, "offset") is original
    finally:
        patch.undo()


def test_to_dict_row():
    row = PatchInfo.make(triple, targets, "scale", family="custom").to_dict()
    assert row["name"] == "triple" and row["target"] == "tests.patching.targets.scale"
    assert row["applied"] is False and row["calls"] == 0


def test_shipped_families_are_an_enum_that_reads_like_the_names():
    from patchport.patching import PatchFamily

    assert {f.value for f in PatchFamily} >= {"torch", "transformers", "interop", "watch"}
    patch = PatchInfo.make(triple, targets, "scale", family=PatchFamily.TORCH)
    assert patch.family == "torch" and patch.family is PatchFamily.TORCH
    row = patch.to_dict()
    assert row["family"] == "torch" and type(row["family"]) is str  # YAML/JSON-safe rows
    assert "family='torch'" in repr(patch)
    assert patch.format_diff().startswith("torch: tests.patching.targets.scale -> triple")
    assert patch.refid == "patch-torch-tests-patching-targets-scale"
    # a user's own family stays a plain string
    assert PatchInfo.make(triple, targets, "scale", family="mine").to_dict()["family"] == "mine"
