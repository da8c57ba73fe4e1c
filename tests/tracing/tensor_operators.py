"""Every ``torch.Tensor`` operator form real code writes: forward, reflected (a Python
number on the left), in-place (``c op= b``, seen through an alias), on float, integer,
bool and uint8 tensors. Shared by the recording test and the three-backend export test."""

from __future__ import annotations

from collections.abc import Callable

import torch

Case = tuple[str, Callable[..., torch.Tensor]]

# operands: a float in [-2, 2], b float in [0.5, 2.5], i int64 in [-8, 8], j int64 in [1, 3]
# (a shift count), m bool, u uint8 in [1, 255]
W = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
K = W.T @ W  # (3, 3), for ``c @= K``


def _inplace(op: str, rhs: str) -> Callable[..., torch.Tensor]:
    """``c = lhs.clone(); alias = c; c <op>= rhs``: the result and what the alias sees."""
    lhs = "i" if rhs in ("j", "1", "2") or op in ("&", "|", "^", "<<", ">>") else "a"
    source = (
        "def f(a, b, i, j, m, u):\n"
        f"    c = {lhs}.clone()\n"
        "    alias = c\n"
        f"    c {op}= {rhs}\n"
        "    return torch.stack([c * 1, alias * 1])\n"
    )
    space: dict = {"torch": torch, "K": K}
    exec(source, space)
    return space["f"]


FLOAT: list[Case] = [
    ("add", lambda a, b, i, j, m, u: a + b),
    ("radd", lambda a, b, i, j, m, u: 3 + b),
    ("sub", lambda a, b, i, j, m, u: a - b),
    ("rsub", lambda a, b, i, j, m, u: 3 - b),
    ("mul", lambda a, b, i, j, m, u: a * b),
    ("rmul", lambda a, b, i, j, m, u: 3 * b),
    ("truediv", lambda a, b, i, j, m, u: a / b),
    ("rtruediv", lambda a, b, i, j, m, u: 3 / b),
    ("floordiv", lambda a, b, i, j, m, u: a // b),
    ("rfloordiv", lambda a, b, i, j, m, u: 7 // b),
    ("mod", lambda a, b, i, j, m, u: a % b),
    ("rmod", lambda a, b, i, j, m, u: 7 % b),
    ("pow", lambda a, b, i, j, m, u: a**2),
    ("pow_tensor", lambda a, b, i, j, m, u: b**a),
    ("rpow", lambda a, b, i, j, m, u: 2**a),
    ("matmul", lambda a, b, i, j, m, u: a @ b.T),
    ("rmatmul", lambda a, b, i, j, m, u: a.T.__rmatmul__(W)),
    ("neg_pos_abs", lambda a, b, i, j, m, u: -a + (+b) * abs(a)),
    ("compare_reflected", lambda a, b, i, j, m, u: (0.5 < b) & (1 >= a)),
    ("iadd", _inplace("+", "b")),
    ("isub", _inplace("-", "b")),
    ("imul", _inplace("*", "b")),
    ("itruediv", _inplace("/", "b")),
    ("ifloordiv", _inplace("//", "b")),
    ("imod", _inplace("%", "b")),
    ("ipow", _inplace("**", "2")),
    ("imatmul", _inplace("@", "K")),
]
INTEGER: list[Case] = [
    ("int_and", lambda a, b, i, j, m, u: i & j),
    ("int_rand", lambda a, b, i, j, m, u: 6 & j),
    ("int_or", lambda a, b, i, j, m, u: i | j),
    ("int_ror", lambda a, b, i, j, m, u: 6 | j),
    ("int_xor", lambda a, b, i, j, m, u: i ^ j),
    ("int_rxor", lambda a, b, i, j, m, u: 6 ^ j),
    ("int_lshift", lambda a, b, i, j, m, u: i << 1),
    ("int_lshift_tensor", lambda a, b, i, j, m, u: i << j),
    ("int_rlshift", lambda a, b, i, j, m, u: 1 << j),
    ("int_rshift", lambda a, b, i, j, m, u: i >> 1),
    ("int_rshift_tensor", lambda a, b, i, j, m, u: i >> j),
    ("int_rrshift", lambda a, b, i, j, m, u: 64 >> j),
    ("int_invert", lambda a, b, i, j, m, u: ~i),
    ("int_floordiv", lambda a, b, i, j, m, u: i // j),
    ("int_rfloordiv", lambda a, b, i, j, m, u: 7 // j),
    ("int_mod", lambda a, b, i, j, m, u: i % j),
    ("int_rmod", lambda a, b, i, j, m, u: 7 % j),
    ("int_pow", lambda a, b, i, j, m, u: i**2),
    ("int_rpow", lambda a, b, i, j, m, u: 2**j),
    ("int_rtruediv", lambda a, b, i, j, m, u: 3 / j),
    ("int_iand", _inplace("&", "j")),
    ("int_ior", _inplace("|", "j")),
    ("int_ixor", _inplace("^", "j")),
    ("int_ilshift", _inplace("<<", "j")),
    ("int_irshift", _inplace(">>", "j")),
    ("int_ifloordiv", _inplace("//", "j")),
    ("int_imod", _inplace("%", "j")),
    ("int_ipow", _inplace("**", "2")),
]
BOOL_AND_UINT8: list[Case] = [
    ("bool_and_literal", lambda a, b, i, j, m, u: m & True),
    ("bool_ror_literal", lambda a, b, i, j, m, u: False | m),
    ("bool_xor_literal", lambda a, b, i, j, m, u: m ^ True),
    ("bool_add_literal", lambda a, b, i, j, m, u: i + True),
    ("bool_mul_literal", lambda a, b, i, j, m, u: m * True),
    ("uint8_rsub_float", lambda a, b, i, j, m, u: 2.5 - u),
    ("uint8_rfloordiv", lambda a, b, i, j, m, u: 300 // u),
    ("uint8_floordiv_bool", lambda a, b, i, j, m, u: u // True),
]
CASES: list[Case] = FLOAT + INTEGER + BOOL_AND_UINT8


def operands(seed: int) -> tuple[torch.Tensor, ...]:
    """a, b, i, j, m, u for ``seed`` (fresh values per seed, same shapes and dtypes)."""
    gen = torch.Generator().manual_seed(seed)
    a = torch.rand(2, 3, generator=gen) * 4 - 2
    b = torch.rand(2, 3, generator=gen) * 2 + 0.5
    i = torch.randint(-8, 9, (2, 3), generator=gen)
    j = torch.randint(1, 4, (2, 3), generator=gen)
    m = torch.rand(2, 3, generator=gen) < 0.5
    u = torch.randint(1, 256, (2, 3), generator=gen).to(torch.uint8)
    return a, b, i, j, m, u
