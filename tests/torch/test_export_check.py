"""patchport.torch.export: narrowings in plain words and new shapes against eager."""

from __future__ import annotations

import pytest
import torch

import patchport.torch
from patchport.errors import ExportArgumentError, NarrowedExportError
from patchport.torch.export_check import ExportResult
from patchport.torch.export_select import export
from patchport.torch.export_shape_checks import compare_outputs


class CapsBatch(torch.nn.Module):
    """Branches on the batch size: torch keeps one branch and bounds the dimension."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[0] <= 12:
            return x * 2
        return x * 3


class FixesWidth(torch.nn.Module):
    """Multiplies by a (3, 2) matrix: a dynamic width silently becomes the constant 3."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ torch.ones(3, 2)


class Clean(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x.sum(dim=1, keepdim=True) * y


def test_bound_from_a_branch_is_an_error_in_plain_words_unless_allowed():
    call = dict(
        dynamic_shapes=({0: "batch", 1: "width"},),
        check_shapes=[(torch.randn(20, 2),), (torch.randn(1, 7),)],
    )
    with pytest.raises(NarrowedExportError, match="batch must be <= 12") as caught:
        export(CapsBatch(), (torch.randn(4, 2),), **call)
    assert "allow_narrowing=True" in str(caught.value)
    assert "plain: batch must be <= 12" in str(caught.value)  # every configuration is listed
    program, report = export(CapsBatch(), (torch.randn(4, 2),), allow_narrowing=True, **call)
    assert caught.value.result.report.configuration == report.configuration
    assert [n.text for n in report.narrowings] == ["batch must be <= 12"]
    assert not report.is_general
    failed, passed = report.shape_checks
    assert not failed.ok and failed.label == "x=(20, 2)"
    assert failed.error is not None
    assert passed.ok and passed.max_abs_diff == 0.0
    assert "batch must be <= 12" in report.to_text()


def test_dynamic_dimension_pinned_to_a_constant_is_reported():
    # Dim.DYNAMIC refuses the specialization; Dim.AUTO lets torch make it silently
    auto = torch.export.Dim.AUTO
    shapes = ({0: "n", 1: auto},)
    _, report = export(
        FixesWidth(), (torch.randn(4, 3),), dynamic_shapes=shapes, allow_narrowing=True
    )
    assert [n.text for n in report.narrowings] == ["x.shape[1] must be 3"]


def test_general_program_reports_nothing_and_matches_eager():
    result = export(
        Clean(),
        (torch.randn(2, 5), torch.randn(2, 1)),
        dynamic_shapes=({0: "batch", 1: "n"}, {0: "batch"}),
        check_shapes=[
            (torch.randn(1, 1), torch.randn(1, 1)),
            (torch.randn(7, 30), torch.randn(7, 1)),
        ],
    )
    assert isinstance(result, ExportResult)
    program, report = result
    assert report.narrowings == [] and report.is_general
    assert all(check.ok for check in report.shape_checks)
    assert patchport.torch.export is export


@pytest.mark.slow
def test_llama_decode_step_narrowing_is_found_and_patches_remove_it():
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=64,
    )
    model = transformers.AutoModelForCausalLM.from_config(config).eval()
    traced = {"input_ids": torch.randint(0, 64, (2, 5)), "attention_mask": torch.ones(2, 5).long()}
    decode = {"input_ids": torch.randint(0, 64, (3, 1)), "attention_mask": torch.ones(3, 1).long()}
    shapes = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}}
    # plain torch's program runs seq=1 (the check) and batch=1 (a size-1 probe of the
    # program): it is general and right, so it is returned after one export
    _, plain = export(model, (), traced, dynamic_shapes=shapes, check_shapes=[decode])
    assert [a.configuration for a in plain.attempts] == ["plain"], plain.to_text()
    assert plain.is_general and "size-1 probe" in plain.choice, plain.to_text()
    # torch patches only: under backed_size_oblivious transformers' SDPA branches on the
    # query length, so that program rejects seq=1 ...
    narrow = _backed_size_oblivious_report(model, traced, shapes, decode, transformers=False)
    assert "seq must be != 1" in [n.text for n in narrow.narrowings]
    assert not narrow.shape_checks[0].ok and "!= 1" in narrow.shape_checks[0].error
    # ... with the transformers patches, the backed_size_oblivious program traces seq=1 too
    general = _backed_size_oblivious_report(model, traced, shapes, decode, transformers=True)
    assert general.narrowings == [] and general.assumptions == [], general.to_text()
    assert general.is_general


def _backed_size_oblivious_report(model, traced, shapes, decode, transformers):
    from patchport.torch import apply_patches_for_model, check_program, use_dyn_not_str

    with (
        torch.fx.experimental._config.patch(backed_size_oblivious=True),
        apply_patches_for_model(patch_transformers=transformers, model=model),
    ):
        program = torch.export.export(
            model, (), kwargs=traced, dynamic_shapes=use_dyn_not_str(shapes)
        )
    return check_program(program, model, (), traced, dynamic_shapes=shapes, check_shapes=[decode])


def test_check_program_reports_on_a_plain_torch_export():
    from patchport.torch import check_program

    x = torch.randn(4, 2)
    dims = torch.export.Dim.DYNAMIC
    program = torch.export.export(CapsBatch(), (x,), dynamic_shapes=({0: dims, 1: dims},))
    report = check_program(
        program,
        CapsBatch(),
        (x,),
        dynamic_shapes=({0: "batch", 1: "width"},),
        check_shapes=[(torch.randn(3, 1),)],
    )
    assert [n.text for n in report.narrowings] == ["batch must be <= 12"]
    # torch traced for sizes >= 2 but does not enforce it: an assumption, not a rejection
    assumed = [n.text for n in report.assumptions]
    assert assumed == [
        "batch was traced as >= 2; size 1 runs but was not traced",
        "width was traced as >= 2; size 1 runs but was not traced",
    ]
    assert report.patches.n_patches == 0 and report.shape_checks[0].ok


class StridedConvs(torch.nn.Module):
    """Two strided 1-d convolutions over raw samples (a speech front end): the guards on
    the dynamic length hold ``samples // 5``, which sympy cannot read as a polynomial."""

    def __init__(self) -> None:
        super().__init__()
        self.first = torch.nn.Conv1d(1, 4, 10, stride=5)
        self.second = torch.nn.Conv1d(4, 4, 3, stride=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.second(self.first(x[:, None]))


def test_guards_with_floor_division_of_a_size_are_read_not_crashed_on():
    model = StridedConvs().eval()
    x = torch.randn(2, 800)
    dims = torch.export.Dim.DYNAMIC
    program = torch.export.export(model, (x,), dynamic_shapes=({0: dims, 1: dims},))
    from patchport.torch import check_program

    report = check_program(
        program,
        model,
        (x,),
        dynamic_shapes=({0: "batch", 1: "samples"},),
        check_shapes=[(torch.randn(1, 400),), (torch.randn(3, 1200),)],
    )
    # torch traced the convolutions' output as != 1 (its 0/1 specialization): a lower bound
    # on the samples that plain torch.export itself puts in the program
    assert "samples must be >= 20" in [n.text for n in report.narrowings]
    assert all(check.ok for check in report.shape_checks)


def test_a_guard_joining_two_conditions_with_and_is_read_as_two():
    # a patch embedding (an 8x8 convolution of stride 8) over a dynamic image: with
    # backed_size_oblivious, torch writes "height >= 8 and width >= 8" as one guard
    model = torch.nn.Conv2d(3, 4, 8, stride=8).eval()
    program, report = export(
        model,
        (torch.randn(2, 3, 64, 64),),
        dynamic_shapes=({0: "batch", 2: "height", 3: "width"},),
        backed_size_oblivious=True,
        check_shapes=[(torch.randn(1, 3, 32, 48),)],
        allow_narrowing=True,
    )
    assert any(" and " in guard for guard in program._guards_code)
    # each bound read on its own: the 8-pixel kernel is the model's own limit
    texts = [n.text.split(":")[0] for n in report.narrowings + report.assumptions + report.limits]
    assert "height must be >= 8" in texts and "width must be >= 8" in texts
    assert not any(" and " in text for text in texts + report.relations)
    assert report.shape_checks[0].ok


def test_output_comparison_catches_a_wrong_value():
    ok, worst, problem = compare_outputs(
        {"a": torch.zeros(3)}, {"a": torch.tensor([0, 0, 1e-2])}, 0, 1e-4
    )
    assert not ok and worst == pytest.approx(1e-2) and problem is None
    ok, _, problem = compare_outputs([torch.zeros(2)], [torch.zeros(2), torch.zeros(1)], 0, 1e-4)
    assert not ok and "2 output tensors, eager gives 1" in problem


def test_output_comparison_names_both_shapes_when_they_differ():
    ok, _, problem = compare_outputs([torch.zeros(1, 8, 8)], [torch.zeros(1, 6, 8)], 0, 1e-4)
    assert not ok and problem == "output 0: shape (1, 6, 8), eager (1, 8, 8)"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"model": "model"}, r"export\(model=...\): expected a torch.nn.Module"),
        ({"args": [1]}, r"export\(args=...\): expected a tuple"),
        ({"kwargs": [1]}, r"export\(kwargs=...\): expected a dict"),
        ({"dynamic_shapes": "batch"}, r"export\(dynamic_shapes=...\): expected a dict"),
        ({"check_shapes": [1]}, r"check_shapes=...\): item 0 is a int"),
    ],
)
def test_wrong_arguments_are_refused_before_anything_changes(kwargs, message):
    import torch._refs

    before = torch._refs._broadcast_shapes
    call = {"model": Clean(), "args": (torch.randn(2, 2), torch.randn(2, 1)), **kwargs}
    with pytest.raises(ExportArgumentError, match=message):
        export(call.pop("model"), call.pop("args"), **call)
    assert torch._refs._broadcast_shapes is before


class BranchesOnData(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2 if x.sum() > 0 else x


def test_no_configuration_exports_lists_each_failure_and_keeps_torch_error():
    from patchport.torch import ExportFailedError

    with pytest.raises(ExportFailedError) as caught:
        export(BranchesOnData(), (torch.randn(3, 2),), dynamic_shapes=({0: "n"},))
    names = [attempt.configuration for attempt in caught.value.attempts]
    assert names == ["plain", "patches", "patches+backed_size_oblivious"]
    assert all(attempt.error for attempt in caught.value.attempts)
    assert "plain: export failed" in str(caught.value)
    assert caught.value.__cause__ is not None  # torch's own error, for its full message


def test_chunk_padding_guards_are_decided_without_minutes_of_sympy():
    # Mamba2's chunked scan pads seq to whole chunks of 4: its program's guards are made of
    # // and %; sympy.simplify spent minutes per guard on them (199 s for one program)
    from patchport.torch.export_guards import _always_holds

    seq = "L['input_ids'].size()[1]"
    names = {seq: "seq"}
    padded = f"({seq} + ((4 + (-1)*({seq} % 4)) % 4))"
    assert _always_holds(f"{padded} % 4 == 0", names)  # whole chunks: true for every seq
    assert not _always_holds(f"4 < {padded}", names)  # false at seq <= 4: a narrowing
    assert not _always_holds(f"{padded} // 4 != 1", names)
    assert _always_holds(f"({seq}*{seq}) % {seq} == 0", names)
    assert not _always_holds(f"{seq} <= 1000", names)  # a bound past the grid's middle
    assert _always_holds(f"{seq} + 1 > {seq}", names)  # polynomial: proven by sympy


class _SumRows(torch.nn.Module):
    def forward(self, x):
        out = x[0] * 0
        for i in range(x.shape[0]):  # fixes rows to the traced 3 in every configuration
            out = out + x[i]
        return out


def test_a_python_loop_over_a_dynamic_size_is_refused_after_one_export():
    from patchport.errors import ExportFailedError

    with pytest.raises(ExportFailedError) as caught:
        export(_SumRows(), (torch.randn(3, 2),), dynamic_shapes=({0: "rows"},))
    text = str(caught.value)
    assert len(caught.value.attempts) == 1, text
    assert "cannot keep rows dynamic" in text and "traced 3 steps" in text
    assert "for i in range(x.shape[0]):" in text and "test_export_check.py" in text


def test_a_loop_in_code_a_patch_replaces_lets_the_patched_configurations_run():
    from patchport.torch.export_specialization import (
        loops_fixing,
        recording_specializations,
    )

    with recording_specializations() as found, pytest.raises(Exception) as caught:
        dims = torch.export.Dim.DYNAMIC
        torch.export.export(_SumRows(), (torch.randn(3, 2),), dynamic_shapes=({0: dims},))
    assert [s.line for s in loops_fixing(found, str(caught.value), set())] == [
        "for i in range(x.shape[0]):  # fixes rows to the traced 3 in every configuration"
    ]
    assert loops_fixing(found, str(caught.value), {_SumRows.forward.__code__}) == []


class _PoolsPairs(torch.nn.Module):
    """Pools neighbouring positions in pairs, as Funnel does: a 1-long sequence fails in
    eager (an index past the end), whatever the exporter does."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        starts = torch.arange(0, x.shape[1], 2)
        return x[:, starts] + x[:, starts + 1]


def test_a_check_shape_eager_itself_cannot_run_is_refused_naming_it_before_exporting():
    traced = torch.randn(2, 6, 4)
    with pytest.raises(ExportArgumentError) as caught:
        export(
            _PoolsPairs(),
            (traced,),
            dynamic_shapes=({0: "batch"},),
            check_shapes=[(torch.randn(3, 6, 4),), (torch.randn(1, 5, 4),)],
        )
    text = str(caught.value)
    assert "check_shapes[1]" in text and "(1, 5, 4)" in text and "IndexError" in text


class _FlagInKwargs(torch.nn.Module):
    """Takes an option through ``**kwargs`` (GraniteMoE's ``use_cache``, many forwards'
    ``output_attentions``) as well as a named tensor."""

    def forward(self, x: torch.Tensor, **kwargs: object) -> torch.Tensor:
        return x * 2 if kwargs.get("double") else x + 1


def test_dynamic_shapes_of_an_input_taken_through_var_keyword_are_accepted_flat():
    model, x = _FlagInKwargs(), torch.randn(3, 4)
    shapes = {"x": {0: "batch"}, "double": None}
    with pytest.raises(Exception, match="top-level keys"):  # plain torch.export refuses
        torch.export.export(
            model,
            (),
            {"x": x, "double": True},
            dynamic_shapes=patchport.torch.use_dyn_not_str(shapes),
        )
    program, report = export(
        model,
        (),
        {"x": x, "double": True},
        dynamic_shapes=shapes,
        check_shapes=[{"x": torch.randn(5, 4), "double": True}],
    )
    assert report.narrowings == [] and all(c.ok for c in report.shape_checks)
    new = torch.randn(7, 4)
    torch.testing.assert_close(program.module()(x=new, double=True), new * 2)


class _HalfStepGrid(torch.nn.Module):
    """Patch centres at ``arange(0.5, patches)`` (DINOv3's rotary grid): torch's guards then
    hold Python code sympy cannot read (``math.ceil``, ``torch.sym_float``)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        patches = x.shape[1] // 8
        centres = torch.arange(0.5, patches, dtype=torch.float32)
        if centres.shape[0] >= 2:
            centres = centres * 2
        torch._check(x.shape[1] >= 16)  # a lower bound the guard analysis tries to explain
        return x[:, : 8 * patches].reshape(x.shape[0], patches, 8).mean(-1) * centres


def test_guards_holding_math_ceil_and_sym_float_are_read_not_crashed_on():
    model, x = _HalfStepGrid(), torch.randn(2, 64)
    shapes = {"x": {0: "batch", 1: "length"}}
    program = torch.export.export(
        model, (), {"x": x}, dynamic_shapes=patchport.torch.use_dyn_not_str(shapes)
    )
    report = patchport.torch.check_program(
        program,
        model,
        (),
        {"x": x},
        dynamic_shapes=shapes,
        check_shapes=[{"x": torch.randn(1, 40)}],
    )
    assert "length must be >= 16" in [n.text for n in report.narrowings]
    assert all(c.ok for c in report.shape_checks)
