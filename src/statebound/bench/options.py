"""Command-line ``key=value`` pairs into a benchmark's typed options, with errors that say what to fix."""

from __future__ import annotations

import ast
import difflib
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from statebound.errors import DefinitionError
from statebound.web.forms import MAX_INT

__all__ = ["parse_options", "parse_pairs", "parse_value"]

M = TypeVar("M", bound=BaseModel)


def parse_pairs(pairs: Sequence[str], *, flag: str = "--option") -> dict[str, Any]:
    """``["db=sqlite", "count=5"]`` -> ``{"db": "sqlite", "count": 5}`` (dashes in keys become
    underscores); each value as :func:`parse_value` reads it."""
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise DefinitionError(f"{flag} {pair!r} is not key=value (e.g. {flag} db=sqlite)")
        options[key.strip().replace("-", "_")] = parse_value(raw, flag=flag, key=key.strip())
    return options


_STRUCTURED = ("[", "{")


def parse_value(raw: str, *, flag: str = "--option", key: str = "key") -> Any:
    """A command-line value: JSON where it is JSON (``5``, ``true``, ``["a", "b"]``), else a
    Python literal (``['a', 'b']``, ``{'k': 1}``), else the text itself. A value that opens a list
    or an object but is neither JSON nor a literal is refused (it would be taken as plain text)."""
    try:
        return _in_range(json.loads(raw), flag=flag, key=key)
    except json.JSONDecodeError as error:
        problem = error.msg
    except RecursionError:
        raise DefinitionError(f"{flag} {key}: the value nests too deeply") from None
    if raw.lstrip().startswith((*_STRUCTURED, "'", '"')):
        try:
            value = ast.literal_eval(raw.strip())
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            pass
        else:
            return _in_range(value, flag=flag, key=key)
    if raw.lstrip().startswith(_STRUCTURED):
        raise DefinitionError(
            f"{flag} {key}={raw} is neither JSON nor a Python literal ({problem.lower()}): quote each "
            f"string, e.g. {flag} '{key}=[\"first\", \"second\"]'")
    return raw


def _in_range(value: Any, *, flag: str, key: str) -> Any:
    """``value``, refused when a number in it is one no run can keep: not finite, or an integer
    past 64 bits (a store's; also where sizes stop making sense)."""
    numbers = [value]
    while numbers:
        item = numbers.pop()
        if isinstance(item, dict):
            numbers.extend(item.values())
        elif isinstance(item, list | tuple | set):
            numbers.extend(item)
        elif isinstance(item, float) and not math.isfinite(item):
            raise DefinitionError(f"{flag} {key}={item}: give a finite number")
        elif isinstance(item, int) and not isinstance(item, bool) and not -MAX_INT - 1 <= item <= MAX_INT:
            raise DefinitionError(f"{flag} {key}: {item:.3g} is past the largest number a run keeps ({MAX_INT})")
    return value


def parse_options(model: type[M], raw: Mapping[str, Any], *, owner: str) -> M:
    """``raw`` validated into ``model``; a :class:`DefinitionError` naming every bad key otherwise
    (``owner`` names whose options they are, e.g. ``"intercode-sql"``)."""
    known = sorted(model.model_fields)
    unknown = [key for key in raw if key not in model.model_fields]
    if unknown:
        raise DefinitionError("; ".join(_unknown(owner, key, known) for key in unknown))
    try:
        return model.model_validate(dict(raw))
    except ValidationError as exc:
        problems = [f"{'.'.join(map(str, error['loc']))}={raw.get(str(error['loc'][0]))!r}: "
                    f"{error['msg'][0].lower()}{error['msg'][1:]}" for error in exc.errors()]
        raise DefinitionError(f"{owner} option {'; '.join(problems)}") from None


def _unknown(owner: str, key: str, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(key, known, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"{owner} has no option {key!r}{hint} (options: {', '.join(known) or 'none'})"
