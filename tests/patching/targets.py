"""A small module of patch targets: functions, methods and descriptors the tests replace."""


def scale(x, factor=2):
    """Multiply by ``factor``."""
    return x * factor


def offset(x):
    """Add one."""
    return x + 1


class Base:
    def greet(self):
        return "base"


class Child(Base):
    """Inherits ``greet``: patching it on Child must not touch Base."""

    @staticmethod
    def tool(x):
        return x - 1

    @classmethod
    def make(cls):
        return cls.__name__

    @property
    def size(self):
        return 3
