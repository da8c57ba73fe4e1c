"""Real script runs (``python script.py`` in a subprocess), started in the background.

A script run is the point of these tests (pytest's own ``__main__`` hides what a script's
globals do), and most of a run is importing torch. So a test module lists its runs in a
module-level ``BACKGROUND`` (each a :class:`Script`, or any object with ``wanted_by(items)``
and ``start()``); once pytest has collected, tests/conftest.py starts the work of every module
with a selected test, one run per CPU core, while pytest runs other tests. A test then
waits for its own run's result and checks it as before.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_root: Path | None = None
_running: set[subprocess.Popen] = set()


@dataclass(frozen=True)
class Finished:
    """A finished run: its exit status, its output, and the empty folder it was given."""

    returncode: int
    stdout: str
    stderr: str
    folder: Path

    def output(self) -> str:
        """stdout, after asserting the run succeeded (its output tails are the message)."""
        assert self.returncode == 0, self.stdout[-3000:] + self.stderr[-3000:]
        return self.stdout


@dataclass(eq=False)
class Script:
    """One process to run: ``command(folder)`` gives its argv (and may write files there).

    ``options`` go to :class:`subprocess.Popen` (``cwd``, ``env``); ``timeout`` bounds the run;
    ``in_folder`` runs it with the folder as working directory.
    """

    name: str
    command: Callable[[Path], Sequence[str | Path]]
    timeout: float = 600
    in_folder: bool = False
    options: dict[str, Any] = field(default_factory=dict)
    _future: Future | None = field(default=None, init=False, repr=False)

    def wanted_by(self, items: Sequence[Any]) -> bool:
        """Any selected test of the module may read the run's result."""
        return True

    def start(self) -> Future:
        """Queue the run (once); the returned future holds its :class:`Finished`."""
        with _lock:
            if self._future is None:
                self._future = _executor().submit(self._run)
            return self._future

    def result(self) -> Finished:
        """Wait for the run, starting it now if nothing started it yet."""
        return self.start().result()

    def _run(self) -> Finished:
        folder = Path(tempfile.mkdtemp(prefix=f"{self.name}-", dir=_session_root()))
        argv = [str(part) for part in self.command(folder)]
        options = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
        if self.in_folder:
            options["cwd"] = folder
        with subprocess.Popen(argv, **options, **self.options) as process:
            with _lock:
                _running.add(process)
            try:
                stdout, stderr = process.communicate(timeout=self.timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                stdout, stderr = process.communicate()
                stderr += f"\n(killed after {self.timeout} s)"
            finally:
                with _lock:
                    _running.discard(process)
        return Finished(process.returncode, stdout, stderr, folder)


_cleanups: list[Callable[[], None]] = []


def on_session_end(cleanup: Callable[[], None]) -> None:
    """Run ``cleanup`` when the session ends (background work a test never waited for)."""
    _cleanups.append(cleanup)


def start_wanted(module_items: Mapping[Any, Sequence[Any]]) -> None:
    """Start each module's ``BACKGROUND`` work that its selected tests want, in order."""
    for module, items in module_items.items():
        for work in getattr(module, "BACKGROUND", ()):
            if work.wanted_by(items):
                work.start()


def stop_all() -> None:
    """Kill runs still going (the session ended without needing them) and remove folders."""
    global _pool, _root
    while _cleanups:
        _cleanups.pop()()
    with _lock:
        for process in _running:
            process.kill()
    if _pool is not None:
        _pool.shutdown(wait=True, cancel_futures=True)
        _pool = None
    if _root is not None:
        shutil.rmtree(_root, ignore_errors=True)
        _root = None


def _executor() -> ThreadPoolExecutor:
    """One run per core: while pytest runs other tests they share the cores, and while a
    test waits for its run the cores are all the runs'."""
    global _pool
    if _pool is None:
        workers = os.cpu_count() or 1
        _pool = ThreadPoolExecutor(workers, thread_name_prefix="script-run")
    return _pool


def _session_root() -> Path:
    global _root
    with _lock:
        if _root is None:
            _root = Path(tempfile.mkdtemp(prefix="patchport-script-runs-"))
            atexit.register(shutil.rmtree, _root, True)
        return _root
