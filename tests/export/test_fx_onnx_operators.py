"""Every torch.Tensor operator form, written by the direct FX->ONNX translator (no
torch.onnx fallback) and replayed in ONNX Runtime on fresh inputs: reflected operators
(``7 // b``, ``2 ** a``, ``1 << j``), shifts by tensors, integer powers and bool products
were outside its table, and torch.onnx itself fails on ``7 // j`` and ``i << j``."""

from __future__ import annotations

import numpy as np
import onnxruntime
import pytest
import torch

from patchport.errors import Untranslatable
from patchport.export.onnx import driver
from patchport.tracing import Recorder, finish, trace_input

from ..tracing.tensor_operators import CASES, operands

NAMES = ["a", "b", "i", "j", "m", "u"]
# integer powers by a tensor exponent are left to torch.onnx (ONNX Runtime's integer Pow,
# as a plain torch.onnx export gets): exact squaring would need a round per exponent bit
LEFT_TO_TORCH_ONNX = {"int_rpow"}


@pytest.mark.parametrize("name, fn", CASES, ids=[name for name, _ in CASES])
def test_direct_translation_of_every_operator(name, fn) -> None:  # noqa: ANN001
    rec = Recorder("operators")
    traced = [trace_input(rec, n, t) for n, t in zip(NAMES, operands(1))]
    module = finish(rec, fn(*traced))
    if name in LEFT_TO_TORCH_ONNX:
        with pytest.raises(Untranslatable):
            driver.translate(module, operands(1), NAMES, ["y"])
        return
    model, _ = driver.translate(module, operands(1), NAMES, ["y"])
    session = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])
    fresh = operands(2)
    wanted = {i.name for i in session.get_inputs()}
    got = session.run(None, {n: t.numpy() for n, t in zip(NAMES, fresh) if n in wanted})[0]
    want = fn(*fresh).numpy()
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


ARG_EXTREMES = [
    ("argmax", lambda x: torch.argmax(x)),
    ("argmax_dim", lambda x: x.argmax(dim=1)),
    ("argmin_keepdim", lambda x: torch.argmin(x, dim=0, keepdim=True)),
    ("isnan", lambda x: torch.isnan(x)),
]


@pytest.mark.parametrize("name, fn", ARG_EXTREMES, ids=[name for name, _ in ARG_EXTREMES])
def test_arg_extremes_and_isnan_translate_with_torch_nan_rule(name, fn) -> None:  # noqa: ANN001
    """argmax/argmin (the first extreme; a NaN counts as the extreme, as in torch) and
    isnan are written directly (they sent getAffineTransform's pivots to torch.onnx)."""
    nan = float("nan")
    x = torch.tensor([[1.0, nan, 3.0, 3.0], [7.0, 5.0, 7.0, -1.0], [2.0, 2.0, nan, nan]])
    rec = Recorder("extremes")
    module = finish(rec, fn(trace_input(rec, "x", torch.rand(3, 4))))
    model, _ = driver.translate(module, [torch.rand(3, 4)], ["x"], ["y"])
    session = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])
    for data in (x, x.nan_to_num(), -x):
        got = session.run(None, {"x": data.numpy()})[0]
        np.testing.assert_array_equal(got, fn(data).numpy())


DIVISIONS = [
    ("float64", torch.float64, "trunc"),
    ("float32", torch.float32, "trunc"),
    ("float32_floor", torch.float32, "floor"),
    ("int64", torch.int64, "trunc"),
    ("int32_floor", torch.int32, "floor"),
    ("uint8", torch.uint8, "trunc"),
    ("int16", torch.int16, "trunc"),
]


@pytest.mark.parametrize("name, dtype, mode", DIVISIONS, ids=[d[0] for d in DIVISIONS])
def test_div_rounding_modes_translate_directly(name, dtype, mode) -> None:  # noqa: ANN001
    """torch.div(..., rounding_mode=) is written directly (SciPy's mirror border divides by
    trunc; it sent whole graphs to torch.onnx) and replays as torch computes it."""
    if dtype.is_floating_point:
        x = torch.tensor([7.5, -7.5, 0.3, -0.3, 0.0, -0.0, 1e300, -5.0, float("nan"), 9.0])
        y = torch.tensor([2.0, 2.0, -1.0, 1.0, 3.0, 3.0, 1e-10, 0.0, 1.0, -3.0])
        x, y = x.to(dtype), y.to(dtype)
    else:
        low = 0 if dtype == torch.uint8 else -100
        x = torch.arange(low, low + 40, dtype=dtype)
        y = torch.tensor([3, 7, 11, 5] * 10, dtype=dtype)
        if dtype != torch.uint8:
            y = y * torch.tensor([1, -1] * 20, dtype=dtype)

    def fn(a: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        return torch.div(a, c, rounding_mode=mode) + torch.div(a, 4, rounding_mode=mode)

    rec = Recorder("div")
    module = finish(rec, fn(trace_input(rec, "x", x), trace_input(rec, "y", y)))
    model, _ = driver.translate(module, [x, y], ["x", "y"], ["q"])
    session = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])
    got = session.run(None, {"x": x.numpy(), "y": y.numpy()})[0]
    want = fn(x, y).numpy()
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)  # -0.0 == 0.0: ONNX Runtime may drop the sign


MOVES = [((0,), (2,)), ((2,), (0,)), ((0, 1), (2, 0)), ((-1, 1), (0, -1)), ((1,), (1,))]


@pytest.mark.parametrize("source, destination", MOVES)
def test_movedim_translates_to_one_transpose(source, destination) -> None:  # noqa: ANN001
    """torch.movedim / np.moveaxis (SciPy's filters move the filtered axis last) is one
    Transpose with torch's permutation, not a torch.onnx fallback."""
    x = torch.arange(24.0).reshape(2, 3, 4)
    rec = Recorder("move")
    module = finish(rec, torch.movedim(trace_input(rec, "x", x), source, destination) * 2)
    model, _ = driver.translate(module, [x], ["x"], ["y"])
    session = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])
    want = (torch.movedim(x, source, destination) * 2).numpy()
    np.testing.assert_array_equal(session.run(None, {"x": x.numpy()})[0], want)


LOGS = [
    ("log1p", torch.log1p),
    ("log1p_method", lambda x: x.log1p()),
    ("special_log1p", torch.special.log1p),
    ("expm1", torch.expm1),
    ("expm1_method", lambda x: x.expm1()),
    ("log2", torch.log2),
    ("log10", lambda x: x.log10()),
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("name, fn", LOGS, ids=[name for name, _ in LOGS])
def test_log1p_expm1_log2_log10_translate_directly_and_keep_their_precision(
    name,  # noqa: ANN001
    fn,  # noqa: ANN001
    dtype,  # noqa: ANN001
) -> None:
    """log1p/expm1 keep tiny arguments' digits (``log(1 + 1e-10)`` is 0 in float32, log1p is
    1e-10), log2/log10 give exact powers exactly (a floor of them counts levels); they sent
    SciPy's logit graph to torch.onnx. Limits (0, -1, inf, NaN) as torch."""
    tiny = torch.tensor([1e-30, -1e-20, 1e-12, -3e-9, 1e-7, 2e-5], dtype=dtype)
    powers = torch.tensor([2.0**k for k in range(-20, 40)] + [10.0**k for k in range(-6, 16)])
    limits = torch.tensor([0.0, -0.0, -1.0, -2.0, float("inf"), -float("inf"), float("nan")])
    wide = torch.logspace(-30, 30, 301, dtype=torch.float64)
    data = torch.cat([tiny, powers.to(dtype), limits.to(dtype), wide.to(dtype), -wide.to(dtype)])
    rec = Recorder("logs")
    example = torch.rand(data.shape, dtype=dtype)
    module = finish(rec, fn(trace_input(rec, "x", example)))
    model, _ = driver.translate(module, [example], ["x"], ["y"])
    session = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])
    got = torch.from_numpy(session.run(None, {"x": data.numpy()})[0])
    want = fn(data)
    finite = torch.isfinite(want)
    assert torch.equal(torch.isnan(got), torch.isnan(want))
    assert torch.equal(got[~finite & ~torch.isnan(want)], want[~finite & ~torch.isnan(want)])
    ulp = torch.finfo(dtype).eps
    torch.testing.assert_close(got[finite], want[finite], rtol=4 * ulp, atol=0)
    if name.startswith("log2") or name.startswith("log10"):
        exact = torch.isfinite(want) & (want == want.round())
        assert torch.equal(got[exact], want[exact])  # floor(log2(8.0)) stays 3
