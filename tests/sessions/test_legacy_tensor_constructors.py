"""torch.Tensor(x) and the typed constructors (torch.FloatTensor(obs)) of older RL and
robotics code keep traced data traced, and leave plain construction as torch does it."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import patchport

from .pipeline_check import export_and_replay

RNG = np.random.default_rng(0)


def _legacy_tensor(obs):
    state = torch.Tensor(obs).unsqueeze(0)  # float32 whatever the array's dtype
    rows = torch.Tensor([obs[0], obs[1] * 2])  # a list of traced rows
    return {"state": state * 2, "rows": rows}


def _typed(obs):
    state = torch.FloatTensor(obs).unsqueeze(0)
    index = torch.LongTensor(obs.astype(np.int64) % 3)
    wide = torch.DoubleTensor(obs) * 0.5
    return {"state": state + 1, "index": index * 2, "wide": wide}


def _variable(obs):
    from torch.autograd import Variable  # the pre-0.4 wrapper old tutorials still call

    state = Variable(torch.from_numpy(obs).float().unsqueeze(0))
    return {"state": state * 2, "kept": Variable(torch.FloatTensor(obs), requires_grad=False)}


@pytest.mark.parametrize("fn", [_legacy_tensor, _typed, _variable])
@pytest.mark.parametrize("backend", ["onnx", "pt2"])
def test_legacy_constructors_of_traced_data_replay_new_inputs(fn, backend, tmp_path):
    obs = RNG.normal(size=(2, 5)) * 4
    fresh = RNG.normal(size=(2, 5)) * 4
    replay, warned = export_and_replay(fn, {"obs": obs}, {"obs": fresh}, tmp_path, backend)
    assert not warned, [str(w.message) for w in warned]
    want = fn(fresh)
    for key, value in want.items():
        assert replay[key].dtype == value.numpy().dtype
        np.testing.assert_allclose(replay[key], value.numpy(), rtol=1e-6)


def test_plain_construction_is_torchs_own_inside_a_session(tmp_path):
    class Sub(torch.Tensor):
        pass

    tensortype = type(torch.FloatTensor)

    with patchport.session("plain_ctor", tmp_path):
        shaped = torch.Tensor(2, 3)
        empty = torch.Tensor()
        from_list = torch.Tensor([[1, 2], [3, 4]])
        typed = torch.FloatTensor(np.arange(3))
        longs = torch.LongTensor([1, 2])
        alias = torch.ones(2, dtype=torch.long)
        same = torch.Tensor(alias)
        sub = Sub(np.ones(2))
        param = torch.nn.Parameter(torch.Tensor(3))
        variable = torch.autograd.Variable(torch.ones(2), requires_grad=True)
        assert isinstance(typed, torch.FloatTensor) and not isinstance(longs, torch.FloatTensor)
        assert torch.ones(2).type(torch.DoubleTensor).dtype == torch.float64
        assert torch.ones(2).type(torch.FloatTensor).dtype == torch.float32
    assert shaped.shape == (2, 3) and empty.shape == (0,) and from_list.dtype == torch.float32
    assert typed.dtype == torch.float32 and longs.dtype == torch.int64
    assert same.dtype == torch.long and same.data_ptr() == alias.data_ptr()
    assert type(sub) is Sub and type(param) is torch.nn.Parameter
    assert type(variable) is torch.Tensor and variable.requires_grad
    # nothing stays patched
    assert "__new__" not in vars(torch.Tensor)
    assert "__new__" not in vars(torch.autograd.Variable)
    assert type(torch.FloatTensor) is tensortype
