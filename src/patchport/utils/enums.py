"""``from patchport.utils.enums import InputKindEnum, OutputKindEnum``, as in LEAPP."""

from ..semantics import InputKindEnum, OutputKindEnum

__all__ = ["InputKindEnum", "OutputKindEnum"]
