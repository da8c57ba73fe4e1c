"""State-space models (Mamba, Mamba2, the Bamba hybrid) keep a dynamic sequence length.

transformers' CPU scans loop over the positions (Mamba) or pad the sequence to a multiple
of ``chunk_size`` (Mamba2): torch then fixes ``seq`` or ``seq % chunk_size``. patchport
replaces both by closed forms (``patchport.torch.builtin.transformers_scan``); these tests
check the forms against transformers' own scans, and the exported programs against eager
on lengths never traced, in torch and in ONNX Runtime.
"""

from __future__ import annotations

import inspect

import pytest
import torch

transformers = pytest.importorskip("transformers")

from patchport.torch import export, to_onnx  # noqa: E402
from patchport.torch.builtin.transformers_scan import (  # noqa: E402
    mamba2_chunk_scan_one_chunk,
    mamba_selective_scan_closed_form,
)
from patchport.torch.transformers_patches import (  # noqa: E402
    TransformersPatch,
    iter_transformers_patches,
)

from .test_export_families import VOCAB, _state_space_case, state_space  # noqa: E402

LENGTHS = (1, 3, 7, 16, 24, 64)


def _random(generator):
    return lambda *shape: torch.randn(*shape, generator=generator)


@pytest.mark.parametrize("length", LENGTHS)
def test_closed_form_scan_equals_transformers_mamba_scan(length):
    from transformers.models.mamba import modeling_mamba

    original = inspect.unwrap(modeling_mamba.mamba_selective_scan)
    rand = _random(torch.Generator().manual_seed(length))
    batch, d, n = 2, 8, 4
    x, dt, z = rand(batch, d, length), rand(batch, d, length), rand(batch, d, length)
    A = -torch.exp(rand(d, n))
    B, C, D, bias = rand(batch, n, length), rand(batch, n, length), rand(d), rand(d)
    options = dict(D=D, z=z, delta_bias=bias, delta_softplus=True, return_last_state=True)
    expected, expected_state = original(x, dt, A, B, C, **options)
    got, state = mamba_selective_scan_closed_form(x, dt, A, B, C, **options)
    assert got.dtype == expected.dtype and state.shape == expected_state.shape
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(state, expected_state, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("length", LENGTHS)
@pytest.mark.parametrize("with_state", [False, True])
def test_one_chunk_scan_equals_transformers_mamba2_chunked_scan(length, with_state):
    from transformers.models.mamba2 import modeling_mamba2

    original = inspect.unwrap(modeling_mamba2.mamba2_chunk_scan)
    rand = _random(torch.Generator().manual_seed(length))
    batch, heads, dim, groups, n = 2, 4, 3, 2, 5
    x, dt = rand(batch, length, heads, dim), rand(batch, length, heads)
    A = -torch.exp(rand(heads))
    B, C = rand(batch, length, groups, n), rand(batch, length, groups, n)
    options = dict(
        D=rand(heads),
        dt_bias=rand(heads),
        dt_softplus=True,
        initial_states=rand(batch, heads, dim, n) if with_state else None,
        dt_limit=(0.0, float("inf")),
        return_final_states=True,
    )
    expected, expected_final = original(x, dt, A, B, C, 4, **options)  # chunks of 4
    got, final = mamba2_chunk_scan_one_chunk(x, dt, A, B, C, 4, **options)
    assert got.shape == expected.shape
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(final, expected_final, rtol=1e-5, atol=1e-5)


def test_closed_form_scan_stays_finite_on_a_long_fast_decay():
    # large dt * |A| over a long sequence: exp of the positions s > t would overflow, so
    # they are masked to -inf before exp
    rand = _random(torch.Generator().manual_seed(0))
    batch, d, n, length = 1, 2, 3, 200
    x, dt = rand(batch, d, length), torch.full((batch, d, length), 5.0)
    A, B, C = -torch.full((d, n), 20.0), rand(batch, n, length), rand(batch, n, length)
    got = mamba_selective_scan_closed_form(x, dt, A, B, C, delta_softplus=True)
    assert torch.isfinite(got).all()


def _mamba2(layers: int = 1):
    torch.manual_seed(0)
    config = transformers.Mamba2Config(
        hidden_size=32,
        state_size=8,
        num_heads=4,
        head_dim=16,
        n_groups=1,
        num_hidden_layers=layers,
        vocab_size=VOCAB,
        chunk_size=4,
        time_step_rank=4,
    )
    return transformers.Mamba2ForCausalLM(config).eval()


def _bamba():
    torch.manual_seed(0)
    config = transformers.BambaConfig(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=VOCAB,
        max_position_embeddings=64,
        attn_layer_indices=[1],
        mamba_n_heads=4,
        mamba_d_head=16,
        mamba_d_state=8,
        mamba_n_groups=1,
        mamba_chunk_size=4,
        mamba_expand=2,
    )
    return transformers.BambaForCausalLM(config).eval()


@pytest.mark.parametrize(
    ("build", "patch", "target"),
    [
        (
            lambda: state_space()[0],
            "mamba_selective_scan_closed_form",
            "transformers.models.mamba.modeling_mamba.mamba_selective_scan",
        ),
        (
            _mamba2,
            "mamba2_chunk_scan_one_chunk",
            "transformers.models.mamba2.modeling_mamba2.mamba2_chunk_scan",
        ),
        (
            _bamba,
            "mamba2_chunk_scan_one_chunk",
            "transformers.models.bamba.modeling_bamba.mamba2_chunk_scan",
        ),
    ],
)
def test_scan_patch_is_found_from_the_model_in_its_own_group(build, patch, target):
    model = build()
    scans = [p for p in iter_transformers_patches(model, [TransformersPatch.SCAN])]
    assert [(p.name, p.target_name) for p in scans] == [(patch, target)]
    others = [p.name for p in iter_transformers_patches(model, [TransformersPatch.ATTENTION])]
    assert patch not in others


def test_a_kernel_wrapper_of_another_function_is_not_taken_for_the_scan():
    # transformers' kernel-hub wrappers all share one code object: the patch compares
    # what they wrap, so Mamba's scan is not replaced where another function is wrapped
    from transformers.models.mamba import modeling_mamba

    from patchport.torch.transformers_patches import same_code

    assert same_code(modeling_mamba.mamba_selective_scan, modeling_mamba.mamba_selective_scan)
    assert not same_code(modeling_mamba.causal_conv1d_fn, modeling_mamba.mamba_selective_scan)


def _assert_right_on_new_lengths(report, checks):
    assert report.is_general and report.wrong_values == 0, report.to_text()
    assert report.configuration == "patches", report.to_text()
    # plain torch cannot keep seq dynamic; the patched configuration is right at once
    assert len(report.attempts) == 2, report.to_text()
    ran = [c for c in report.shape_checks if not c.label.startswith("probe ")]
    assert len(ran) == len(checks) and all(c.ok for c in ran), report.to_text()


@pytest.mark.slow
def test_mamba_exports_right_on_lengths_never_traced_and_verifies_in_onnx_runtime(tmp_path):
    model, traced, shapes, checks = state_space(traced_seq=7, check_seqs=(1, 3, 16, 24))
    program, report = export(model, (), traced, dynamic_shapes=shapes, check_shapes=checks)
    _assert_right_on_new_lengths(report, checks)
    assert "mamba_selective_scan_closed_form" in {p.name for p in report.patches.exercised()}
    path, onnx_report = to_onnx(
        model, (), traced, dynamic_shapes=shapes, path=tmp_path / "m.onnx", check_shapes=checks
    )
    assert onnx_report.ok and len(onnx_report.checks) == len(checks), onnx_report.to_text()


@pytest.mark.slow
def test_mamba2_exports_right_on_lengths_no_multiple_of_its_chunk(tmp_path):
    # chunk_size 4: lengths 1, 3 and 7 are no multiple of it, 16 and 24 are
    model, traced, shapes, checks = _state_space_case(_mamba2(), 7, (1, 3, 16, 24))
    program, report = export(model, (), traced, dynamic_shapes=shapes, check_shapes=checks)
    _assert_right_on_new_lengths(report, checks)
    assert "mamba2_chunk_scan_one_chunk" in {p.name for p in report.patches.exercised()}
    path, onnx_report = to_onnx(
        model, (), traced, dynamic_shapes=shapes, path=tmp_path / "m.onnx", check_shapes=checks
    )
    assert onnx_report.ok and len(onnx_report.checks) == len(checks), onnx_report.to_text()


@pytest.mark.slow
def test_bamba_hybrid_exports_right_on_new_lengths():
    model, traced, shapes, checks = _state_space_case(_bamba(), 7, (1, 3, 16))
    program, report = export(model, (), traced, dynamic_shapes=shapes, check_shapes=checks)
    _assert_right_on_new_lengths(report, checks)


class _PadsToChunks(torch.nn.Module):
    """Pads rows to whole chunks of 4 as Mamba2's chunked scan pads the sequence."""

    def forward(self, x):
        pad = (4 - x.shape[0] % 4) % 4
        if pad > 0:
            x = torch.nn.functional.pad(x, (0, 0, 0, pad))
        return x.reshape(-1, 4, x.shape[1]).sum(1)


def _assert_padding_refused_in_words(caught, dimension: str, where: str, branch: str):
    import re

    text = str(caught.value)
    assert len(caught.value.result.report.attempts) == 1, text
    assert f"pads {dimension} to whole chunks" in text and f"make {dimension} static" in text
    assert where in text and branch in text, text
    assert "no other was tried" in text
    assert not re.search(r"\bs\d+\b", text) and "Mod(" not in text, text  # words, not sympy


def test_padding_to_whole_chunks_is_refused_in_words_after_one_export():
    from patchport.torch import NarrowedExportError

    with pytest.raises(NarrowedExportError) as caught:
        export(_PadsToChunks(), (torch.randn(5, 2),), dynamic_shapes=({0: "rows"},))
    _assert_padding_refused_in_words(caught, "rows", "test_state_space.py", "if pad > 0:")
    # allow_narrowing asks for the least narrow program: the other configurations are
    # still tried (backed_size_oblivious drops the guard rows//4 != 1 of the traced 5)
    program, report = export(
        _PadsToChunks(), (torch.randn(5, 2),), dynamic_shapes=({0: "rows"},), allow_narrowing=True
    )
    assert len(report.attempts) == 3 and len(report.narrowings) == 1, report.to_text()


@pytest.mark.slow
def test_mamba2_without_its_scan_patch_is_refused_in_words_after_one_export():
    from patchport.torch import NarrowedExportError

    model, traced, shapes, checks = _state_space_case(_mamba2(), 7, (1, 3, 16))
    no_scan = [group for group in TransformersPatch if group is not TransformersPatch.SCAN]
    with pytest.raises(NarrowedExportError) as caught:
        export(
            model,
            (),
            traced,
            dynamic_shapes=shapes,
            check_shapes=checks,
            patch_transformers=no_scan,
        )
    _assert_padding_refused_in_words(caught, "seq", "modeling_mamba2.py:", "if pad_size > 0:")
