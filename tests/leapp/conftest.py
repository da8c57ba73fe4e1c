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
