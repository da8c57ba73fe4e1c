"""A session freezes what was alive at its start for the cyclic garbage collector (so a
collection during tracing scans only what the session made) and gives back exactly the
collector state it found: enabled or not, thresholds, the user's own frozen objects."""

import gc

import numpy as np
import pytest

import patchport
from patchport import annotate


def _state():
    return gc.isenabled(), gc.get_threshold(), gc.get_freeze_count()


@pytest.fixture(autouse=True)
def collector_as_found():
    """Each test leaves the collector as it found it, whatever the test changed."""
    gc.unfreeze()  # what earlier tests of the run left frozen is not this file's state
    found = _state()
    yield
    gc.unfreeze()
    gc.set_threshold(*found[1])
    (gc.enable if found[0] else gc.disable)()


def _trace(tmp_path, name="gc"):
    with patchport.session(name, save_path=tmp_path):
        x = annotate.input_tensors("n", {"x": np.arange(4.0)})
        annotate.output_tensors("n", {"y": x * 2})


def test_a_session_freezes_the_objects_alive_at_its_start_and_unfreezes_them(tmp_path):
    before = _state()
    with patchport.session("gc", save_path=tmp_path):
        assert gc.isenabled()  # collection keeps running: only the old objects are skipped
        assert gc.get_freeze_count() > 1000
        assert gc.get_threshold() == before[1]
        x = annotate.input_tensors("n", {"x": np.arange(4.0)})
        annotate.output_tensors("n", {"y": x * 2})
    assert _state() == before


def test_the_collector_state_is_restored_after_an_exception_inside_the_session(tmp_path):
    gc.set_threshold(123, 7, 9)
    before = _state()
    with pytest.raises(ZeroDivisionError):
        with patchport.session("gc", save_path=tmp_path):
            annotate.input_tensors("n", {"x": np.arange(4.0)})
            1 / 0  # noqa: B018 - the failure inside the traced pass
    assert _state() == before == (True, (123, 7, 9), 0)


def test_start_and_stop_restore_it_when_the_pass_fails_between_them(tmp_path):
    before = _state()
    patchport.start("gc", save_path=tmp_path)
    try:
        x = annotate.input_tensors("n", {"x": np.arange(4.0)})
        with pytest.raises(patchport.PatchStateError):
            annotate.output_tensors("other", {"y": x})
        assert gc.get_freeze_count() > 0
    finally:
        patchport.stop()
    assert _state() == before


def test_a_refused_start_leaves_the_collector_untouched(tmp_path):
    before = _state()
    with pytest.raises(patchport.PatchDefinitionError):
        patchport.start("gc", save_path=tmp_path, max_cached_io=0)
    assert _state() == before


def test_a_disabled_collector_stays_disabled_and_is_not_frozen(tmp_path):
    gc.disable()
    with patchport.session("gc", save_path=tmp_path):
        assert not gc.isenabled() and gc.get_freeze_count() == 0
        x = annotate.input_tensors("n", {"x": np.arange(4.0)})
        annotate.output_tensors("n", {"y": x * 2})
    assert _state() == (False, gc.get_threshold(), 0)


def test_objects_the_user_froze_stay_frozen_and_the_session_adds_none(tmp_path):
    mine = [[]]  # a container the collector tracks, frozen with everything else
    gc.freeze()
    frozen = gc.get_freeze_count()  # shrinks as frozen objects are freed, never grows
    with patchport.session("gc", save_path=tmp_path):
        assert gc.get_freeze_count() <= frozen  # unfreeze at stop would thaw the user's too
    assert gc.isenabled() and 0 < gc.get_freeze_count() <= frozen
    assert not any(any(o is mine for o in gc.get_objects(g)) for g in range(3))  # still frozen


def test_cyclic_garbage_made_during_the_session_is_still_collected(tmp_path):
    class Cycle:
        pass

    with patchport.session("gc", save_path=tmp_path):
        node = Cycle()
        node.me = node
        del node
        assert gc.collect() >= 1
    _trace(tmp_path, "again")  # and a later session freezes afresh
    assert gc.get_freeze_count() == 0
