import threading
import warnings

import pytest
import torch

from patchport.errors import PatchDefinitionError, PatchRestoreWarning, PatchStateError
from patchport.patching import PatchDetails, PatchInfo
from patchport.patching.patch_details import ExceptionGroup  # the backport on Python 3.10

from . import targets


def triple(x, factor=3):
    return x * factor


def plus_ten(x):
    return x + 10


def fresh_details():
    return PatchDetails(
        [PatchInfo.make(triple, targets, "scale"), PatchInfo.make(plus_ten, targets, "offset")]
    )


def test_collection_protocol():
    details = fresh_details()
    assert len(details) == details.n_patches == 2
    assert [p.name for p in details] == ["triple", "plus_ten"]
    assert details[1].name == "plus_ten"
    assert details.find("plus_ten") is details[1]
    assert details.find("tests.patching.targets.scale") is details[0]
    assert details.find("missing") is None
    assert [row["name"] for row in details.data()] == ["triple", "plus_ten"]
    assert PatchDetails()  # empty is still truthy
    with pytest.raises(PatchDefinitionError, match="expected a PatchInfo, got str"):
        details.append("scale")


def test_context_applies_and_restores_in_reverse_order():
    original = (targets.scale, targets.offset)
    with fresh_details() as details:
        assert targets.scale(1) == 3 and targets.offset(1) == 11
        assert details.is_applied
    assert (targets.scale, targets.offset) == original
    assert [p.calls for p in details] == [1, 1]
    assert [p.name for p in details.exercised()] == ["triple", "plus_ten"]


def test_exception_inside_the_block_restores_everything():
    original = (targets.scale, targets.offset)
    with pytest.raises(ZeroDivisionError):
        with fresh_details():
            1 / 0  # noqa: B018
    assert (targets.scale, targets.offset) == original


def test_keyboard_interrupt_inside_the_block_restores_everything():
    original = (targets.scale, targets.offset)
    with pytest.raises(KeyboardInterrupt):
        with fresh_details():
            raise KeyboardInterrupt
    assert (targets.scale, targets.offset) == original


def test_duplicate_target_is_refused_before_anything_changes():
    original = (targets.scale, targets.offset)
    details = PatchDetails(
        [
            PatchInfo.make(plus_ten, targets, "offset"),
            PatchInfo.make(triple, targets, "scale"),
            PatchInfo.make(triple, targets, "scale"),
        ]
    )
    with pytest.raises(PatchStateError, match="targeted twice"):
        details.apply()
    assert (targets.scale, targets.offset) == original


def test_target_patched_by_another_details_is_refused_before_anything_changes():
    with fresh_details():
        second = PatchDetails(
            [
                PatchInfo.make(plus_ten, targets.Child, "tool"),
                PatchInfo.make(triple, targets, "scale"),
            ]
        )
        with pytest.raises(PatchStateError, match="already patched by triple"):
            second.apply()
        assert isinstance(vars(targets.Child)["tool"], staticmethod)
        assert targets.Child.tool(5) == 4


def test_applying_the_same_details_twice_is_refused():
    details = fresh_details()
    with details:
        with pytest.raises(PatchStateError, match="already applied"):
            details.apply()
        assert targets.scale(1) == 3  # still applied once, untouched by the refusal


class FailingPatch(PatchInfo):
    """A patch whose installation fails after validation, as a frozen target would."""

    def do(self):
        raise RuntimeError("cannot install")


def test_failed_install_rolls_back_the_patches_before_it():
    original = (targets.scale, targets.offset)
    details = PatchDetails(
        [
            PatchInfo.make(triple, targets, "scale"),
            PatchInfo.make(plus_ten, targets, "offset"),
            FailingPatch(triple, targets.Child, "tool"),
        ]
    )
    with pytest.raises(RuntimeError, match="cannot install"):
        details.apply()
    assert (targets.scale, targets.offset) == original
    assert not details.is_applied and not any(p.applied for p in details)


def test_reassignment_during_the_block_is_kept_and_reported():
    def someone_else(x):
        return "theirs"

    original_scale, original_offset = targets.scale, targets.offset
    details = fresh_details()
    try:
        with pytest.warns(PatchRestoreWarning, match="not restore tests.patching.targets.scale"):
            with details:
                targets.scale = someone_else
        assert targets.scale is someone_else
        assert targets.offset is original_offset
        assert details.kept_external == [details[0]]
    finally:
        targets.scale = original_scale


def test_other_threads_see_the_patch_while_applied():
    seen = []
    with fresh_details():
        worker = threading.Thread(target=lambda: seen.append(targets.scale(2)))
        worker.start()
        worker.join()
    assert seen == [6]


def helper_used_by_model(x):
    return x * 2


def patched_helper(x):
    doubled = torch.mul(x, 2)
    return torch.relu(doubled)


class UsesHelper(torch.nn.Module):
    def forward(self, x):
        return helper_used_by_model(x) + 1


def test_patches_involved_in_graph_finds_nodes_made_inside_the_patch():
    import sys

    module = sys.modules[__name__]
    details = PatchDetails([PatchInfo.make(patched_helper, module, "helper_used_by_model")])
    with details:
        ep = torch.export.export(UsesHelper(), (torch.randn(2, 3),))
    involved = details.patches_involved_in_graph(ep.graph)
    assert len(involved) == 1
    patch, nodes = involved[0]
    assert patch is details[0]
    assert sorted(str(n.target) for n in nodes) == ["aten.mul.Tensor", "aten.relu.default"]
    report = details.make_report(involved, format="raw")
    assert "+def patched_helper(x):" in report and "aten.relu.default" in report
    assert "nodes produced by patched_helper (2)" in report
    rst = details.make_report(involved, format="rst")
    assert ".. code-block:: diff" in rst


class Node:
    def __init__(self, name, stack):
        self.name, self.target, self.args = name, "op", ()
        self.meta = {"stack_trace": stack} if stack else {}


class Graph:
    def __init__(self, nodes):
        self.nodes = nodes


def test_graph_contract_is_duck_typed():
    import inspect

    details = PatchDetails([PatchInfo.make(triple, targets, "scale")])
    _, first = inspect.getsourcelines(triple)
    here = inspect.getsourcefile(triple)
    graph = Graph(
        [
            Node("a", f'File "{here}", line {first + 1}, in triple\n    return x * factor'),
            Node("b", f'File "{here}", line 1, in <module>'),
            Node("c", None),
        ]
    )
    involved = details.patches_involved_in_graph(graph)
    assert [(p.name, [n.name for n in nodes]) for p, nodes in involved] == [("triple", ["a"])]
    with pytest.raises(TypeError, match="expected an object with .nodes"):
        details.patches_involved_in_graph(object())


def test_report_lists_patches_exercised_without_nodes():
    with fresh_details() as details:
        targets.offset(1)
    report = details.make_report([], format="raw")
    assert "exercised without adding nodes" in report
    assert "plus_ten on tests.patching.targets.offset: 1 call(s)" in report
    assert "triple" not in report
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert "no patch was involved" in PatchDetails().make_report([])


class UndoFails(PatchInfo):
    """A patch whose restore fails (a frozen target, say): it stays applied."""

    def undo(self):
        raise RuntimeError(f"cannot restore {self.target_name}")


def test_every_restore_error_is_raised_together_after_restoring_all_the_others():
    original = (targets.scale, targets.offset, vars(targets.Child)["tool"])
    details = PatchDetails(
        [
            UndoFails(triple, targets, "scale"),
            PatchInfo.make(plus_ten, targets, "offset"),
            UndoFails(triple, targets.Child, "tool"),
        ]
    )
    details.apply()
    try:
        with pytest.raises(ExceptionGroup) as caught:
            details.restore()
        messages = sorted(str(exc) for exc in caught.value.exceptions)
        assert messages == [
            "cannot restore tests.patching.targets.Child.tool",
            "cannot restore tests.patching.targets.scale",
        ]
        assert "2 patches" in str(caught.value)
        assert targets.offset is original[1]  # restored despite the failures around it
        # the two it could not undo are still applied and stay tracked: restore() retries
        assert details.is_applied and details._applied == [details[0], details[2]]
    finally:
        for patch in details:
            if patch.applied:
                PatchInfo.undo(patch)
    assert (targets.scale, targets.offset, vars(targets.Child)["tool"]) == original


def test_a_single_restore_error_is_raised_as_it_is():
    details = PatchDetails([UndoFails(triple, targets, "scale")]).apply()
    try:
        with pytest.raises(RuntimeError, match="cannot restore tests.patching.targets.scale"):
            details.restore()
    finally:
        PatchInfo.undo(details[0])


def test_yobx_attribute_names():
    """yobx's tests read ``details.patched``, ``patch.function_to_patch`` and ``to_tuple()``."""
    import types

    module = types.ModuleType("yobx_names_target")

    def target(x):
        return x

    def replacement(x):
        return x + 1

    module.target = target
    info = PatchInfo.make(replacement, module, "target", family="demo")
    details = PatchDetails([info])
    assert details.patched == [info]
    assert info.function_to_patch is target  # before, while and after being applied
    with details:
        assert info.function_to_patch is target and module.target(1) == 2
        assert info.to_tuple() == ("demo", target, replacement)
    assert info.function_to_patch is target
