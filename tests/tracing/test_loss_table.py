"""Each way real code turns traced data into plain values reaches its stated class: the
recorded graph is right on fresh inputs, or a warning names the cause at the user's line
(see loss_table.py); those that stay silent say why."""

from __future__ import annotations

import pytest

from .loss_table import CASES, classify


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_trace_exit_is_right_or_loud_at_its_line(case) -> None:  # noqa: ANN001
    kind, detail = classify(case)
    assert kind == case.expected, f"{case.name}: {kind} {detail}"
    assert case.expected in ("right", "loud") or case.why, "a silent case must say why"
