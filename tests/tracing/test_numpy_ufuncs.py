"""Every ufunc of the table, on int, bool, float32 and float64 data, replayed on fresh input."""

from __future__ import annotations

import numpy as np
import pytest

from patchport.tracing.numpy_table import UFUNCS

from .helpers import conform, make

SHAPE = (3, 4)
DTYPES = [np.uint8, np.int32, np.int64, np.bool_, np.float32, np.float64]
SPECIAL_SHAPES = {np.matmul, np.vecdot} | {
    getattr(np, n) for n in ("matvec", "vecmat") if hasattr(np, n)
}
# domains: acosh needs >= 1; the rest of the float ufuncs accept (0.1, 0.9)
RANGES = {np.arccosh: (1.1, 3.0)}


def _inputs(ufunc: np.ufunc, dtype: np.dtype) -> list[np.ndarray]:
    lo, hi = RANGES.get(ufunc, (0.1, 0.9))
    if np.dtype(dtype).kind in "iu":
        lo, hi = 1, 6
    return [make(SHAPE, dtype, 10 + i, low=lo, high=hi) for i in range(ufunc.nin)]


def _supported(ufunc: np.ufunc, inputs: list[np.ndarray]) -> bool:
    try:
        with np.errstate(all="ignore"):
            ufunc(*inputs)
    except TypeError:
        return False
    return True


# only the (ufunc, dtype) pairs NumPy itself has a loop for: nothing to trace otherwise
CASES = [
    pytest.param(u, d, id=f"{u.__name__}-{np.dtype(d).name}")
    for u in UFUNCS
    if u not in SPECIAL_SHAPES
    for d in DTYPES
    if _supported(u, _inputs(u, d))
]


def test_every_table_ufunc_is_exercised_on_some_dtype() -> None:
    covered = {param.values[0] for param in CASES}
    assert covered == set(UFUNCS) - SPECIAL_SHAPES


@pytest.mark.parametrize(("ufunc", "dtype"), CASES)
def test_ufunc_conforms(ufunc: np.ufunc, dtype: type) -> None:
    inputs = _inputs(ufunc, dtype)
    with np.errstate(all="ignore"):
        conform(lambda *xs: ufunc(*xs), *inputs)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
@pytest.mark.parametrize("name", ["matmul", "vecdot", "matvec", "vecmat"])
def test_matrix_ufuncs(name: str, dtype: type) -> None:
    if not hasattr(np, name):
        pytest.skip(f"np.{name} needs a newer NumPy")
    ufunc = getattr(np, name)
    a = make((2, 3, 3), dtype, 1)
    b = make((3, 3) if name == "matmul" else (2, 3, 3) if name == "vecdot" else (3,), dtype, 2)
    if name == "vecmat":
        a, b = make((3,), dtype, 1), make((2, 3, 3), dtype, 2)
    conform(ufunc, a, b)


@pytest.mark.parametrize("op", ["+", "-", "*"])
def test_uint8_wraparound_stays_uint8(op: str) -> None:
    a = make((4, 5), np.uint8, 1, low=0, high=255)
    b = make((4, 5), np.uint8, 2, low=0, high=255)
    gm = conform(lambda x, y: eval(f"x {op} y"), a, b)
    assert "to(" not in gm.code  # no float detour


@pytest.mark.parametrize(
    ("expr", "dtype"),
    [
        ("x / y", np.int64),  # int / int -> float64
        ("x / 2", np.int32),
        ("x * 0.5", np.uint8),  # Python float with ints -> float64
        ("x + 1", np.float32),  # stays float32
        ("x * np.float32(2)", np.float32),
        ("x + np.float64(2)", np.float32),  # NumPy scalar float64 promotes
        ("x // y", np.int64),
        ("x % y", np.int64),
        ("x ** 2", np.int64),
        ("-x", np.int8),
        ("abs(x)", np.int16),
        ("x & y", np.uint8),
        ("x | y", np.int64),
        ("x ^ y", np.int32),
        ("~x", np.uint8),
        ("x << 2", np.int64),
        ("x >> 1", np.uint8),
        ("x & y", np.bool_),
        ("~x", np.bool_),
        ("x > y", np.float32),
        ("x == 3", np.int64),
        ("1.0 - x", np.float32),
        ("2 ** x", np.int64),
        ("divmod(x, y)[0] + divmod(x, y)[1]", np.int64),
        ("x @ y.T", np.float64),
    ],
)
def test_operators(expr: str, dtype: type) -> None:
    a = make((3, 4), dtype, 3, low=1, high=5)
    b = make((3, 4), dtype, 4, low=1, high=5)
    conform(lambda x, y: eval(expr), a, b)


def test_bitwise_stays_bitwise_on_integers() -> None:
    a = np.array([[6, 12, 255]], dtype=np.uint8)
    b = np.array([[3, 10, 15]], dtype=np.uint8)
    gm = conform(lambda x, y: ((x & y), (x | y), (x ^ y), ~x), a, b)
    assert "logical" not in gm.code


@pytest.mark.parametrize("dtype", [np.int64, np.float32, np.float64, np.bool_])
@pytest.mark.parametrize(
    "name", ["add", "multiply", "maximum", "minimum", "logical_and", "logical_or"]
)
@pytest.mark.parametrize("method", ["reduce", "accumulate"])
def test_ufunc_reduce_accumulate(name: str, method: str, dtype: type) -> None:
    ufunc = getattr(np, name)
    a = make((3, 4), dtype, 5, low=1, high=3)
    conform(lambda x: getattr(ufunc, method)(x, axis=1), a)
    conform(lambda x: getattr(ufunc, method)(x, axis=0), a)
    if method == "reduce":
        conform(lambda x: ufunc.reduce(x, axis=None, keepdims=True), a)


def test_inplace_operators_recorded_functionally() -> None:
    def fn(x, y):
        x += y
        x *= 2
        x -= 1.5
        x /= 3
        return x

    conform(fn, make((3, 4), np.float32, 1), make((3, 4), np.float32, 2))


def test_inplace_bitwise_on_uint8() -> None:
    def fn(x):
        x &= 0x0F
        x |= 0x10
        x <<= 1
        return x

    conform(fn, make((3, 4), np.uint8, 1, low=0, high=255))


def test_list_operands_become_constants() -> None:
    conform(
        lambda x: np.add(x, [1.0, 2.0, 3.0, 4.0]) * np.multiply([2, 2, 2, 2], x),
        make((3, 4), np.float64, 1),
    )


def test_untraced_ufunc_with_fresh_where_and_out_buffers(tmp_path) -> None:
    """``np.divide(a, b, out=np.ones(n), where=b != 0)`` on session-made arrays (fresh
    buffers, nothing traced) is NumPy's own call: no recursion, NumPy's values."""
    import patchport
    from patchport import annotate

    num, div = np.array([1.0, 2.0, 6.0]), np.array([0, 4, 3])
    with patchport.session("fresh_where", tmp_path):
        annotate.input_tensors("n", {"x": np.zeros(2)})
        a, b = np.array([1.0, 2.0, 6.0]), np.array([0, 4, 3])  # fresh buffers
        got = np.divide(a, b, out=np.ones(3), where=b != 0)
        masked = np.add(a, 1.0, where=b > 3, out=np.zeros(3))
    np.testing.assert_array_equal(got, np.divide(num, div, out=np.ones(3), where=div != 0))
    np.testing.assert_array_equal(masked, [0.0, 3.0, 0.0])


@pytest.mark.parametrize(
    "fn",
    [
        # the safe-division idiom: masked-out places keep the out= buffer's content
        lambda n, d: np.divide(n - d, n + d, out=np.zeros_like(n), where=(n + d) != 0),
        lambda n, d: np.divide(n, d, out=np.full_like(n, -1.0), where=d > 0.5),
        lambda n, d: np.log(n, out=np.zeros_like(n), where=n > 0.3),
        # a traced out= buffer, and a where= broadcast over it
        lambda n, d: np.multiply(n, 2.0, out=d.copy(), where=np.array([True, False, True, True])),
    ],
    ids=["ndvi", "full", "unary", "traced-out-broadcast-where"],
)
def test_ufunc_where_with_a_traced_or_fresh_out_is_recorded(fn) -> None:
    """``np.divide(a, b, out=buf, where=mask)`` is ``where(mask, a / b, buf)``: recorded, not
    a lost trace (remote-sensing indices, safe divisions)."""
    n = make((3, 4), np.float64, 1, low=-1.0, high=1.0)
    d = make((3, 4), np.float64, 2, low=-1.0, high=1.0)
    d[0, 0] = -n[0, 0]  # a zero denominator at the traced sample
    with np.errstate(all="ignore"):
        conform(fn, n, d)


def test_safe_division_into_a_fresh_buffer_exports_and_replays(tmp_path) -> None:
    """The remote-sensing index: np.divide(..., out=np.zeros(shape), where=den != 0) under
    np.errstate, the buffer made by the user's code, exported to ONNX and replayed."""
    import patchport
    from patchport import annotate

    rng = np.random.default_rng(4)
    bands = [rng.integers(0, 50, (2, 6, 5)).astype(np.uint16) for _ in range(3)]
    for b in bands:
        b[:, 0, :2] = 0  # zero denominators

    def ndvi(red, nir):
        r, n = red.astype(np.float32), nir.astype(np.float32)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.divide(n - r, n + r, out=np.zeros(r.shape, np.float32), where=(n + r) != 0)

    with patchport.session("ndvi", str(tmp_path), strict=True):
        red, nir = annotate.input_tensors("n", {"red": bands[0][0], "nir": bands[0][1]})
        annotate.output_tensors("n", {"ndvi": ndvi(red, nir)}, export_with="onnx")
    manager = patchport.InferenceManager(patchport.compile_graph(visualize=False).yaml_path)
    for b in bands[1:]:
        got = manager.run_policy({"n/red": b[0], "n/nir": b[1]})["n/ndvi"].numpy()
        np.testing.assert_allclose(got, ndvi(b[0], b[1]), rtol=1e-6, atol=1e-7)


def test_default_where_and_subok_options_are_recorded() -> None:
    """NumPy's own mean / std call ``add.reduce(arr, axis, dtype, out, keepdims,
    where=True)`` and ``true_divide(..., out=ret, casting="unsafe", subok=False)``:
    options that change nothing about the values must not lose the trace."""

    def fn(x):
        total = np.add.reduce(x, 0, None, None, False, where=True)
        ret = np.true_divide(total, 3, casting="unsafe", subok=False)
        return ret, np.add.reduce(x, axis=1, where=np.True_)

    conform(fn, make((3, 4), np.float64, 1))


def test_a_dtype_class_as_dtype_is_the_dtype_it_stands_for() -> None:
    """NumPy's own quantile passes ``dtype=type(arr.dtype)`` (a DType class), which
    ``np.dtype()`` reads as object; the recorded call must use the dtype itself."""
    a, b = make(SHAPE, np.float32, 1), make(SHAPE, np.float32, 2)
    float32_class = type(np.dtype(np.float32))
    conform(lambda x, y: np.subtract(x, y, dtype=float32_class, casting="unsafe"), a, b)
    conform(lambda x, y: np.add(x, y, dtype=type(np.dtype(np.float64))), a, b)
