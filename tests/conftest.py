"""Test-wide settings: hypothesis runs derandomized so a run is reproducible (set
``HYPOTHESIS_EXPLORE=1`` to draw new examples each run), and the script runs of the
selected test modules start in the background (tests/script_runs.py)."""

import os

from hypothesis import settings

from . import script_runs

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None, print_blob=True)
settings.load_profile("dev" if os.environ.get("HYPOTHESIS_EXPLORE") else "ci")


def pytest_collection_finish(session):
    if session.config.option.collectonly:
        return
    by_module: dict = {}
    for item in session.items:
        by_module.setdefault(getattr(item, "module", None), []).append(item)
    by_module.pop(None, None)
    script_runs.start_wanted(by_module)


def pytest_sessionfinish(session):
    script_runs.stop_all()
