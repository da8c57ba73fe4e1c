"""Progress lines of compile_graph: one per node as it is exported, one as it is validated.

They go to the ``patchport`` logger at INFO, so they are silent unless asked for:
``verbose=True`` (or the session's ``verbose``) shows them on stderr when the program has
not configured logging itself; an application's own logging setup decides otherwise.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator
from typing import Any

logger = logging.getLogger("patchport")

clock = time.perf_counter


@contextlib.contextmanager
def progress_output(verbose: bool) -> Iterator[None]:
    """While ``verbose``, let INFO lines of the ``patchport`` logger reach stderr."""
    if not verbose:
        yield
        return
    level = logger.level
    handler = None
    if not logger.hasHandlers():  # nobody configured logging: print plain lines
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(message)s"))
        logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.setLevel(level)
        if handler is not None:
            logger.removeHandler(handler)


def exported(index: int, total: int, node: str, backend: str, started: float, path: Any) -> None:
    """Log that one node's model was written (``started``: :func:`clock` before)."""
    logger.info(
        "compile_graph: [%d/%d] %s [%s] exported in %.2f s -> %s",
        index,
        total,
        node,
        backend,
        clock() - started,
        getattr(path, "name", path),
    )


def validated(index: int, total: int, check: Any, started: float) -> None:
    """Log one node's replay result (a NodeValidation; ``started``: :func:`clock` before)."""
    state = "ok" if check.ok else f"MISMATCH ({len(check.problems)} problem(s))"
    logger.info(
        "compile_graph: [%d/%d] %s [%s] validated in %.2f s: %s on %d sample(s), max |diff| %.3g",
        index,
        total,
        check.node,
        check.backend,
        clock() - started,
        state,
        check.samples,
        check.max_abs_diff,
    )
