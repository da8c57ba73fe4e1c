"""Ctrl-C at any line of apply or restore leaves nothing patched (issue 13).

Each sweep raises KeyboardInterrupt at every line event inside patchport, one per run,
while a ``with`` block is entered and left, then checks every target, the claimed-target
table, torch's stack anchors and the session state.
"""

from __future__ import annotations

import sys
import threading
import warnings

import numpy as np
import pytest
import torch

import patchport
from patchport.errors import PatchStateError
from patchport.patching import PatchDetails, PatchInfo, patch_info
from patchport.sessions.lifecycle import current_session
from patchport.torch import apply_patches_for_model
from patchport.torch.apply import collect_patches

from . import targets
from .interrupts import Snapshot, count_points, run_interrupted, sweep

TABLE = np.arange(4.0)  # a user module's array: each session watches it, then gives it back


def triple(x, factor=3):
    return x * factor


def plus_ten(x):
    return x + 10


def greet_loudly(self):
    return "LOUD"


def make_details() -> PatchDetails:
    return PatchDetails(
        [
            PatchInfo.make(triple, targets, "scale"),
            PatchInfo.make(plus_ten, targets, "offset"),
            PatchInfo.make(greet_loudly, targets.Child, "greet"),  # inherited: delattr on undo
        ]
    )


def target_slots(details: PatchDetails) -> list[tuple[object, str]]:
    return [(patch.owner, patch.attribute) for patch in details]


@pytest.mark.parametrize("error", [KeyboardInterrupt, RuntimeError])
def test_patch_details_apply_and_restore_survive_an_interrupt_at_any_line(error):
    """Ctrl-C, or an exception (a setattr that fails once), at any line: a restore that
    failed part-way keeps the patches it could not undo and the next restore retries them."""
    snapshot = Snapshot.take(target_slots(make_details()))
    made: list[PatchDetails] = []

    def scenario():
        # restore() is what a caller runs again after an interrupt cut it short
        details = make_details()
        made.append(details)
        try:
            details.apply()
            assert targets.scale(1) == 3
        finally:
            try:
                details.restore()
            except BaseException:
                details.restore()
                raise

    result = sweep(scenario, snapshot, error=error)
    assert result.tried > 30
    assert not result.leaked, str(result)
    assert not any(details.is_applied for details in made)


def test_torch_patches_enter_and_exit_survive_an_interrupt_at_any_line():
    snapshot = Snapshot.take(target_slots(collect_patches(patch_torch=True)))

    def scenario():
        with apply_patches_for_model(patch_torch=True):
            pass

    result = sweep(scenario, snapshot)
    print(f"apply_patches_for_model(patch_torch=True): {result}")
    assert result.tried > 100
    assert not result.leaked, str(result)


@pytest.mark.slow
def test_transformers_patches_with_model_survive_an_interrupt_at_any_line():
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        vocab_size=32,
        max_position_embeddings=16,
    )
    model = transformers.AutoModelForCausalLM.from_config(config).eval()
    slots = target_slots(collect_patches(patch_transformers=True, model=model))
    snapshot = Snapshot.take(slots)

    def scenario():
        with apply_patches_for_model(patch_transformers=True, model=model):
            pass

    result = sweep(scenario, snapshot, limit=600)  # ~5000 points: sampled, see sweep()
    print(f"apply_patches_for_model(patch_transformers=True, model=...): {result}")
    assert result.tried > 100
    assert not result.leaked, str(result)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("watch", "limit"),
    [(False, 600), (None, 160)],
    ids=["interop-patches-sampled", "watching-cv2-sampled"],
)
def test_session_start_and_stop_survive_an_interrupt_at_any_line(tmp_path, watch, limit):
    # start() scans every module in sys.modules for from-imported aliases (thousands of
    # lines of the same loop) and watching cv2 runs ~70k lines (the same do/undo lines per
    # function): both are sampled (first and last points, an even stride between)
    with patchport.session("probe", tmp_path, watch=watch) as clean:
        slots = target_slots(clean.patches)

    def left_over() -> list[str]:
        problems = ["a session is still active"] if current_session() else []
        if type(globals()["TABLE"]) is not np.ndarray:
            problems.append("a user module's array is still the session's view")
        return problems

    snapshot = Snapshot.take(slots, extra=left_over)

    def reset():
        if current_session() is not None:
            patchport.stop()

    def scenario():
        with patchport.session("probe", tmp_path, watch=watch):
            pass

    result = sweep(scenario, snapshot, reset, limit=limit)
    print(f"patchport.session(watch={watch}): {result}")
    assert result.tried > 100
    assert not result.leaked, str(result)


@pytest.mark.slow
@pytest.mark.parametrize("error", [KeyboardInterrupt, RuntimeError])
def test_plain_start_and_stop_leave_no_session_half_active(tmp_path, error):
    """LEAPP's form, ``start()`` then ``try: ... finally: stop()``: an interrupt or error
    inside ``stop()`` (its last lines included) still ends the session, and one inside a
    second ``start()`` replacing an unstopped session leaves at most that one active."""
    patching = [patchport.FunctionPatch(targets, "scale", triple)]
    with patchport.session("probe", tmp_path, watch=False, patching=patching) as clean:
        slots = target_slots(clean.patches)
    snapshot = Snapshot.take(
        slots, extra=lambda: ["a session is still active"] if current_session() else []
    )

    def scenario():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", patchport.PatchportWarning)
            patchport.start("first", tmp_path, watch=False, patching=patching)
            try:
                patchport.start("second", tmp_path, watch=False, patching=patching)
            finally:
                if current_session() is not None:
                    patchport.stop()

    result = sweep(scenario, snapshot, limit=160, error=error)
    assert result.tried > 100
    assert not result.leaked, str(result)


def test_a_restore_cut_short_is_finished_by_the_next_one_and_keeps_foreign_values():
    original = targets.scale
    foreign = lambda x: x  # noqa: E731 - someone else's assignment while patched
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", patchport.PatchRestoreWarning)
            points = count_points(_applied_with_foreign(foreign).restore)
        for point in range(1, points + 1):
            details = _applied_with_foreign(foreign)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", patchport.PatchRestoreWarning)
                assert run_interrupted(details.restore, point) is not None
                details.restore()  # the caller's second try finishes the job
            assert not details.is_applied and not patch_info._ACTIVE_TARGETS
            assert targets.scale is foreign and targets.offset(1) == 2
            assert targets.Child().greet() == "base" and "greet" not in vars(targets.Child)
            assert details.kept_external == [details[0]]
        assert points > 30
    finally:
        targets.scale = original


def _applied_with_foreign(foreign) -> PatchDetails:
    targets.scale = snapshot_scale
    details = make_details().apply()
    targets.scale = foreign
    return details


snapshot_scale = targets.scale


def test_count_points_sees_the_patch_model():
    assert count_points(lambda: make_details().apply().restore()) > 20


def test_two_threads_cannot_both_claim_one_target():
    # thread A passes the check, then waits (held by a tracer) while thread B applies:
    # with check and claim apart, both would win; the claim itself must be the check
    a_checked, b_done = threading.Event(), threading.Event()
    outcome: dict[str, object] = {}

    def hold_after_check(frame, event, arg):
        if frame.f_code is not PatchInfo.do.__code__:
            return None

        def local(frame, event, arg):
            if event == "line" and "own" in frame.f_locals and not a_checked.is_set():
                a_checked.set()
                b_done.wait(timeout=10)
            return local

        return local

    def contender(name, tracer=None):
        details = PatchDetails([PatchInfo.make(triple, targets, "scale")])
        if tracer is not None:
            sys.settrace(tracer)
        try:
            outcome[name] = details.apply()
        except PatchStateError as exc:
            outcome[name] = exc
        finally:
            sys.settrace(None)

    first = threading.Thread(target=contender, args=("A", hold_after_check))
    first.start()
    assert a_checked.wait(timeout=10)
    contender("B")
    b_done.set()
    first.join()
    try:
        won = [o for o in outcome.values() if isinstance(o, PatchDetails)]
        assert len(won) == 1, outcome
        assert isinstance(outcome["A"], PatchStateError)
        assert "just patched by" in str(outcome["A"]) or "already patched" in str(outcome["A"])
    finally:
        for result in outcome.values():
            if isinstance(result, PatchDetails):
                result.restore()
    assert targets.scale is snapshot_scale and not patch_info._ACTIVE_TARGETS
