"""Property: any composition of supported ops replays like NumPy on fresh inputs."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from .helpers import conform, make


def _set_row(x: np.ndarray) -> np.ndarray:
    y = x.copy()
    y[0] = 0
    y[:, -1] += 1
    return y


OPS = {
    "add": lambda x: x + 1.5,
    "mul-int": lambda x: x * 2,
    "abs": np.abs,
    "sqrt-abs": lambda x: np.sqrt(np.abs(x)),
    "tanh": np.tanh,
    "T": lambda x: x.T,
    "flip": lambda x: np.flip(x, 0),
    "neg-step": lambda x: x[::-1, ::-2],
    "cumsum": lambda x: np.cumsum(x, axis=0),
    "center": lambda x: x - x.mean(axis=0, keepdims=True),
    "clip": lambda x: np.clip(x, -1, 1),
    "relu": lambda x: np.maximum(x, 0),
    "where": lambda x: np.where(x > 0, x, -x),
    "f32": lambda x: x.astype(np.float32),
    "round": lambda x: np.round(x, 1),
    "sort": lambda x: np.sort(x, axis=-1),
    "roll": lambda x: np.roll(x, 1, axis=0),
    "concat": lambda x: np.concatenate([x, x], axis=0)[: x.shape[0]],
    "reshape": lambda x: x.reshape(-1).reshape(x.shape),
    "exp": lambda x: np.exp(-np.abs(x)),
    "setitem": _set_row,
    "square": lambda x: x**2,
    "rowsum": lambda x: x.sum(axis=1, keepdims=True) + x,
    "pad": lambda x: np.pad(x, 1, mode="edge"),
    "std": lambda x: x / (x.std() + 1.0),
}


@settings(max_examples=60, deadline=None)
@given(
    names=st.lists(st.sampled_from(sorted(OPS)), min_size=1, max_size=6),
    dtype=st.sampled_from(
        [np.uint8, np.int8, np.uint16, np.int32, np.uint32, np.int64, np.float32, np.float64]
    ),
    rows=st.integers(2, 4),
    cols=st.integers(2, 4),
    seed=st.integers(0, 1000),
)
def test_random_op_sequences_replay(names, dtype, rows, cols, seed) -> None:  # noqa: ANN001
    def program(x: np.ndarray) -> np.ndarray:
        for name in names:
            x = OPS[name](x)
        return x

    x = make((rows, cols), dtype, seed, low=0 if dtype == np.uint8 else -3, high=9)
    with np.errstate(all="ignore"):
        conform(program, x, rtol=1e-4)
