"""Constants that entered a traced graph, with where they came from."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ConstantInfo:
    """One constant in a recorded graph: its attribute name, shape, size and origin."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    nbytes: int
    origin: str

    def __str__(self) -> str:
        return (
            f"{self.name}: {self.dtype}{list(self.shape)} ({self.nbytes} bytes) from {self.origin}"
        )
