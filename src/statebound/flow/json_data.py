"""Whether a tool's data survives being stored: JSON that comes back as it went in.

A checkpoint, a run's events and its trajectory store a tool's ``data`` as JSON (orjson). Some
values look like JSON but do not come back: NaN and infinity (stored as null, so a resumed run sees
None), integers beyond 64 bits and nesting deeper than :data:`MAX_DEPTH` (the encoder refuses
them). :func:`json_problem` says where the first such value is, as a path inside the data
(``data['rows'][3]``), so the error names the place instead of a raw ``TypeError`` or
``RecursionError``.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["MAX_DEPTH", "json_problem"]

MAX_DEPTH = 128
"""Deepest nesting of lists and dicts kept (orjson refuses past 255; no tool needs 128)."""

_INT_RANGE = (-(2**63), 2**64 - 1)  # what orjson writes: signed and unsigned 64-bit integers
_SCALARS = (str, bool, type(None))


def _short(where: str) -> str:
    return where if len(where) <= 80 else f"{where[:60]}...{where[-12:]}"


def json_problem(value: Any, where: str = "data", *, other_types: bool = False, _depth: int = 0) -> str | None:
    """Where ``value`` stops round-tripping through JSON, or None when it does all through.

    ``other_types``: values of other types and non-string keys (kept as they are in memory, shown
    as text when stored) are passed over rather than refused.
    """
    kind = type(value)
    if kind in _SCALARS:
        return None
    if kind is float:
        if math.isfinite(value):
            return None
        return f"{_short(where)}: {value!r} does not round-trip through JSON (it comes back as None)"
    if kind is int:
        if _INT_RANGE[0] <= value <= _INT_RANGE[1]:
            return None
        return f"{_short(where)}: an integer of {value.bit_length()} bits does not round-trip (64 at most)"
    if kind in (list, tuple, dict) and _depth >= MAX_DEPTH:
        return f"{_short(where)}: nesting deeper than {MAX_DEPTH} levels does not round-trip"
    if kind is list or kind is tuple:
        for i, item in enumerate(value):
            if (problem := json_problem(item, f"{where}[{i}]", other_types=other_types,
                                        _depth=_depth + 1)) is not None:
                return problem
        return None
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str and not other_types:
                return f"{_short(where)} has the non-string key {key!r}"
            if (problem := json_problem(item, f"{where}[{key!r}]", other_types=other_types,
                                        _depth=_depth + 1)) is not None:
                return problem
        return None
    return None if other_types else f"{_short(where)} is a {kind.__name__}"
