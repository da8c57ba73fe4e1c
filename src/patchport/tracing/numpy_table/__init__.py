"""The one NumPy -> torch table (moved into a package; split by job next)."""

from .targets import *  # noqa: F403
from .targets import Call, np_argsort, np_sort  # noqa: F401
