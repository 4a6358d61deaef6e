"""Command-line ``key=value`` pairs into a benchmark's typed options, with errors that say what to fix."""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from statebound.errors import DefinitionError

__all__ = ["parse_options", "parse_pairs"]

M = TypeVar("M", bound=BaseModel)


def parse_pairs(pairs: Sequence[str], *, flag: str = "--option") -> dict[str, Any]:
    """``["db=sqlite", "count=5"]`` -> ``{"db": "sqlite", "count": 5}`` (values read as JSON where
    they are JSON; dashes in keys become underscores)."""
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise DefinitionError(f"{flag} {pair!r} is not key=value (e.g. {flag} db=sqlite)")
        try:
            value: Any = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        options[key.strip().replace("-", "_")] = value
    return options


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
