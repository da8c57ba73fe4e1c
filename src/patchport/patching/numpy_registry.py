"""NumPy's registry of functions that take part in ``__array_function__``
(``numpy.testing.overrides.allows_array_function_override``): while a replacement of one
is installed, the registry lists the replacement too, as code asking about ``np.ones``
inside a session expects."""

from __future__ import annotations

from typing import Any


def _registry() -> set[Any] | None:
    """NumPy's private set of overridable functions, or None where this NumPy has none."""
    try:
        from numpy._core import overrides
    except ImportError:  # pragma: no cover - NumPy < 2
        return None
    registry = getattr(overrides, "ARRAY_FUNCTIONS", None)
    return registry if isinstance(registry, set) else None


def register(original: Any, installed: Any) -> bool:
    """List ``installed`` where ``original`` is listed; True when it was."""
    registry = _registry()
    try:
        if registry is None or original not in registry:
            return False
        registry.add(installed)
    except TypeError:  # an unhashable attribute value: never a NumPy function
        return False
    return True


def unregister(installed: Any) -> None:
    """Take ``installed`` out of the registry again."""
    registry = _registry()
    if registry is not None:
        registry.discard(installed)
