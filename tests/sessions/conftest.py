import numpy as np
import pytest

import patchport
from patchport.sessions.lifecycle import current_session


@pytest.fixture(autouse=True)
def no_session_leaks():
    """Every test starts and ends without an active session."""
    assert current_session() is None
    yield
    if current_session() is not None:
        patchport.stop()
        pytest.fail("the test left a tracing session active")


@pytest.fixture
def frame():
    return np.random.default_rng(0).integers(0, 256, size=(6, 8, 3), dtype=np.uint8)
