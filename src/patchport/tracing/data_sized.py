"""Values whose size the traced data decides (a boolean selection, ``nonzero``, ``unique``).

``e = x[x > 0]`` has as many rows as the sample has positive values, so ``e.shape[0]``
read in Python is a property of this sample, not of the program. Once a node records such
a value, its size reads are noted as for a dynamic axis (see shape_reads): a size used as
an operand of a traced op is computed in the graph from the value, and a size turned into
a Python number (``float()``, arithmetic with a float) is a trace loss at the user's line.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import fx

# ops whose result's length follows the values of an input (call_function and method names)
_SIZED_BY_DATA = frozenset(
    {
        torch.nonzero,
        torch.argwhere,
        torch.masked_select,
        torch.unique,
        torch.unique_consecutive,
        "nonzero",
        "argwhere",
        "masked_select",
        "unique",
        "unique_consecutive",
    }
)
# ops whose result's length follows their second argument when that is traced
_SIZED_BY_COUNTS = frozenset({torch.repeat_interleave, "repeat_interleave"})
SIZE_DECIDING = _SIZED_BY_DATA | _SIZED_BY_COUNTS  # one set lookup per recorded call
_MARK = "pp_data_sized"


def sized_by_data(target: Any, args: tuple) -> bool:
    """Whether ``target(*args)`` makes a value whose size the data decides."""
    try:
        if target in _SIZED_BY_DATA:
            return True
        return target in _SIZED_BY_COUNTS and len(args) > 1 and isinstance(args[1], fx.Node)
    except TypeError:  # an unhashable target
        return False


def is_mask_index(index: Any) -> bool:
    """Whether an index (an item or a tuple of items) holds a boolean array of 1+ dims."""
    items = index if isinstance(index, tuple) else (index,)
    for item in items:
        dtype = getattr(item, "dtype", None)
        if dtype in (bool, torch.bool) and getattr(item, "ndim", 0) > 0:
            return True
    return False


def mark(node: fx.Node) -> None:
    """Note that ``node``'s size is decided by the data."""
    node.meta[_MARK] = node


def sized_by(node: Any) -> fx.Node | None:
    """The op deciding ``node``'s size from the data (``node`` or one it is computed
    from), or None; remembered on each node walked (inputs before their users)."""
    if not isinstance(node, fx.Node):
        return None
    stack = [node]
    while stack:
        item = stack[-1]
        if _MARK in item.meta:
            stack.pop()
            continue
        pending = [n for n in item.all_input_nodes if _MARK not in n.meta]
        if pending:
            stack.extend(pending)
            continue
        stack.pop()
        origins = (n.meta[_MARK] for n in item.all_input_nodes)
        item.meta[_MARK] = next((o for o in origins if o is not None), None)
    return node.meta[_MARK]
