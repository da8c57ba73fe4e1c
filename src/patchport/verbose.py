"""``verbose=N`` through :mod:`logging`: patchport's lines are INFO records of the
``patchport`` logger hierarchy; ``verbose`` makes sure they also reach stdout.

Every line is logged whatever ``verbose`` is, so an application's own logging setup can
collect them. With ``verbose`` > 0, a handler on the ``patchport`` logger prints them
as ``[patchport] ...`` on the current ``sys.stdout`` (as ``print`` would, so
``contextlib.redirect_stdout`` and pytest's ``capsys`` see them). This module is a leaf.
"""

from __future__ import annotations

import logging
import sys
from typing import Any, TextIO

ROOT_LOGGER = "patchport"


class _CurrentStdout(logging.StreamHandler):
    """A stream handler writing to whatever ``sys.stdout`` is when a record arrives."""

    def __init__(self) -> None:
        super().__init__()
        self.setFormatter(logging.Formatter("[patchport] %(message)s"))

    @property
    def stream(self) -> TextIO:  # type: ignore[override]
        return sys.stdout

    @stream.setter
    def stream(self, value: Any) -> None:
        pass  # always the current sys.stdout


def say(logger: logging.Logger, verbose: int, message: str, *args: Any) -> None:
    """Log ``message % args`` at INFO on ``logger`` (a ``patchport.*`` logger); with
    ``verbose``, also print it on stdout, once, whatever the logging setup is."""
    if not verbose:
        logger.info(message, *args)
        return
    root = logging.getLogger(ROOT_LOGGER)
    handler = _CurrentStdout()
    added = not any(isinstance(h, _CurrentStdout) for h in root.handlers)
    saved = logger.level
    if added:
        root.addHandler(handler)
    try:
        if not logger.isEnabledFor(logging.INFO):
            logger.setLevel(logging.INFO)
        logger.info(message, *args)
    finally:
        logger.setLevel(saved)
        if added:
            root.removeHandler(handler)
