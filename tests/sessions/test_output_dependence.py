"""An output that does not depend on its node's inputs is named, never exported silently."""

import sys

import numpy as np
import pytest

import patchport
from patchport import annotate


@pytest.mark.parametrize(
    "make_output", [lambda x, x0: x0 * 2, lambda x, x0: np.zeros(4)], ids=["original", "zeros"]
)
def test_output_without_inputs_warns_at_the_user_line_and_is_listed(make_output, tmp_path):
    x0 = np.arange(4, dtype=np.float32)
    with patchport.session("independent", save_path=tmp_path):
        x = annotate.input_tensors("n", {"x": x0})
        with pytest.warns(patchport.TraceLossWarning, match="output 'y' of node 'n'") as record:
            annotate.output_tensors("n", {"y": make_output(x, x0), "z": x + 1})
    assert [w.filename for w in record] == [__file__]
    assert "'z'" not in str(record[0].message)
    result = patchport.compile_graph(visualize=False)
    assert result.validation[0].constant_outputs == ["y"]
    assert "output y does not depend on the node's inputs" in result.summary()


def test_output_without_inputs_raises_when_strict():
    x0 = np.arange(4, dtype=np.float32)
    with patchport.session("independent", strict=True):
        x = annotate.input_tensors("n", {"x": x0})
        with pytest.raises(patchport.TraceLossError, match="output 'y' of node 'n'"):
            annotate.output_tensors("n", {"y": x0 * 2})
        annotate.output_tensors("n", {"y": x * 2})


def test_outputs_that_depend_on_inputs_are_quiet(recwarn):
    with patchport.session("dependent"):
        x = annotate.input_tensors("n", {"x": np.arange(4.0)})
        annotate.output_tensors("n", {"y": np.zeros_like(x) + x.sum(), "z": x[:2].copy()})
    assert not [w for w in recwarn if issubclass(w.category, patchport.PatchportWarning)]


def test_declared_input_reaching_no_output_warns_at_output_tensors(tmp_path):
    with patchport.session("unused", save_path=tmp_path):
        x, gain = annotate.input_tensors("n", {"x": np.arange(4.0), "gain": np.ones(1)})
        with pytest.warns(patchport.TraceLossWarning, match="input 'n/gain' reaches no output"):
            annotate.output_tensors("n", {"y": x * 2})
        x, gain = annotate.input_tensors("n", {"x": np.arange(4.0), "gain": np.ones(1)})
        annotate.output_tensors("n", {"y": x * 2})


def test_inputs_that_reach_outputs_are_quiet(recwarn, tmp_path):
    with patchport.session("used", save_path=tmp_path):
        x, gain = annotate.input_tensors("n", {"x": np.arange(4.0), "gain": np.ones(1)})
        annotate.output_tensors("n", {"y": x * 2, "g": gain + 0})
    assert not [w for w in recwarn if issubclass(w.category, patchport.TraceLossWarning)]


def test_output_overwritten_with_constant_data_counts_as_constant(tmp_path):
    with patchport.session("overwritten", save_path=tmp_path):
        x = annotate.input_tensors("n", {"x": np.arange(4.0)})
        preds = x * 2
        preds[:] = np.ones(4)  # every element replaced by plain data
        with pytest.warns(patchport.TraceLossWarning, match="output 'y' of node 'n'"):
            annotate.output_tensors("n", {"y": preds, "z": x + 1})


def test_constant_output_names_the_line_that_made_it(tmp_path):
    with patchport.session("where", save_path=tmp_path):
        x = annotate.input_tensors("n", {"x": np.arange(4.0)})
        lost = np.i0(x)  # not mapped: a plain result, frozen
        line = sys._getframe().f_lineno - 1
        with pytest.warns(patchport.TraceLossWarning, match="output 'y'") as record:
            annotate.output_tensors("n", {"y": lost, "z": x + 1})
    message = [str(w.message) for w in record if "output 'y'" in str(w.message)][0]
    assert f"{__file__}:{line}" in message, message
