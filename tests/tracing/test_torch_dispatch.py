"""torch functions, Tensor methods and torch.nn.functional on traced tensors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from patchport.errors import TraceLossWarning
from patchport.tracing import Recorder, TracedTensor, finish, trace_input

from .helpers import assert_same
from .tensor_operators import CASES, operands


def tconform(fn, *inputs: torch.Tensor):  # noqa: ANN001, ANN201
    """Trace ``fn`` on tensors, replay on fresh tensors, compare with plain torch."""
    rec = Recorder("torch", strict=True)
    originals = [t.clone() for t in inputs]
    traced = [trace_input(rec, f"t{i}", t) for i, t in enumerate(inputs)]
    with warnings.catch_warnings():
        warnings.simplefilter("error", TraceLossWarning)
        out = fn(*traced)
    expected_same = fn(*[t.clone() for t in originals])
    assert_same(_np(out), _np(expected_same), rtol=1e-6)
    for t, o in zip(inputs, originals):
        assert type(t) is torch.Tensor and torch.equal(t, o)
    gm = finish(rec, out)
    gen = torch.Generator().manual_seed(77)
    fresh = [_fresh(t, gen) for t in originals]
    expected = fn(*[t.clone() for t in fresh])
    got = gm(*[t.clone() for t in fresh])
    assert_same(_np(got), _np(expected))
    return gm


def _fresh(t: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    if t.dtype == torch.bool:
        return torch.rand(t.shape, generator=gen) < 0.5
    if t.dtype.is_floating_point:
        return (torch.rand(t.shape, generator=gen) * 4 - 2).to(t.dtype)
    return torch.randint(0, 9, t.shape, generator=gen).to(t.dtype)


def _np(value):  # noqa: ANN001, ANN202
    if isinstance(value, (tuple, list)):
        return [_np(v) for v in value]
    return value.detach().as_subclass(torch.Tensor).numpy()


X = torch.linspace(-2, 2, 12).reshape(3, 4)


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x + 1.0,
        lambda x: 1.0 - x * 2,
        lambda x: torch.relu(x).sum(dim=0),
        lambda x: F.softmax(x, dim=-1),
        lambda x: F.pad(x[None, None], (1, 1, 2, 0), mode="reflect")[0, 0],
        lambda x: F.interpolate(x[None, None], scale_factor=2, mode="bilinear")[0, 0],
        lambda x: x.permute(1, 0).reshape(2, 6).mean(-1),
        lambda x: torch.cat([x, x.flip(0)], dim=1),
        lambda x: torch.where(x > 0, x, torch.zeros_like(x)),
        lambda x: x.max(dim=1).values + x.max(dim=1).indices,
        lambda x: torch.split(x, 2, dim=1)[1],
        lambda x: x.T @ x,
        lambda x: x.shape[0] * x,
        lambda x: x[:, 1:3].clone(),
        lambda x: x[x > 0],
        lambda x: x.to(torch.float64).clamp(-1, 1),
        lambda x: torch.stack(x.unbind(0), dim=1),
    ],
)
def test_torch_ops_conform(fn) -> None:  # noqa: ANN001
    tconform(fn, X.clone())


def test_integer_tensors() -> None:
    tconform(lambda x: (x * 3) // 2 + (x & 1), torch.arange(12).reshape(3, 4))
    tconform(lambda x: x.to(torch.uint8) + 250, torch.arange(12).reshape(3, 4))


def test_inplace_methods_are_functional() -> None:
    def fn(x):
        y = x.clone()
        y.add_(1).mul_(2)
        y += x
        y.clamp_(max=3)
        y[0] = 0
        y[:, -1] = x[:, 0]
        y[y < -1] = -1
        torch.relu_(y)
        return y

    gm = tconform(fn, X.clone())
    assert ".add_(" not in gm.code and "relu_(" not in gm.code


def test_inplace_kwarg_and_fill_zero_copy() -> None:
    def fn(x):
        y = x.clone()
        F.relu(y, inplace=True)
        z = torch.empty_like(x)
        z.copy_(x * 2)
        w = x.clone()
        w.zero_()
        w.fill_(3.0)
        return y, z, w

    tconform(fn, X.clone())


def test_inplace_on_view_reaches_parent() -> None:
    def fn(x):
        y = x.clone()
        y[1].mul_(10)
        y[:, 0] += 5
        return y

    tconform(fn, X.clone())


def test_out_kwarg_into_traced_tensor() -> None:
    def fn(x):
        y = x.clone()
        torch.add(x, 1, out=y)
        return y

    tconform(fn, X.clone())


def test_numpy_method_keeps_tracing() -> None:
    rec = Recorder("t")
    x = trace_input(rec, "x", X.clone())
    a = (x * 2).numpy()
    assert type(a).__name__ == "TracedArray"
    out = np.tanh(a) + 1
    gm = finish(rec, out)
    got = gm(X + 1)
    np.testing.assert_allclose(got.numpy(), np.tanh((X + 1).numpy() * 2) + 1, rtol=1e-6)


def test_metadata_queries_are_silent_and_not_recorded() -> None:
    rec = Recorder("t", strict=True)
    x = trace_input(rec, "x", X.clone())
    before = len(rec.graph.nodes)
    assert x.shape == (3, 4) and x.dtype == torch.float32 and x.dim() == 2 and x.numel() == 12
    assert x.size(1) == 4 and len(x) == 3 and x.is_floating_point()
    assert len(rec.graph.nodes) == before


def test_results_are_traced_tensors() -> None:
    rec = Recorder("t")
    x = trace_input(rec, "x", X.clone())
    y = torch.sigmoid(x)
    assert isinstance(y, TracedTensor) and y._pp.node is not None
    rec.close()
    z = torch.sigmoid(y)
    assert type(z) is torch.Tensor  # a closed recorder records nothing


def test_module_parameters_become_listed_constants() -> None:
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(3, 2, 3)
    rec = Recorder("t")
    x = trace_input(rec, "x", torch.rand(1, 3, 8, 8))
    y = conv(x)
    gm = finish(rec, y)
    consts = rec.constants()
    assert {c.shape for c in consts} == {(2, 3, 3, 3), (2,)}
    assert all("test_torch_dispatch.py" in c.origin for c in consts)
    fresh = torch.rand(1, 3, 8, 8)
    torch.testing.assert_close(gm(fresh), conv(fresh))


@pytest.mark.parametrize(
    "fn",
    [
        lambda t, a: t + a.sum(),  # a 0-d NumPy result acts as a scalar for torch
        lambda t, a: t * a.max() - a.mean(),
        lambda t, a: a.sum() + t,
        lambda t, a: t + a,  # a traced array operand: NumPy's ufunc, a tensor result
        lambda t, a: np.multiply(t, a),
        lambda t, a: (t > a.min()) & (a.max() >= t),
    ],
)
def test_mixed_numpy_and_torch_operands(fn) -> None:  # noqa: ANN001
    a0 = np.linspace(0.5, 2.0, 3)
    t0 = torch.linspace(-1.0, 1.0, 3)
    expected = fn(t0.clone(), a0.copy())
    rec = Recorder("mixed", strict=True)
    out = fn(trace_input(rec, "t", t0), trace_input(rec, "a", a0))
    assert type(out).__name__ in ("TracedTensor", "TracedArray")
    assert isinstance(out, torch.Tensor) == isinstance(expected, torch.Tensor)
    gm = finish(rec, out)
    t1, a1 = torch.linspace(2.0, 3.0, 3), np.linspace(-1.0, 4.0, 3)
    want = fn(t1.clone(), a1.copy())
    got = gm(t1, torch.from_numpy(a1))
    assert_same(_np(got), _np(want) if isinstance(want, torch.Tensor) else want)


def test_tensor_views_see_later_writes_to_their_base() -> None:
    def fn(x):
        y = x.clone()
        row = y[0]
        col = y[:, 1]
        y[0, 1] = 100.0
        y.mul_(2)
        col += 1
        return row * 1, col + 0, y

    tconform(fn, X.clone())


def test_tensor_layout_views_write_through_and_see_writes() -> None:
    def fn(x):
        y = x.clone()
        y.view(-1)[[0, 5]] = -1.0
        y.t()[0] += 100.0
        y.unsqueeze(0)[0, 1, 2] = 5.0
        p = y.permute(1, 0)
        p.mul_(2.0)
        y.T[1, 1] = 9.0
        d = y.detach()
        y[2] = 7.0  # seen by p and d
        return y, p + 0, d * 1

    tconform(fn, X.clone())


@pytest.mark.parametrize("name, fn", CASES, ids=[name for name, _ in CASES])
def test_every_tensor_operator_records_code_that_runs(name, fn) -> None:  # noqa: ANN001
    """Each operator is recorded under a name its generated code can call: ``q ** 2``
    was recorded as ``torch._tensor.pow`` (Tensor.__pow__ is a wrapper named "pow"),
    which TorchScript tracing and fx's Python code then failed to find."""
    rec = Recorder("operators", strict=True)
    traced = [trace_input(rec, f"x{k}", t) for k, t in enumerate(operands(1))]
    with warnings.catch_warnings():
        warnings.simplefilter("error", TraceLossWarning)
        out = fn(*traced)
    gm = finish(rec, out)
    assert "torch._tensor" not in gm.code
    recompiled = torch.fx.GraphModule(gm, gm.graph)  # runs the generated Python code
    fresh = operands(2)
    assert_same(_np(recompiled(*fresh)), _np(fn(*fresh)))


def test_data_attribute_is_recorded_as_detach_so_torch_export_takes_it() -> None:
    """``semi.data.cpu().numpy()`` (a keypoint network's read-out): ``.data`` is recorded as
    ``detach()``; a ``getattr(x, "data")`` node made torch.export lift a fake constant."""
    rec = Recorder("t", strict=True)
    x = trace_input(rec, "x", X.clone())
    out = (x * 2).data.cpu() + 1
    gm = finish(rec, out)
    assert not any(n.target is getattr for n in gm.graph.nodes)
    program = torch.export.export(gm, (X + 3,))
    torch.testing.assert_close(program.module()(X - 1), (X - 1) * 2 + 1)


def test_deepcopy_inside_a_node_is_recorded_as_a_copy():
    import copy

    gm = tconform(lambda t: copy.deepcopy(t * 2.0) + 1.0, torch.arange(4.0))
    assert "clone" in [node.target for node in gm.graph.nodes]


def test_deepcopy_and_pickle_of_a_finished_value_give_plain_tensors():
    """Values of a finished node reach user code (output_tensors hands them back): copying
    or saving one gives an ordinary tensor, as torch does for a plain one."""
    import copy
    import io
    import pickle

    rec = Recorder("done")
    out = trace_input(rec, "x", torch.arange(3.0)) * 2.0
    finish(rec, out)
    buffer = io.BytesIO()
    torch.save(out, buffer)
    buffer.seek(0)
    copies = [copy.deepcopy(out), pickle.loads(pickle.dumps(out)), torch.load(buffer)]
    for copied in copies:
        assert type(copied) is torch.Tensor and copied.tolist() == [0.0, 2.0, 4.0]
        assert copied.data_ptr() != out.data_ptr()


class _LibraryTensor(torch.Tensor):
    """A library's own tensor subclass (torchvision's tv_tensors.Image is one)."""


def test_as_subclass_to_a_library_tensor_type_warns_at_the_line() -> None:
    """``t.as_subclass(Image)`` gives torch no __torch_function__ hook: the result is the
    library's own tensor type, which is not traced, so the loss is named where it happens."""
    rec = Recorder("torch")
    x = trace_input(rec, "x", torch.ones(3))
    with pytest.warns(TraceLossWarning, match=r"as_subclass\(_LibraryTensor\)") as record:
        image = x.as_subclass(_LibraryTensor)
    assert record[0].filename == __file__
    assert type(image) is _LibraryTensor and torch.equal(image, torch.ones(3))
    with warnings.catch_warnings():
        warnings.simplefilter("error", TraceLossWarning)
        assert type(x.as_subclass(torch.Tensor)) is torch.Tensor
        assert type(torch.ones(2).as_subclass(_LibraryTensor)) is _LibraryTensor
    finish(rec, x)


def test_as_subclass_in_a_strict_recorder_raises_before_converting() -> None:
    from patchport.errors import TraceLossError

    rec = Recorder("torch", strict=True)
    x = trace_input(rec, "x", torch.ones(3))
    with pytest.raises(TraceLossError, match="as_subclass"):
        x.as_subclass(_LibraryTensor)
    finish(rec, x)


def test_autograd_flag_methods_leave_the_graph_alone_and_export() -> None:
    """``q.requires_grad_(False)`` (differentiable-kinematics code readying joint angles) was
    recorded as a call of ``q.requires_grad``, a property: every export crashed on it. A
    flag setter changes no value: nothing is recorded, the tensor stays the same traced one."""
    rec = Recorder("t", strict=True)
    x = trace_input(rec, "x", X.clone())
    q = x.requires_grad_(False)
    assert q is x
    y = (q * 2).detach().requires_grad_()
    y.retain_grad()
    gm = finish(rec, torch.sin(y) + x)
    assert "requires_grad" not in gm.code and "retain_grad" not in gm.code
    program = torch.export.export(gm, (X + 3,))
    torch.testing.assert_close(program.module()(X - 1), torch.sin((X - 1) * 2) + (X - 1))


@pytest.mark.parametrize(
    "gradient",
    [
        lambda q: torch.autograd.grad(torch.sin(q).sum(), q)[0],
        lambda q: torch.autograd.functional.jacobian(lambda a: torch.sin(a) * 2, q),
        lambda q: (torch.sin(q).sum().backward(), q.grad)[1],
    ],
    ids=["autograd.grad", "functional.jacobian", "backward"],
)
def test_autograd_on_traced_tensors_is_a_loss_at_the_users_line(gradient) -> None:  # noqa: ANN001
    """An IK step's Jacobian by autograd: the backward pass runs in autograd's engine, not
    as recorded operations, and a graph holding ``torch.autograd.grad`` failed every export
    ("does not require grad"). The eager gradient is autograd's own; the call is a
    TraceLossWarning at the user's line saying the gradient is frozen."""
    rec = Recorder("t")
    x = trace_input(rec, "x", X.clone())
    q = (x * 1.0).detach().requires_grad_(True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = gradient(q)
    lost = [w for w in caught if issubclass(w.category, TraceLossWarning)]
    assert lost and "autograd" in str(lost[0].message), [str(w.message) for w in caught]
    assert lost[0].filename == __file__, lost[0].filename
    plain = X.clone().requires_grad_(True)
    torch.testing.assert_close(torch.as_tensor(got).as_subclass(torch.Tensor), gradient(plain))
    gm = finish(rec, torch.as_tensor(got) + x)
    torch.export.export(gm, (X + 3,))  # exports (the gradient a listed constant)
