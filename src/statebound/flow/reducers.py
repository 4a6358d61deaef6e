"""How the writes of parallel branches to one flow variable merge: a *reducer* per field.

``Parallel(..., merge={"notes": append, "best": maximum})``: the branches that finished are taken
in their declared order (never the order they happened to finish in, so a resumed run merges the
same way) and each one's value is folded into the field, starting from its value when the state
began: ``field = reduce(field, value)``.

=============  ===========================================  =========================
reducer        merges                                       the field must be
=============  ===========================================  =========================
``append``     each branch's value as one more item         a list (of the value's type)
``extend``     each branch's list, item by item             a list
``union``      each branch's value(s) into a set            a set, frozenset or list
``maximum``    the largest value (None is smaller than any) a number, text or date
``minimum``    the smallest value                           a number, text or date
a function     ``fn(current, value) -> merged``             anything
=============  ===========================================  =========================

A reducer that cannot take the field's type is refused when the flow is built, naming the state
and the field.
"""

from __future__ import annotations

import datetime
import decimal
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from statebound.flow.var_types import element_type, fits, members, type_name

__all__ = ["Reducer", "append", "as_reducer", "extend", "maximum", "minimum", "union"]

_ORDERED = (int, float, str, decimal.Decimal, datetime.date, datetime.datetime, datetime.time, datetime.timedelta)


@dataclass(frozen=True, slots=True)
class Reducer:
    """``merge(current, value)``, named ``name``; ``problem(field_type, value_type)`` says why it
    cannot merge values of ``value_type`` into a field of ``field_type`` (None: it can)."""

    name: str
    merge: Callable[[Any, Any], Any]
    problem: Callable[[Any, Any], str | None]

    def __call__(self, current: Any, value: Any) -> Any:
        return self.merge(current, value)


def _into_list(field: Any, value: Any) -> str | None:
    item = element_type(field)
    if item is None:
        return f"append needs a list field, and it is {type_name(field)}"
    if not fits(value, item):
        return f"append adds {type_name(value)} items to a list of {type_name(item)}"
    return None


def _list_onto_list(field: Any, value: Any) -> str | None:
    if element_type(field) is None or element_type(value) is None:
        return f"extend needs list values and a list field, and they are {type_name(value)} and {type_name(field)}"
    return None


def _set_like(field: Any, value: Any) -> str | None:
    kinds = {getattr(member, "__origin__", member) for member in members(field)} - {type(None)}
    if not kinds & {set, frozenset, list}:
        return f"union needs a set, frozenset or list field, and it is {type_name(field)}"
    return None


def _ordered(field: Any, value: Any) -> str | None:
    found = [member for member in members(field) if member is not type(None)]
    if not found or not all(isinstance(member, type) and issubclass(member, _ORDERED) for member in found):
        return f"maximum and minimum need a number, text or date field, and it is {type_name(field)}"
    return None


def _greater(current: Any, value: Any) -> Any:
    return value if current is None or (value is not None and value > current) else current


def _smaller(current: Any, value: Any) -> Any:
    return value if current is None or (value is not None and value < current) else current


def _union(current: Any, value: Any) -> Any:
    items = value if isinstance(value, (set, frozenset, list, tuple)) else [value]
    if isinstance(current, list):
        return current + [item for item in items if item not in current]
    return type(current or set())(set(current or ()) | set(items))


append = Reducer("append", lambda current, value: [*(current or ()), value], _into_list)
extend = Reducer("extend", lambda current, value: [*(current or ()), *value], _list_onto_list)
union = Reducer("union", _union, _set_like)
maximum = Reducer("maximum", _greater, _ordered)
minimum = Reducer("minimum", _smaller, _ordered)


def _two_arguments(fn: Callable[..., Any]) -> bool:
    try:
        inspect.signature(fn).bind(None, None)
    except TypeError:
        return False
    except ValueError:  # a builtin without a signature: trust it
        return True
    return True


def as_reducer(given: Any) -> Reducer | None:
    """``given`` as a :class:`Reducer` (a function ``fn(current, value)`` becomes one), or None
    when it is neither."""
    if isinstance(given, Reducer):
        return given
    if callable(given) and _two_arguments(given):
        return Reducer(getattr(given, "__name__", "function"), given, lambda field, value: None)
    return None
