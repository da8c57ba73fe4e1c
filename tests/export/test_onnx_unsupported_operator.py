"""A torch operation ONNX has no function for (``torch.linalg.matrix_exp`` of an SE(3)
twist, ``torch.cdist`` to a path): the ONNX export's refusal names the operation and the
user's line that recorded it, and the backends that take it, instead of torch.onnx's
report about its own graph alone."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import patchport
from patchport import annotate


def _twist_exp(q: torch.Tensor) -> torch.Tensor:
    hat = torch.stack([q, q * 2, q * 3])
    return torch.linalg.matrix_exp(hat)  # the line the refusal names


def _nearest(q: torch.Tensor) -> torch.Tensor:
    path = torch.stack([q, q * 2, q + 1])
    return torch.cdist(path, q[None])  # the line the refusal names


@pytest.mark.parametrize("fn", [_twist_exp, _nearest], ids=["matrix_exp", "cdist"])
def test_onnx_refusal_names_the_operation_and_the_users_line(fn, tmp_path) -> None:  # noqa: ANN001
    line = fn.__code__.co_firstlineno + 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with patchport.session("unsupported", save_path=tmp_path):
            v = annotate.input_tensors("n", {"v": np.array([0.3, 0.2, 0.1])})
            out = fn(torch.from_numpy(v))
            annotate.output_tensors("n", {"o": out.numpy()}, export_with="onnx")
        with pytest.raises(patchport.PatchportError) as caught:
            patchport.compile_graph(visualize=False, strict=False)
    message = str(caught.value)
    assert f"{__file__}:{line}" in message, message[-1500:]
    assert "pt2" in message
