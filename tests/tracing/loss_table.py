"""Every way real code turns a traced value into a plain Python / NumPy value, classified.

Each case is ordinary code on a traced ``x`` (float64, shape (3, 4), values in [0.5, 3]):
it takes a value out of the trace on the line marked ``# <- lost`` and keeps computing
with it, so that the outputs still depend on ``x`` (the output-level checks alone would
not notice). A case is traced in a session, its recorded graph is run on fresh inputs
and compared with the plain code:

- ``right``: the recorded graph reproduces the plain code on fresh inputs;
- ``loud``: wrong or refused, and a patchport warning (or error) is raised at the line
  marked ``# <- lost`` and names ``cause``;
- ``loud at use``: as loud, but at the line marked ``# <- used`` (the copy itself gives
  no hook; its first use in a traced operation is reported);
- ``loud elsewhere``: wrong, warned, but not at a marked line or not for the cause;
- ``silent``: wrong, no patchport warning at all;
- ``changed``: the code computes something else (or fails) inside a session;
- ``crash``: the trace failed with an error that is not a clear refusal.

``tests/tracing/test_loss_table.py`` asserts every case is ``right`` or ``loud`` (or the
class its entry states, with the reason); ``bench/trace_loss_table.py`` prints the table.
"""

from __future__ import annotations

import copy
import ctypes
import inspect
import io
import math
import pickle
import statistics
import struct
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import cv2
import numpy as np
import torch

import patchport
from patchport import annotate
from patchport.sessions.lifecycle import current_session

HERE = __file__
_PLAIN_TABLE = np.linspace(0.0, 1.0, 12).reshape(3, 4)  # made before any session


@dataclass(frozen=True)
class Case:
    """One idiom: the code, the words its warning must contain, the class it must reach."""

    name: str
    fn: Callable
    cause: str = ""
    expected: str = "right"  # the class this case must reach (see the module docstring)
    why: str = ""  # why a case that is not right or loud stays so


def _marked_lines(fn: Callable, marker: str) -> set[int]:
    lines, first = inspect.getsourcelines(fn)
    return {first + i for i, text in enumerate(lines) if marker in text}


# ------------------------------------------------------------------ Python numbers
def c_float(x):  # noqa: ANN001, ANN201
    s = float(x.sum())  # <- lost
    return {"y": x * s}


def c_int(x):  # noqa: ANN001, ANN201
    n = int(x.sum())  # <- lost
    return {"y": x * n}


def c_bool_if(x):  # noqa: ANN001, ANN201
    if x.mean() > 1.5:  # <- lost
        return {"y": x * 2}
    return {"y": x * 3}


def c_item(x):  # noqa: ANN001, ANN201
    s = x.sum().item()  # <- lost
    return {"y": x - s}


def c_tolist(x):  # noqa: ANN001, ANN201
    rows = x.tolist()  # <- lost
    return {"y": x + np.array(rows)}


def c_math(x):  # noqa: ANN001, ANN201
    scale = math.sqrt(x.sum())  # <- lost
    return {"y": x / scale}


def c_math_floor(x):  # noqa: ANN001, ANN201
    top = math.floor(x.sum())  # <- lost
    return {"y": x * top}


def c_round_builtin(x):  # noqa: ANN001, ANN201
    return {"y": x * round(x.sum(), 2)}


def c_range(x):  # noqa: ANN001, ANN201
    total = np.zeros(4)
    for i in range(x.astype(np.int64).sum() // 4):  # <- lost
        total = total + x[0] * i
    return {"y": total}


def c_slice_bound(x):  # noqa: ANN001, ANN201
    k = x.astype(np.int64).sum() // 3
    return {"y": x.ravel()[:k] * 2}  # <- lost


def c_builtin_max(x):  # noqa: ANN001, ANN201
    peak = max(x[0])  # <- lost
    return {"y": x / peak}


def c_sorted(x):  # noqa: ANN001, ANN201
    ordered = sorted(x[0])  # <- lost
    return {"y": x * ordered[0]}


def c_statistics(x):  # noqa: ANN001, ANN201
    spread = statistics.pstdev(x[0])  # <- lost
    return {"y": x * spread}


def c_as_integer_ratio(x):  # noqa: ANN001, ANN201
    top, bottom = x[0, 0].as_integer_ratio()  # <- lost
    return {"y": x * (top / bottom)}


def c_struct_pack(x):  # noqa: ANN001, ANN201
    packed = struct.pack("4d", *x[0])  # <- lost
    return {"y": x + np.array(struct.unpack("4d", packed))}


def c_percent_format(x):  # noqa: ANN001, ANN201
    text = "%.6f" % x.sum()  # noqa: UP031  # <- lost
    return {"y": x * float(text)}


def c_fstring(x):  # noqa: ANN001, ANN201
    text = f"{x.sum()}"  # <- lost
    return {"y": x * float(text)}


def c_dict_key(x):  # noqa: ANN001, ANN201
    seen = {v: i for i, v in enumerate(x.ravel().round(1))}  # <- lost
    return {"y": x * len(seen)}


def c_set(x):  # noqa: ANN001, ANN201
    distinct = len(set((x * 3).round().ravel()))  # <- lost
    return {"y": x * distinct}


# ------------------------------------------------------------------ NumPy scalar types
def c_np_float32_array(x):  # noqa: ANN001, ANN201
    cast = np.float32(x)  # <- lost
    return {"y": cast * 2}  # <- used


def c_np_float64_array(x):  # noqa: ANN001, ANN201
    cast = np.float64(x[:2])  # <- lost
    return {"y": np.sum(cast, axis=0)}  # <- used


def c_np_int32_array(x):  # noqa: ANN001, ANN201
    cast = np.int32(x * 10)  # <- lost
    return {"y": cast + 1}  # <- used


def c_np_float32_scalar(x):  # noqa: ANN001, ANN201
    s = np.float32(x.sum())  # <- lost
    return {"y": x * s}  # <- used


def c_np_float64_scalar(x):  # noqa: ANN001, ANN201
    s = np.float64(x.mean())  # <- lost
    return {"y": x - s}  # <- used


def c_np_int64_scalar(x):  # noqa: ANN001, ANN201
    n = np.int64(x.sum())  # <- lost
    return {"y": x * n}  # <- used


def c_float_of_np_scalar(x):  # noqa: ANN001, ANN201
    s = float(np.float64(x.std()))  # <- lost
    return {"y": x / s}  # <- used


def c_float_of_str(x):  # noqa: ANN001, ANN201
    s = float(str(x.mean()))  # <- lost
    return {"y": x - s}  # <- used


# ------------------------------------------------------------------ containers, copies
def c_iteration(x):  # noqa: ANN001, ANN201
    rows = [row * i for i, row in enumerate(x)]
    return {"y": np.stack(rows)}


def c_list(x):  # noqa: ANN001, ANN201
    a, b, c = list(x)
    return {"y": a * b - c}


def c_np_array_of_scalars(x):  # noqa: ANN001, ANN201
    a, b, c = x.sum(1)
    return {"y": np.array([a, b, c]) * 2}


def c_torch_tensor_of_scalars(x):  # noqa: ANN001, ANN201
    a, b, c = x.sum(1)
    return {"y": torch.tensor([a, b, c]).numpy() * 2}


def c_asarray_dtype(x):  # noqa: ANN001, ANN201
    return {"y": np.asarray(x, dtype=np.float32) * 2}


def c_astype_object(x):  # noqa: ANN001, ANN201
    boxed = x.astype(object)  # <- lost
    return {"y": boxed.astype(np.float64) + x}


def c_array_object(x):  # noqa: ANN001, ANN201
    boxed = np.array(x, dtype=object)  # <- lost
    return {"y": boxed.astype(np.float64) + x}


def c_copy(x):  # noqa: ANN001, ANN201
    return {"y": copy.copy(x) * 2, "z": copy.deepcopy(x) + 1}


def c_pickle(x):  # noqa: ANN001, ANN201
    again = pickle.loads(pickle.dumps(x))  # <- lost
    return {"y": again * 2 + x}


def c_dunder_array(x):  # noqa: ANN001, ANN201
    base = x.__array__()  # <- lost
    return {"y": base * 2 + x}


# ------------------------------------------------------------------ raw memory
def c_tobytes(x):  # noqa: ANN001, ANN201
    raw = x.tobytes()  # <- lost
    return {"y": np.frombuffer(raw).reshape(3, 4) * 2 + x}


def c_frombuffer(x):  # noqa: ANN001, ANN201
    flat = np.frombuffer(x, dtype=np.float64)
    return {"y": flat.reshape(3, 4) * 2 + x}


def c_memoryview(x):  # noqa: ANN001, ANN201
    view = memoryview(x)
    return {"y": np.asarray(view) * 2 + x}


def c_data(x):  # noqa: ANN001, ANN201
    view = x.data
    return {"y": np.asarray(view) * 2 + x}


def c_ctypes(x):  # noqa: ANN001, ANN201
    c = np.ascontiguousarray(x)
    pointer = c.ctypes.data_as(ctypes.POINTER(ctypes.c_double))  # <- lost
    values = np.ctypeslib.as_array(pointer, shape=(12,)).copy()
    return {"y": values.reshape(3, 4) * 2 + x}


def c_view_uint8(x):  # noqa: ANN001, ANN201
    raw = x.view(np.uint8)
    return {"y": raw.view(np.float64) * 2}


def c_native_cv2(x):  # noqa: ANN001, ANN201
    img = (x * 50).astype(np.float32)
    small = cv2.pyrDown(img)  # <- lost
    return {"y": small.sum() + img}


# ------------------------------------------------------------------ writes
def c_copyto_fresh(x):  # noqa: ANN001, ANN201
    buf = np.zeros((3, 4))
    np.copyto(buf, x * 2)
    return {"y": buf}


def c_copyto_plain(x):  # noqa: ANN001, ANN201
    buf = _PLAIN_TABLE.copy()
    np.copyto(buf, x * 2)  # <- lost
    return {"y": buf + x}


def c_out_fresh(x):  # noqa: ANN001, ANN201
    buf = np.empty((3, 4))
    np.multiply(x, 3, out=buf)
    return {"y": buf}


def c_out_plain(x):  # noqa: ANN001, ANN201
    buf = _PLAIN_TABLE.copy()
    np.multiply(x, 3, out=buf)  # <- lost
    return {"y": buf + x}


def c_put(x):  # noqa: ANN001, ANN201
    buf = np.zeros(12)
    np.put(buf, [0, 5, 7], x[0, :3])
    return {"y": buf}


def c_place(x):  # noqa: ANN001, ANN201
    buf = np.zeros((3, 4))
    np.place(buf, x > 1.5, x[x > 1.5])
    return {"y": buf + x}


def c_putmask(x):  # noqa: ANN001, ANN201
    buf = np.zeros((3, 4))
    np.putmask(buf, x > 1.5, x)
    return {"y": buf}


def c_fill(x):  # noqa: ANN001, ANN201
    buf = np.empty((2, 2))
    buf.fill(x.max())
    return {"y": buf}


def c_sort_inplace(x):  # noqa: ANN001, ANN201
    y = x.copy()
    y.sort(axis=1)
    return {"y": y}


def c_resize(x):  # noqa: ANN001, ANN201
    y = x.copy()
    y.resize((2, 6), refcheck=False)
    return {"y": y * 2}


def c_resize_grow(x):  # noqa: ANN001, ANN201
    y = x.copy()
    y.resize((4, 4), refcheck=False)  # <- lost
    return {"y": y * 2}


def c_setitem_plain(x):  # noqa: ANN001, ANN201
    buf = _PLAIN_TABLE.copy()
    buf[0] = x[0]  # <- lost
    return {"y": buf + x}


_TABLES = {"gain": np.linspace(0.0, 1.0, 4)}  # made before any session, inside a dict
_TABLE_PAIR = (np.linspace(0.0, 1.0, 4), np.ones(4))  # a tuple: swapped for one of views


def c_table_in_a_dict_read(x):  # noqa: ANN001, ANN201
    index = np.argmax(x, axis=1)
    return {"y": _TABLES["gain"][index] + x[:, 0]}


def c_table_in_a_tuple_read(x):  # noqa: ANN001, ANN201
    index = np.argmax(x, axis=1)
    return {"y": _TABLE_PAIR[0][index] + x[:, 0]}


def c_plain_table_read(x):  # noqa: ANN001, ANN201
    index = np.argmax(x, axis=1)
    return {"y": _PLAIN_TABLE[0][index] + x[:, 0]}  # <- lost


# ------------------------------------------------------------------ NumPy helpers
def c_vectorize(x):  # noqa: ANN001, ANN201
    root = np.vectorize(math.sqrt)(x)  # <- lost
    return {"y": root + x}


def c_fromiter(x):  # noqa: ANN001, ANN201
    values = np.fromiter((v * 2 for v in x[0]), dtype=float)  # <- lost
    return {"y": x + values}


def c_apply_along_axis(x):  # noqa: ANN001, ANN201
    peak = np.apply_along_axis(np.max, 1, x)  # <- lost
    return {"y": x - peak[:, None]}


def c_save_load(x):  # noqa: ANN001, ANN201
    stream = io.BytesIO()
    np.save(stream, x)  # <- lost
    stream.seek(0)
    return {"y": np.load(stream) * 2 + x}


# ------------------------------------------------------------------ torch side
def c_torch_item(x):  # noqa: ANN001, ANN201
    t = torch.from_numpy(x)
    s = t.sum().item()  # <- lost
    return {"y": (t * s).numpy()}


def c_torch_int(x):  # noqa: ANN001, ANN201
    t = torch.from_numpy(x)
    k = int(t.argmax())  # <- lost
    return {"y": (t * k).numpy()}


def c_torch_tolist(x):  # noqa: ANN001, ANN201
    t = torch.from_numpy(x)
    rows = t.tolist()  # <- lost
    return {"y": (t + torch.tensor(rows)).numpy()}


def c_torch_numpy_roundtrip(x):  # noqa: ANN001, ANN201
    t = torch.from_numpy(x) * 2
    return {"y": t.detach().cpu().numpy() + 1}


def c_torch_asarray(x):  # noqa: ANN001, ANN201
    t = torch.from_numpy(x) * 2
    return {"y": np.asarray(t) + 1}


def c_torch_math(x):  # noqa: ANN001, ANN201
    t = torch.from_numpy(x)
    s = math.sqrt(t.sum())  # <- lost
    return {"y": (t / s).numpy()}


# ------------------------------------------------------------------ lists handed to NumPy
def c_mean_of_list(x):  # noqa: ANN001, ANN201
    centre = np.mean([x[0], x[1]], axis=0)
    return {"y": x - centre}


def c_max_of_list(x):  # noqa: ANN001, ANN201
    return {"y": x * np.max([x[0], x[2]], axis=0)}


def c_norm_of_list(x):  # noqa: ANN001, ANN201
    return {"y": x / np.linalg.norm([x[0, 0] - x[1, 0], x[0, 1] - x[1, 1]])}


def c_median_of_list(x):  # noqa: ANN001, ANN201
    middle = np.median([x[0], x[1], x[2]], axis=0)  # NaN check: warned, branch kept
    return {"y": x - middle}


def c_ufunc_of_list(x):  # noqa: ANN001, ANN201
    squares = np.square([x[0], x[1]])
    return {"y": x[:2] + squares}


CASES = [
    Case("float()", c_float, "__float__", "loud"),
    Case("int()", c_int, "__int__", "loud"),
    Case("bool() / if", c_bool_if, "__bool__", "loud"),
    Case(".item()", c_item, "item", "loud"),
    Case(".tolist()", c_tolist, "tolist", "loud"),
    Case("math.sqrt", c_math, "__float__", "loud"),
    Case("math.floor", c_math_floor, "__float__", "loud"),
    Case("round() builtin", c_round_builtin),
    Case("range(traced)", c_range, "__index__", "loud"),
    Case("slice bound", c_slice_bound),
    Case("max() builtin", c_builtin_max, "__bool__", "loud"),
    Case("sorted()", c_sorted, "__bool__", "loud"),
    Case("statistics.pstdev", c_statistics, "as_integer_ratio", "loud"),
    Case("x[i].as_integer_ratio()", c_as_integer_ratio, "as_integer_ratio", "loud"),
    Case("struct.pack", c_struct_pack, "__float__", "loud"),
    Case("'%f' % x", c_percent_format, "__float__", "loud"),
    Case("f-string, parsed back", c_fstring, "", "loud"),
    Case("dict keys", c_dict_key, "hash", "loud"),
    Case("set()", c_set, "hash", "loud"),
    Case("np.float32(array)", c_np_float32_array),  # recorded as the cast it is
    Case("np.float64(array)", c_np_float64_array),  # the same dtype: the array itself
    Case("np.int32(array)", c_np_int32_array),
    Case("np.float32(0-d)", c_np_float32_scalar, "", "loud"),
    Case("np.float64(0-d)", c_np_float64_scalar, "", "loud"),
    Case("np.int64(0-d)", c_np_int64_scalar, "", "loud"),
    Case("float(np.float64(0-d))", c_float_of_np_scalar, "", "loud"),
    Case("float(str(0-d))", c_float_of_str, "", "loud"),
    Case("for v in x", c_iteration),
    Case("list(x)", c_list),
    Case("np.array([a, b, c])", c_np_array_of_scalars),
    Case("torch.tensor([a, b, c])", c_torch_tensor_of_scalars),
    Case("np.asarray(x, dtype=)", c_asarray_dtype),
    Case("x.astype(object)", c_astype_object, "object", "loud"),
    Case("np.array(x, dtype=object)", c_array_object, "object", "loud"),
    Case("copy.copy / deepcopy", c_copy),
    Case("pickle round trip", c_pickle, "pickle", "loud"),
    Case("x.__array__()", c_dunder_array, "__array__", "loud"),
    Case("x.tobytes()", c_tobytes, "tobytes", "loud"),
    Case("np.frombuffer(x)", c_frombuffer),
    Case("memoryview(x)", c_memoryview),
    Case("x.data", c_data),
    Case("x.ctypes", c_ctypes, "ctypes", "loud"),
    Case("x.view(np.uint8)", c_view_uint8),
    Case("cv2 without a patch", c_native_cv2, "cv2.pyrDown", "loud"),
    Case("np.copyto(fresh)", c_copyto_fresh),
    Case("np.copyto(plain)", c_copyto_plain),  # a module array is watched in a session
    Case("out=fresh", c_out_fresh),
    Case("out=plain", c_out_plain),
    Case("np.put", c_put),
    Case("np.place", c_place),
    Case("np.putmask", c_putmask),
    Case("x.fill()", c_fill),
    Case("x.sort()", c_sort_inplace),
    Case("x.resize()", c_resize),
    Case("x.resize() to a new size", c_resize_grow, "np.resize", "loud"),
    Case("plain[i] = traced", c_setitem_plain),  # module arrays are session buffers
    Case("plain_table[traced]", c_plain_table_read),
    Case("dict_of_tables[k][traced]", c_table_in_a_dict_read),  # one level into dicts
    Case("tuple_of_tables[i][traced]", c_table_in_a_tuple_read),
    Case("np.vectorize", c_vectorize, "Python number", "loud"),  # each item to math.sqrt
    Case("np.fromiter", c_fromiter, "__float__", "loud"),
    Case("np.apply_along_axis", c_apply_along_axis, "apply_along_axis", "loud"),
    Case("np.save / np.load", c_save_load, "", "loud"),
    Case("Tensor.item()", c_torch_item, "item", "loud"),
    Case("int(Tensor)", c_torch_int, "__int__", "loud"),
    Case("Tensor.tolist()", c_torch_tolist, "tolist", "loud"),
    Case("Tensor.numpy()", c_torch_numpy_roundtrip),
    Case("np.asarray(Tensor)", c_torch_asarray),
    Case("math.sqrt(Tensor)", c_torch_math, "__float__", "loud"),
    Case("np.mean([a, b], axis=0)", c_mean_of_list),
    Case("np.max([a, b], axis=0)", c_max_of_list),
    Case("np.linalg.norm([dx, dy])", c_norm_of_list),
    Case("np.median([a, b, c])", c_median_of_list),
    Case(
        "np.square([a, b])",
        c_ufunc_of_list,
        expected="silent",
        why="a ufunc reads a list's items in C and dispatches only on the list: no hook",
    ),
]


# ------------------------------------------------------------------ the classifier
def _inputs(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(0.5, 3.0, size=(3, 4))


def _same(got: object, want: object) -> bool:
    got, want = np.asarray(got), np.asarray(want)
    return got.shape == want.shape and bool(np.allclose(got, want, rtol=1e-6, atol=1e-9))


def _plain(value: object) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        return value.detach().as_subclass(torch.Tensor).numpy()
    if isinstance(value, np.ndarray):
        return np.asarray(np.ndarray.view(value, np.ndarray))
    return np.asarray(value)


def classify(case: Case) -> tuple[str, str]:
    """Trace ``case`` in a session, replay its recorded graph on fresh inputs: (class, detail)."""
    lost = _marked_lines(case.fn, "# <- lost")
    used = _marked_lines(case.fn, "# <- used")
    sample = _inputs(0)
    want_here = case.fn(sample.copy())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with patchport.session("loss_table", save_path=tempfile.mkdtemp()):
                x = annotate.input_tensors("n", {"x": sample})
                try:
                    out = case.fn(x)
                except patchport.PatchportError as exc:
                    line = exc.__traceback__
                    while line is not None and line.tb_frame.f_code is not case.fn.__code__:
                        line = line.tb_next
                    at = line.tb_lineno if line is not None else None
                    if at in lost and case.cause in str(exc):
                        return "loud", f"refused: {str(exc)[:120]}"
                    return "crash", f"{type(exc).__name__}: {str(exc)[:120]}"
                if not all(_same(_plain(out[k]), want_here[k]) for k in want_here):
                    return "changed", "the traced run computed other values"
                annotate.output_tensors("n", out, export_with="onnx")
                gm = current_session().nodes["n"].graph_module
        except Exception as exc:  # noqa: BLE001 - the table reports it
            return "changed", f"{type(exc).__name__}: {str(exc)[:120]}"
    ours = [w for w in caught if issubclass(w.category, patchport.PatchportWarning)]
    here = [w for w in ours if w.filename == HERE and case.cause in str(w.message)]
    wrong = []
    for seed in (1, 2):
        fresh = _inputs(seed)
        want = case.fn(fresh.copy())
        got = gm(torch.from_numpy(fresh.copy()))
        got = got if isinstance(got, (tuple, list)) else (got,)
        wrong += [k for k, g in zip(want, got) if not _same(_plain(g), want[k])]
    if not wrong:
        return "right", ""
    if any(w.lineno in lost for w in here):
        return "loud", ""
    if any(w.lineno in used for w in here):
        return "loud at use", ""
    if ours:
        first = ours[0]
        where = f"{first.filename.rsplit('/', 1)[-1]}:{first.lineno}"
        return "loud elsewhere", f"{where}: {str(first.message)[:110]}"
    return "silent", f"wrong outputs {sorted(set(wrong))}"
