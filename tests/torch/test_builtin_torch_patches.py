import importlib

import pytest
import torch
import torch._refs
import torch._subclasses.fake_impls
import torch.export._trace
import torch.fx.proxy
from torch.fx.experimental.symbolic_shapes import DynamicDimConstraintPrinter

from patchport.patching import PatchInfo, SkippedPatch
from patchport.torch import apply_patches_for_model, use_dyn_not_str
from patchport.torch.builtin import TORCH_PATCHES, BuiltinPatch
from patchport.torch.tiny_models import TinyBroadcastAddModel

PAIRS = [((3, 4), (3, 1)), ((3, 4), (3, 4)), ((3, 1), (3, 6)), ((1, 5), (1, 1)), ((2, 1), (2, 3))]


def originals():
    out = {}
    for spec in TORCH_PATCHES:
        owner = importlib.import_module(spec.module)
        *path, name = spec.attribute.split(".")
        for part in path:
            owner = getattr(owner, part)
        out[spec.target_name] = (
            vars(owner)[name] if isinstance(owner, type) else getattr(owner, name)
        )
    return out


def export_broadcast_model(**patch_kwargs):
    model = TinyBroadcastAddModel()
    dynamic_shapes = use_dyn_not_str(TinyBroadcastAddModel._dynamic_shapes())
    with (
        torch.fx.experimental._config.patch(backed_size_oblivious=True),
        apply_patches_for_model(**patch_kwargs) as details,
    ):
        ep = torch.export.export(
            model, (), kwargs=TinyBroadcastAddModel._export_inputs(), dynamic_shapes=dynamic_shapes
        )
    return ep, details


@pytest.fixture(scope="module")
def patched_export():
    before = originals()
    anchors_before = set(torch.fx.proxy._STACK_TRACE_ANCHORS)
    ep, details = export_broadcast_model(patch_torch=True)
    assert originals() == before, "a built-in torch patch was left applied"
    assert torch.fx.proxy._STACK_TRACE_ANCHORS == anchors_before
    return ep, details


@pytest.mark.parametrize("x_shape, y_shape", PAIRS)
def test_exported_broadcast_model_is_right_on_every_pair(patched_export, x_shape, y_shape):
    ep, _ = patched_export
    x, y = torch.randn(*x_shape), torch.randn(*y_shape)
    torch.testing.assert_close(ep.module()(x=x, y=y), x + y, rtol=0, atol=0)


def test_exported_program_refuses_shapes_that_do_not_broadcast(patched_export):
    ep, _ = patched_export
    with pytest.raises(RuntimeError, match=r"size of tensor a \(4\) must match .* \(5\)"):
        ep.module()(x=torch.randn(3, 4), y=torch.randn(3, 5))


def test_every_dimension_stays_dynamic_and_unbounded(patched_export):
    ep, _ = patched_export
    ranges = {str(sym): (vr.lower, vr.upper) for sym, vr in ep.range_constraints.items()}
    assert len(ranges) == 3  # batch (traced equal on both inputs, as torch does), d1, d2
    for lower, upper in ranges.values():
        assert lower in (0, 1) and str(upper) == "int_oo"


def test_sizes_traced_equal_stay_one_size_as_in_torch(patched_export):
    ep, _ = patched_export
    with pytest.raises(Exception, match="batch|size"):
        ep.module()(x=torch.randn(2, 4), y=torch.randn(1, 4))


def test_shape_patches_are_reported_as_exercised(patched_export):
    _, details = patched_export
    exercised = {p.name for p in details.exercised()}
    assert {"broadcast_shapes_any_size", "infer_size_any_size"} <= exercised
    report = details.make_report(details.patches_involved_in_graph(patched_export[0].graph))
    assert "broadcast_shapes_any_size on torch._refs._broadcast_shapes" in report


def test_without_patches_the_export_fails():
    with pytest.raises(RuntimeError, match="must match the size of tensor b"):
        export_broadcast_model(patch_torch=False)


def test_builtin_patches_declare_versions_and_apply_here():
    with apply_patches_for_model(patch_torch=True) as details:
        assert details.n_patches == len(TORCH_PATCHES)
        assert not details.skipped
        assert all(p.versions.startswith("torch>=") and p.family == "torch" for p in details)
        assert torch._refs._broadcast_shapes.__name__ == "broadcast_shapes_any_size"
    assert torch._refs._broadcast_shapes.__name__ == "_broadcast_shapes"


def _replacement(*args):
    return None


@pytest.mark.parametrize(
    "spec, reason",
    [
        (
            BuiltinPatch(
                "torch", "torch._refs", "_broadcast_shapes", _replacement, "torch", "<1.0", "old"
            ),
            "written for torch<1.0, installed 2.",
        ),
        (
            BuiltinPatch(
                "torch", "torch._refs", "_no_such_helper", _replacement, "torch", ">=2.0", "gone"
            ),
            "target torch._refs._no_such_helper not found in torch",
        ),
        (
            BuiltinPatch("torch", "torch.no_such_module", "f", _replacement, "torch", "", "gone"),
            "No module named 'torch.no_such_module'",
        ),
        (
            BuiltinPatch("x", "x", "f", _replacement, "no-such-distribution", "", "absent"),
            "no-such-distribution is not installed",
        ),
    ],
)
def test_builtin_patch_that_does_not_fit_is_skipped_with_its_reason(spec, reason):
    [resolved] = spec.resolve()
    assert isinstance(resolved, SkippedPatch)
    assert reason in resolved.reason


def test_patch_transformers_is_accepted():
    with apply_patches_for_model(patch_transformers=True) as details:
        assert all(p.family == "transformers" for p in details)
        assert details.n_patches or details.skipped


def test_extra_patches_must_be_patch_infos():
    with pytest.raises(TypeError, match="item 0 is a function, not a PatchInfo"):
        with apply_patches_for_model(extra_patches=[_replacement]):
            pass


def test_exception_inside_apply_patches_for_model_restores_everything():
    before = originals()
    with pytest.raises(ValueError, match="boom"):
        with apply_patches_for_model(patch_torch=True):
            raise ValueError("boom")
    assert originals() == before


def test_patching_a_target_twice_is_refused_before_anything_changes():
    before = originals()

    def other(*_shapes):
        return []

    mine = PatchInfo.make(other, torch._refs, "_broadcast_shapes", family="custom")
    with pytest.raises(RuntimeError, match="targeted twice"):
        with apply_patches_for_model(patch_torch=True, extra_patches=[mine]):
            pass
    assert originals() == before
    with apply_patches_for_model(patch_torch=True):
        with pytest.raises(RuntimeError, match="already patched by broadcast_shapes_any_size"):
            with apply_patches_for_model(extra_patches=[mine]):
                pass
    assert originals() == before


class ThreeInputs(torch.nn.Module):
    def forward(self, x, y=None, z=None):
        return x.sum(dim=1, keepdim=True) + y[:, :1] + z[:, :1]


def test_positional_dynamic_shapes_keep_their_inputs_when_kwargs_are_reordered():
    dim = torch.export.Dim
    batch = dim("batch")
    shapes = (
        {0: batch, 1: dim("n", min=3, max=20)},
        {0: batch, 1: dim("m", min=5, max=50)},
        {0: batch, 1: dim("k", min=7, max=70)},
    )
    kwargs = {"z": torch.randn(2, 8), "y": torch.randn(2, 6)}
    with apply_patches_for_model(patch_torch=True) as details:
        ep = torch.export.export(
            ThreeInputs(), (torch.randn(2, 4),), kwargs=kwargs, dynamic_shapes=shapes
        )
    assert details.find("get_range_constraints_by_name").calls == 1
    x, y, z = torch.randn(2, 4), torch.randn(2, 6), torch.randn(2, 60)  # z: 60 <= k max 70
    torch.testing.assert_close(ep.module()(x, y=y, z=z), ThreeInputs()(x, y=y, z=z))
    bounded = [vr for vr in ep.range_constraints.values() if str(vr.upper) != "int_oo"]
    bounds = sorted((int(vr.lower), int(vr.upper)) for vr in bounded)
    assert bounds == [(3, 20), (5, 50), (7, 70)]


def test_constraint_printer_names_unknown_symbols_instead_of_crashing():
    import sympy

    printer = DynamicDimConstraintPrinter({}, {})
    unknown = sympy.Symbol("s99", integer=True)
    with pytest.raises(AssertionError, match="Unknown symbol s99"):
        printer.doprint(unknown)
    with apply_patches_for_model(patch_torch=True):
        assert printer.doprint(unknown + 1) == "1 + s99"


class MaskedScan(torch.nn.Module):
    """Masks the inputs (a broadcast of two equal dynamic lengths), then loops over the
    length in Python, like Mamba's CPU scan: torch must refuse a dynamic length."""

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        masked = x * mask[:, :, None]
        state = torch.zeros_like(masked[:, 0])
        outputs = []
        for step in range(masked.shape[1]):
            state = state * 0.5 + masked[:, step]
            outputs.append(state)
        return torch.stack(outputs, dim=1)


def test_broadcast_patches_keep_a_refusal_a_refusal():
    # plain torch refuses: the loop fixes the length asked to be dynamic. The broadcast
    # patches used to answer max(len_x, len_mask) there, hiding the loop's specialization
    # behind an expression: the "exported" program accepted only the traced length.
    inputs = {"x": torch.randn(2, 5, 3), "mask": torch.ones(2, 5)}
    shapes = {"x": {0: "batch", 1: "length"}, "mask": {0: "batch", 1: "length"}}
    dynamic = use_dyn_not_str(shapes)
    with pytest.raises(Exception, match="Constraints violated"):
        torch.export.export(MaskedScan(), (), kwargs=inputs, dynamic_shapes=dynamic)
    with (
        torch.fx.experimental._config.patch(backed_size_oblivious=True),
        apply_patches_for_model(patch_torch=True),
        pytest.raises(Exception, match="Constraints violated"),
    ):
        torch.export.export(MaskedScan(), (), kwargs=inputs, dynamic_shapes=dynamic)
