"""What a port means: TensorSemantics, TemporalAxis, GraphConfigs and the kind enums.

These labels travel into the bundle's YAML (beside each port, and under
``pipeline.configs``) with the same keys and string values as LEAPP, so consumers of a
LEAPP bundle read ours unchanged. They never change what is computed.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from enum import Enum
from typing import Any

from .errors import PatchDefinitionError

TEMPORAL_AXIS = "__temporal_axis__"  # how a TemporalAxis is written among element_names


class InputKindEnum(Enum):
    """What a node input measures or commands (LEAPP's values, written to the YAML)."""

    JOINT_POSITION = "state/joint/position"
    JOINT_VELOCITY = "state/joint/velocity"
    JOINT_EFFORT = "state/joint/effort"
    BODY_POSE = "state/body/pose"
    BODY_VEL = "state/body/velocity"
    BODY_ACC = "state/body/acceleration"
    BODY_LINEAR_ACCELERATION = "state/body/linear_acceleration"
    BODY_LINEAR_VELOCITY = "state/body/linear_velocity"
    BODY_ANGULAR_ACCELERATION = "state/body/angular_acceleration"
    BODY_ANGULAR_VELOCITY = "state/body/angular_velocity"
    BODY_ROTATION = "state/body/rotation"
    BODY_POSITION = "state/body/position"
    WRENCH = "state/wrench"
    VECTOR3D = "state/vector3d"
    COMMAND_JOINT_POSITION = "command/joint/position"
    COMMAND_JOINT_VELOCITY = "command/joint/velocity"
    COMMAND_JOINT_TORQUES = "command/joint/torques"
    COMMAND_BODY_ROTATION = "command/body/rotation"
    COMMAND_BODY_VELOCITY = "command/body/velocity"
    COMMAND_POSE = "command/body/pose"


class OutputKindEnum(Enum):
    """What a node output drives (LEAPP's values, written to the YAML)."""

    KP = "kp"
    KD = "kd"
    JOINT_POSITION = "target/joint/position"
    JOINT_VELOCITY = "target/joint/velocity"
    JOINT_TORQUES = "target/joint/torques"
    JOINT_EFFORT = "target/joint/effort"
    BODY_POSITION = "target/body/position"
    BODY_LINEAR_ACCELERATION = "target/body/linear_acceleration"
    BODY_ORIENTATION = "target/body/orientation"
    BODY_LINEAR_VELOCITY = "target/body/linear_velocity"
    BODY_ANGULAR_ACCELERATION = "target/body/angular_acceleration"


@dataclass(frozen=True)
class TemporalAxis:
    """Marks one axis of ``element_names`` as time, with rows ``period_ms`` apart."""

    period_ms: float

    def __post_init__(self) -> None:
        if not isinstance(self.period_ms, (int, float)) or self.period_ms <= 0:
            raise PatchDefinitionError(
                f"TemporalAxis(period_ms={self.period_ms!r}): the period must be a positive "
                f"number of milliseconds."
            )


@dataclass
class GraphConfigs:
    """Pipeline-level labels for ``compile_graph(graph_configs=...)`` (``pipeline.configs``)."""

    frequency: float | None = None
    extra: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.frequency is not None and (
            not isinstance(self.frequency, (int, float)) or self.frequency <= 0
        ):
            raise PatchDefinitionError(
                f"GraphConfigs(frequency={self.frequency!r}): give calls per second as a "
                f"positive number, or None."
            )

    def to_dict(self) -> dict[str, Any]:
        """The YAML mapping: set fields, with ``extra`` entries merged in."""
        result: dict[str, Any] = {}
        if self.frequency is not None:
            result["frequency"] = self.frequency
        result.update(self.extra or {})
        return result


def _axis_names(element_names: Any) -> tuple[Any, float | None]:
    """Normalise ``element_names`` to one entry per axis; pull out a TemporalAxis period.

    A flat list of strings names the elements of a single axis; a list mixing lists,
    ``None`` and one TemporalAxis describes each axis in turn.
    """
    if isinstance(element_names, str):
        return [[element_names]], None
    if not isinstance(element_names, (list, tuple)):
        return element_names, None
    items = list(element_names)
    if all(isinstance(item, str) and item != TEMPORAL_AXIS for item in items):
        return [items], None
    period = None
    axes: list[Any] = []
    for item in items:
        if isinstance(item, TemporalAxis):
            if period is not None:
                raise PatchDefinitionError(
                    "TensorSemantics(element_names=...): at most one TemporalAxis per tensor."
                )
            period = item.period_ms
            axes.append(TEMPORAL_AXIS)
        elif isinstance(item, (list, tuple)):
            if any(isinstance(c, TemporalAxis) or c == TEMPORAL_AXIS for c in item):
                raise PatchDefinitionError(
                    "TensorSemantics(element_names=...): a TemporalAxis stands for a whole "
                    "axis; put it in the outer list, not inside an axis's names."
                )
            axes.append(list(item))
        elif item is None or item == TEMPORAL_AXIS:
            axes.append(item)
        else:
            axes.append(item)
    return axes, period


@dataclass
class TensorSemantics:
    """A named tensor (``ref``) with labels: ``kind``, ``element_names``, ``extra``.

    Used in place of a ``{name: tensor}`` dict: ``annotate.input_tensors(node,
    [TensorSemantics("joint_pos", q, kind=InputKindEnum.JOINT_POSITION), ...])``.
    """

    name: str | None = None
    ref: Any = None
    kind: InputKindEnum | OutputKindEnum | str | None = None
    element_names: Any = None
    temporal_period_ms: float | None = field(default=None, init=False)
    extra: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if not _is_array_like(self.ref):
            raise PatchDefinitionError(
                f"TensorSemantics({self.name!r}, ref=...): ref must be a torch tensor or a "
                f"NumPy array, got {type(self.ref).__name__}."
            )
        if self.element_names is not None:
            self.element_names, self.temporal_period_ms = _axis_names(self.element_names)

    def to_dict(self) -> dict[str, Any]:
        """The labels as written beside the port in the YAML (enums as their strings)."""
        result: dict[str, Any] = {}
        for item in fields(self):
            if item.name in ("name", "ref", "extra"):
                continue
            value = getattr(self, item.name)
            if value is not None:
                result[item.name] = value.value if isinstance(value, Enum) else value
        result.update(self.extra or {})
        return result


def _is_array_like(value: Any) -> bool:
    import numpy as np
    import torch

    return isinstance(value, (torch.Tensor, np.ndarray, np.generic))


__all__ = [
    "TEMPORAL_AXIS",
    "GraphConfigs",
    "InputKindEnum",
    "OutputKindEnum",
    "TemporalAxis",
    "TensorSemantics",
]
