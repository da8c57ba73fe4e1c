"""Guard analysis: what an exported program accepts less than what was asked for
(fixed sizes, bounds, excluded values), said in words; relations between inputs."""

from __future__ import annotations

import functools
import itertools
import random
import re
from typing import Any

import torch

from .export_dimensions import Dimension
from .export_report import Narrowing

_COMPARISON = re.compile(r"^(.*?)\s*(<=|>=|==|!=|<|>)\s*(.*)$")
_SOURCE = re.compile(r"L\[[^\]]+\](?:\[[^\]]+\]|\.\w+)*\.size\(\)\[\d+\]")


def guard_conditions(ep: Any) -> list[str]:
    """The program's guards as single conditions: torch writes some as ``a and b`` (an
    image's height and width bounded at once under ``backed_size_oblivious``); each part
    is read on its own."""
    conditions: list[str] = []
    for guard in getattr(ep, "_guards_code", None) or []:
        conditions.extend(_conjuncts(guard))
    return conditions


def _conjuncts(guard: str) -> list[str]:
    """``a >= 8 and b >= 8`` -> ``["a >= 8", "b >= 8"]``, splitting only at parenthesis
    depth 0; a guard holding ``or`` or ``not`` at that depth is kept whole."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(guard):
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(char, 0)
        if depth == 0 and guard.startswith(" and ", index):
            parts.append(guard[start:index])
            start = index + len(" and ")
    parts.append(guard[start:])
    parts = [part.strip() for part in parts]
    if any(re.search(r"(^|\s)(or|not)\s", _outside_parentheses(p)) for p in parts):
        return [guard]
    return parts


def _outside_parentheses(text: str) -> str:
    kept, depth = [], 0
    for char in text:
        depth += {"(": 1, "[": 1}.get(char, 0)
        if depth == 0:
            kept.append(char)
        depth -= {")": 1, "]": 1}.get(char, 0)
    return "".join(kept)


def _readable(expression: str, names: dict[str, str]) -> str:
    text = _SOURCE.sub(lambda m: names.get(m.group(0), m.group(0)), expression)
    text = re.sub(r"\(\(-1\)\*([^()]+?)\)", r"- \1", text)
    return text.replace("+ -", "- ").replace("  ", " ").strip()


def _always_holds(guard: str, names: dict[str, str]) -> bool:
    """True when a guard holds for every positive size.

    The guard is first run on a grid of sizes (cheap: a counterexample ends it); one that
    holds there is proven by sympy when it is a polynomial relation. A relation made of
    ``//``, ``%``, ``min`` and ``max`` (a sequence padded to whole chunks) is taken as
    holding when it holds on every size of the grid: sympy's proof of those can take
    minutes per guard, and a guard that is still false somewhere is enforced by the
    program, so it refuses those inputs loudly.
    """
    keys: dict[str, str] = {}  # one symbol per name: dimensions named alike are one size

    def symbol(match: re.Match) -> str:
        label = names.get(match.group(0), match.group(0))
        return keys.setdefault(label, f"d{len(keys)}")

    text = _SOURCE.sub(symbol, guard)
    match = _COMPARISON.match(text)
    if match is None or "L[" in text or not keys:
        return False
    holds = _holds_on_grid(text, list(keys.values()))
    if holds is not True:
        return False
    if any(token in text for token in ("//", "%", "min(", "max(")):
        return True
    return _proven(match.groups(), list(keys.values()))


_GRID = (1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17, 31, 32, 63, 64, 100, 127, 1000, 4097)


def _holds_on_grid(text: str, symbols: list[str]) -> bool | None:
    """Whether ``text`` (Python with ``d0``, ``d1``... for sizes) is true on every point of
    a grid of sizes; None when it cannot be evaluated."""
    try:
        code = compile(text, "<guard>", "eval")
    except SyntaxError:
        return None
    allowed = {"__builtins__": {}, "min": min, "max": max, "abs": abs}
    try:
        for point in _grid_points(len(symbols)):
            if not eval(code, allowed, dict(zip(symbols, point))):  # noqa: S307
                return False
    except (ArithmeticError, NameError, TypeError, ValueError):
        return None
    return True


@functools.lru_cache(maxsize=8)
def _grid_points(count: int) -> tuple[tuple[int, ...], ...]:
    """The sizes a guard over ``count`` dimensions is tried on (the same for every guard of
    a program: drawn once, not per guard)."""
    if count == 1:
        return tuple((n,) for n in (*range(1, 129), *_GRID))
    if count == 2:
        pairs = [*itertools.product(range(1, 33), repeat=2), *itertools.product(_GRID, repeat=2)]
        return tuple(pairs)
    rng = random.Random(0)
    points = [tuple(rng.choice(_GRID) for _ in range(count)) for _ in range(3000)]
    return tuple(points + [(n,) * count for n in _GRID])


def _proven(parts: tuple[str, str, str], symbols: list[str]) -> bool:
    """sympy's proof that ``left op right`` holds for every positive integer size."""
    import sympy

    left, op, right = parts
    local = {name: sympy.Symbol(name, integer=True, positive=True) for name in symbols}
    try:
        relation = sympy.Rel(
            sympy.sympify(left, locals=local), sympy.sympify(right, locals=local), op
        )
        return bool(sympy.simplify(relation) is sympy.true)
    except (sympy.SympifyError, TypeError, ValueError):
        return False


def _without_parentheses(text: str) -> str:
    """``(a + b)`` -> ``a + b``; ``(a) + (b)`` and unbalanced text are kept as they are."""
    text = text.strip()
    while text.startswith("(") and text.endswith(")"):
        depth = 0
        for index, char in enumerate(text):
            depth += {"(": 1, ")": -1}.get(char, 0)
            if depth == 0 and index < len(text) - 1:
                return text
        text = text[1:-1].strip()
    return text


def _scaled(left: str, right: str) -> tuple[str, str]:
    """``8*seq``, ``8`` -> ``seq``, ``1``: say the condition on the dimension itself."""
    match = re.fullmatch(r"(\d+)\*(.+)", left)
    if match and _is_integer(right) and int(right.strip("()")) % int(match.group(1)) == 0:
        return _without_parentheses(match.group(2)), str(
            int(right.strip("()")) // int(match.group(1))
        )
    return left, right


def _is_integer(text: str) -> bool:
    return re.fullmatch(r"\(?-?\d+\)?", text.strip()) is not None


def analyse_guards(
    dims: list[Dimension], ep: Any
) -> tuple[dict[str, str], list[Narrowing], list[str], list[Narrowing]]:
    """Narrowings (constants, bounds, excluded values), relations, and assumptions
    (a lower bound of 2 that the program does not enforce: torch's 0/1 specialization)."""
    import sympy

    requested: dict[str, str] = {}
    narrowings: list[Narrowing] = []
    relations: list[str] = []
    assumptions: list[Narrowing] = []
    by_symbol: dict[Any, str] = {}
    names = {dim.source: dim.label for dim in dims}
    for dim in dims:
        requested[dim.source] = dim.label
        size = dim.size
        if isinstance(size, int):
            narrowings.append(
                Narrowing(dim.label, f"{dim.label} was fixed to {size} (asked to be dynamic)")
            )
            continue
        if not isinstance(size, torch.SymInt):
            continue
        expr = size.node.expr
        if not isinstance(expr, sympy.Symbol):
            relations.append(f"{dim.label} = {expr}")
            continue
        if expr in by_symbol and by_symbol[expr] != dim.label:
            relations.append(f"{dim.label} must equal {by_symbol[expr]}")
        by_symbol.setdefault(expr, dim.label)
        bounds = ep.range_constraints.get(expr)
        if bounds is None:
            continue
        lower, upper = bounds.lower, bounds.upper
        if isinstance(lower, sympy.Integer) and int(lower) == 2 and dim.requested_min < 2:
            # the program still runs sizes 0 and 1 (torch skips checking a bound of 2),
            # but the trace assumed >= 2: only a shape check can say whether 1 is right
            text = f"{dim.label} was traced as >= 2; size 1 runs but was not traced"
            assumptions.append(Narrowing(dim.label, text))
        elif isinstance(lower, sympy.Integer) and int(lower) > dim.requested_min:
            text = f"{dim.label} must be >= {int(lower)}"
            implied = _lower_bound_from_assumptions(expr, int(lower), dims, ep)
            if implied is None:
                narrowings.append(Narrowing(dim.label, text))
            else:  # torch's 0/1 assumption carried over: the shape checks decide
                assumptions.append(Narrowing(dim.label, f"{text} ({implied})"))
        if isinstance(upper, sympy.Integer):
            if dim.requested_max is None or int(upper) < dim.requested_max:
                narrowings.append(Narrowing(dim.label, f"{dim.label} must be <= {int(upper)}"))
    for guard in guard_conditions(ep):
        if _always_holds(guard, names):
            continue  # e.g. (batch*seq) % batch == 0: true for every size, not a narrowing
        text = _readable(guard, names)
        involved = [label for source, label in names.items() if source in guard]
        match = _COMPARISON.match(text)
        if match is None or not involved:
            relations.append(text)
            continue
        left, op, right = (part.strip() for part in match.groups())
        left, right = _without_parentheses(left), _without_parentheses(right)
        if left == right:
            continue  # two dimensions the user gave the same name: asked for, not narrowed
        left, right = _scaled(left, right)
        constant_side = _is_integer(right) or _is_integer(left)
        if len(set(involved)) == 1 and constant_side:
            if _trivially_true(op, left, right, dims, involved[0]):
                continue
            narrowings.append(Narrowing(involved[0], _must(left, op, right)))
        elif op in ("!=", "==") and constant_side:
            narrowings.append(Narrowing(involved[0], _must(left, op, right)))
        else:
            relations.append(f"{left} {op} {right}")
    return requested, _unique(narrowings), list(dict.fromkeys(relations)), _unique(assumptions)


def _must(left: str, op: str, right: str) -> str:
    """``seq must be != 1``, ``past must be <= 12``, ``width must be 3``."""
    return f"{left} must be {right}" if op == "==" else f"{left} must be {op} {right}"


def _lower_bound_from_assumptions(
    symbol: Any, lower: int, dims: list[Dimension], ep: Any
) -> str | None:
    """Why ``symbol >= lower`` follows from a guard ``others <= symbol`` (``past + seq <=
    past+seq``) and torch tracing each of the others as >= 2, or None. Such a bound is
    torch's 0/1 assumption carried to a sum of sizes, not a narrowing a patch made."""
    import sympy

    by_source = {d.source: d.size.node.expr for d in dims if isinstance(d.size, torch.SymInt)}
    labels = {d.size.node.expr: d.label for d in dims if isinstance(d.size, torch.SymInt)}
    for guard in guard_conditions(ep):
        text = _SOURCE.sub(
            lambda m: f"({by_source[m.group(0)]})" if m.group(0) in by_source else "?", guard
        )
        match = _COMPARISON.match(text)
        if match is None or "?" in text or match.group(2) not in ("<=", ">="):
            continue
        local = {str(s): s for s in by_source.values() if isinstance(s, sympy.Symbol)}
        try:
            left, right = (sympy.sympify(match.group(i), locals=local) for i in (1, 3))
        except (sympy.SympifyError, TypeError, AttributeError, NameError, ValueError):
            continue  # Python sympy cannot read (math.ceil, torch.sym_float): not a sum of sizes
        if not (isinstance(left, sympy.Expr) and isinstance(right, sympy.Expr)):
            continue  # a side that is itself a condition: not a bound on a sum of sizes
        difference = (right - left) if match.group(2) == "<=" else (left - right)  # >= 0
        if not difference.is_polynomial(symbol):
            continue  # e.g. samples // 5 (a strided convolution): not a sum of sizes
        if sympy.Poly(difference, symbol).degree() != 1 or difference.coeff(symbol) != 1:
            continue
        below = symbol - difference  # symbol >= below
        others = sorted(below.free_symbols, key=str)
        ranges = [ep.range_constraints.get(other) for other in others]
        if not others or any(r is None or r.lower != 2 for r in ranges):
            continue
        if below.subs({other: 2 for other in others}) >= lower:
            names = ", ".join(labels.get(other, str(other)) for other in others)
            return f"follows from torch tracing {names} as >= 2"
    return None


def _trivially_true(op: str, left: str, right: str, dims: list[Dimension], label: str) -> bool:
    """``seq >= 1`` and the like hold for every size that was asked for."""
    if left.strip() != label or not _is_integer(right):
        return False
    value = int(right.strip("()"))
    low = next(d.requested_min for d in dims if d.label == label)
    return (op == ">=" and value <= low) or (op == ">" and value < low)


def _unique(items: list[Narrowing]) -> list[Narrowing]:
    seen: set[str] = set()
    kept = []
    for item in items:
        if item.text not in seen:
            seen.add(item.text)
            kept.append(item)
    return kept
