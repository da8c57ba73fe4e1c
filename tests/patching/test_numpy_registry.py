"""Inside a session, NumPy's creation and conversion functions keep their NEP 18/35
identity: NumPy's registry of overridable functions lists the session's stand-ins, and
``like=`` hands ``__array_function__`` the function ``np.<name>`` is (NumPy's own tests
check both; they failed inside a session)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing.overrides import allows_array_function_override as overridable
from numpy.testing.overrides import get_overridable_numpy_array_functions as registered

import patchport

NAMES = ["ones", "zeros", "empty", "full", "eye", "identity", "tri", "array", "asarray", "arange"]


class Duck:
    """An array-like implementing only ``__array_function__`` (NEP 35's ``like=``)."""

    def __array_function__(self, func, types, args, kwargs):  # noqa: ANN001, ANN204
        assert "like" not in kwargs
        if func.__name__ == "eye":
            return NotImplemented
        return ("duck", func, args, kwargs)


def test_stand_ins_are_registered_for_the_session_only(tmp_path) -> None:
    with patchport.session("registry", tmp_path):
        stand_ins = [getattr(np, name) for name in NAMES]
        assert all(hasattr(f, "__pp_source__") for f in stand_ins)  # the session's own
        assert all(overridable(f) for f in stand_ins)
    assert not [f for f in registered() if hasattr(f, "__pp_source__")]
    assert all(overridable(getattr(np, name)) for name in NAMES)  # NumPy's again


@pytest.mark.parametrize("name, args", [("ones", (3,)), ("full", ((2,), 7)), ("zeros", (4,))])
def test_like_dispatches_with_the_function_np_holds(tmp_path, name, args) -> None:
    with patchport.session("like", tmp_path):
        tag, func, got_args, kwargs = getattr(np, name)(*args, like=Duck())
        assert tag == "duck" and func is getattr(np, name) and got_args == args
        plain = np.ones(2, like=np.ones(1))  # an ndarray like=: NumPy's own path
        assert isinstance(plain, np.ndarray) and plain.tolist() == [1.0, 1.0]
        with pytest.raises(TypeError, match="no implementation found for 'numpy.eye'"):
            np.eye(2, like=Duck())
