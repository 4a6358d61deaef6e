"""Which columns may link two tables: the join keys the scoped SQL machine offers its chooser.

The SQL environment shows tables and their columns (``SHOW TABLES``, ``DESC``) but not their
foreign keys; Spider's column names tell them. A pair of columns, one in each table, is a key when

- both tables have a key-like column of the same name (``People_ID``, ``stuid``, ``CountryCode``),
  bare ``id`` and ``code`` aside (every table may have one); where there is one, the names alone
  decide; else
- a column of one table is named after the other table (``FLIGHTS.DestAirport`` after
  ``AIRPORTS``, ``visit.visitor_id`` after ``visitor``, ``Cartoon.Channel`` after ``TV_Channel``)
  and the other column is a key-like column of that table (``id``, ``uid``, ``AirportCode``).

Both columns hold numbers, or both hold text. A key-like name is ``id``, ``uid``, ``code``,
``key``, or one ending in ``id`` or ``code``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from statebound.agents.question_text import singular
from statebound.agents.sql.sketch import Column, quote

__all__ = ["JoinKey", "join_keys", "name_words"]

MAX_KEYS = 6  # the chooser picks among at most this many keys
_BARE_KEYS = frozenset({"id", "uid", "code", "key"})
_GENERIC_WORDS = frozenset({"id", "uid", "code", "key", "name", "type", "ref", "of", "the"})


@dataclass(frozen=True, slots=True)
class JoinKey:
    """``left`` (a column of the first table) equals ``right`` (a column of the second)."""

    left: str
    right: str

    def text(self, first: str, second: str) -> str:
        """How the key is shown to the chooser: ``FLIGHTS.DestAirport = AIRPORTS.AirportCode``."""
        return f"{first}.{self.left} = {second}.{self.right}"

    def sql(self, first: str, second: str) -> str:
        return f"{quote(first)}.{quote(self.left)} = {quote(second)}.{quote(self.right)}"


def name_words(name: str) -> list[str]:
    """The words of a table or column name, lower case and singular: ``DestAirport`` -> dest,
    airport; ``Ref_template_types`` -> ref, template, type; ``countries`` -> country."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)
    return [singular(w) for w in re.split(r"[_\s.-]+", spaced.lower()) if w]


def _key_like(name: str) -> bool:
    lower = name.lower()
    return lower in _BARE_KEYS or lower.endswith(("id", "code"))


def _names_table(column: str, table: str) -> bool:
    """The column is named after the table: they share a word that is not generic."""
    meaningful = {w for w in name_words(table) if w not in _GENERIC_WORDS and len(w) > 2}
    return bool(meaningful & set(name_words(column)))


def join_keys(first: str, first_columns: Sequence[Column], second: str,
              second_columns: Sequence[Column]) -> list[JoinKey]:
    """The keys that may link ``first`` to ``second`` (module docstring)."""
    keys: list[JoinKey] = []
    for a in first_columns:
        for b in second_columns:
            if a.numeric != b.numeric:
                continue
            same = a.name.lower() == b.name.lower() and _key_like(a.name) and a.name.lower() not in _BARE_KEYS
            if same:
                keys.append(JoinKey(a.name, b.name))
    if keys:
        return keys[:MAX_KEYS]
    for a in first_columns:
        for b in second_columns:
            if a.numeric != b.numeric or a.name.lower() == b.name.lower():
                continue
            if (_names_table(a.name, second) and _key_like(b.name)) or (_names_table(b.name, first) and _key_like(a.name)):
                keys.append(JoinKey(a.name, b.name))
    return list(dict.fromkeys(keys))[:MAX_KEYS]
