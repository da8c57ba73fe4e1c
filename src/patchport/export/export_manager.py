"""ExportManager: LEAPP's process-wide manager object, as a view of patchport's session state.

LEAPP's tests and tools hold ``ExportManager()`` (a singleton) and read ``nodes``,
``detected_nodes`` and ``detected_pipeline`` after ``compile_graph``; they also call the
annotation functions and ``start`` / ``stop`` / ``compile_graph`` on it. Nothing is stored
here: every attribute reads :data:`~patchport.sessions.state.SESSIONS` (the active session,
else the last one stopped), so the manager and the module-level API cannot disagree.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import PatchStateError
from ..sessions import annotate, lifecycle
from ..sessions.state import NodeTrace, Session
from .compile import compile_graph

_ANNOTATIONS = (
    "input_tensors",
    "output_tensors",
    "state_tensors",
    "update_state",
    "register_buffer",
    "module",
    "method",
    "mirror_leapp_tags",
)


class ExportManager:
    """The one manager of the process (``ExportManager() is ExportManager()``).

    ``nodes`` maps node names to their traces (``inputs`` / ``outputs`` are ports with
    ``.name``); after ``compile_graph``, ``detected_nodes`` and ``detected_pipeline`` are the
    ``models`` and ``pipeline`` sections of the bundle description it wrote.
    """

    _instance: ExportManager | None = None

    def __new__(cls) -> ExportManager:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __getattr__(self, name: str) -> Any:
        if name in _ANNOTATIONS:
            return getattr(annotate, name)
        raise AttributeError(f"ExportManager has no attribute {name!r}")

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(_ANNOTATIONS))

    # -------------------------------------------------------------- lifecycle
    @staticmethod
    def start(name: str, save_path: str | Path = ".", **options: Any) -> Session:
        """``patchport.start``."""
        return lifecycle.start(name, save_path, **options)

    @staticmethod
    def stop() -> Session:
        """``patchport.stop``."""
        return lifecycle.stop()

    @staticmethod
    def compile_graph(*args: Any, **kwargs: Any) -> Any:
        """``patchport.compile_graph``."""
        return compile_graph(*args, **kwargs)

    # -------------------------------------------------------------- state (read only)
    @property
    def session(self) -> Session | None:
        """The active session, else the last one stopped (None before any ``start``)."""
        return lifecycle.last_session()

    @property
    def nodes(self) -> dict[str, NodeTrace]:
        """The nodes of the session, by name (empty before any ``start``)."""
        session = self.session
        return dict(session.nodes) if session is not None else {}

    def get_nodes(self) -> dict[str, NodeTrace]:
        return self.nodes

    def _compiled(self, section: str) -> dict[str, Any]:
        session = self.session
        spec = session.spec if session is not None else None
        if spec is None:  # AttributeError, so hasattr() is False as in LEAPP
            raise AttributeError(
                f"ExportManager.detected_{'nodes' if section == 'models' else section}: nothing "
                f"compiled yet; call patchport.compile_graph() after patchport.stop()."
            )
        return spec[section]

    @property
    def detected_nodes(self) -> dict[str, Any]:
        """``models`` of the last compiled bundle: node -> inputs, outputs, parameters."""
        return self._compiled("models")

    @property
    def detected_pipeline(self) -> dict[str, Any]:
        """``pipeline`` of the last compiled bundle: data_flow, feedback_flow, inputs, ..."""
        return self._compiled("pipeline")

    @property
    def GRAPH_NAME(self) -> str | None:  # noqa: N802 - LEAPP's attribute name
        session = self.session
        return session.name if session is not None else None

    @property
    def SAVE_PATH(self) -> str | None:  # noqa: N802 - LEAPP's attribute name
        session = self.session
        return str(session.directory) if session is not None else None

    def get_graph_name(self) -> str | None:
        return self.GRAPH_NAME

    def get_save_path(self) -> str | None:
        return self.SAVE_PATH

    @property
    def config_path(self) -> str | None:
        """Where ``compile_graph`` writes (or wrote) the bundle's YAML."""
        session = self.session
        return str(session.directory / f"{session.name}.yaml") if session is not None else None

    @property
    def dry_run(self) -> bool:
        session = self.session
        return bool(session is not None and session.dry_run)

    @property
    def non_traced(self) -> set[str]:
        session = self.session
        return set(session.non_traced) if session is not None else set()

    def is_dry_run(self, name: str | None = None) -> bool:
        """As LEAPP's: the session is a dry run, or node ``name`` is not traced."""
        return self.dry_run or (name is not None and name in self.non_traced)

    @staticmethod
    def is_interpret_graph_enabled() -> bool:
        """True between ``start`` and ``stop``."""
        return lifecycle.current_session() is not None

    @staticmethod
    def set_interpret_graph(is_enabled: bool) -> None:
        """LEAPP's switch; here the session decides, so only its current value is accepted.

        LEAPP's tests call ``set_interpret_graph(False)`` after ``stop()`` to tidy up: that
        is a no-op. Asking for another value than the session's is refused, naming the fix.
        """
        active = lifecycle.current_session() is not None
        if bool(is_enabled) != active:
            call = "patchport.stop()" if active else "patchport.start(name)"
            raise PatchStateError(
                f"ExportManager.set_interpret_graph({is_enabled!r}): tracing follows the "
                f"session in patchport; call {call} instead."
            )

    def reset_nodes(self) -> None:
        """Forget the last stopped session's nodes (LEAPP's ``reset_nodes``).

        Refused while a session is active: its graph is still being traced.
        """
        if lifecycle.current_session() is not None:
            raise PatchStateError(
                "ExportManager.reset_nodes(): a session is active; call patchport.stop() "
                "before dropping its nodes."
            )
        lifecycle.forget_last_session()
