"""Graph targets: the ``np_*`` functions recorded in fx graphs, NumPy semantics in torch.

Each takes tensors and static Python values and returns tensors, so exporters see one call
they can trace through or swap (ONNX decompositions key on these functions). Each is also
TorchScript: annotations TorchScript reads (``list[int] | None``, ``torch.dtype``, no
``Any``), no generators, no functions passed as values, and ``torch.finfo``/``iinfo`` only
where ``torch.jit.is_scripting()`` is false (TorchScript lacks them; its path uses the aten
kernel the exporters lack). ``export_with="jit"`` then scripts the graph instead of tracing.
"""

from __future__ import annotations

import math

import torch


def _all_dims(x: torch.Tensor, dims: list[int] | None) -> list[int]:
    """The dims a reduction runs over (None: every dim)."""
    if dims is None:
        return list(range(x.ndim))
    return list(dims)


def _descending(dims: list[int], ndim: int) -> list[int]:
    """Non-negative dims, largest first (reducing them one by one keeps the others)."""
    out = [d % max(ndim, 1) for d in dims]
    out.sort(reverse=True)
    return out


# ------------------------------------------------------------------------------- ufuncs
def np_cbrt(x: torch.Tensor) -> torch.Tensor:
    """Real cube root (torch has none): sign(x) * |x| ** (1/3)."""
    return torch.sign(x) * torch.abs(x).pow(1.0 / 3.0)


def np_reciprocal(x: torch.Tensor) -> torch.Tensor:
    """NumPy reciprocal: integer inputs use integer (truncating) division."""
    if x.is_floating_point() or x.is_complex():
        return torch.reciprocal(x)
    zero, y = _int_guard(x)
    out = torch.div(torch.ones_like(x), y, rounding_mode="trunc")
    return _zero_where(zero, out)


def np_true_divide(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Division in the loop dtype (inputs already cast to float by the table)."""
    return torch.true_divide(x, y)


def _exact(x: torch.Tensor, value: float) -> torch.Tensor:
    """``value`` as a 0-d tensor of x's dtype: exporters keep it exactly (not as float32)."""
    return torch.tensor(value, dtype=x.dtype)


def _binary_exponent(a: torch.Tensor) -> torch.Tensor:
    """e with a = m * 2**e, m in [0.5, 1), for finite a > 0 (float32 math for halves)."""
    e = torch.floor(torch.log2(a)) + 1
    m = _times_pow2(a, -e)
    e = torch.where(m >= 1, e + 1, e)
    return torch.where(m < 0.5, e - 1, e)


def _times_pow2(a: torch.Tensor, e: torch.Tensor) -> torch.Tensor:
    """a * 2**e exactly, in two steps so that neither power over- or underflows."""
    half = torch.trunc(e / 2)
    two = torch.full_like(a, 2.0)
    return a * torch.pow(two, half) * torch.pow(two, e - half)


def _work(x: torch.Tensor) -> torch.Tensor:
    """x in a dtype wide enough for exponent arithmetic (float16 values fit float32)."""
    return x.to(torch.float32) if x.dtype in (torch.float16, torch.bfloat16) else x


def _ulp(a: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Distance from finite a >= 0 to the next larger float of ``dtype`` (in a's dtype)."""
    info = torch.finfo(dtype)
    digits = round(-math.log2(info.eps)) + 1
    tiny = info.smallest_normal * info.eps  # the smallest subnormal
    positive = torch.where(a > 0, a, torch.ones_like(a))
    step = _times_pow2(torch.ones_like(a), _binary_exponent(positive) - digits)
    return torch.maximum(step, _exact(a, tiny))


def np_nextafter(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """The float after x towards y, by exponent arithmetic (exporters lack nextafter)."""
    if torch.jit.is_scripting():
        return torch.nextafter(x, y.to(x.dtype))
    x, y = torch.broadcast_tensors(x, torch.as_tensor(y, dtype=x.dtype))
    info = torch.finfo(x.dtype)
    w = _work(x)
    a = torch.abs(w)
    finite = torch.where(torch.isfinite(a), a, torch.ones_like(a))
    ulp = _ulp(finite, x.dtype)
    power_of_two = _times_pow2(finite, -_binary_exponent(finite)) == 0.5
    toward_zero = (y > x) != (x > 0)
    halve = toward_zero & power_of_two & (finite > info.smallest_normal)
    step = torch.where(halve, ulp / 2, ulp)
    up = y > x
    out = w + torch.where(up, step, -step)
    out = torch.where(torch.isinf(w), torch.sign(w) * _exact(w, info.max), out)
    out = out.to(x.dtype)
    out = torch.where(x == y, y, out)
    return torch.where(torch.isnan(x) | torch.isnan(y), x + y, out)


def np_spacing(x: torch.Tensor) -> torch.Tensor:
    """ulp of x: away from zero and signed like x; NumPy's float16 loop steps up instead."""
    if x.dtype == torch.float16:
        target = torch.full_like(x, math.inf)
    else:
        target = torch.where(x < 0, torch.full_like(x, -math.inf), torch.full_like(x, math.inf))
    return np_nextafter(x, target) - x


def _euclid_steps(dtype: torch.dtype) -> int:
    """Euclid's algorithm needs fewer steps than the Fibonacci index above the dtype's max."""
    limit, a, b, steps = torch.iinfo(dtype).max, 1, 1, 0
    while b <= limit:
        a, b, steps = b, a + b, steps + 1
    return steps + 1


def np_gcd(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Greatest common divisor by a fixed number of Euclid steps (exporters lack gcd)."""
    if torch.jit.is_scripting():
        return torch.gcd(x, y)
    x, y = torch.broadcast_tensors(torch.abs(x), torch.abs(y))
    zero = torch.zeros_like(x)
    for _ in range(_euclid_steps(x.dtype)):
        done = y == 0
        rest = torch.remainder(x, torch.where(done, torch.ones_like(y), y))
        x, y = torch.where(done, x, y), torch.where(done, zero, rest)
    return x


def np_lcm(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Least common multiple: |x / gcd * y|, 0 when either is 0."""
    g = np_gcd(x, y)
    safe = torch.where(g == 0, torch.ones_like(g), g)
    return torch.abs(torch.div(x, safe, rounding_mode="trunc") * y)


def _is_float(x: torch.Tensor) -> bool:
    """Floating or complex: the dtypes with NaN, infinities and true division."""
    return x.is_floating_point() or x.is_complex()


def np_isfinite(x: torch.Tensor) -> torch.Tensor:
    """isfinite, constant True on integers and booleans (no ONNX int kernel)."""
    if _is_float(x):
        return torch.isfinite(x)
    return torch.full_like(x, True, dtype=torch.bool)


def np_isinf(x: torch.Tensor) -> torch.Tensor:
    """isinf, constant False on integers and booleans (no ONNX int kernel)."""
    if _is_float(x):
        return torch.isinf(x)
    return torch.full_like(x, False, dtype=torch.bool)


def np_isnan(x: torch.Tensor) -> torch.Tensor:
    """isnan, constant False on integers and booleans (no ONNX int kernel)."""
    if _is_float(x):
        return torch.isnan(x)
    return torch.full_like(x, False, dtype=torch.bool)


def np_fmax(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Maximum ignoring NaN (exporters lack fmax)."""
    if not x.is_floating_point():
        return torch.maximum(x, y)
    return torch.where(torch.isnan(x), y, torch.where(torch.isnan(y), x, torch.maximum(x, y)))


def np_fmin(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Minimum ignoring NaN (exporters lack fmin)."""
    if not x.is_floating_point():
        return torch.minimum(x, y)
    return torch.where(torch.isnan(x), y, torch.where(torch.isnan(y), x, torch.minimum(x, y)))


def _int_guard(y: torch.Tensor) -> tuple[torch.Tensor | None, torch.Tensor]:
    """For integer division by a tensor, NumPy yields 0 where y == 0; torch would raise."""
    if not _is_float(y):
        zero = y == 0
        return zero, torch.where(zero, torch.ones_like(y), y)
    return None, y


def _zero_where(zero: torch.Tensor | None, out: torch.Tensor) -> torch.Tensor:
    """``out`` with 0 where the divisor was 0 (``zero`` is None for float division)."""
    if zero is None:
        return out
    return torch.where(zero, torch.zeros_like(out), out)


def np_floor_divide(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Floor division; integer division by zero gives 0 as in NumPy."""
    zero, y = _int_guard(y)
    return _zero_where(zero, torch.floor_divide(x, y))


def np_remainder(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Python-style remainder; integer remainder by zero gives 0 as in NumPy."""
    zero, y = _int_guard(y)
    return _zero_where(zero, torch.remainder(x, y))


def np_fmod(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """C-style remainder; integer fmod by zero gives 0 as in NumPy."""
    zero, y = _int_guard(y)
    return _zero_where(zero, torch.fmod(x, y))


def np_copysign(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """|x| with the sign of y (-0.0 counts as negative), without a signbit kernel."""
    y = y.to(x.dtype)
    negative = (y < 0) | ((y == 0) & (torch.reciprocal(y) < 0))
    magnitude = torch.abs(x)
    return torch.where(negative, -magnitude, magnitude)


def np_hypot(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """sqrt(x**2 + y**2) from basic ops (exporters lack hypot)."""
    return torch.sqrt(x * x + y * y)


def np_modf(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Fractional and integral parts, both signed like x."""
    whole = torch.trunc(x)
    return x - whole, whole


def np_divmod(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Floor quotient and remainder, like Python's divmod."""
    return np_floor_divide(x, y), np_remainder(x, y)


def np_frexp(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Mantissa in [0.5, 1) and int32 exponent; (x, 0) for 0, inf and NaN."""
    w = _work(x)
    a = torch.abs(w)
    regular = torch.isfinite(a) & (a > 0)
    e = _binary_exponent(torch.where(regular, a, torch.ones_like(a)))
    e = torch.where(regular, e, torch.zeros_like(e))
    mantissa = torch.where(regular, _times_pow2(w, -e), w)
    return mantissa.to(x.dtype), e.to(torch.int32)


def np_ldexp(x: torch.Tensor, e: torch.Tensor) -> torch.Tensor:
    """x * 2**e in x's dtype."""
    return x * torch.pow(torch.tensor(2.0, dtype=x.dtype), e.to(x.dtype))


def np_bitwise_count(x: torch.Tensor) -> torch.Tensor:
    """Number of 1 bits in |x|, as uint8 (SWAR popcount: a dozen ops whatever the width)."""
    v = torch.abs(x.to(torch.int64)) if x.is_signed() else x.to(torch.int64)
    m1, m2, m4 = 0x5555555555555555, 0x3333333333333333, 0x0F0F0F0F0F0F0F0F
    v = v - torch.bitwise_and(torch.bitwise_right_shift(v, 1), m1)
    v = torch.bitwise_and(v, m2) + torch.bitwise_and(torch.bitwise_right_shift(v, 2), m2)
    v = torch.bitwise_and(v + torch.bitwise_right_shift(v, 4), m4)
    v = torch.bitwise_and(torch.bitwise_right_shift(v * 0x0101010101010101, 56), 0xFF)
    return v.to(torch.uint8)


def _shift(x: torch.Tensor, s: torch.Tensor, left: bool) -> torch.Tensor:
    """A shift that runs uint8 in int64 (the ONNX exporter shifts uint8 as signed int8)."""
    if x.dtype == torch.uint8:
        wide, s = x.to(torch.int64), s.to(torch.int64)
        out = torch.bitwise_left_shift(wide, s) if left else torch.bitwise_right_shift(wide, s)
        return out.to(torch.uint8)
    return torch.bitwise_left_shift(x, s) if left else torch.bitwise_right_shift(x, s)


def np_left_shift(x: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
    """bitwise_left_shift, with uint8 computed in int64 (same bits)."""
    return _shift(x, s, True)


def np_right_shift(x: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
    """bitwise_right_shift, with uint8 computed in int64 (same bits)."""
    return _shift(x, s, False)


def np_sign(x: torch.Tensor) -> torch.Tensor:
    """Sign with NaN kept as NaN (NumPy), 0 for zero."""
    if x.is_floating_point():
        return torch.where(torch.isnan(x), x, torch.sign(x))
    return torch.sign(x)


def np_heaviside(x: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
    """Heaviside step with NaN propagated as NumPy does."""
    return torch.heaviside(x, h0)


def np_logical_xor(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Logical xor of two truth values."""
    return torch.logical_xor(x, y)


def np_fabs(x: torch.Tensor) -> torch.Tensor:
    """Absolute value of a float array."""
    return torch.abs(x)


def _product_inputs(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Operands of a product: booleans go through int64 (torch has no bool products)."""
    if x.dtype == torch.bool:
        return x.to(torch.int64), y.to(torch.int64)
    return x, y


def _product_output(out: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """A product of booleans as NumPy defines it (or of ands); others in the common dtype."""
    if x.dtype == torch.bool:
        return out != 0
    return out.to(torch.promote_types(x.dtype, y.dtype))


def np_matmul(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Matrix product, booleans included."""
    a, b = _product_inputs(x, y)
    return _product_output(torch.matmul(a, b), x, y)


def np_vecdot(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Dot product over the last axis (conjugating x), in the operands' dtype."""
    a, b = _product_inputs(x, y)
    return _product_output(torch.sum(torch.conj_physical(a) * b, dim=-1), x, y)


def np_matvec(x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Matrix-vector product broadcast over leading dims."""
    a, b = _product_inputs(x, v)
    return _product_output(torch.matmul(a, b.unsqueeze(-1)).squeeze(-1), x, v)


def np_vecmat(v: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """Vector-matrix product broadcast over leading dims (conjugating v)."""
    a, b = _product_inputs(v, x)
    return _product_output(torch.matmul(torch.conj_physical(a).unsqueeze(-2), b).squeeze(-2), v, x)


def np_degrees(x: torch.Tensor) -> torch.Tensor:
    """Radians to degrees as NumPy computes it (a double constant, not a float32 one)."""
    return x * _exact(x, 180.0 / math.pi)


def np_radians(x: torch.Tensor) -> torch.Tensor:
    """Degrees to radians as NumPy computes it."""
    return x * _exact(x, math.pi / 180.0)


# --------------------------------------------------------------------------- reductions
def np_prod(
    x: torch.Tensor, dims: list[int] | None, keepdim: bool, dtype: torch.dtype
) -> torch.Tensor:
    """Product over several dims (torch.prod takes one)."""
    x = x.to(dtype)
    for d in _descending(_all_dims(x, dims), x.ndim):
        x = torch.prod(x, dim=d, keepdim=keepdim) if x.is_floating_point() else _int_prod(x, d)
        if not keepdim and not x.is_floating_point():
            x = x.squeeze(d)
    return x


def _int_prod(x: torch.Tensor, dim: int) -> torch.Tensor:
    """Integer product along dim, kept with dim size 1, by halving: wraps like NumPy.

    (ONNX Runtime's integer ReduceProd saturates instead of wrapping.)
    """
    if x.dtype == torch.bool:
        x = x.to(torch.int64)
    return _halving(x, dim, True)


def _halving(x: torch.Tensor, dim: int, multiply: bool) -> torch.Tensor:
    """Reduce along dim (kept, size 1) by multiplying or adding halves: log2(n) plain ops."""
    identity = 1 if multiply else 0
    dim = dim % x.ndim
    if x.shape[dim] == 0:
        shape = list(x.shape)
        shape[dim] = 1
        return torch.full(shape, identity, dtype=x.dtype)
    while x.shape[dim] > 1:
        n = x.shape[dim]
        if n % 2:
            pad = torch.full_like(x.narrow(dim, 0, 1), identity)
            x = torch.cat([x, pad], dim=dim)
            n += 1
        pairs = x.unflatten(dim, (n // 2, 2))
        a, b = pairs.select(dim + 1, 0), pairs.select(dim + 1, 1)
        x = torch.mul(a, b) if multiply else torch.add(a, b)
    return x


def np_all(x: torch.Tensor, dims: list[int] | None, keepdim: bool) -> torch.Tensor:
    """Truth of all elements over dims."""
    x = x != 0 if x.dtype != torch.bool else x
    dims = _all_dims(x, dims)
    return torch.all(x, dim=dims, keepdim=keepdim) if len(dims) > 0 else x


def np_any(x: torch.Tensor, dims: list[int] | None, keepdim: bool) -> torch.Tensor:
    """Truth of any element over dims."""
    x = x != 0 if x.dtype != torch.bool else x
    dims = _all_dims(x, dims)
    return torch.any(x, dim=dims, keepdim=keepdim) if len(dims) > 0 else x


def np_amax(x: torch.Tensor, dims: list[int] | None, keepdim: bool) -> torch.Tensor:
    """Maximum over dims, NaN-propagating like NumPy, any dtype."""
    if x.dtype == torch.bool:
        return np_any(x, dims, keepdim)
    dims = _all_dims(x, dims)  # explicit dims: exporters reject dim=()
    return torch.amax(x, dim=dims, keepdim=keepdim) if len(dims) > 0 else x


def np_amin(x: torch.Tensor, dims: list[int] | None, keepdim: bool) -> torch.Tensor:
    """Minimum over dims, NaN-propagating like NumPy, any dtype."""
    if x.dtype == torch.bool:
        return np_all(x, dims, keepdim)
    dims = _all_dims(x, dims)  # explicit dims: exporters reject dim=()
    return torch.amin(x, dim=dims, keepdim=keepdim) if len(dims) > 0 else x


def np_cum_and(x: torch.Tensor, dim: int) -> torch.Tensor:
    """Running logical and along dim: no zero seen so far."""
    return torch.cumsum((x == 0).to(torch.int64), dim=dim) == 0


def np_cum_or(x: torch.Tensor, dim: int) -> torch.Tensor:
    """Running logical or along dim."""
    return torch.cumsum((x != 0).to(torch.int64), dim=dim) != 0


def _prefix_scan(x: torch.Tensor, dim: int, maximum: bool) -> torch.Tensor:
    """Inclusive running max (or min) in log2(n) steps (exporters lack cummax); NaN and
    booleans as NumPy's maximum/minimum.accumulate."""
    n = x.shape[dim] if x.ndim else 1
    shift = 1
    while shift < n:
        head = x.narrow(dim, 0, shift)
        a, b = x.narrow(dim, shift, n - shift), x.narrow(dim, 0, n - shift)
        if x.dtype == torch.bool:
            both = a | b if maximum else a & b
        else:
            both = torch.maximum(a, b) if maximum else torch.minimum(a, b)
        x = torch.cat([head, both], dim=dim)
        shift *= 2
    return x


def np_cummax(x: torch.Tensor, dim: int) -> torch.Tensor:
    """Running maximum along dim (NaN propagates, as in NumPy's maximum.accumulate)."""
    return _prefix_scan(x, dim, True)


def np_cummin(x: torch.Tensor, dim: int) -> torch.Tensor:
    """Running minimum along dim (NaN propagates)."""
    return _prefix_scan(x, dim, False)


def np_sum(
    x: torch.Tensor, dims: list[int] | None, keepdim: bool, dtype: torch.dtype
) -> torch.Tensor:
    """Sum over dims (None: all) in ``dtype``."""
    dims = _all_dims(x, dims)
    if len(dims) == 0:
        return x.to(dtype)
    if dtype == torch.int64:  # ONNX Runtime's int64 ReduceSum saturates instead of wrapping
        x = x.to(dtype)
        for d in _descending(dims, x.ndim):
            x = _halving(x, d, False)
            x = x if keepdim else x.squeeze(d)
        return x
    return torch.sum(x.to(dtype), dim=dims, keepdim=keepdim).to(dtype)


def np_mean(
    x: torch.Tensor, dims: list[int] | None, keepdim: bool, dtype: torch.dtype
) -> torch.Tensor:
    """Mean over dims (None: all) computed in ``dtype``."""
    x = x.to(dtype)
    dims = _all_dims(x, dims)
    return torch.mean(x, dim=dims, keepdim=keepdim) if len(dims) > 0 else x


def np_var(
    x: torch.Tensor, dims: list[int] | None, correction: float, keepdim: bool, dtype: torch.dtype
) -> torch.Tensor:
    """Variance with NumPy's ddof as torch's correction."""
    x = x.to(dtype)
    return torch.var(x, dim=_all_dims(x, dims), correction=correction, keepdim=keepdim)


def np_std(
    x: torch.Tensor, dims: list[int] | None, correction: float, keepdim: bool, dtype: torch.dtype
) -> torch.Tensor:
    """Standard deviation with NumPy's ddof as torch's correction."""
    return torch.sqrt(np_var(x, dims, correction, keepdim, dtype))


def np_argmax(x: torch.Tensor, dim: int | None, keepdim: bool) -> torch.Tensor:
    """Index of the first maximum (flattened when dim is None)."""
    if x.dtype == torch.bool:
        x = x.to(torch.uint8)
    if dim is None:
        out = torch.argmax(x.reshape(-1))
        return out.reshape([1] * x.ndim) if keepdim else out
    return torch.argmax(x, dim=dim, keepdim=keepdim)


def np_argmin(x: torch.Tensor, dim: int | None, keepdim: bool) -> torch.Tensor:
    """Index of the first minimum (flattened when dim is None)."""
    if x.dtype == torch.bool:
        x = x.to(torch.uint8)
    if dim is None:
        out = torch.argmin(x.reshape(-1))
        return out.reshape([1] * x.ndim) if keepdim else out
    return torch.argmin(x, dim=dim, keepdim=keepdim)


def np_count_nonzero(x: torch.Tensor, dims: list[int] | None, keepdim: bool) -> torch.Tensor:
    """Count of nonzero elements over dims (None: all)."""
    return np_sum(x != 0, dims, keepdim, torch.int64)


def np_weighted_average(
    x: torch.Tensor, w: torch.Tensor, dims: list[int] | None, keepdim: bool, dtype: torch.dtype
) -> torch.Tensor:
    """sum(x * w) / sum(w) over dims, with 1-d weights aligned to a single axis."""
    x = x.to(dtype)
    w = w.to(dtype)
    dims = _all_dims(x, dims)
    if w.ndim == 1 and x.ndim > 1:
        shape = [1] * x.ndim
        shape[dims[0]] = w.shape[0]
        w = w.reshape(shape)
    w = torch.broadcast_to(w, x.shape)
    return torch.sum(x * w, dim=dims, keepdim=keepdim) / torch.sum(w, dim=dims, keepdim=keepdim)


def np_quantile(
    x: torch.Tensor,
    q: list[float],
    q_shape: list[int],
    dims: list[int] | None,
    keepdim: bool,
    dtype: torch.dtype,
) -> torch.Tensor:
    """Linear-interpolation quantile over several dims (NumPy's default method); ``q`` is
    flat, ``q_shape`` its NumPy shape (``[]`` for a scalar q)."""
    out_dtype = dtype
    if dtype in (torch.float16, torch.bfloat16):  # torch.quantile takes float32/64 only
        dtype = torch.float32
    x = x.to(dtype)
    dims = _all_dims(x, dims)
    moved = _slices_last(x, dims)
    qt = torch.tensor(q, dtype=dtype).reshape(q_shape)
    out = torch.quantile(moved, qt, dim=-1)
    if keepdim:
        shape = list(x.shape)
        for d in dims:
            shape[d] = 1
        out = out.reshape(list(qt.shape) + shape)
    return out.to(out_dtype)


def _slices_last(x: torch.Tensor, dims: list[int]) -> torch.Tensor:
    """``x`` with ``dims`` moved last and flattened into one axis: one row per slice that
    a quantile reduces, the other axes in their order before it."""
    rest: list[int] = []
    for d in range(x.ndim):
        if d not in dims:
            rest.append(d)
    sizes = [x.shape[d] for d in rest]
    return x.permute(rest + dims).reshape(sizes + [-1])


def np_nanquantile(
    x: torch.Tensor,
    q: list[float],
    q_shape: list[int],
    dims: list[int] | None,
    keepdim: bool,
    dtype: torch.dtype,
) -> torch.Tensor:
    """Linear-interpolation quantile that leaves NaNs out of each slice (np.nanquantile):
    the slice sorted (NaNs last), its count of numbers, the two neighbours of the virtual
    index q (n - 1) blended like NumPy's lerp (their difference taken in the data's own
    float type, as NumPy does); NaN where a slice holds no number."""
    out_dtype = dtype
    if dtype in (torch.float16, torch.bfloat16):
        dtype = torch.float32
    if not x.is_floating_point():
        x = x.to(dtype)
    dims = _all_dims(x, dims)
    moved = _slices_last(x, dims)
    sizes = list(moved.shape[:-1])
    ordered = torch.sort(moved, dim=-1).values  # NaN sorts last
    count = (~torch.isnan(moved)).sum(dim=-1, keepdim=True)
    last = torch.clamp(count - 1, min=0).to(torch.float64)
    position = torch.tensor(q, dtype=torch.float64) * last  # (..., Q)
    below = torch.floor(position)
    above = torch.minimum(below + 1, last)
    weight = (position - below).to(dtype)
    low = torch.gather(ordered, -1, below.to(torch.int64))
    high = torch.gather(ordered, -1, above.to(torch.int64))
    step = (high - low).to(dtype)
    low, high = low.to(dtype), high.to(dtype)
    blended = torch.where(weight < 0.5, low + step * weight, high - step * (1 - weight))
    blended = torch.where(count == 0, torch.full_like(blended, float("nan")), blended)
    out = blended.movedim(-1, 0).reshape(q_shape + sizes)
    if keepdim:
        shape = list(x.shape)
        for d in dims:
            shape[d] = 1
        out = out.reshape(q_shape + shape)
    return out.to(out_dtype)


def np_nanmean(
    x: torch.Tensor, dims: list[int] | None, keepdim: bool, dtype: torch.dtype
) -> torch.Tensor:
    """Mean ignoring NaNs (NaN where every value is NaN)."""
    x = x.to(dtype)
    valid = ~torch.isnan(x)
    total = np_sum(torch.where(valid, x, torch.zeros_like(x)), dims, keepdim, dtype)
    return total / np_sum(valid, dims, keepdim, dtype)


def np_nanvar(
    x: torch.Tensor, dims: list[int] | None, correction: float, keepdim: bool, dtype: torch.dtype
) -> torch.Tensor:
    """Variance ignoring NaNs, as NumPy's nanvar: NaN where ``correction`` or more of the
    values counted are missing (no degrees of freedom left)."""
    x = x.to(dtype)
    valid = ~torch.isnan(x)
    zeros = torch.zeros_like(x)
    count = np_sum(valid, dims, True, dtype)
    mean = np_sum(torch.where(valid, x, zeros), dims, True, dtype) / count
    deviation = torch.where(valid, x - mean, zeros)
    total = np_sum(deviation * deviation, dims, keepdim, dtype)
    dof = np_sum(valid, dims, keepdim, dtype) - correction
    return torch.where(dof > 0, total / dof, torch.full_like(total, float("nan")))


def np_nan_fill(x: torch.Tensor, fill: float) -> torch.Tensor:
    """x with NaNs replaced by ``fill`` (integers have none)."""
    if not x.is_floating_point():
        return x
    return torch.where(torch.isnan(x), torch.full_like(x, fill), x)


def np_bincount(x: torch.Tensor, weights: torch.Tensor | None, length: int) -> torch.Tensor:
    """Counts (or weight sums) per value, padded/truncated to the traced length; weight
    sums are a scatter-add (torch.onnx has no weighted bincount)."""
    x = x.to(torch.int64)
    if weights is None:
        return torch.bincount(x, minlength=length)[:length]
    inside = x < length  # values past the traced length are dropped, as for the counts
    index = torch.where(inside, x, torch.zeros_like(x)).reshape(-1)
    picked = torch.where(inside, weights, torch.zeros_like(weights)).reshape(-1)
    return torch.zeros(length, dtype=weights.dtype).scatter_add(0, index, picked)


# -------------------------------------------------------------------------------- shape
def np_repeat(
    x: torch.Tensor, repeats: int | list[int] | torch.Tensor, dim: int | None
) -> torch.Tensor:
    """np.repeat: repeat elements along dim (None: flattened)."""
    if dim is None:
        x, dim = x.reshape(-1), 0
    if isinstance(repeats, int):  # static counts keep the result's size static
        return torch.repeat_interleave(x, repeats, dim=dim)
    if isinstance(repeats, torch.Tensor):
        return torch.repeat_interleave(x, repeats, dim=dim)
    return torch.repeat_interleave(x, torch.tensor(repeats, dtype=torch.int64), dim=dim)


def np_take_index(x: torch.Tensor, dim: int, index: list[int]) -> torch.Tensor:
    """Select a static list of positions along dim (used for edge/reflect/wrap padding)."""
    return torch.index_select(x, dim, torch.tensor(index, dtype=torch.int64))


# ----------------------------------------------------------------- indexing and sorting
def np_wrap_index(index: torch.Tensor, n: int) -> torch.Tensor:
    """Turn negative indices into positive ones (NumPy allows them, index_select does not)."""
    index = index.to(torch.int64)
    return torch.where(index < 0, index + n, index)


def np_argsort(x: torch.Tensor, dim: int | None, stable: bool = False) -> torch.Tensor:
    """argsort along dim (None: flattened); stable only when NumPy was asked for it."""
    if dim is None:
        x, dim = x.reshape(-1), 0
    if stable:
        return torch.argsort(x, dim=dim, stable=True)
    return torch.sort(x, dim=dim).indices  # exporters support the default sort


def np_sort(x: torch.Tensor, dim: int | None) -> torch.Tensor:
    """Sorted values along dim (None: flattened), NaN last as in NumPy."""
    if dim is None:
        x, dim = x.reshape(-1), 0
    return torch.sort(x, dim=dim).values


def np_searchsorted(a: torch.Tensor, v: torch.Tensor, right: bool) -> torch.Tensor:
    """Insertion positions of v in sorted 1-d a, by counting (exporters lack searchsorted)."""
    v = v.to(a.dtype)
    below = a <= v.unsqueeze(-1) if right else a < v.unsqueeze(-1)
    return below.to(torch.int64).sum(dim=-1)


def np_put(base: torch.Tensor, index: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """``np.put``: a copy of ``base`` with flat positions ``index`` set to ``values``."""
    out = base.reshape(-1).clone()
    out[index] = values.to(out.dtype).expand(index.shape)
    return out.reshape(base.shape)


def np_put_along_axis(
    base: torch.Tensor, index: torch.Tensor, values: torch.Tensor, dim: int
) -> torch.Tensor:
    """``np.put_along_axis``: a copy of ``base`` with ``values`` scattered along ``dim`` at
    ``index`` (its other axes broadcast against ``base``'s, as NumPy's index grids do)."""
    shape = list(base.shape)
    shape[dim] = index.shape[dim]
    index = index.expand(shape)
    return base.scatter(dim, index, values.to(base.dtype).expand(shape))


def np_place(base: torch.Tensor, mask: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """``np.place``: a copy of ``base`` whose True cells of ``mask`` (C order) take the
    1-d ``values`` one after the other, repeated when there are fewer values than cells."""
    flat = torch.broadcast_to(mask, base.shape).reshape(-1)
    order = torch.clamp(torch.cumsum(flat.to(torch.int64), 0) - 1, min=0)
    picked = values[torch.remainder(order, values.shape[0])].to(base.dtype)
    return torch.where(flat, picked, base.reshape(-1)).reshape(base.shape)


def np_ufunc_at(
    base: torch.Tensor, indices: list[torch.Tensor], values: torch.Tensor, reduce: str
) -> torch.Tensor:
    """``np.<ufunc>.at(base, indices, values)``: a copy of ``base`` with ``values`` combined
    (``reduce`` of scatter_reduce) into the cells the leading-dim ``indices`` name; repeated
    cells combine every value, as NumPy's unbuffered ``at`` does."""
    lead, rest = list(base.shape[: len(indices)]), list(base.shape[len(indices) :])
    flat = torch.remainder(indices[0], lead[0])
    for i in range(1, len(indices)):  # the index arrays broadcast as the sum forms
        flat = flat * lead[i] + torch.remainder(indices[i], lead[i])
    picked = torch.broadcast_to(values.to(base.dtype), list(flat.shape) + rest)
    picked = picked.reshape([-1] + rest)
    where = flat.reshape([-1] + [1] * len(rest)).expand(picked.shape)
    out = base.reshape([-1] + rest).scatter_reduce(0, where, picked, reduce, include_self=True)
    return out.reshape(base.shape)


# ------------------------------------------------------------------------- element-wise
def np_round(x: torch.Tensor, decimals: int) -> torch.Tensor:
    """Round half to even at ``decimals`` like NumPy (integers with decimals >= 0 unchanged)."""
    if not x.is_floating_point():
        if decimals >= 0:
            return x
        factor = 10 ** (-decimals)
        scaled = torch.round(x.to(torch.float64) / factor) * factor
        return scaled.to(x.dtype)
    if decimals == 0:
        return torch.round(x)
    factor = 10.0**decimals
    return torch.round(x * factor) / factor


def np_nan_to_num(
    x: torch.Tensor, nan: float, posinf: float | None, neginf: float | None
) -> torch.Tensor:
    """NaN and infinities replaced as NumPy does, by explicit selects (exports exactly)."""
    if torch.jit.is_scripting():
        return torch.nan_to_num(x, nan, posinf, neginf)
    info = torch.finfo(x.dtype)
    big = info.max if posinf is None else posinf
    small = info.min if neginf is None else neginf
    x = torch.where(torch.isnan(x), torch.full_like(x, nan), x)
    x = torch.where(x == math.inf, _exact(x, big), x)
    return torch.where(x == -math.inf, _exact(x, small), x)


def np_interp(
    x: torch.Tensor,
    xp: torch.Tensor,
    fp: torch.Tensor,
    left: float | None,
    right: float | None,
) -> torch.Tensor:
    """Piecewise-linear interpolation with NumPy's edge values."""
    n = xp.shape[0]
    hi = torch.clamp(np_searchsorted(xp, x, True), 1, n - 1)
    lo = hi - 1
    x0, x1, y0, y1 = xp[lo], xp[hi], fp[lo], fp[hi]
    slope = (y1 - y0) / (x1 - x0)
    out = y0 + slope * (x - x0)
    out = torch.where(x == x1, y1, out)
    left_v = fp[0] if left is None else torch.tensor(left, dtype=fp.dtype)
    right_v = fp[-1] if right is None else torch.tensor(right, dtype=fp.dtype)
    out = torch.where(x < xp[0], left_v, out)
    return torch.where(x > xp[-1], right_v, out)


# ----------------------------------------------------------------------- linear algebra
def np_dot(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """np.dot: scalars multiply, otherwise contract a's last axis with b's second-to-last."""
    if a.dtype == torch.bool:
        return _dot(a.to(torch.int64), b.to(torch.int64)) != 0
    return _dot(a, b)


def _dot(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    return torch.tensordot(a, b, dims=([a.ndim - 1], [max(b.ndim - 2, 0)]))


def np_diag(x: torch.Tensor, k: int) -> torch.Tensor:
    """np.diag: a 1-d input becomes a square matrix, a 2-d input gives its k-th diagonal."""
    if x.ndim == 1:
        return torch.diag(x, k)
    return torch.diagonal(x, k)


def np_triangle(x: torch.Tensor, k: int, upper: bool) -> torch.Tensor:
    """triu/tril on the last two dims (1-d input is broadcast to a square first)."""
    if x.ndim == 1:
        x = torch.broadcast_to(x, (x.shape[0], x.shape[0]))
    return torch.triu(x, k) if upper else torch.tril(x, k)


# ----------------------------------------------------------------------------- creation
def np_linspace(
    start: torch.Tensor, stop: torch.Tensor, num: int, endpoint: bool, dtype: torch.dtype
) -> torch.Tensor:
    """NumPy's linspace along a new leading axis, for scalar (0-d) or array endpoints."""
    start = start.to(torch.float64)
    stop = stop.to(torch.float64)
    div = (num - 1) if endpoint else num
    steps = torch.arange(num, dtype=torch.float64).reshape([num] + [1] * start.ndim)
    delta = stop - start
    if div > 0:
        out = steps * (delta / div) + start
    else:
        out = steps * delta + start
    if endpoint and num > 1:
        out = torch.cat([out[:-1], stop.unsqueeze(0)], dim=0)
    if dtype not in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        out = torch.floor(out)
    return out.to(dtype)


# -------------------------------------------------------------------- signal processing
def np_convolve(a: torch.Tensor, v: torch.Tensor, mode: str) -> torch.Tensor:
    """np.convolve of 1-d ``a`` (the longer) and ``v``: 'full', 'same' (centred as NumPy
    centres it) or 'valid'. Floats convolve; integers (int64) sum gathered windows, exact."""
    n = a.shape[0]
    m = v.shape[0]
    kernel = torch.flip(v, [0])
    if a.is_floating_point():
        full = torch.nn.functional.conv1d(
            a.reshape(1, 1, n), kernel.reshape(1, 1, m), padding=m - 1
        ).reshape(-1)
    else:
        pad = torch.zeros(m - 1, dtype=a.dtype)
        padded = torch.cat([pad, a, pad])
        index = torch.arange(n + m - 1).unsqueeze(1) + torch.arange(m).unsqueeze(0)
        full = (padded[index] * kernel).sum(-1)
    if mode == "same":
        return full.narrow(0, (m - 1) // 2, n)
    if mode == "valid":
        return full.narrow(0, m - 1, n - m + 1)
    return full


def np_polyval(p: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """Horner's rule as NumPy runs it (y = 0, then y = y * x + c per coefficient)."""
    y = torch.zeros_like(x)
    for i in range(p.shape[0]):
        y = y * x + p[i]
    return y


def np_unwrap(
    p: torch.Tensor, dd: torch.Tensor, discont: float, period: float, dim: int
) -> torch.Tensor:
    """np.unwrap along ``dim`` of float ``p`` with its differences ``dd`` (taken in the
    input's own dtype, as NumPy takes them): jumps beyond ``discont`` folded by ``period``."""
    high = period / 2
    low = -high
    ddmod = torch.remainder(dd - low, period) + low
    ddmod = torch.where((ddmod == low) & (dd > 0), torch.full_like(ddmod, high), ddmod)
    correct = ddmod - dd
    correct = torch.where(torch.abs(dd) < discont, torch.zeros_like(correct), correct)
    n = p.shape[dim]
    rest = p.narrow(dim, 1, n - 1) + torch.cumsum(correct, dim)
    return torch.cat([p.narrow(dim, 0, 1), rest], dim)


def np_gradient(f: torch.Tensor, dx: float, dim: int, edge_order: int) -> torch.Tensor:
    """np.gradient along ``dim`` for a uniform spacing ``dx``: central differences inside,
    one-sided ones (first or second order) at the two ends, NumPy's formulas."""
    n = f.shape[dim]
    inner = (f.narrow(dim, 2, n - 2) - f.narrow(dim, 0, n - 2)) / (2.0 * dx)
    if edge_order == 1:
        first = (f.narrow(dim, 1, 1) - f.narrow(dim, 0, 1)) / dx
        last = (f.narrow(dim, n - 1, 1) - f.narrow(dim, n - 2, 1)) / dx
    else:
        first = (
            -1.5 / dx * f.narrow(dim, 0, 1)
            + 2.0 / dx * f.narrow(dim, 1, 1)
            + -0.5 / dx * f.narrow(dim, 2, 1)
        )
        last = (
            0.5 / dx * f.narrow(dim, n - 3, 1)
            + -2.0 / dx * f.narrow(dim, n - 2, 1)
            + 1.5 / dx * f.narrow(dim, n - 1, 1)
        )
    return torch.cat([first, inner, last], dim)


def np_trapezoid(pairs: torch.Tensor, d: torch.Tensor, dim: int) -> torch.Tensor:
    """np.trapezoid from ``pairs`` = y[1:] + y[:-1] (summed in y's own dtype, as NumPy
    sums them): (d * pairs / 2).sum(dim), ``d`` the spacing (broadcast)."""
    return (d * pairs / 2.0).sum(dim)


def np_histogram_uniform(
    a: torch.Tensor,
    edges: torch.Tensor,
    first: torch.Tensor,
    denom: torch.Tensor,
    weights: torch.Tensor | None,
) -> torch.Tensor:
    """Counts (or weight sums) of flat ``a`` in ``edges.shape[0] - 1`` equal bins, NumPy's
    way: the bin from ``(a - first) / denom * bins``, corrected against the edges, values
    outside [first edge, last edge] dropped."""
    bins = edges.shape[0] - 1
    a = a.reshape(-1)
    index = ((a - first) / denom * bins).to(torch.int64)
    index = torch.clamp(index, 0, bins - 1)
    index = index - (a < edges[index]).to(torch.int64)
    index = torch.clamp(index, 0, bins - 1)
    up = (a >= edges[index + 1]) & (index != bins - 1)
    index = index + up.to(torch.int64)
    keep = (a >= edges[0]) & (a <= edges[bins])
    w = keep.to(torch.float64) if weights is None else weights.reshape(-1) * keep
    out = torch.zeros(bins, dtype=w.dtype).scatter_add(0, index, w)
    return out


def np_histogram_edges(
    a: torch.Tensor, edges: torch.Tensor, weights: torch.Tensor | None
) -> torch.Tensor:
    """Counts (or weight sums) of flat ``a`` between given ``edges``, the last bin closed."""
    a = a.reshape(-1)
    n = edges.shape[0]
    below = a.unsqueeze(0) < edges.narrow(0, 0, n - 1).unsqueeze(1)
    last = (a <= edges.narrow(0, n - 1, 1).unsqueeze(1)).to(below.dtype)
    inside = torch.cat([below, last], 0).to(torch.float64)
    if weights is not None:
        inside = inside * weights.reshape(1, -1)
    return torch.diff(inside.sum(1))


def np_histogramdd(
    sample: torch.Tensor, edges: list[torch.Tensor], weights: torch.Tensor | None
) -> torch.Tensor:
    """Counts (or weight sums) of the rows of float64 ``sample`` (N, D) in the grid of
    ``edges``, NumPy's way: per axis the number of edges at or below the value (a value on
    the last edge in the last bin), flattened with an outlier bin beyond each end, counted,
    and the outlier bins dropped."""
    flat = torch.zeros(sample.shape[0], dtype=torch.int64)
    sizes: list[int] = []  # typed for TorchScript, which scripts every graph target
    for i in range(len(edges)):
        edge = edges[i]
        x = sample[:, i]
        index = (x.unsqueeze(1) >= edge.unsqueeze(0)).sum(1)
        index = index - (x == edge[-1]).to(torch.int64)
        size = edge.shape[0] + 1
        flat = flat * size + index
        sizes.append(size)
    w = torch.ones(sample.shape[0], dtype=torch.float64) if weights is None else weights
    total = 1
    for size in sizes:
        total = total * size
    hist = torch.zeros(total, dtype=torch.float64).scatter_add(0, flat, w).reshape(sizes)
    for i in range(len(sizes)):
        hist = hist.narrow(i, 1, sizes[i] - 2)
    return hist


def np_sliding_window(x: torch.Tensor, window: list[int], dims: list[int]) -> torch.Tensor:
    """sliding_window_view: each window dim appended last, gathered by index (exporters
    have no strided view)."""
    for i in range(len(dims)):
        d = dims[i]
        w = window[i]
        n = x.shape[d] - w + 1
        index = torch.arange(n).unsqueeze(1) + torch.arange(w).unsqueeze(0)
        picked = torch.index_select(x, d, index.reshape(-1))
        shape = list(picked.shape)
        picked = picked.reshape(shape[:d] + [n, w] + shape[d + 1 :])
        x = torch.movedim(picked, d + 1, -1)
    return x
