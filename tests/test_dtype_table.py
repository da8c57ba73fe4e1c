"""The one dtype table agrees with NumPy, torch, onnx and ONNX Runtime themselves, and stays
importable without torch (the bundle runtime reads NumPy <-> ONNX types from it)."""

import subprocess
import sys

import numpy as np
import onnx
import onnxruntime
import pytest
import torch
from onnx import TensorProto, helper

from patchport import dtype_table
from patchport.dtype_table import ELEMENT_TYPES
from patchport.export.onnx import proto
from patchport.tracing.dtypes import NP_TO_TORCH, TORCH_TO_NP


@pytest.mark.parametrize("element", ELEMENT_TYPES, ids=lambda e: e.onnx)
def test_each_row_names_one_type_in_every_library(element):
    assert TensorProto.DataType.Value(element.onnx.upper()) == element.code
    if element.numpy:
        assert helper.tensor_dtype_to_np_dtype(element.code) == np.dtype(element.numpy)
        assert dtype_table.onnx_code(np.dtype(element.numpy)) == element.code
    if element.numpy and element.torch:
        tensor = torch.from_numpy(np.zeros(2, dtype=element.numpy))
        assert tensor.dtype == getattr(torch, element.torch)
        assert NP_TO_TORCH[np.dtype(element.numpy)] is tensor.dtype
        assert TORCH_TO_NP[tensor.dtype] == np.dtype(element.numpy)


_ORT_TYPES = ["float32", "float64", "float16", "uint8", "int8", "int16", "int32", "int64", "bool"]


@pytest.mark.parametrize("name", _ORT_TYPES)
def test_the_written_type_is_the_one_onnx_runtime_reports(name):
    """An initializer written by the proto writer loads in ONNX Runtime as that dtype, and
    the type string it reports maps back to the same NumPy dtype."""
    array = np.arange(6).reshape(2, 3).astype(name)
    code = dtype_table.onnx_code(array.dtype)
    data = proto.model(
        [proto.Node("Identity", ["c"], ["y"])],
        [proto.tensor("c", array)],
        [],
        [proto.value_info("y", code, array.shape)],
        opset=18,
    )
    onnx.checker.check_model(onnx.load_from_string(data))
    session = onnxruntime.InferenceSession(data, providers=["CPUExecutionProvider"])
    (output,) = session.get_outputs()
    assert dtype_table.numpy_dtype_of_onnx(output.type) == array.dtype
    (got,) = session.run(None, {})
    assert got.dtype == array.dtype and np.array_equal(got, array)


def test_the_torch_side_leaves_complex_out_and_numpy_names_speak_numpy():
    """torch.onnx writes complex tensors as real pairs: no ONNX complex type stands for a
    torch one, so neither the translator nor the output-dtype restorer maps them."""
    torch_side = dtype_table.torch_to_onnx()
    assert torch.complex64 not in torch_side and torch.bfloat16 in torch_side
    assert torch_side[torch.float64].onnx == "double"
    assert dtype_table.numpy_name("double") == "float64"
    assert dtype_table.numpy_name("bfloat16") == "bfloat16"  # NumPy has none
    assert dtype_table.numpy_dtype_of_onnx("tensor(bfloat16)") is None
    assert dtype_table.numpy_dtype_of_onnx("tensor(unknown)") is None


def test_the_table_imports_without_torch():
    """Loaded from its file with torch imports blocked: nothing at load time needs torch."""
    code = (
        "import importlib.util, sys\n"
        "class Block:\n"
        "    def find_spec(self, name, *a):\n"
        "        if name == 'torch' or name.startswith('torch.'):\n"
        "            raise ImportError('torch blocked')\n"
        "sys.meta_path.insert(0, Block())\n"
        f"spec = importlib.util.spec_from_file_location('dtype_table', {dtype_table.__file__!r})\n"
        "module = sys.modules['dtype_table'] = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(module)\n"
        "import numpy as np\n"
        "print(module.onnx_code(np.dtype('uint16')), module.numpy_name('float'))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["4", "float32"]
