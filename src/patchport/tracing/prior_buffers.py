"""Arrays made before the session, watched while it runs, and the content they keep.

A deploy loop fills a buffer made once (``obs = np.zeros(47)`` at module level, a wrapper's
``self._obs_buffer`` from ``__init__``) with traced data each step; a module-level lookup
table is read with traced pixels. A plain ndarray gives Python no hook for either, so the
session hands user code a fresh-buffer view of the same memory for its duration
(:func:`watched`; see fresh): a traced write is recorded from the array's content at that
moment, a traced read of it is a gather from that content.

That content is a constant in the export. For a buffer the pass overwrites before reading
it, that does not matter; where the pass reads elements it did not write this pass (a
frame stack's older frames, state from earlier calls), the export would replay them as
they were when traced. :func:`check` finds those reads in the sealed graph and reports
them at the line of the buffer's first traced write.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import torch
from torch import fx

from ..errors import TraceLossError, TraceLossWarning
from .indexing import index_put
from .values import BEFORE_SESSION, TracedArray


def watched(array: np.ndarray, description: str) -> TracedArray:
    """A fresh-buffer view of ``array`` (same memory) standing for it during the session."""
    out = np.ndarray.view(array, TracedArray)
    out._pp.fresh = description + BEFORE_SESSION
    return out


def is_prior(fresh: str | None) -> bool:
    """Whether a fresh buffer's origin is an array made before the session (or made from one)."""
    return fresh is not None and fresh.endswith(BEFORE_SESSION)


def note_start(rec: Any, node: fx.Node, shape: tuple[int, ...], fresh: str, where: str) -> None:
    """Remember the graph node holding a prior buffer's content at its first traced write."""
    rec.prior_starts.append((node, tuple(shape), fresh[: -len(BEFORE_SESSION)], where))


def check(rec: Any) -> None:
    """Report each prior buffer whose content from before its first write reaches the
    sealed graph's outputs (elements read that the pass did not overwrite)."""
    for node, shape, description, where in rec.prior_starts:
        if node.graph is not rec.graph or not _read_before_written(rec, node, shape):
            continue
        filename, _, line = where.rpartition(":")
        message = (
            f"trace lost at {where}: traced data is written here into {description}, an array "
            f"made before the session, but the pass also reads elements of it that it did not "
            f"write (state from earlier calls, or stale entries); the export replays them as "
            f"they were when traced. Write all of it in the traced code, make it there "
            f"(np.zeros(...)), or declare it with annotate.state_tensors if it carries state "
            f"between calls"
        )
        rec.losses.append(message)
        if rec.strict:
            raise TraceLossError(message)
        lineno = int(line) if line.isdigit() else 0
        warnings.warn_explicit(message, TraceLossWarning, filename or "?", lineno)
    rec.prior_starts.clear()


def _read_before_written(rec: Any, start: fx.Node, shape: tuple[int, ...]) -> bool:
    """Whether some element of ``start`` is used before an ``index_put`` overwrites it:
    follow the chain of writes (each clears what it writes) to any other use."""
    pending = [(start, torch.ones(shape, dtype=torch.bool))]
    while pending:
        node, unwritten = pending.pop()
        for user in node.users:
            written = _written(rec, user, node, shape)
            if written is None:  # any other use reads what is still unwritten
                if bool(unwritten.any()):
                    return True
                continue
            left = unwritten & ~written
            if bool(left.any()):
                pending.append((user, left))
    return False


def _written(rec: Any, user: fx.Node, base: fx.Node, shape: tuple[int, ...]) -> Any:
    """The elements ``user`` overwrites when it is ``index_put(base, index, value)`` with an
    index known at trace time; None for any other use of ``base``."""
    if user.op != "call_function" or user.target is not index_put or user.args[0] is not base:
        return None
    if base in (user.args[1], user.args[2]) or _uses(user.args[2], base):
        return None
    index = _constant_index(rec, user.args[1])
    mask = torch.zeros(shape, dtype=torch.bool)
    if index is None:
        return mask  # written where traced data says: nothing known to be overwritten
    try:
        mask[index] = True
    except (IndexError, RuntimeError, TypeError):
        return torch.zeros(shape, dtype=torch.bool)
    return mask


def _constant_index(rec: Any, index: Any) -> Any:
    """``index`` with constant tensors read from the recorder; None if it holds traced data."""
    if isinstance(index, tuple):
        items = [_constant_index(rec, item) for item in index]
        traced = any(i is None and o is not None for i, o in zip(items, index))
        return None if traced else tuple(items)
    if isinstance(index, fx.Node):
        if index.op == "get_attr":
            return getattr(rec.root, index.target, None)
        return None
    return index


def _uses(value: Any, node: fx.Node) -> bool:
    if isinstance(value, fx.Node):
        return value is node
    if isinstance(value, (tuple, list)):
        return any(_uses(v, node) for v in value)
    return False
