"""Numbers made from traced data where NumPy gives no hook, recognised when they come back.

``np.float32(x.sum())`` (any NumPy scalar type called on a traced 0-d value) copies the
value into a plain NumPy scalar in C: no method of the traced value runs, so the number is
frozen unseen. NumPy does make (and discard) a 0-d array of the traced class on the way,
so ``__array_finalize__`` sees the conversion: :func:`note_scalar_copy` remembers the value
it produces, where, and of which dtype. Text is the other route: ``float(f"{v:.4f}")`` or
``float(str(v))`` parse back what ``__format__`` / ``__str__`` wrote (:func:`note_text`).

When a traced operation then receives a plain number equal to a remembered one
(:func:`check_numbers`), the conversion is reported as a trace loss at the line that
made it (not at the line using it). Equality alone would be a guess; the conversion seen
on the same value is the evidence. Python ``int``s and integral Python floats are not
matched (sizes, axes and literals such as ``2.0`` would collide); a NumPy integer scalar
is, when its dtype is the converted one.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from .location import user_frame
from .loss import report_loss_at

if TYPE_CHECKING:
    from .recorder import Recorder

_LIMIT = 256  # conversions remembered per recorder (the oldest are forgotten)


class Conversion(NamedTuple):
    """A plain number made from traced data: what made it, where, and its dtype."""

    what: str
    filename: str
    lineno: int
    dtype: np.dtype | None  # None: parsed back from text (any float dtype)


def note_scalar_copy(rec: Recorder, made: np.ndarray, source: np.ndarray) -> None:
    """``made`` (0-d, of the traced class) is NumPy's copy of traced 0-d ``source`` on its
    way to a NumPy scalar: remember the scalar it becomes."""
    value = np.ndarray.view(source, np.ndarray).astype(made.dtype)[()]
    _remember(rec, value, f"np.{made.dtype.name}(...) of a traced value", made.dtype)


def note_text(rec: Recorder, text: str) -> None:
    """Traced data formatted as ``text``: remember the number it parses back to."""
    if text.startswith("np.") and text.endswith(")"):  # repr of a NumPy scalar
        text = text[text.find("(") + 1 : -1]
    try:
        value = float(text)
    except (TypeError, ValueError):
        return
    _remember(rec, value, "a traced value formatted as text and parsed back", None)


def _remember(rec: Recorder, value: Any, what: str, dtype: np.dtype | None) -> None:
    key = value.item() if isinstance(value, np.generic) else value
    if isinstance(key, float) and not math.isfinite(key):
        return
    frame = user_frame(3)
    if frame is None:
        return
    pending = rec.unhooked
    if len(pending) >= _LIMIT:
        del pending[next(iter(pending))]
    pending[key] = Conversion(what, frame.f_code.co_filename, frame.f_lineno, dtype)


def check_numbers(rec: Recorder, args: Any, kwargs: Any = None) -> None:
    """Report each remembered conversion whose number is among ``args`` / ``kwargs``
    (one level into tuples and lists): it reached a traced operation as a constant."""
    for value in _numbers(args, kwargs):
        kind = type(value)
        if kind is float:
            if value.is_integer():
                continue
            key = value
        elif isinstance(value, np.generic) and value.dtype.kind in "biuf":
            key = value.item()
        else:
            continue
        conversion = rec.unhooked.get(key)
        if conversion is None or not _matches(conversion, value):
            continue
        del rec.unhooked[key]
        report_loss_at(
            rec,
            conversion.filename,
            conversion.lineno,
            f"{conversion.what} made a plain number ({value!r}) that NumPy gives no hook "
            f"for, and a traced operation used it",
            "it is frozen as a constant; keep it traced (x.astype(np.float32) instead of "
            "np.float32(x), arithmetic instead of a round trip through text)",
        )


def _matches(conversion: Conversion, value: Any) -> bool:
    if conversion.dtype is None:  # from text: a float of any width
        return isinstance(value, float) or value.dtype.kind == "f"
    if isinstance(value, np.generic):
        return value.dtype == conversion.dtype
    return conversion.dtype.kind == "f"  # float(np.float32(...)): a Python float


def _numbers(args: Any, kwargs: Any) -> list[Any]:
    found: list[Any] = []
    for group in (args, () if kwargs is None else kwargs.values()):
        for item in group:
            if type(item) in (tuple, list):
                found.extend(item)
            else:
                found.append(item)
    return found
