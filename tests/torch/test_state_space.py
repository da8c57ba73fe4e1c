"""State-space models (Mamba, Mamba2, the Bamba hybrid) keep a dynamic sequence length.

transformers' CPU scans loop over the positions (Mamba) or pad the sequence to a multiple
of ``chunk_size`` (Mamba2): torch then fixes ``seq`` or ``seq % chunk_size``. patchport
replaces both by closed forms (``patchport.torch.builtin.transformers_scan``); these tests
check the forms against transformers' own scans, and the exported programs against eager
on lengths never traced, in torch and in ONNX Runtime.
"""

from __future__ import annotations

import inspect
import weakref
from functools import partial

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

transformers = pytest.importorskip("transformers")

from patchport.torch import export, to_onnx  # noqa: E402
from patchport.torch.builtin.transformers_scan import (  # noqa: E402
    MAMBA_CHUNK,
    mamba2_chunk_scan_padded_symbolically,
    mamba_selective_scan_closed_form,
)
from patchport.torch.transformers_patches import (  # noqa: E402
    TransformersPatch,
    iter_transformers_patches,
)

from .test_export_families import VOCAB, _state_space_case, state_space  # noqa: E402

# within one chunk, on whole chunks and past them (Mamba's scan runs in chunks of
# MAMBA_CHUNK = 16, the Mamba2 tests in chunks of 4 and 16): 65 and 130 are one and two past
# a multiple
LENGTHS = (1, 3, 7, 16, 24, 64, 65, 130)


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
@pytest.mark.parametrize("chunk", [4, 16])
def test_chunked_scan_equals_transformers_mamba2_chunked_scan(length, with_state, chunk):
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
    expected, expected_final = original(x, dt, A, B, C, chunk, **options)
    got, final = mamba2_chunk_scan_padded_symbolically(x, dt, A, B, C, chunk, **options)
    assert got.shape == expected.shape
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(final, expected_final, rtol=1e-5, atol=1e-5)


class _PeakBytes(TorchDispatchMode):
    """The most bytes that the tensors an op returned hold at once (meta tensors: none real)."""

    def __init__(self):
        super().__init__()
        self.live, self.peak, self.storages = 0, 0, set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for tensor in tree_leaves(out):
            if not isinstance(tensor, torch.Tensor) or tensor._is_view():
                continue
            key = tensor.untyped_storage()._cdata
            if key not in self.storages:  # in-place ops return a storage already counted
                self.storages.add(key)
                size = tensor.untyped_storage().nbytes()
                self.live += size
                self.peak = max(self.peak, self.live)
                weakref.finalize(tensor, self._free, size, key)
        return out

    def _free(self, size, key):
        self.live -= size
        self.storages.discard(key)


def _peak_bytes(scan, *args, **kwargs) -> int:
    with _PeakBytes() as peak:
        out = scan(*args, **kwargs)
        del out
    return peak.peak


def test_mamba_scan_memory_is_linear_in_the_length():
    # one chunk as long as the sequence held batch*d*n*L^2 floats (768 GiB at d=1536, n=16,
    # L=2048); in chunks of MAMBA_CHUNK it is linear in L: here within a few times
    # batch*d*n*L*chunk floats, and doubling L doubles it
    def peak(length):
        empty = partial(torch.empty, device="meta")
        batch, d, n = 1, 8, 4
        x, dt, B, C = (empty(batch, size, length) for size in (d, d, n, n))
        return _peak_bytes(
            mamba_selective_scan_closed_form, x, dt, empty(d, n), B, C, delta_softplus=True
        )

    floats = 1 * 8 * 4 * 1024 * MAMBA_CHUNK
    assert peak(1024) < 4 * 4 * floats
    assert peak(2048) < 2.2 * peak(1024)


def test_mamba2_scan_memory_is_linear_in_the_length():
    def peak(length):
        empty = partial(torch.empty, device="meta")
        batch, heads, dim, groups, n, chunk = 1, 4, 2, 1, 2, 16
        return _peak_bytes(
            mamba2_chunk_scan_padded_symbolically,
            empty(batch, length, heads, dim),
            empty(batch, length, heads),
            empty(heads),
            empty(batch, length, groups, n),
            empty(batch, length, groups, n),
            chunk,
            initial_states=empty(batch, heads, dim, n),
            return_final_states=True,
        )

    floats = 1 * 4 * 1024 * 16  # batch*heads*L*chunk
    assert peak(1024) < 4 * 4 * floats
    assert peak(2048) < 2.2 * peak(1024)


def test_closed_form_scan_stays_finite_on_a_long_fast_decay():
    # large dt * |A| over a long sequence: exp of the positions s > t would overflow, so
    # they are masked to -inf before exp
    rand = _random(torch.Generator().manual_seed(0))
    batch, d, n, length = 1, 2, 3, 200
    x, dt = rand(batch, d, length), torch.full((batch, d, length), 5.0)
    A, B, C = -torch.full((d, n), 20.0), rand(batch, n, length), rand(batch, n, length)
    got = mamba_selective_scan_closed_form(x, dt, A, B, C, delta_softplus=True)
    assert torch.isfinite(got).all()


def _mamba2(layers: int = 1, chunk_size: int = 4):
    torch.manual_seed(0)
    config = transformers.Mamba2Config(
        hidden_size=32,
        state_size=8,
        num_heads=4,
        head_dim=16,
        n_groups=1,
        num_hidden_layers=layers,
        vocab_size=VOCAB,
        chunk_size=chunk_size,
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
            "mamba2_chunk_scan_padded_symbolically",
            "transformers.models.mamba2.modeling_mamba2.mamba2_chunk_scan",
        ),
        (
            _bamba,
            "mamba2_chunk_scan_padded_symbolically",
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
    # 7 and 1, 3 are shorter than one chunk (MAMBA_CHUNK = 16), 24 and 100 are not
    model, traced, shapes, checks = state_space(traced_seq=7, check_seqs=(1, 3, 16, 24, 100))
    program, report = export(model, (), traced, dynamic_shapes=shapes, check_shapes=checks)
    _assert_right_on_new_lengths(report, checks)
    assert "mamba_selective_scan_closed_form" in {p.name for p in report.patches.exercised()}
    path, onnx_report = to_onnx(
        model, (), traced, dynamic_shapes=shapes, path=tmp_path / "m.onnx", check_shapes=checks
    )
    assert onnx_report.ok and len(onnx_report.checks) == len(checks), onnx_report.to_text()


@pytest.mark.slow
@pytest.mark.parametrize("chunk_size", [4, 16])
def test_mamba2_exports_right_on_lengths_no_multiple_of_its_chunk(tmp_path, chunk_size):
    # chunk_size 4: lengths 1, 3, 7 and 100 are no multiple of it, 16 and 24 are; chunk_size
    # 16: the traced 7 is shorter than one chunk, so the scan pads it to a second one lest
    # torch specialize the number of chunks to 1
    model, traced, shapes, checks = _state_space_case(
        _mamba2(chunk_size=chunk_size), 7, (1, 3, 16, 24, 100)
    )
    program, report = export(model, (), traced, dynamic_shapes=shapes, check_shapes=checks)
    _assert_right_on_new_lengths(report, checks)
    assert "mamba2_chunk_scan_padded_symbolically" in {p.name for p in report.patches.exercised()}
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
