"""The cyclic garbage collector during a session: old objects frozen, state given back.

A session allocates tens of thousands of objects (patches, watchers, graph nodes) on top
of the hundreds of thousands torch and NumPy keep alive, so an oldest-generation
collection landing in a traced pass would rescan them all (py-spy showed it dominating
traced passes). ``start`` moves every object alive at that moment into the collector's
permanent generation (``gc.freeze``): collections keep running and collect what the
session discards, but skip the old heap. ``stop`` (and a failed ``start``) thaws them.

The collector is never disabled, its thresholds are not touched, and objects the user
froze are left alone: when the collector is disabled or something is frozen already the
session changes nothing (``gc.unfreeze`` would thaw the user's objects too).
"""

from __future__ import annotations

import gc
from dataclasses import dataclass


@dataclass
class CollectorHold:
    """What a session changed in the collector: whether it froze the objects alive."""

    froze: bool = False


def hold_collector() -> CollectorHold:
    """Freeze the objects alive now, unless the collector is off or holds frozen objects."""
    if not gc.isenabled() or gc.get_freeze_count():
        return CollectorHold(froze=False)
    gc.freeze()
    return CollectorHold(froze=True)


def release_collector(hold: CollectorHold) -> None:
    """Thaw what :func:`hold_collector` froze; idempotent, so safe to run again."""
    if hold.froze:
        hold.froze = False
        gc.unfreeze()
