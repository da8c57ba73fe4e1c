"""Names of Python's binary operators, shared by the NumPy and torch dispatchers."""

BINARY_OPERATORS: tuple[str, ...] = (
    "add",
    "sub",
    "mul",
    "truediv",
    "floordiv",
    "mod",
    "pow",
    "matmul",
    "and",
    "or",
    "xor",
    "lshift",
    "rshift",
)
